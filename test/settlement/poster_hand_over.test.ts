// The `behind` rule of the settlement poster's hand-over (src/cluster/poster_hand_over.ts; docs/
// scale-out.md, "Handing the lease over"), on a test's clock and lease, at the default bound: a
// holder short of the event stream's newest batch keeps the lease while it gains on the stream by
// at least BEHIND_GAIN_BATCHES_PER_S_MIN per bound (a replay after a restart), and hands it over
// when it gains less (stuck, a trickle, or a live stream outpacing it). Before (h30q, 2026-11-29)
// it handed over whenever it had not reached the batch it read within the bound. The NATS lease,
// the poster and the chain around it: settlement_poster_yield.test.ts.
import { describe, expect, it } from 'vitest';
import {
  BEHIND_GAIN_BATCHES_PER_S_MIN, BEHIND_YIELD_MS_DEFAULT, PosterHandOver, type HandOverStatus, type PosterLease,
} from '../../src/cluster/poster_hand_over.js';

/** Poster rounds per bound (the poster's run every poll_ms; four are enough to see each step). */
const ROUNDS_PER_BOUND = 4;
/** The least gain per bound at the default bound: 10 batches. */
const GAIN_MIN = (BEHIND_YIELD_MS_DEFAULT / 1000) * BEHIND_GAIN_BATCHES_PER_S_MIN;

class TestLease implements PosterLease {
  held = true;
  readonly takeovers = 1;
  withdrawn: string | null = null;
  holding(): boolean {
    return this.held;
  }
  withdraw(why: string): Promise<void> {
    this.held = false;
    this.withdrawn = why;
    return Promise.resolve();
  }
  rejoin(): void {}
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
    lease_yielded: null, stream_batch_id: -1, last_error: null,
  };
  const h = new PosterHandOver({
    node_id: 'd1', lease, latest: () => latest, posted_batch_id: () => latest, newest_batch: () => Promise.resolve(newest),
    probe_endpoint: () => Promise.resolve(0), now_ms: () => clock_ms,
  }, s);
  for (let bound = 1; bound <= p.bounds; bound++) {
    for (let r = 0; r < ROUNDS_PER_BOUND; r++) {
      await h.afterRound({ endpoint_failed: false });
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
