// The front's inline signature checks (issue 11): which checks the front thread runs itself, at
// the request's arrival in the same event-loop turn, instead of handing them to a verify worker.
//
// A hand-off at light load costs two thread wake-ups (the front's futex wake of the sleeping
// worker, the worker's waitAsync wake-up of the front) and a turn of the front's event loop
// (setImmediate) on top of the ~60 µs recovery; on 2 cores the woken worker may also wait for a
// core (docs/benchmarks.md, issue 11, "the front's inline checks"). The front is mostly idle at
// light load (~76–83% idle at 1,000 requests/s, docs/benchmarks.md), so it checks a few signatures per turn itself. Under load
// it must not: the front is the bottleneck thread at the max rate, and the workers check in
// parallel with it. The load signals, all cheap: a task of the pool in flight, checks of this turn
// already queued for the pool, this turn's inline budget spent, or a turn with more checks than the
// budget ended less than INLINE_AFTER_LOAD_MS ago (a turn is the front's checks between two of the
// batcher's flushes). The last one matters at the max rate: the worker checks a turn's ~64
// signatures faster than the front handles their requests (~40 vs ~100 µs a request), so the pool
// is often idle when the front's next turn starts, and the front must not spend it on recoveries.
import { INLINE_AFTER_LOAD_MS, INLINE_ITEMS_MAX } from './verify_limits.js';

export class InlineCheckPolicy {
  /** Checks the front may run itself per turn (config verify.inline_items_max; 0: none). */
  readonly items_max: number;
  /** This turn's checks run on the front so far. */
  #here = 0;
  /** This turn's checks handed to the pool so far. */
  #passed = 0;
  /** When the last turn with more checks than items_max ended (ms, `now`'s clock). */
  #load_end_ms = -Infinity;
  readonly #now: () => number;

  /** `now`: a monotonic clock in ms (performance.now; tests pass their own). */
  constructor(items_max: number, now: () => number = () => performance.now()) {
    if (!Number.isSafeInteger(items_max) || items_max < 0 || items_max > INLINE_ITEMS_MAX) {
      throw new RangeError(`inline items max must be an integer in 0..${INLINE_ITEMS_MAX}`);
    }
    this.items_max = items_max;
    this.#now = now;
  }

  /**
   * Whether the check arriving now runs on the front (and is counted as this turn's): the pool is
   * idle (`pool_idle`: nothing queued or running, so the check overtakes no task), none of this
   * turn's checks is waiting for or went to the pool (`queued` 0, none passed: a turn that filled
   * the batcher's batch is load), the turn's budget is left, and no turn of
   * load ended within INLINE_AFTER_LOAD_MS. Reads the clock only in the last case.
   */
  takeHere(pool_idle: boolean, queued: number): boolean {
    if (!pool_idle || queued !== 0 || this.#passed !== 0 || this.#here >= this.items_max) return false;
    if (this.#load_end_ms !== -Infinity) {
      if (this.#now() - this.#load_end_ms < INLINE_AFTER_LOAD_MS) return false;
      this.#load_end_ms = -Infinity;
    }
    this.#here++;
    return true;
  }

  /** `count` checks of this turn went to the pool. */
  passed(count: number): void {
    this.#passed += count;
  }

  /** The turn is over (the batcher's end-of-turn flush): a turn of load holds the next ones off. */
  endTurn(): void {
    if (this.#here + this.#passed > this.items_max) this.#load_end_ms = this.#now();
    this.#here = 0;
    this.#passed = 0;
  }
}
