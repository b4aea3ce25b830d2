// When the settlement poster lease's holder hands it over (docs/scale-out.md, "Settlement roots"):
// a holder stopped at a root mismatch, and a holder stuck behind the event stream's newest batch,
// give the lease up so that a DA role that agrees (or is caught up) posts; a role that also
// mismatches stops too. Before (2026-11-29), both holders kept renewing the lease and roots
// stopped cluster-wide while a standby could have posted them. A holder whose history is not the
// one on chain (the contract's roots of its last batch differ) posts nothing on top and yields;
// before, it appended its roots to the other history. A holder whose RPC endpoint fails (no
// connection, HTTP 5xx) for the bound yields to a standby whose endpoint works, and takes part
// again once its own answers; before (branch h30p), it kept the lease and no root was posted.
// Real parts: a 3-node JetStream cluster (nats-server) holding the lease bucket, two real
// SettlementPosterLease + SettlementPoster pairs running on their own timers, LeaderCheckedRoots,
// and the in-process EVM behind its JSON-RPC shim with the Settlement contract (each role's own
// endpoint, in the RPC test, a loopback proxy to it that the test takes down and brings back:
// failing_endpoint.ts). The DA stores and the event stream's newest batch are stand-ins, so that
// the test decides what each role computed and how far each is. Which failures count for
// rpc_failing: rpc_answers.test.ts; its timing and status on the test clock: poster_hand_over.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { LEASE_KEY, SETTLEMENT_POSTER_BUCKET } from '../../src/cluster/log_format.js';
import { LocalNatsCluster } from '../../src/cluster/local_nats.js';
import { LeaderCheckedRoots, type BatchRootsPair } from '../../src/cluster/checked_roots.js';
import { SettlementPosterLease } from '../../src/cluster/lease.js';
import { SettlementPoster, type SettlementPosterOptions } from '../../src/cluster/settlement_poster.js';
import { CHAIN_ID, devSettlement, OPERATOR_KEY, type DevSettlement } from './dev_chain.js';
import { FailingEndpoint, HTTP_503_PAGE } from './failing_endpoint.js';

const LEASE_TTL_MS = 1000;
const POLL_MS = 50;
/** How long a holder may stay short of the stream's newest batch (as sampled) before it yields. */
const BEHIND_YIELD_MS = 4 * LEASE_TTL_MS;
/**
 * The replay test's bound, on a clock the test moves half a bound per batch; the batches replayed
 * take a poster round each (50 ms apart), 350 ms of real time at least: the old rule, on the real
 * clock, handed over 200 ms after its read.
 */
const REPLAY_YIELD_MS = 200;
const REPLAY_BATCHES = 8;
/** How long every round of a holder may fail on its endpoint before it yields (probes every tenth of it). */
const RPC_FAIL_YIELD_MS = LEASE_TTL_MS / 2;
/** Bound on each wait: a takeover takes a lease tick or two after the hand-over. */
const WAIT_MS = 20_000;
/** Rounds of both posters watched for "nothing more happens". */
const QUIET_ROUNDS = 10;

let nats: LocalNatsCluster;
let nc: NatsConnection;
const chains: DevSettlement[] = [];
const endpoints: FailingEndpoint[] = [];

beforeAll(async () => {
  nats = await LocalNatsCluster.start(3);
  nc = await connect({ servers: nats.urls() });
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
  for (const e of endpoints) await e.close();
  for (const d of chains) await d.chain.close();
});

const hex = (b: number): string => '0x' + b.toString(16).padStart(2, '0').repeat(32);
const rootsOf = (b: number): BatchRootsPair => ({ state_root: hex(b), fills_root: hex(b + 100) });

/** A stand-in DA store (batch id -> its header's roots) and the compare the DA role runs over it. */
class Role {
  readonly batches = new Map<number, BatchRootsPair>();
  readonly checked = new LeaderCheckedRoots(this);
  poster: SettlementPoster | null = null;
  lease: SettlementPosterLease | null = null;

  constructor(readonly id: string) {
    this.checked.check(0, rootsOf(0), hex(0));
  }

