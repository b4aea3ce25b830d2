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
    // A window, not a barrier (left by h26u): a batch cut with no request would likely show here;
    // one that came later still fails the exact counts below (batch_id + 1, received 1). A barrier
    // needs the gateway's batch_requests_sent (cluster/gateway_backend.ts) in its admin state.
    await new Promise((r) => setTimeout(r, 700));
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
    // The gateway asked the leader (before: nothing), which cut an empty batch; the gateway has it.
    const led = await waitFor('the requested batch at the gateway', 10_000, async () => {
      const [s, state] = await Promise.all([matcherStatus(m1), adminState(g)]);
      return s.batch_id > before.batch_id && Number(state.batch_id) === s.batch_id ? s : undefined;
    }, 50);
    expect(led.batch_id).toBe(before.batch_id + 1);
    expect(led.requests_through).toBe(before.requests_through);
    expect(led.batch_requests).toMatchObject({ received: 1, empty_batches: 1, refused: 0, ignored_answered: 0 });
    // One refusal, one batch: the exchange is idle again.
    // A window, not a barrier (left by h26u): it spans the leader's 1 s spacing between empty
    // batches (BATCH_REQUEST_SPACING_MS), after which a repeated request would cut a second one.
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await matcherStatus(m1)).batch_id).toBe(led.batch_id);
    // The standby re-executed it to the leader's root, and ignored the request.
    const [s1, s2] = await settledMatchers([m1, m2], 5_000);
    expect(s2.state_root).toBe(s1.state_root);
    expect(s2.mismatches).toBe(0);
    expect(s2.batch_requests).toMatchObject({ received: 1, ignored_standby: 1, empty_batches: 0 });
    expect((await adminState(g)).settlement.link.last_error).toBeNull();
  }, 90_000);
});
