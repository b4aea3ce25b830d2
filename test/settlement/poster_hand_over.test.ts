// The `behind` rule of the settlement poster's hand-over (src/cluster/poster_hand_over.ts; docs/
// scale-out.md, "Handing the lease over"), on a test's clock and lease, at the default bound: a
// holder short of the event stream's newest batch keeps the lease while it gains on the stream by
// at least BEHIND_GAIN_BATCHES_PER_S_MIN per bound (a replay after a restart), and hands it over
// when it gains less (stuck, a trickle, or a live stream outpacing it). Before (h30q, 2026-11-29)
// it handed over whenever it had not reached the batch it read within the bound. The NATS lease,
// the poster and the chain around it: settlement_poster_yield.test.ts.
// And the `rpc_failing` rule's timing and status, a SettlementPoster on the test clock against a
// loopback endpoint whose every call costs the clock what the test says (no real waiting).
import { afterAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  BEHIND_GAIN_BATCHES_PER_S_MIN, BEHIND_YIELD_MS_DEFAULT, PosterHandOver, RPC_FAIL_YIELD_MS_DEFAULT, type HandOverStatus, type PosterLease,
} from '../../src/cluster/poster_hand_over.js';
import { SettlementPoster } from '../../src/cluster/settlement_poster.js';
import { RPC_TIMEOUT_MS } from '../../src/settlement/rpc.js';
import { FailingEndpoint, HTTP_503_PAGE, type EndpointMode } from './failing_endpoint.js';

/** Poster rounds per bound (the poster's run every poll_ms; four are enough to see each step). */
const ROUNDS_PER_BOUND = 4;
/** The least gain per bound at the default bound: 10 batches. */
const GAIN_MIN = (BEHIND_YIELD_MS_DEFAULT / 1000) * BEHIND_GAIN_BATCHES_PER_S_MIN;

class TestLease implements PosterLease {
  held = true;
  readonly takeovers = 1;
  withdrawn: string | null = null;
  rejoined: string | null = null;
  holding(): boolean {
    return this.held;
  }
  withdraw(why: string): Promise<void> {
    this.held = false;
    this.withdrawn = why;
    return Promise.resolve();
  }
  rejoin(why: string): void {
    this.rejoined = why;
  }
}

interface Pace {
  /** The holder's postable batch and the stream's newest at the start. */
  latest: number;
  newest: number;
  /** Batches the holder applies, and the stream gets, each bound. */
  applied: number;
  published: number;
  bounds: number;
}

/** The bound (1-based) at whose end the holder handed the lease over; null: it held on through `bounds`. */
async function yieldedAt(p: Pace): Promise<number | null> {
  let { latest, newest } = p;
  let clock_ms = 0;
  const lease = new TestLease();
  const s: HandOverStatus = {
    poster_lease: 'held', postable_batch_id: latest, stopped_at_mismatch_batch_id: null, chain_differs_batch_id: null,
    lease_yielded: null, lease_yielded_at_ms: null, stream_batch_id: -1, last_error: null, last_error_at_ms: null,
  };
  const h = new PosterHandOver({
    node_id: 'd1', lease, latest: () => latest, posted_batch_id: () => latest, newest_batch: () => Promise.resolve(newest),
    probe_endpoint: () => Promise.resolve(0), now_ms: () => clock_ms,
  }, s);
  for (let bound = 1; bound <= p.bounds; bound++) {
    for (let r = 0; r < ROUNDS_PER_BOUND; r++) {
      await h.afterRound({ unanswered_since_ms: clock_ms, endpoint_failed: false });
      if (lease.withdrawn !== null) {
        expect(s).toMatchObject({ lease_yielded: 'behind', poster_lease: 'standby', stream_batch_id: newest });
        return bound;
      }
      clock_ms += BEHIND_YIELD_MS_DEFAULT / ROUNDS_PER_BOUND;
    }
    latest += p.applied;
    newest += p.published;
  }
  return null;
}