  get(id: number): { header: BatchRootsPair } | undefined {
    const h = this.batches.get(id);
    return h === undefined ? undefined : { header: h };
  }

  /** Batch `b` applied: the leader's header says rootsOf(b); this role stored `stored`. */
  apply(b: number, stored: BatchRootsPair = rootsOf(b)): void {
    this.batches.set(b, stored);
    this.checked.check(b, rootsOf(b), stored.state_root);
  }

  async start(dev: DevSettlement, extra: Partial<SettlementPosterOptions> = {}, rpc_url = dev.rpc.url): Promise<void> {
    this.lease = await SettlementPosterLease.start(nc, this.id, LEASE_TTL_MS, 3);
    this.poster = new SettlementPoster({
      nc, node_id: this.id, operator_key: OPERATOR_KEY, roots: this.checked, lease: this.lease, ...extra,
      settings: {
        contract: dev.deployed.address, chain_id: CHAIN_ID, rpc_url, poll_ms: POLL_MS, start_block: 0,
        logs_blocks_max: 1000, roots_per_tx_max: 64,
      },
    });
    this.poster.start();
  }

  get status(): SettlementPoster['status'] {
    if (this.poster === null) throw new Error(`${this.id} not started`);
    return this.poster.status;
  }

  async stop(): Promise<void> {
    await this.poster?.stop();
    await this.lease?.stop();
  }
}

/** One test's fresh chain and its two DA roles, d1 and d2 (not started): both stopped at its end, whatever it did. */
async function withTwoRoles(run: (dev: DevSettlement, d1: Role, d2: Role) => Promise<void>): Promise<void> {
  const dev = await devSettlement([]);
  chains.push(dev);
  const d1 = new Role('d1');
  const d2 = new Role('d2');
  try {
    await run(dev, d1, d2);
  } finally {
    await d1.stop();
    await d2.stop();
  }
}

/** Who holds the poster lease now, as its bucket says (null: nobody). */
async function holderNow(): Promise<string | null> {
  const kv = await new Kvm(nc).open(SETTLEMENT_POSTER_BUCKET);
  const e = await kv.get(LEASE_KEY);
  return e === null || e.operation !== 'PUT' ? null : e.string();
}

