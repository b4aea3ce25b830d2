// chain_link_refused.test.ts's first step with the cluster backend: a forced entry the front
// refuses outright (envelope nonce 2^53) on an otherwise idle exchange, the gateway's chain link
// in front of a leader matcher over NATS. Before, MatcherLink.requestBatch did nothing there and no
// batch came; now the gateway asks the leader (src/cluster/batch_request.ts), which cuts an empty
// batch, and the standby re-executes it. What this does not show: the count on chain. A cluster
// gateway posts no roots (it keeps no DA store); the DA role with RINGBOOK_SETTLEMENT_POSTER=1 does,
// which chain_link_cluster_roots.test.ts shows (docs/settlement.md, "In a cluster").
// Real parts: a 3-node JetStream cluster (nats-server), the leader and a standby matcher and the
// gateway as real processes, the in-process EVM behind its JSON-RPC shim and the Settlement contract.
import { afterAll, describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { adminState, bytesToHex, deposit, Wallet } from '../server/harness.js';
import { matcherStatus, settledMatchers, waitFor } from '../cluster/cluster_helpers.js';
import { OPERATOR_KEY } from './dev_chain.js';
import { startSettledCluster, stopSettledClusters } from './settled_cluster.js';

const POLL_MS = 50;
/** Link rounds after the refusal's that must not ask for a batch again (see the barrier below). */
const LATER_ROUNDS = 2;

afterAll(stopSettledClusters);

describe('a forced entry the front refuses, on an idle exchange, with the cluster backend', () => {
  it('the gateway\'s chain link asks the leader matcher for a batch, which cuts an empty one', async () => {
    const alice = Wallet.random();
    const bob = Wallet.random();
    const { dev, settlement, c, m1 } = await startSettledCluster([alice.address, bob.address], POLL_MS);
    const { contract } = dev;
    const m2 = await c.startMatcher('m2');
    const g = await c.startGateway('g1', settlement, { RINGBOOK_OPERATOR_KEY: OPERATOR_KEY });
    const key = '0x' + bytesToHex(alice.priv);

    // One batch; from here on the exchange is idle.
    expect((await deposit(g, alice.address, 'USDC', '1000')).status).toBe(200);
    const idle = await waitFor('the deposit\'s batch at the gateway', 10_000, async () => {
      const [s, state] = await Promise.all([matcherStatus(m1), adminState(g)]);
      return s.batch_id > 0 && Number(state.batch_id) === s.batch_id ? s : undefined;
    }, 50);
    // Nobody asked for a batch yet. A batch the leader cut with no request, now or later, fails
    // the exact counts below (batch_id + 1, received 1, empty_batches 1).
    expect((await adminState(g)).batch_requests).toEqual({ sent: 0, failed: 0 });
    const before = await matcherStatus(m1);
    expect(before.batch_id, 'idle').toBe(idle.batch_id);
    expect(before.batch_requests).toMatchObject({ received: 0, empty_batches: 0 });

    // Queue entry 0: envelope nonce 2^53, valid on chain (uint64), refused by the front before the engine.
    const payload = alice.cancelAll('ETH-USDC', { nonce: 5 });
    const bytes = utf8ToBytes(JSON.stringify({ ...payload, kind: 'cancel_all' }));
    const nonce = 2n ** 53n;
    const message = `ringbook:force-include:${alice.address}:0x${bytesToHex(keccak_256(bytes))}:${nonce}`;
    const r0 = await contract.send(key, 'forceInclude', ['0x' + bytesToHex(bytes), nonce, alice.sign(message)]);
    const block0 = Number(r0.blockNumber);
    await waitFor('the link to read past the entry', 20_000, async () => {
      const link = (await adminState(g)).settlement.link;
      return link.block >= block0 && link.last_error === null ? true : undefined;
    }, 50);
    expect((await adminState(g)).settlement.link).toMatchObject({ forced_submitted: 0, forced_refused: 1 });
    // The gateway asked the leader (before: nothing; its `sent` counts the message handed to NATS),
    // which cut an empty batch; the gateway has it.
    expect((await adminState(g)).batch_requests).toEqual({ sent: 1, failed: 0 });
    const led = await waitFor('the requested batch at the gateway', 10_000, async () => {
      const [s, state] = await Promise.all([matcherStatus(m1), adminState(g)]);
      return s.batch_id > before.batch_id && Number(state.batch_id) === s.batch_id ? s : undefined;
    }, 50);
    expect(led.batch_id).toBe(before.batch_id + 1);
    expect(led.requests_through).toBe(before.requests_through);
    expect(led.batch_requests).toMatchObject({ received: 1, empty_batches: 1, refused: 0, ignored_answered: 0 });
    // One refusal, one request, one batch: the exchange is idle again. A link that asked again
    // each round would have a second empty batch cut once the leader's 1 s spacing
    // (BATCH_REQUEST_SPACING_MS) passed; its requests show at once in the gateway's `sent`. (The
    // leader's side, a batch answering a request for good, is test/cluster/batch_request.test.ts's,
    // on its own clock.)
    // Barrier: the link reads LATER_ROUNDS more blocks (plain transfers, no contract event), each
    // mined after it read the last, so the refusal's round and LATER_ROUNDS - 1 more have ended.
    for (let i = 0; i < LATER_ROUNDS; i++) {
      const block = Number((await dev.rpc.sendAndWait(key, bob.address, '0x', 1n)).blockNumber);
      await waitFor(`the link to read block ${block} (later round ${i + 1} of ${LATER_ROUNDS})`, 20_000, async () => {
        return (await adminState(g)).settlement.link.block >= block ? true : undefined;
      }, 50);
    }
    expect((await adminState(g)).batch_requests, 'asked once').toEqual({ sent: 1, failed: 0 });
    const after = await matcherStatus(m1);
    expect(after.batch_id).toBe(led.batch_id);
    expect(after.batch_requests).toMatchObject({ received: 1, empty_batches: 1 });
    // The standby re-executed it to the leader's root, and ignored the request.
    const [s1, s2] = await settledMatchers([m1, m2], 5_000);
    expect(s2.state_root).toBe(s1.state_root);
    expect(s2.mismatches).toBe(0);
    expect(s2.batch_requests).toMatchObject({ received: 1, ignored_standby: 1, empty_batches: 0 });
    expect((await adminState(g)).settlement.link.last_error).toBeNull();
  }, 90_000);
});
