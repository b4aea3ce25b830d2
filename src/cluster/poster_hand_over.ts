// When the cluster's settlement poster hands its lease over (docs/scale-out.md, "Settlement
// roots": "Handing the lease over"; branch h29p, 2026-11-29). Before, a holder that could not post
// what the cluster needed kept renewing the lease, so no standby took over and roots stopped
// cluster-wide: one stopped at a root mismatch, and one stuck behind the event stream (and one
// whose history is not the chain's appended to it: roots_poster.ts check_chain_base); and one
// whose RPC endpoint failed (branch h30p) kept it while a standby's endpoint might work. `behind` is
// for a holder that does not catch up (h30q): one replaying after a restart keeps the lease. The
// decision runs at the end of each poster round (settlement_poster.ts), after its transaction (if
// any) was answered, so no transaction of this role is in flight when another takes the key; the
// contract takes a range only from lastBatchId + 1 in any case.
import { performance } from 'node:perf_hooks';
import { componentLog } from '../util/log.js';

const log = componentLog('cluster');

/**
 * The window a holder short of the event stream's newest batch (as it read it) is judged over: at
 * its end the holder must have gained on the stream (below) or it hands the lease over. A DA role
 * applies a batch within milliseconds of its publication, and a GC pause or a slow store flush
 * stays well under 10 s; a role that gains nothing for that long is stuck (a `failure`), and
 * another DA role may have the roots it lacks. A wrong guess costs a lease hand-over (a tick of no
 * posting), never a wrong root.
 */
export const BEHIND_YIELD_MS_DEFAULT = 10_000;
/**
 * The least a holder short of the stream must gain on it per second of the window (batches it
 * applied minus batches the stream got meanwhile; at least one a window) to keep the lease. Why a
 * rate and not only "it advanced" or "it reached the batch it read": a role replaying after a
 * restart applies 7 to 60 batches a second (a batch of ~1,000 requests and its state root: 16 ms,
 * 140 ms on a busy box; bench/recovery state_root_ms_per_batch) but may need minutes to reach the
 * stream (the latter rule made it step out after 10 s, posting nothing until through); a role that
 * trickles (a store taking seconds a batch) advances every window yet never catches a live stream,
 * and on an idle one makes the cluster's roots wait at its pace while a caught-up standby could
 * post them all within a lease tick. One a second is well below a replay's pace, above a trickle.
 */
export const BEHIND_GAIN_BATCHES_PER_S_MIN = 1;

/**
 * How long every round of a holder may fail on its RPC endpoint (no connection, no answer within
 * RPC_TIMEOUT_MS, HTTP 429 or 5xx, a provider's "internal error": rpc.ts isEndpointFailure) before
 * it hands the lease over. Longer than an Ethereum node's restart or a network blip (seconds),
 * which a hand-over would only turn into a takeover's extra reads; shorter than roots may wait
 * without an operator noticing (withdrawal signatures wait for them; a minute is the order
 * operators page at). Counted per holding spell, so that when every DA role's endpoint fails the
 * lease moves at most once per bound. Counted from the first failed round's start (or its last
 * answered call, if later: RoundEnd), not its end (before, 2026-11-29 h31s): an endpoint that hangs
 * fails a round only at RPC_TIMEOUT_MS, so the holder stepped out ~40 s after the hang. Not from
 * the round's start alone: a round that waited 60 s for a receipt, answered all along, would hand
 * over at its first failed call.
 */
export const RPC_FAIL_YIELD_MS_DEFAULT = 30_000;
/**
 * A role that handed the lease over for rpc_failing asks its endpoint (eth_blockNumber) at most
 * this often per bound: every 3 s by default, so it is a candidate again within seconds of its
 * endpoint answering, for one cheap call.
 */
const RPC_PROBES_PER_BOUND = 10;

/** What the poster needs of its lease (lease.ts TimedLease). */
export interface PosterLease {
  holding(): boolean;
  readonly takeovers: number;
  /** Stops renewing and taking the lease; hands it over at once if held. */
  withdraw(why: string): Promise<void>;
  /** Takes part again after withdraw(); `why` is logged. */
  rejoin(why: string): void;
}