describe('the behind rule: a holder short of the stream keeps the lease while it gains on it', () => {
  it('a replay (a restart from far behind, far faster than the stream) keeps it bound after bound', async () => {
    expect(await yieldedAt({ latest: 10, newest: 100_000, applied: 5_000, published: 100, bounds: 12 })).toBeNull();
    // Exactly the least gain (10 a bound at the default bound, applied less published) still keeps it.
    expect(await yieldedAt({ latest: 10, newest: 100_000, applied: GAIN_MIN + 5, published: 5, bounds: 12 })).toBeNull();
  });

  it('a stuck holder, a trickle on an idle stream, and one that a live stream outpaces hand it over within two bounds', async () => {
    expect(await yieldedAt({ latest: 10, newest: 100, applied: 0, published: 0, bounds: 12 })).toBeLessThanOrEqual(2);
    expect(await yieldedAt({ latest: 10, newest: 100, applied: 1, published: 0, bounds: 12 })).toBeLessThanOrEqual(2);
    expect(await yieldedAt({ latest: 10, newest: 100, applied: GAIN_MIN - 1, published: 0, bounds: 12 })).toBeLessThanOrEqual(2);
    expect(await yieldedAt({ latest: 10, newest: 1_000, applied: 300, published: 400, bounds: 12 })).toBeLessThanOrEqual(2);
  });

  it('a holder that reaches the batch it read is not behind: one that keeps pace with the stream a step short never hands over', async () => {
    expect(await yieldedAt({ latest: 10, newest: 12, applied: 50, published: 50, bounds: 12 })).toBeNull();
    expect(await yieldedAt({ latest: 10, newest: 100, applied: 300, published: 300, bounds: 12 })).toBeNull();
  });
});

/** The poster's default interval between rounds (settlement.poll_ms). */
const POLL_MS = 1000;
const endpoints: FailingEndpoint[] = [];
afterAll(async () => {
  for (const e of endpoints) await e.close();
});

/** A DA role's endpoint on a test clock: each call moves the clock by `call_ms` (a hang: RPC_TIMEOUT_MS). */
class Clocked {
  clock_ms = 0;
  call_ms = 0;
  private constructor(readonly e: FailingEndpoint) {
    e.on_call = () => {
      this.clock_ms += this.call_ms;
    };
  }

  static async start(mode: EndpointMode): Promise<Clocked> {
    const e = await FailingEndpoint.start();
    endpoints.push(e);
    e.mode = mode;
    return new Clocked(e);
  }
}

/** A poster holding `lease`, its hand-over on the endpoint's clock, with batches 1..2 to post. */
function posterOn(c: Clocked, lease: TestLease): SettlementPoster {
  return new SettlementPoster({
    nc: {} as NatsConnection, node_id: 'd1', operator_key: '0x' + '01'.repeat(32), lease, now_ms: () => c.clock_ms,
    roots: { latest: () => 2, get: () => undefined },
    settings: {
      contract: '0x' + '11'.repeat(20), chain_id: 31337, rpc_url: c.e.url, poll_ms: POLL_MS, start_block: 0, logs_blocks_max: 1000, roots_per_tx_max: 64,
    },
  });
}

/** Runs the poster's rounds POLL_MS apart on the clock until `done` (at most `rounds_max`); the clock then. */
async function roundsUntil(p: SettlementPoster, c: Clocked, done: () => boolean, rounds_max: number): Promise<number> {
  for (let r = 0; r < rounds_max; r++) {
    await p.round();
    if (done()) return c.clock_ms;
    c.clock_ms += POLL_MS;
  }
  throw new Error(`not done within ${rounds_max} rounds`);
}

