// The leader's purge of RB_REQUESTS (docs/scale-out.md, "Disk, restarts and trimming";
// src/cluster/request_purge.ts) on a real 3-node JetStream cluster with matcher and gateway roles
// as real processes. The request stream's duplicate window is set to 1 s here (an operator's
// stream update), so the delay the matchers derive from it is 1.25 s, and they purge every 200 ms:
// - the leader purges: the stream's first sequence moves up to exactly the request position of a
//   batch the event stream stored at least the delay before it was seen, never past what the
//   matchers consumed;
// - a standby that takes over after the purge (the leader killed -9) serves new orders with no
//   mismatch and purges on; a matcher started afterwards re-executes the whole event stream from
//   genesis to the same root (the purged requests are needed by no one);
// - a leader with RINGBOOK_REQUEST_PURGE_EVERY_MS=0 purges nothing, however long it leads.
// The tests share one cluster and run in order. Waits are bounded; no assertion on how fast.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { JetStreamManager } from '@nats-io/jetstream';
import { ensureStreams, EVENT_STREAM, readBatchHeader, REQUEST_STREAM } from '../../src/cluster/log_format.js';
import { purgeDelayMs } from '../../src/cluster/request_purge.js';
import { api, type StartedServer, type Wallet } from '../server/harness.js';
import {
  fundedWallet, LEASE_TTL_MS, leadingFromGenesis, MARKET, matcherStatus, P, settledMatchers, startTestCluster, TICK, waitFor, type TestCluster,
} from './cluster_helpers.js';

/** The request stream's duplicate window in this test (the roles create it with 2 minutes). */
const WINDOW_MS = 1_000;
const DELAY_MS = purgeDelayMs(WINDOW_MS);
const PURGING = { RINGBOOK_REQUEST_PURGE_EVERY_MS: '200' };
const WAIT_MS = 20 * LEASE_TTL_MS;

let c: TestCluster;
let nc: NatsConnection;
let jsm: JetStreamManager;
let wallets: Wallet[] = [];
let orders_sent = 0;

beforeAll(async () => {
  c = await startTestCluster();
  nc = await connect({ servers: c.nats.urls() });
  // The streams as the roles make them, then the window shortened as an operator would (`nats stream edit`).
  jsm = await ensureStreams(nc, { replicas: 3 });
  await jsm.streams.update(REQUEST_STREAM, { duplicate_window: WINDOW_MS * 1_000_000 });
  await leadingFromGenesis(await c.startMatcher('m1', PURGING));
  const [, g] = await Promise.all([c.startMatcher('m2', PURGING), c.startGateway('g1')]);
  wallets = [await fundedWallet(g), await fundedWallet(g)];
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await c?.stop();
});

/** One order through the gateway (a batch, or part of one): resting bids and a crossing ask now and then. */
async function trade(): Promise<void> {
  const w = wallets[orders_sent % 2];
  const side = orders_sent % 4 === 3 ? 'ask' : 'bid';
  const price = side === 'ask' ? P - 10 * TICK : P - (1 + (orders_sent % 7)) * TICK;
  orders_sent++;
  const r = await api(c.gateways[0].url).post('/orders', w.order({ market_id: MARKET, side, price, quantity: 100 }));
  if (r.status !== 200) throw new Error(`order refused: ${r.status} ${r.text}`);
}

/** Orders until matcher `m` has had `purges` purges acknowledged. */
async function tradeUntilPurges(m: StartedServer, purges: number): Promise<void> {
  await waitFor(`${purges} purges by ${m.url}`, WAIT_MS, async () => {
    if ((await matcherStatus(m)).requests_purge.purges >= purges) return true;
    await trade();
    return undefined;
  }, 50);
}

async function firstSeq(): Promise<number> {
  return (await jsm.streams.info(REQUEST_STREAM)).state.first_seq;
}

/** Every batch of the event stream: its request position and when the stream stored it (epoch ms). */
async function storedBatches(): Promise<{ batch_id: number; requests_through: number; stored_ms: number }[]> {
  const last = (await jsm.streams.info(EVENT_STREAM)).state.last_seq;
  const out = [];
  for (let seq = 1; seq <= last; seq++) {
    const m = await jsm.streams.getMessage(EVENT_STREAM, { seq });
    if (m === null) throw new Error(`no batch at sequence ${seq}`);
    const h = readBatchHeader(m.header, m.data.length);
    out.push({ batch_id: h.batch_id, requests_through: h.requests_through, stored_ms: m.time.getTime() });
  }
  return out;
}

