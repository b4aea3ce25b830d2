// Settlement roots from a cluster (docs/settlement.md, "In a cluster"): the gateway's chain link
// credits an on-chain deposit and handles forced entries; the DA role with
// RINGBOOK_SETTLEMENT_POSTER=1 posts the roots it computed from the event stream, with the forced
// count the gateway shares with it (src/cluster/settlement_poster.ts). Before, a cluster gateway
// posted no roots and no role did: the contract's lastBatchId stayed 0 and, 24 h after a forced
// entry, anyone could freeze the contract with challenge(id).
// Real parts: a 3-node JetStream cluster (nats-server), the leader matcher, the DA role and the
// gateway as real processes, the in-process EVM behind its JSON-RPC shim and the Settlement contract.
import { afterAll, describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { adminState, api, balances, bytesToHex, Wallet } from '../server/harness.js';
import { daStatus, matcherStatus, P, waitFor } from '../cluster/cluster_helpers.js';
import { OPERATOR_KEY } from './dev_chain.js';
import { startSettledCluster, stopSettledClusters } from './settled_cluster.js';

const POLL_MS = 50;
const DAY_S = 24 * 3600;
const ETH = 10n ** 18n;

afterAll(stopSettledClusters);

describe('settlement roots from a cluster', () => {
  it('the DA role posts its roots with the forced count the gateway shares: a deposit credited, an order\'s roots on chain, a refused entry counted', async () => {
    const alice = Wallet.random();
    const bob = Wallet.random();
    const { dev, settlement, c, m1 } = await startSettledCluster([alice.address, bob.address], POLL_MS);
    const { contract } = dev;
    const d1 = await c.startDa('d1', { RINGBOOK_SETTLEMENT_POSTER: '1', RINGBOOK_OPERATOR_KEY: OPERATOR_KEY }, settlement);
    const g = await c.startGateway('g1', settlement, { RINGBOOK_OPERATOR_KEY: OPERATOR_KEY });
    const key = '0x' + bytesToHex(alice.priv);

    // A deposit on chain, credited through the gateway's chain link.
    await contract.send(key, 'depositEth', [], ETH);
    await waitFor('the deposit credited', 20_000, async () => ((await balances(g, alice.address)).ETH?.available === 1_000_000 ? true : undefined), 50);
    expect((await adminState(g)).settlement.link).toMatchObject({ deposits_credited: 1 });

    // An order: its batch's roots, as the DA role computed them, reach the contract.
    const r = await api(g.url).post('/orders', alice.order({ market_id: 'ETH-USDC', side: 'ask', price: P, quantity: 100 }));
    expect(r.status).toBe(200);
    const order_batch = Number(r.body.data.batch_id);
    const posted = await waitFor('the order\'s batch posted', 20_000, async () => {
      const n = Number(await contract.readNumber('lastBatchId'));
      return n >= order_batch ? n : undefined;
    }, 50);
    for (let id = 1; id <= posted; id++) {
      const h = (await api(d1.url).get(`/da/batches/${id}`)).body.data.header;
      expect(await contract.read('stateRoots', [id])).toEqual([h.state_root]);
      expect(await contract.read('fillsRoots', [id])).toEqual([h.fills_root]);
    }
    const leader = await matcherStatus(m1);
    expect(await contract.read('stateRoots', [leader.batch_id])).toEqual([leader.state_root]);
    // The gateway reads the contract's last posted batch (its withdrawal signatures wait for it).
    await waitFor('the gateway to see the posted batch', 10_000, async () =>
      ((await adminState(g)).settlement.link.roots_posted_batch_id >= posted ? true : undefined), 50);

    // Queue entry 0: envelope nonce 2^53, valid on chain, refused by the gateway's front before the
    // engine. Its count travels only with roots: the gateway shares it, the DA role asks for a batch
    // (every batch is posted) and posts its roots with the count.
    const payload = alice.cancelAll('ETH-USDC', { nonce: alice.nextNonce() });
    const bytes = utf8ToBytes(JSON.stringify({ ...payload, kind: 'cancel_all' }));
    const nonce = 2n ** 53n;
    const message = `ringbook:force-include:${alice.address}:0x${bytesToHex(keccak_256(bytes))}:${nonce}`;
    const before = Number(await contract.readNumber('lastBatchId'));
    await contract.send(key, 'forceInclude', ['0x' + bytesToHex(bytes), nonce, alice.sign(message)]);
    expect(await contract.readNumber('forcedCount')).toBe(1n);
    await waitFor('the refused entry counted on chain', 20_000, async () => ((await contract.readNumber('forcedProcessed')) === 1n ? true : undefined), 50);
    expect((await adminState(g)).settlement.link).toMatchObject({ forced_submitted: 0, forced_refused: 1 });
    expect(Number(await contract.readNumber('lastBatchId'))).toBeGreaterThan(before);
    // 24 h later, nobody can freeze the contract over it.
    dev.chain.increaseTime(DAY_S + 1);
    await expect(contract.send('0x' + bytesToHex(bob.priv), 'challenge', [0])).rejects.toThrow(/NotOverdue/);
    expect(await contract.read('frozen')).toEqual([false]);

    // Queue entry 1: a payload that is not JSON, queued into the engine's inbox with its verdict and
    // refused at inclusion: counted once a posted batch took it in.
    const env = alice.forceInclude('not a request body', { nonce: alice.nextNonce() });
    await contract.send(key, 'forceInclude', [env.payload as string, env.nonce as number, env.signature as string]);
    await waitFor('the second entry counted on chain', 20_000, async () => ((await contract.readNumber('forcedProcessed')) === 2n ? true : undefined), 50);
    dev.chain.increaseTime(DAY_S + 1);
    await expect(contract.send('0x' + bytesToHex(bob.priv), 'challenge', [1])).rejects.toThrow(/NotOverdue/);
    expect(await contract.read('frozen')).toEqual([false]);

    // Every posted root is the DA role's; its poster is healthy and heard the gateway's shares.
    const ds = await daStatus(d1);
    expect(ds.mismatches).toBe(0);
    expect(ds.settlement).not.toBeNull();
    expect(ds.settlement!.last_error).toBeNull();
    expect(ds.settlement!.shares_received).toBeGreaterThan(0);
    expect(ds.settlement!.shares_refused).toBe(0);
    expect(ds.settlement!.forced_processed).toBe(2);
    const last = Number(await contract.readNumber('lastBatchId'));
    for (const id of [1, last]) {
      const h = (await api(d1.url).get(`/da/batches/${id}`)).body.data.header;
      expect(await contract.read('stateRoots', [id])).toEqual([h.state_root]);
    }
    expect((await adminState(g)).settlement.link.last_error).toBeNull();
  }, 120_000);
});