async function until<T>(what: string, f: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

async function lastBatchId(dev: DevSettlement): Promise<number> {
  return Number(await dev.contract.readNumber('lastBatchId'));
}

async function postedThrough(dev: DevSettlement, b: number): Promise<void> {
  await until(`batch ${b}'s roots on chain`, async () => ((await lastBatchId(dev)) >= b ? true : undefined));
}

async function quietRounds(): Promise<void> {
  await new Promise((r) => setTimeout(r, QUIET_ROUNDS * POLL_MS));
}

async function onChain(dev: DevSettlement, b: number): Promise<BatchRootsPair> {
  const [state_root] = await dev.contract.read('stateRoots', [b]) as string[];
  const [fills_root] = await dev.contract.read('fillsRoots', [b]) as string[];
  return { state_root, fills_root };
}

describe('the settlement poster lease handed over', () => {
  it('a holder stopped at a root mismatch yields; a standby that agrees posts on; one that mismatches too stops as well', () => withTwoRoles(async (dev, d1, d2) => {
    for (const b of [1, 2]) for (const d of [d1, d2]) d.apply(b);
    // d1 first: it holds the lease and posts.
    await d1.start(dev);
    await postedThrough(dev, 2);
    await d2.start(dev);
    await until('d2 standing by', () => (d2.status.postable_batch_id === 2 ? true : undefined));
    expect(d1.status).toMatchObject({ poster_lease: 'held', roots_posted_batch_id: 2 });
    expect(d2.status.poster_lease).toBe('standby');

    // Batch 3: d1 stored other roots than the leader's header (a damaged host); d2 agrees.
    d1.apply(3, { state_root: hex(3), fills_root: hex(77) });
    d2.apply(3);
    d1.apply(4);
    d2.apply(4);
    await postedThrough(dev, 4);
    for (const b of [3, 4]) expect(await onChain(dev, b)).toEqual(rootsOf(b));
    await until('d2 holding', () => (d2.status.poster_lease === 'held' ? true : undefined));
    expect(d1.status).toMatchObject({
      poster_lease: 'standby', poster_takeovers: 1, stopped_at_mismatch_batch_id: 3, lease_yielded: 'stopped_at_mismatch',
      roots_posted_batch_id: 2,
    });
    expect(d2.status).toMatchObject({ poster_lease: 'held', poster_takeovers: 1, lease_yielded: null, roots_posted_batch_id: 4 });
    expect(await holderNow()).toBe('d2');

    // Batch 5 differs on d2 too (a wrong leader: every DA role alarms): d2 yields as well and
    // d1 does not take the lease back: nobody posts until the operator decides.
    d2.apply(5, { state_root: hex(5), fills_root: hex(78) });
    d1.apply(5);
    await until('d2 to yield', () => (d2.status.lease_yielded === 'stopped_at_mismatch' ? true : undefined));
    await quietRounds();
    await quietRounds();
    expect(await lastBatchId(dev)).toBe(4);
    expect(await holderNow()).toBeNull();
    expect(d1.status).toMatchObject({ poster_lease: 'standby', poster_takeovers: 1 });
    expect(d2.status).toMatchObject({ poster_lease: 'standby', poster_takeovers: 1, stopped_at_mismatch_batch_id: 5 });
    // Never two posters: no transaction or simulation refused.
    expect(dev.chain.refused).toEqual({ calls_reverted: 0, txs_refused: 0, txs_reverted: 0 });
  }), 90_000);

  it('a holder behind the stream\'s newest batch for longer than the bound yields to a standby that has it, and stands by once caught up', () => withTwoRoles(async (dev, d1, d2) => {
    /** The event stream's newest batch (the DA role reads it from RB_EVENTS). */
    let stream_batch = 2;
    const newest_batch = (): Promise<number> => Promise.resolve(stream_batch);
    for (const b of [1, 2]) for (const d of [d1, d2]) d.apply(b);
    await d1.start(dev, { newest_batch, behind_yield_ms: BEHIND_YIELD_MS });
    await postedThrough(dev, 2);
    await d2.start(dev, { newest_batch, behind_yield_ms: BEHIND_YIELD_MS });
    await until('d2 standing by', () => (d2.status.postable_batch_id === 2 ? true : undefined));

    // Batches 3 and 4 published; d2 applies them, d1's reader is stuck at batch 2.
    stream_batch = 4;
    d2.apply(3);
    d2.apply(4);
    await postedThrough(dev, 4);
    for (const b of [3, 4]) expect(await onChain(dev, b)).toEqual(rootsOf(b));
    expect(d1.status).toMatchObject({ poster_lease: 'standby', lease_yielded: 'behind', stream_batch_id: 4 });
    // Takeovers count each time a role's validity came back too (SettlementPosterStatus): a
    // renewal NATS leaves unanswered for its timeout (TTL/2) lapses the lease until the next is
    // confirmed, which counts again. Seen at load ~10 (d1 at 2 here); a 0.7 s SIGSTOP of the
    // nats-servers does it in 5 of 7 tries. So no exact count: d1's must not move from its
    // yield on (withdrawn, it takes the lease neither while behind nor, below, from a live d2).
    const d1_takeovers = d1.lease?.takeovers ?? 0;
    expect(d1_takeovers).toBeGreaterThanOrEqual(1);
    await until('d2 holding', () => (d2.status.poster_lease === 'held' ? true : undefined));
    expect(d2.status).toMatchObject({ lease_yielded: null, roots_posted_batch_id: 4 });
    expect(d2.status.poster_takeovers).toBeGreaterThanOrEqual(1);

    // d1 catches up: it may take the lease again (a candidate), but d2 holds it and posts on.
    d1.apply(3);
    d1.apply(4);
    await until('d1 a candidate again', () => (d1.status.lease_yielded === null ? true : undefined));
    stream_batch = 5;
    for (const d of [d1, d2]) d.apply(5);
    await postedThrough(dev, 5);
    await quietRounds();
    expect(d1.status).toMatchObject({ poster_lease: 'standby', poster_takeovers: d1_takeovers, lease_yielded: null });
    expect(d2.status).toMatchObject({ poster_lease: 'held', roots_posted_batch_id: 5 });
    expect(await holderNow()).toBe('d2');
    expect(dev.chain.refused).toEqual({ calls_reverted: 0, txs_refused: 0, txs_reverted: 0 });
  }), 90_000);

  it('a holder behind the stream that gains on it each bound (a replay) keeps the lease and posts as it advances; the caught-up standby stands by', () => withTwoRoles(async (dev, d1, d2) => {
    let stream_batch = 2;
    const newest_batch = (): Promise<number> => Promise.resolve(stream_batch);
    /** d1's hand-over clock (ms): the test moves it, so each bound holds two of d1's batches. */
    let clock_ms = 0;
    for (const b of [1, 2]) for (const d of [d1, d2]) d.apply(b);
    await d1.start(dev, { newest_batch, behind_yield_ms: REPLAY_YIELD_MS, now_ms: () => clock_ms });
    await postedThrough(dev, 2);
    await d2.start(dev, { newest_batch, behind_yield_ms: REPLAY_YIELD_MS });
    await until('d2 standing by', () => (d2.status.postable_batch_id === 2 ? true : undefined));

    // The stream is REPLAY_BATCHES ahead and d2 has them all; d1 replays them one at a time over
    // 4 bounds, and each reaches the chain before the next (d2 would post them all at once).
    stream_batch = 2 + REPLAY_BATCHES;
    for (let b = 3; b <= stream_batch; b++) d2.apply(b);
    for (let b = 3; b <= stream_batch; b++) {
      d1.apply(b);
      await postedThrough(dev, b);
      expect(await lastBatchId(dev)).toBe(b);
      clock_ms += REPLAY_YIELD_MS / 2;
    }
    await quietRounds();
    expect(d1.status).toMatchObject({
      poster_lease: 'held', poster_takeovers: 1, lease_yielded: null, roots_posted_batch_id: stream_batch, stream_batch_id: stream_batch,
    });
    expect(d2.status).toMatchObject({ poster_lease: 'standby', poster_takeovers: 0, lease_yielded: null });
    expect(await holderNow()).toBe('d1');
    expect(dev.chain.refused).toEqual({ calls_reverted: 0, txs_refused: 0, txs_reverted: 0 });
  }), 90_000);

  it('a holder whose history is not the chain\'s (another history\'s roots through lastBatchId) posts nothing on top and yields; so does the next', () => withTwoRoles(async (dev, d1, d2) => {
    // Batches 1..2 of another history already on chain (a second cluster pointed at this contract).
    await dev.contract.postRoots(OPERATOR_KEY, 1, [hex(61), hex(62)], [hex(161), hex(162)], 0);
    for (const b of [1, 2, 3]) for (const d of [d1, d2]) d.apply(b);
    await d1.start(dev);
    await until('d1 to yield', () => (d1.status.lease_yielded === 'chain_differs' ? true : undefined));
    await d2.start(dev);
    await until('d2 to yield', () => (d2.status.lease_yielded === 'chain_differs' ? true : undefined));
    await quietRounds();
    expect(await lastBatchId(dev)).toBe(2);
    expect(await onChain(dev, 2)).toEqual({ state_root: hex(62), fills_root: hex(162) });
    expect(await holderNow()).toBeNull();
    for (const d of [d1, d2]) {
      expect(d.status).toMatchObject({
        poster_lease: 'standby', poster_takeovers: 1, chain_differs_batch_id: 2, roots_posted_batch_id: 2, postable_batch_id: 3,
      });
    }
    expect(dev.chain.refused).toEqual({ calls_reverted: 0, txs_refused: 0, txs_reverted: 0 });
  }), 90_000);
  it('a holder whose RPC endpoint fails for the bound yields to a standby whose endpoint works; with every endpoint down nobody holds; each takes part again once its endpoint answers', () => withTwoRoles(async (dev, d1, d2) => {
    const [e1, e2] = [await FailingEndpoint.start(dev.rpc.url), await FailingEndpoint.start(dev.rpc.url)];
    endpoints.push(e1, e2);
    const yielded = (d: Role): true | undefined => (d.status.lease_yielded === 'rpc_failing' ? true : undefined);
    for (const b of [1, 2]) for (const d of [d1, d2]) d.apply(b);
    await d1.start(dev, { rpc_fail_yield_ms: RPC_FAIL_YIELD_MS }, e1.url);
    await postedThrough(dev, 2);
    await d2.start(dev, { rpc_fail_yield_ms: RPC_FAIL_YIELD_MS }, e2.url);
    await until('d2 standing by', () => (d2.status.postable_batch_id === 2 ? true : undefined));

    // d1's endpoint answers 503: after the bound it hands the lease over, and d2 posts 3 and 4.
    e1.mode = HTTP_503_PAGE;
    for (const b of [3, 4]) for (const d of [d1, d2]) d.apply(b);
    await postedThrough(dev, 4);
    for (const b of [3, 4]) expect(await onChain(dev, b)).toEqual(rootsOf(b));
    expect(d1.status).toMatchObject({ poster_lease: 'standby', poster_takeovers: 1, lease_yielded: 'rpc_failing', roots_posted_batch_id: 2 });
    expect(d1.status.last_error).toMatch(/HTTP 503/);
    await until('d2 holding', () => (d2.status.poster_lease === 'held' ? true : undefined));
    expect(d2.status).toMatchObject({ poster_takeovers: 1, lease_yielded: null, roots_posted_batch_id: 4 });
    await until('d1 probing its endpoint', () => (e1.asked_down.includes('eth_blockNumber') ? true : undefined));

    // d2's endpoint resets every connection too: d2 yields after the bound, and d1, whose probes
    // fail, does not take the lease: nobody holds it, nothing moves back and forth.
    e2.mode = 'reset';
    for (const d of [d1, d2]) d.apply(5);
    await until('d2 to yield', () => yielded(d2));
    const probes = e2.asked_down.filter((m) => m === 'eth_blockNumber').length;
    await until('d2 probing its endpoint', () => (e2.asked_down.filter((m) => m === 'eth_blockNumber').length > probes ? true : undefined));
    await quietRounds();
    expect(await holderNow()).toBeNull();
    expect(await lastBatchId(dev)).toBe(4);
    expect(d2.status.last_error).toMatch(/fetch failed/);
    for (const d of [d1, d2]) expect(d.status).toMatchObject({ poster_lease: 'standby', poster_takeovers: 1, lease_yielded: 'rpc_failing' });

    // d1's endpoint answers again: it takes part, takes the free lease and posts batch 5.
    e1.mode = 'up';
    await postedThrough(dev, 5);
    // Its round notes the posted batch after the receipt (the chain shows batch 5 a moment before
    // d1's round ends and clears last_error: seen under load).
    await until('d1 to note batch 5 posted', () => (d1.status.roots_posted_batch_id === 5 ? true : undefined));
    expect(d1.status).toMatchObject({ poster_lease: 'held', poster_takeovers: 2, lease_yielded: null, last_error: null });
    // d2's answers again: a candidate, but d1 holds the lease and posts on.
    e2.mode = 'up';
    await until('d2 a candidate again', () => (d2.status.lease_yielded === null ? true : undefined));
    for (const d of [d1, d2]) d.apply(6);
    await postedThrough(dev, 6);
    await quietRounds();
    expect(d1.status).toMatchObject({ poster_lease: 'held', poster_takeovers: 2, roots_posted_batch_id: 6 });
    // Nothing of its failure left as if current (before, h31s: last_error kept "fetch failed").
    expect(d2.status).toMatchObject({ poster_lease: 'standby', poster_takeovers: 1, lease_yielded: null, last_error: null, last_error_at_ms: null });
    expect(await holderNow()).toBe('d1');
    expect(dev.chain.refused).toEqual({ calls_reverted: 0, txs_refused: 0, txs_reverted: 0 });
  }), 90_000);
});