/** Why a DA role handed the poster lease over and does not take it. */
export type LeaseYield = 'stopped_at_mismatch' | 'chain_differs' | 'behind' | 'rpc_failing';

/** How the poster's round ended, as the hand-over reads it. */
export interface RoundEnd {
  /**
   * Since when the round got no answer, on the hand-over's clock (PosterHandOver.now): its start,
   * or its last call the endpoint answered if later. The rpc_failing window starts here.
   */
  unanswered_since_ms: number;
  /** The round failed on the RPC endpoint (rpc.ts isEndpointFailure); false for a standby's round. */
  endpoint_failed: boolean;
}

/** The poster's status fields the hand-over reads and writes (SettlementPosterStatus). */
export interface HandOverStatus {
  poster_lease: 'held' | 'standby';
  postable_batch_id: number;
  stopped_at_mismatch_batch_id: number | null;
  chain_differs_batch_id: number | null;
  lease_yielded: LeaseYield | null;
  /** When this role stepped out (epoch ms; null while it takes part). */
  lease_yielded_at_ms: number | null;
  stream_batch_id: number;
  /**
   * The last round's error (named in the rpc_failing hand-over's log line); while out for
   * rpc_failing, the last probe's; null once a round succeeds or the endpoint answers a probe.
   */
  last_error: string | null;
  /** When last_error was last seen (epoch ms): a round or probe that failed with it. */
  last_error_at_ms: number | null;
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
  /** A monotonic clock in ms (default performance.now; a test's clock). */
  now_ms?: () => number;
  /** Resolves when the RPC endpoint answers (eth_blockNumber): a role out for rpc_failing then rejoins. */
  probe_endpoint: () => Promise<unknown>;
  /** Default RPC_FAIL_YIELD_MS_DEFAULT. */
  rpc_fail_yield_ms?: number;
}

export class PosterHandOver {
  /**
   * A holder short of the stream's newest batch: the window it is judged over, from since_ms
   * (monotonic), when it had from_batch_id and the stream newest_batch_id (the window ends early,
   * the holder no longer behind, once it reaches that batch).
   */
  private behind: { since_ms: number; from_batch_id: number; newest_batch_id: number } | null = null;
  /** The last failure to read the stream's newest batch (logged when it changes). */
  private newest_error: string | null = null;
  /** When the stream's newest batch was last read (monotonic ms; -inf: never). */
  private read_at_ms = Number.NEGATIVE_INFINITY;
  /** Since when every round of this holding spell failed on the RPC endpoint (monotonic ms; null: the last did not). */
  private failing_since_ms: number | null = null;
  /** When a role out for rpc_failing last asked its endpoint (monotonic ms). */
  private probed_at_ms = 0;

  constructor(private readonly o: HandOverOptions, private readonly s: HandOverStatus) {}

  /**
   * Hands the lease over when this role cannot post what the cluster needs (before 2026-11-29 it
   * kept renewing and roots stopped cluster-wide): stopped at a root mismatch (once it posted the
   * batches before it, if it holds the lease) or at a chain holding another history, or, as the
   * holder, every round failing on its RPC endpoint for rpc_fail_yield_ms, or short of the
   * stream's newest batch and not gaining on it over a window of behind_yield_ms. A standby stopped at a mismatch stops taking part
   * too, so that when every DA role mismatches (a wrong leader) nobody posts until the operator
   * decides. Runs at the end of a round: no transaction of this role's is in flight.
   */
  async afterRound(round: RoundEnd): Promise<void> {
    const stop = this.stopOf();
    if (stop !== null) {
      await this.stopForGood(stop, round);
      return;
    }
    if (this.s.lease_yielded !== null) {
      await this.rejoinWhenAble();
      return;
    }
    if (!this.o.lease.holding()) {
      this.behind = null;
      this.failing_since_ms = null;
      return;
    }
    if (await this.yieldWhenRpcFailing(round)) return;
    await this.yieldWhenBehind();
  }

