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
//
// Between the two (medium load, e.g. half the max rate: turns of ~4 arrivals, a task in flight most
// of the time) those signals send every check to the one worker (on 2 cores), and each request pays
// the hand-off both ways and waits for its task's last recovery while the front is mostly idle.
// So a second rule, on the front's own busy share: while the front's event loop was busy less than
// `busy_max_pct` of the last closed window (Node's eventLoopUtilization since the previous read:
// a window closes at the first turn end INLINE_BUSY_WINDOW_MS after it opened; one longer than
// INLINE_BUSY_WINDOW_MS_MAX spanned an idle spell and counts as not quiet), the
// turn's first `items_max` checks run on the front whatever the pool holds, the rest go to the
// pool: the two cores recover side by side (off by default, verify_limits.ts says why). The busy
// share counts the inline checks themselves, so the rule backs off as it takes work, and at the
// max rate (the front busy ~100%) it takes none.
import { performance } from 'node:perf_hooks';
import { INLINE_AFTER_LOAD_MS, INLINE_BUSY_WINDOW_MS, INLINE_BUSY_WINDOW_MS_MAX, INLINE_ITEMS_MAX } from './verify_limits.js';

/** The calling thread's event-loop utilization (0..1) since the previous call (the first: since start). */
export function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const u = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    return u;
  };
}

export class InlineCheckPolicy {
  // `declare` on the public fields the constructor always sets: typed by its first store, not
  // undefined first (src/engine/book.ts says why). Private fields cannot be declared: the one
  // holding a time gets a float64 initializer instead (below).
  /** Checks the front may run itself per turn (config verify.inline_items_max; 0: none). */
  declare readonly items_max: number;
  /** This turn's checks run on the front so far. */
  #here = 0;
  /** This turn's checks handed to the pool so far. */
  #passed = 0;
  /** When the last turn with more checks than items_max ended (ms, `now`'s clock). */
  #load_end_ms = -Infinity;
  /**
   * The front's busy share (0..1) below which a turn's first checks run here whatever the pool
   * holds (config verify.inline_busy_max_pct / 100; 0: that rule is off).
   */
  declare readonly busy_max: number;
  /**
   * Whether the front's busy share over the last closed window was below busy_max (false after a
   * window longer than INLINE_BUSY_WINDOW_MS_MAX: unknown).
   */
  #front_quiet = false;
  // -0, a float64: left undefined the field took a tagged representation and each clock reading
  // stored into it was a fresh heap number.
  #window_start_ms = -0;
  readonly #now: () => number;
  readonly #utilization: () => number;

  /**
   * `busy_max_pct`: 0..100, the medium-load rule above (0: off). `now`: a monotonic clock in ms
   * (performance.now); `utilization`: the front's busy share since its previous call
   * (loopUtilization()). Tests pass their own.
   */
  constructor(items_max: number, busy_max_pct = 0, now: () => number = () => performance.now(), utilization: () => number = loopUtilization()) {
    if (!Number.isSafeInteger(items_max) || items_max < 0 || items_max > INLINE_ITEMS_MAX) {
      throw new RangeError(`inline items max must be an integer in 0..${INLINE_ITEMS_MAX}`);
    }
    if (!Number.isSafeInteger(busy_max_pct) || busy_max_pct < 0 || busy_max_pct > 100) {
      throw new RangeError('inline busy max pct must be an integer in 0..100');
    }
    this.items_max = items_max;
    this.busy_max = busy_max_pct / 100;
    this.#now = now;
    this.#utilization = utilization;
    this.#window_start_ms = now();
  }

  /**
   * Whether the check arriving now runs on the front (and is counted as this turn's), while the
   * turn's budget is left: at light load when the pool is idle (`pool_idle`: nothing queued or
   * running, so the check overtakes no task), none of this turn's checks is waiting for or went to
   * the pool (`queued` 0, none passed: a turn that filled the batcher's batch is load), and no turn
   * of load ended within INLINE_AFTER_LOAD_MS (the clock is read only then); or, whatever the
   * pool holds, while the front was quiet (its busy share below busy_max over the last window).
   */
  takeHere(pool_idle: boolean, queued: number): boolean {
    if (this.#here >= this.items_max) return false;
    if (this.#front_quiet || this.#light(pool_idle, queued)) {
      this.#here++;
      return true;
    }
    return false;
  }

  #light(pool_idle: boolean, queued: number): boolean {
    if (!pool_idle || queued !== 0 || this.#passed !== 0) return false;
    if (this.#load_end_ms !== -Infinity) {
      if (this.#now() - this.#load_end_ms < INLINE_AFTER_LOAD_MS) return false;
      this.#load_end_ms = -Infinity;
    }
    return true;
  }

  /** `count` checks of this turn went to the pool. */
  passed(count: number): void {
    this.#passed += count;
  }

  /** The turn is over (the batcher's end-of-turn flush): a turn of load holds the next ones off. */
  endTurn(): void {
    const load = this.#here + this.#passed > this.items_max;
    if (load || this.busy_max > 0) {
      const now = this.#now();
      if (load) this.#load_end_ms = now;
      // The busy share of the window that just closed decides the next one (one utilization read
      // per window, not per turn). The read covers the whole window: one that spanned an idle
      // spell would read quiet whatever the last 10 ms were, so it counts as unknown (not quiet);
      // the read still moves the share's start to now.
      const window_ms = now - this.#window_start_ms;
      if (this.busy_max > 0 && window_ms >= INLINE_BUSY_WINDOW_MS) {
        const share = this.#utilization();
        this.#front_quiet = window_ms <= INLINE_BUSY_WINDOW_MS_MAX && share < this.busy_max;
        this.#window_start_ms = now;
      }
    }
    this.#here = 0;
    this.#passed = 0;
  }

  /** Whether the medium-load rule lets the next turns' first checks run here (metrics, tests). */
  get frontQuiet(): boolean {
    return this.#front_quiet;
  }
}