describe('the rpc_failing rule on the test clock: a SettlementPoster whose endpoint fails', () => {
  it('an endpoint that hangs (each round ends at the RPC timeout) hands the lease over within a round of the bound, not a round and more later', async () => {
    const c = await Clocked.start({ status: 504, body: '<html>504 Gateway Time-out</html>' });
    c.call_ms = RPC_TIMEOUT_MS;
    const lease = new TestLease();
    const p = posterOn(c, lease);
    const rounds_max = RPC_FAIL_YIELD_MS_DEFAULT / RPC_TIMEOUT_MS + 3;
    const out_ms = await roundsUntil(p, c, () => lease.withdrawn !== null, rounds_max);
    // Rounds end at 10 s, 21 s, 32 s: the first to end past the bound (from the hang, the first
    // failed round's start) hands over. Before (h31s), the bound counted from the first round's
    // end, and the holder stepped out at 43 s.
    expect(out_ms).toBeGreaterThanOrEqual(RPC_FAIL_YIELD_MS_DEFAULT);
    expect(out_ms).toBeLessThan(RPC_FAIL_YIELD_MS_DEFAULT + RPC_TIMEOUT_MS);
    expect(p.status).toMatchObject({ lease_yielded: 'rpc_failing', poster_lease: 'standby' });
    expect(lease.withdrawn).toMatch(/every round failed on its RPC endpoint for 32000 ms \(the RPC endpoint answered HTTP 504\)/);
  });

  it('a round answered for longer than the bound (a long receipt wait) that then fails is not handed over at once: the window starts at its last answer', async () => {
    const answered_ms = RPC_FAIL_YIELD_MS_DEFAULT + RPC_TIMEOUT_MS;
    const c = await Clocked.start({ status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: 1, result: '0x' + '5'.padStart(64, '0') }) });
    // The first call (lastBatchId) is answered at 40 s; every later one gets a 503.
    let calls = 0;
    c.e.on_call = () => {
      if (calls++ === 0) c.clock_ms += answered_ms;
      else c.e.mode = HTTP_503_PAGE;
    };
    const lease = new TestLease();
    const p = posterOn(c, lease);
    const out_ms = await roundsUntil(p, c, () => lease.withdrawn !== null, RPC_FAIL_YIELD_MS_DEFAULT / POLL_MS + 2);
    expect(out_ms - answered_ms).toBeGreaterThanOrEqual(RPC_FAIL_YIELD_MS_DEFAULT);
    expect(p.status).toMatchObject({ lease_yielded: 'rpc_failing', last_error: 'the RPC endpoint answered HTTP 503' });
  });

  it('a role out for rpc_failing shows since when, and its endpoint\'s state as its probes find it: no stale error', async () => {
    const c = await Clocked.start(HTTP_503_PAGE);
    const lease = new TestLease();
    const p = posterOn(c, lease);
    const before_ms = Date.now();
    await roundsUntil(p, c, () => lease.withdrawn !== null, RPC_FAIL_YIELD_MS_DEFAULT / POLL_MS + 2);
    const out = { ...p.status };
    expect(out).toMatchObject({ lease_yielded: 'rpc_failing', last_error: 'the RPC endpoint answered HTTP 503' });
    expect(out.lease_yielded_at_ms).toBeGreaterThanOrEqual(before_ms);
    expect(out.last_error_at_ms).toBeGreaterThanOrEqual(before_ms);

    // The endpoint now resets connections: a probe (every tenth of the bound) says so, with its
    // time. Before (h31s), the status kept the 503 it stepped out for.
    c.e.mode = 'reset';
    const probes_max = RPC_FAIL_YIELD_MS_DEFAULT / POLL_MS;
    await roundsUntil(p, c, () => p.status.last_error !== out.last_error, probes_max);
    expect(p.status.last_error).toBe('fetch failed');
    expect(p.status.last_error_at_ms).toBeGreaterThanOrEqual(out.last_error_at_ms ?? Number.POSITIVE_INFINITY);
    expect(p.status).toMatchObject({ lease_yielded: 'rpc_failing', lease_yielded_at_ms: out.lease_yielded_at_ms });

    // It answers: the role takes part again, and nothing of the failure is left as if current.
    // Before (h31s), last_error kept the last failure while the role was a candidate again.
    c.e.mode = 'up';
    await roundsUntil(p, c, () => lease.rejoined !== null, probes_max);
    expect(p.status).toMatchObject({ lease_yielded: null, lease_yielded_at_ms: null, last_error: null, last_error_at_ms: null, poster_lease: 'standby' });
  });
});