/** The stream's first sequence as seen now is the position of a batch stored at least the delay before, and not past what the leader consumed. */
async function expectPurgedSafely(leader: StartedServer): Promise<number> {
  const first = await firstSeq();
  const seen_ms = Date.now();
  const s = await matcherStatus(leader);
  expect(first).toBeGreaterThan(1);
  expect(first).toBeLessThanOrEqual(s.requests_through);
  const batches = await storedBatches();
  const at = batches.filter((b) => b.requests_through === first);
  expect(at.length, `a batch consumed through ${first}`).toBeGreaterThan(0);
  // The first of them: the purge's point was seen confirmed no earlier than it was stored.
  expect(at[0].stored_ms, `batch ${at[0].batch_id} stored at least ${DELAY_MS} ms before`).toBeLessThanOrEqual(seen_ms - DELAY_MS);
  return first;
}

describe('the leader purges the request stream below what the matchers consumed', () => {
  it('the leader purges below the position of a batch stored longer than the delay ago, the delay from the stream\'s window', async () => {
    const m1 = c.matchers.get('m1') as StartedServer;
    expect(await firstSeq()).toBe(1);
    await tradeUntilPurges(m1, 2);
    const first = await expectPurgedSafely(m1);
    const s = await matcherStatus(m1);
    expect(s.role).toBe('leader');
    expect(s.requests_purge).toMatchObject({ every_ms: 200, delay_ms: DELAY_MS, last_error: null });
    expect(s.requests_purge.purged_through).toBeGreaterThanOrEqual(first - 1);
    expect(s.requests_purge.last_purge_ms).toBeGreaterThan(0);
    expect(m1.output().stdout).toContain(`request stream ${REQUEST_STREAM} purged below sequence`);
    // The standby sends none.
    expect((await matcherStatus(c.matchers.get('m2') as StartedServer)).requests_purge.purges).toBe(0);
  });

  it('a standby that takes over after the purge serves new orders, agrees and purges on; a matcher started later replays to the same root', async () => {
    const before = await firstSeq();
    await (c.matchers.get('m1') as StartedServer).stop('SIGKILL');
    c.matchers.delete('m1');
    const m2 = c.matchers.get('m2') as StartedServer;
    await waitFor('m2 to lead', WAIT_MS, async () => ((await matcherStatus(m2)).role === 'leader' ? true : undefined), 50);
    await tradeUntilPurges(m2, 1);
    expect(await expectPurgedSafely(m2)).toBeGreaterThanOrEqual(before);
    // A matcher from genesis (purging off: the next test's leader) re-executes every batch.
    await c.startMatcher('m3', { RINGBOOK_REQUEST_PURGE_EVERY_MS: '0' });
    for (let i = 0; i < 3; i++) await trade();
    const all = await settledMatchers([...c.matchers.values()], WAIT_MS);
    expect(all.map((x) => x.state_root)).toEqual(all.map(() => all[0].state_root));
    for (const x of all) expect(x.mismatches, `${x.node_id} mismatches`).toBe(0);
  });

  it('a leader with RINGBOOK_REQUEST_PURGE_EVERY_MS=0 purges nothing', async () => {
    await (c.matchers.get('m2') as StartedServer).stop('SIGKILL');
    c.matchers.delete('m2');
    const m3 = c.matchers.get('m3') as StartedServer;
    await waitFor('m3 to lead', WAIT_MS, async () => ((await matcherStatus(m3)).role === 'leader' ? true : undefined), 50);
    const first = await firstSeq();
    // Orders for longer than the delay and several of the others' intervals: batches old enough to purge at.
    const until = Date.now() + DELAY_MS + 1_000;
    while (Date.now() < until) await trade();
    const s = await matcherStatus(m3);
    expect(s.role).toBe('leader');
    expect(s.mismatches).toBe(0);
    expect(s.requests_through).toBeGreaterThan(first);
    expect(s.requests_purge).toMatchObject({ every_ms: 0, purges: 0, purged_through: 0, last_error: null });
    expect(await firstSeq()).toBe(first);
  });
});
