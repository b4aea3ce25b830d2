// When the cluster's settlement poster hands its lease over (docs/scale-out.md, "Settlement
// roots": "Handing the lease over"; branch h29p, 2026-11-29). Before, a holder that could not post
// what the cluster needed kept renewing the lease, so no standby took over and roots stopped
// cluster-wide: one stopped at a root mismatch, and one stuck behind the event stream (and one
// whose history is not the chain's appended to it: roots_poster.ts check_chain_base). The
// decision runs at the end of each poster round (settlement_poster.ts), after its transaction (if
// any) was answered, so no transaction of this role is in flight when another takes the key; the
// contract takes a range only from lastBatchId + 1 in any case.
import { performance } from 'node:perf_hooks';
import { componentLog } from '../util/log.js';

const log = componentLog('cluster');

/**
 * How long a holder may stay short of the event stream's newest batch (as it read it) before it
 * hands the lease over: a DA role applies a batch within milliseconds of its publication, and a GC
 * pause or a slow store flush stays well under 10 s; past it the role is stuck (a `failure`) or
 * replaying from far behind (a restart), and another DA role may have the roots it lacks. A
 * wrong guess costs a lease hand-over (a tick of no posting), never a wrong root.
 */
export const BEHIND_YIELD_MS_DEFAULT = 10_000;

/** What the poster needs of its lease (lease.ts TimedLease). */
export interface PosterLease {
  holding(): boolean;
  readonly takeovers: number;
  /** Stops renewing and taking the lease; hands it over at once if held. */
  withdraw(why: string): Promise<void>;
  /** Takes part again after withdraw(). */
  rejoin(): void;
}

/** Why a DA role handed the poster lease over and does not take it. */
export type LeaseYield = 'stopped_at_mismatch' | 'chain_differs' | 'behind';

/** The poster's status fields the hand-over reads and writes (SettlementPosterStatus). */
export interface HandOverStatus {
  poster_lease: 'held' | 'standby';
  postable_batch_id: number;
  stopped_at_mismatch_batch_id: number | null;
  chain_differs_batch_id: number | null;
  lease_yielded: LeaseYield | null;
  stream_batch_id: number;
}

export interface HandOverOptions {
  node_id: string;
  lease: PosterLease;
  /** The last batch this role may post (its LeaderCheckedRoots). */
  latest: () => number;
  /** The contract's lastBatchId as the poster last read or posted it. */
  posted_batch_id: () => number;
  /** The event stream's newest batch (absent: a holder is never measured behind). */
  newest_batch?: () => Promise<number>;
  /** Default BEHIND_YIELD_MS_DEFAULT. */
  behind_yield_ms?: number;
}

export class PosterHandOver {
  /** A holder short of the stream's newest batch: that batch, and since when (monotonic ms). */
  private behind: { batch_id: number; since_ms: number } | null = null;
  /** The last failure to read the stream's newest batch (logged when it changes). */
  private newest_error: string | null = null;
  /** When the stream's newest batch was last read (monotonic ms; -inf: never). */
  private read_at_ms = Number.NEGATIVE_INFINITY;

  constructor(private readonly o: HandOverOptions, private readonly s: HandOverStatus) {}

  /**
   * Hands the lease over when this role cannot post what the cluster needs (before 2026-11-29 it
   * kept renewing and roots stopped cluster-wide): stopped at a root mismatch (once it posted the
   * batches before it, if it holds the lease) or at a chain holding another history, or, as the
   * holder, short of the stream's newest batch for behind_yield_ms. A standby stopped at a mismatch stops taking part too, so that
   * when every DA role mismatches (a wrong leader) nobody posts until the operator decides.
   */
  async afterRound(): Promise<void> {
    const { lease } = this.o;
    const s = this.s;
    const stop = s.stopped_at_mismatch_batch_id !== null ? 'stopped_at_mismatch' : s.chain_differs_batch_id !== null ? 'chain_differs' : null;
    if (stop !== null) {
      if (s.lease_yielded === stop) return;
      if (lease.holding() && stop === 'stopped_at_mismatch' && this.o.posted_batch_id() < s.postable_batch_id) return;
      s.lease_yielded = stop;
      await lease.withdraw(stop === 'chain_differs'
        ? `the contract's roots of batch ${s.chain_differs_batch_id} are not this role's; a DA role whose history is the chain's may post`
        : `stopped at batch ${s.stopped_at_mismatch_batch_id} (its roots differ from the leader's header); a DA role whose roots agree may post`);
      s.poster_lease = 'standby';
      return;
    }
    const latest = this.o.latest();
    if (s.lease_yielded === 'behind') {
      if (latest < s.stream_batch_id) return;
      s.lease_yielded = null;
      lease.rejoin();
      return;
    }
    const { newest_batch } = this.o;
    if (newest_batch === undefined || !lease.holding()) {
      this.behind = null;
      return;
    }
    const yield_ms = this.o.behind_yield_ms ?? BEHIND_YIELD_MS_DEFAULT;
    if (this.behind !== null && latest >= this.behind.batch_id) this.behind = null;
    if (this.behind === null) {
      // Read again only once the last batch read is reached (a holder that keeps up under load,
      // always a batch or two short, is never "behind" for long), and at most every quarter of
      // the bound (two NATS API requests a read; a stuck holder is then seen within 1.25 bounds).
      const now = performance.now();
      if (now - this.read_at_ms < yield_ms / 4) return;
      this.read_at_ms = now;
      const newest = await this.readNewest(newest_batch);
      if (newest !== null && newest > latest) this.behind = { batch_id: newest, since_ms: now };
      return;
    }
    const behind_ms = performance.now() - this.behind.since_ms;
    if (behind_ms < yield_ms) return;
    s.lease_yielded = 'behind';
    s.stream_batch_id = this.behind.batch_id;
    this.behind = null;
    await lease.withdraw(`postable through batch ${latest} while the event stream holds batch ${s.stream_batch_id}, ` +
      `${Math.round(behind_ms)} ms; takes part again once through it`);
    s.poster_lease = 'standby';
  }

  /** The stream's newest batch (status), null when it could not be read (logged when it changes). */
  private async readNewest(newest_batch: () => Promise<number>): Promise<number | null> {
    try {
      const newest = await newest_batch();
      this.s.stream_batch_id = newest;
      this.newest_error = null;
      return newest;
    } catch (e) {
      const message = String(e);
      if (message !== this.newest_error) log.warn(`ringbook da ${this.o.node_id}: the event stream's newest batch not read (${message})`);
      this.newest_error = message;
      return null;
    }
  }
}
