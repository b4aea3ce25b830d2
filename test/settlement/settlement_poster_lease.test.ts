// Settlement poster failover (docs/scale-out.md, "Settlement roots"): of two DA roles with
// RINGBOOK_SETTLEMENT_POSTER=1, only the holder of the settlement poster lease (src/cluster/lease.ts
// SettlementPosterLease) posts roots; the other keeps its store and compares, sends nothing to the
// chain and says `standby` in its /status. Killed with -9, the holder is replaced about a lease TTL
// later by the other, which posts the roots of the batches cut after the kill. Before, both posted:
// the one that lost each race had its postRoots revert BadBatchRange (or its nonce taken), counted
// here by the dev chain (`refused`).
// Real parts: a 3-node JetStream cluster (nats-server), the leader matcher, both DA roles and a
// gateway as real processes, the in-process EVM behind its JSON-RPC shim and the Settlement contract.
import { afterAll, describe, expect, it } from 'vitest';
import { api, type StartedServer } from '../server/harness.js';
import { daStatus, fundedWallet, MARKET, P, waitFor } from '../cluster/cluster_helpers.js';
import type { SettlementPosterStatus } from '../../src/cluster/settlement_poster.js';
import type { Wallet } from '../server/harness.js';
import { OPERATOR_KEY, type DevSettlement } from './dev_chain.js';
import { startSettledCluster, stopSettledClusters } from './settled_cluster.js';

const POLL_MS = 50;
/**
 * Orders (a batch each) while both posters run: each batch is a race the old code could lose (both
 * roles see it within a poll of each other). On the old code each of 4 runs counted 2 refused
 * transactions (the same nonce sent twice) by the end of these 8.
 */
const ORDERS_BOTH_RUNNING = 8;
/** Orders after the holder's kill: their batches' roots must come from the other role. */
const ORDERS_AFTER_KILL = 3;

afterAll(stopSettledClusters);

async function poster(d: StartedServer): Promise<SettlementPosterStatus> {
  const s = (await daStatus(d)).settlement;
  if (s === null) throw new Error('no settlement poster status');
  return s;
}

/** `n` resting bids from `w`, one at a time; the batch id of the last. */
async function placeOrders(g: StartedServer, w: Wallet, n: number): Promise<number> {
  let batch_id = -1;
  for (let i = 0; i < n; i++) {
    const r = await api(g.url).post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P - (i + 1) * 10_000, quantity: 100 }));
    if (r.status !== 200) throw new Error(`order refused: ${r.status} ${r.text}`);
    batch_id = Number(r.body.data.batch_id);
  }
  return batch_id;
}

async function rootsPostedThrough(dev: DevSettlement, batch_id: number): Promise<number> {
  return waitFor(`the roots of batch ${batch_id} on chain`, 20_000, async () => {
    const n = Number(await dev.contract.readNumber('lastBatchId'));
    return n >= batch_id ? n : undefined;
  }, 50);
}

describe('settlement poster failover', () => {
  it('of two poster DA roles one posts, the other stands by; after a kill -9 the other takes over and posts the later batches', async () => {
    const { dev, settlement, c } = await startSettledCluster([], POLL_MS);
    const env = { RINGBOOK_SETTLEMENT_POSTER: '1', RINGBOOK_OPERATOR_KEY: OPERATOR_KEY };
    // d1 first, so that it is the holder: its first round has read the contract.
    const d1 = await c.startDa('d1', env, settlement);
    await waitFor('d1 to post', 10_000, async () => ((await poster(d1)).roots_posted_batch_id >= 0 ? true : undefined), 50);
    const d2 = await c.startDa('d2', env, settlement);
    await waitFor('d2\'s poster to run a round', 10_000, async () => ((await poster(d2)).postable_batch_id >= 0 ? true : undefined), 50);

    const g = await c.startGateway('g1');
    const w = await fundedWallet(g);
    const before_kill = await placeOrders(g, w, ORDERS_BOTH_RUNNING);
    await rootsPostedThrough(dev, before_kill);
    // A few more rounds of both: the standby still sends nothing.
    await new Promise((r) => setTimeout(r, 10 * POLL_MS));
    // No postRoots lost a race (each loss is a reverted simulation or transaction, or a nonce taken).
    expect(dev.chain.refused).toEqual({ calls_reverted: 0, txs_refused: 0, txs_reverted: 0 });
    expect(await poster(d1)).toMatchObject({ poster_lease: 'held', poster_takeovers: 1, last_error: null });
    const standby = await poster(d2);
    // It read nothing from the chain (-1) and asked for no batch, but compared what it published.
    expect(standby).toMatchObject({ poster_lease: 'standby', poster_takeovers: 0, roots_posted_batch_id: -1, batch_requests: 0, last_error: null });
    expect(standby.postable_batch_id).toBeGreaterThanOrEqual(before_kill);
    expect(d2.output().stdout).toMatch(/settlement poster lease held by another DA role: standby/);

    // The holder dies; d2 takes the lease after about its TTL and resumes at the contract's lastBatchId.
    await d1.stop('SIGKILL');
    c.das.splice(c.das.indexOf(d1), 1);
    const after_kill = await placeOrders(g, w, ORDERS_AFTER_KILL);
    expect(after_kill).toBeGreaterThan(before_kill);
    const posted = await rootsPostedThrough(dev, after_kill);
    for (let id = before_kill + 1; id <= posted; id++) {
      const h = (await api(d2.url).get(`/da/batches/${id}`)).body.data.header;
      expect(await dev.contract.read('stateRoots', [id])).toEqual([h.state_root]);
      expect(await dev.contract.read('fillsRoots', [id])).toEqual([h.fills_root]);
    }
    expect(await poster(d2)).toMatchObject({ poster_lease: 'held', poster_takeovers: 1, roots_posted_batch_id: posted, last_error: null });
    expect(dev.chain.refused).toEqual({ calls_reverted: 0, txs_refused: 0, txs_reverted: 0 });
    expect(d2.output().stdout.match(/settlement poster lease taken/g)).toHaveLength(1);
  }, 120_000);
});