  private stopOf(): 'stopped_at_mismatch' | 'chain_differs' | null {
    const s = this.s;
    return s.stopped_at_mismatch_batch_id !== null ? 'stopped_at_mismatch' : s.chain_differs_batch_id !== null ? 'chain_differs' : null;
  }

  /** Steps out for good at a stop; a holder stopped at a mismatch first posts the batches before it (its endpoint willing). */
  private async stopForGood(stop: 'stopped_at_mismatch' | 'chain_differs', round: RoundEnd): Promise<void> {
    const { lease } = this.o;
    const s = this.s;
    if (s.lease_yielded === stop) return;
    if (lease.holding() && stop === 'stopped_at_mismatch' && this.o.posted_batch_id() < s.postable_batch_id) {
      await this.yieldWhenRpcFailing(round);
      return;
    }
    await this.stepOut(stop, stop === 'chain_differs'
      ? `the contract's roots of batch ${s.chain_differs_batch_id} are not this role's; a DA role whose history is the chain's may post`
      : `stopped at batch ${s.stopped_at_mismatch_batch_id} (its roots differ from the leader's header); a DA role whose roots agree may post`);
  }

  /** Hands the lease over (status: why and since when). */
  private async stepOut(why: LeaseYield, message: string): Promise<void> {
    const s = this.s;
    s.lease_yielded = why;
    s.lease_yielded_at_ms = Date.now();
    await this.o.lease.withdraw(message);
    s.poster_lease = 'standby';
  }

  /** Takes part again (status: no longer out). */
  private rejoin(message: string): void {
    this.s.lease_yielded = null;
    this.s.lease_yielded_at_ms = null;
    this.o.lease.rejoin(message);
  }

  /** Takes part again once what made this role step out is over: caught up (behind), its endpoint answering (rpc_failing). */
  private async rejoinWhenAble(): Promise<void> {
    const s = this.s;
    if (s.lease_yielded === 'behind') {
      if (this.o.latest() < s.stream_batch_id) return;
      this.rejoin(`caught up (postable through batch ${s.stream_batch_id})`);
      return;
    }
    if (s.lease_yielded !== 'rpc_failing' || !(await this.probeAnswers())) return;
    // The error it stepped out for is over: shown on, it would read as the endpoint's state.
    s.last_error = null;
    s.last_error_at_ms = null;
    this.rejoin('its RPC endpoint answers again (eth_blockNumber)');
  }

  /**
   * Whether the endpoint answered a probe now; false also when the last probe was too recent. A
   * failed probe's error is the status's last_error, with its time: the endpoint's state now, not
   * the round's error from when this role stepped out (before, 2026-11-29 h31s, that one stayed).
   */
  private async probeAnswers(): Promise<boolean> {
    const now = this.now();
    if (now - this.probed_at_ms < this.rpcFailYieldMs() / RPC_PROBES_PER_BOUND) return false;
    this.probed_at_ms = now;
    try {
      await this.o.probe_endpoint();
      return true;
    } catch (e) {
      const s = this.s;
      const message = (e as Error).message;
      if (message !== s.last_error) log.warn(`ringbook da ${this.o.node_id}: settlement poster: its RPC endpoint still fails (${message})`);
      s.last_error = message;
      s.last_error_at_ms = Date.now();
      return false;
    }
  }

  private rpcFailYieldMs(): number {
    return this.o.rpc_fail_yield_ms ?? RPC_FAIL_YIELD_MS_DEFAULT;
  }

  /**
   * A holder whose rounds of this spell all failed on its endpoint for the bound steps out (true).
   * The first probe comes a probe interval later, so a standby takes the freed key first.
   */
  private async yieldWhenRpcFailing(round: RoundEnd): Promise<boolean> {
    const now = this.now();
    if (!round.endpoint_failed) {
      this.failing_since_ms = null;
      return false;
    }
    this.failing_since_ms ??= round.unanswered_since_ms;
    const failing_ms = now - this.failing_since_ms;
    if (failing_ms < this.rpcFailYieldMs()) return false;
    this.failing_since_ms = null;
    this.behind = null;
    this.probed_at_ms = now;
    await this.stepOut('rpc_failing', `every round failed on its RPC endpoint for ${Math.round(failing_ms)} ms ` +
      `(${this.s.last_error ?? 'no error'}); a DA role whose endpoint works may post; takes part again once its endpoint answers`);
    return true;
  }

  /** The hand-over's monotonic clock in ms (RoundEnd.unanswered_since_ms is read from it). */
  now(): number {
    return this.o.now_ms === undefined ? performance.now() : this.o.now_ms();
  }

  private behindYieldMs(): number {
    return this.o.behind_yield_ms ?? BEHIND_YIELD_MS_DEFAULT;
  }

  /**
   * A holder short of the stream's newest batch that did not gain on it by the minimum
   * (BEHIND_GAIN_BATCHES_PER_S_MIN) over a window of behind_yield_ms steps out; one that did
   * starts the next window. Before (2026-11-29, h30q) it stepped out when it had not reached the
   * batch it read within the bound, so a replay longer than the bound posted nothing until through.
   */
  private async yieldWhenBehind(): Promise<void> {
    const { newest_batch } = this.o;
    if (newest_batch === undefined) {
      this.behind = null;
      return;
    }
    const latest = this.o.latest();
    if (this.behind !== null && latest >= this.behind.newest_batch_id) this.behind = null;
    if (this.behind === null) {
      await this.startBehind(newest_batch, latest);
      return;
    }
    const w = this.behind;
    if (this.now() - w.since_ms < this.behindYieldMs()) return;
    this.read_at_ms = this.now();
    // Unread (logged), the stream counts as not grown: a holder that applied nothing still steps out.
    const newest = (await this.readNewest(newest_batch)) ?? w.newest_batch_id;
    const gained = this.gainOver(w, latest, newest);
    if (gained >= this.gainMin()) {
      this.behind = { since_ms: this.now(), from_batch_id: latest, newest_batch_id: newest };
      return;
    }
    await this.yieldBehind(latest, newest, gained);
  }

  /** Reads the stream's newest batch and opens a window if this holder is short of it. */
  private async startBehind(newest_batch: () => Promise<number>, latest: number): Promise<void> {
    // Read again only once the last batch read is reached (a holder that keeps up under load,
    // always a batch or two short, is never "behind" for long), and at most every quarter of
    // the bound (two NATS API requests a read; a stuck holder is then seen within 1.25 bounds).
    const now = this.now();
    if (now - this.read_at_ms < this.behindYieldMs() / 4) return;
    this.read_at_ms = now;
    const newest = await this.readNewest(newest_batch);
    if (newest !== null && newest > latest) this.behind = { since_ms: now, from_batch_id: latest, newest_batch_id: newest };
  }

  /** Batches this holder gained on the stream over window `w`: those it applied less those the stream got. */
  private gainOver(w: { from_batch_id: number; newest_batch_id: number }, latest: number, newest: number): number {
    return (latest - w.from_batch_id) - Math.max(0, newest - w.newest_batch_id);
  }

  /** BEHIND_GAIN_BATCHES_PER_S_MIN over the window, at least one batch. */
  private gainMin(): number {
    return Math.max(1, Math.ceil((this.behindYieldMs() * BEHIND_GAIN_BATCHES_PER_S_MIN) / 1000));
  }

  private async yieldBehind(latest: number, newest: number, gained: number): Promise<void> {
    this.s.stream_batch_id = newest;
    this.behind = null;
    await this.stepOut('behind', `postable through batch ${latest} while the event stream holds batch ${newest}, ` +
      `gaining ${gained} batches on it in ${this.behindYieldMs()} ms (at least ${this.gainMin()} needed); takes part again once through it`);
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
