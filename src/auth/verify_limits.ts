// The verify pool's named limits (config `verify`, src/config/read.ts; docs/operations.md "The verify
// pool"), apart from the pool so that the configuration reads them without loading Piscina.
// Named unit-first, limit last (TIGER_STYLE, ../shared/STYLE.md).
/**
 * Items per task (config `verify.task_items_max`). A task's verdicts come back together when its
 * last item is checked, so its size is latency: 100 items were ~6.5 ms of recoveries that every
 * request of the task waited for (the `verify` stage's p99 at half the max rate, issue 11); 32 is
 * ~2 ms, and the front can take a task of that size without stalling its event loop for long.
 * The cost per task (header, claim, DONE, the front's read) is a few µs: <0.2 µs per item.
 */
export const TASK_SIZE_DEFAULT = 32;
export const TASK_SIZE_MAX = 10_000;
/**
 * What the server passes as `stealAfterUs` by default (config `verify.steal_after_us`): a task
 * nobody has started 1 ms after it was published is checked by the front thread itself. With one
 * verify worker (2 cores) a burst after a front pause, or the worker waiting for a core, left
 * tasks queued for 5-27 ms at half the max rate (docs/benchmarks.md, issue 11); the front then
 * has CPU to spare (its own work is ~40 µs a request). 1 ms is ~15 recoveries of queue: the
 * front steps in only when the worker is behind, not at every turn.
 */
export const STEAL_AFTER_US_DEFAULT = 1000;
export const STEAL_AFTER_US_MAX = 1_000_000;
/**
 * What the server passes as the front's inline budget by default (config `verify.inline_items_max`):
 * the front checks at most this many signatures of one event-loop turn itself, at their arrival,
 * while no verify task is in flight and the turn before had at most this many (the light-load
 * case); the rest of a turn, and every turn under load, go to the workers. A hand-off costs the
 * front the packing, a futex wake of the sleeping worker and a waitAsync wake-up back, and the
 * request ~80 µs of its median latency around its ~60 µs recovery (~60 µs for the worker to wake,
 * ~20 for the front to be woken back: docs/benchmarks.md, issue 11, "the front's inline checks"); two inline checks hold the front's turn for ~120 µs, so a turn
 * of three or more arrivals is already load, and its checks are better run beside the front.
 */
export const INLINE_ITEMS_DEFAULT = 2;
/**
 * After a turn with more checks than the inline budget (load), the front checks nothing inline
 * for this long (ms): at the max rate the front's turns follow each other with no gap (a turn of
 * ~64 requests takes it ~6 ms), so they stay with the workers, while light requests arriving after
 * a burst are inline again. 1 ms is ~15 recoveries, the same span as STEAL_AFTER_US_DEFAULT.
 */
export const INLINE_AFTER_LOAD_MS = 1;
/**
 * What the server passes as the front's busy ceiling for inline checks at medium load by default
 * (config `verify.inline_busy_max_pct`, 0..100; 0: off): while the front's event loop was busy less
 * than this share of the last closed window (INLINE_BUSY_WINDOW_MS to INLINE_BUSY_WINDOW_MS_MAX), a turn's first `inline_items_max` checks run
 * on the front even with verify tasks in flight. Off (0) by default: on a saturated machine
 * (2026-11-26, docs/benchmarks.md "latency at half the max rate") the half-max p99 was higher
 * with 50 in three pairs of three (confounded by the rising load), and the busy share counts
 * time the front waits for a core as busy, so the rule cannot tell a front short of CPU from a
 * busy one. 50 is the value to try on a quiet machine: at half the max rate the front is ~20-30%
 * busy without recoveries (~40 µs a request at ~5,000 requests/s); at the max rate ~100%.
 */
export const INLINE_BUSY_MAX_PCT_DEFAULT = 0;
/**
 * The window over which the front's busy share is measured (ms): ~50 arrivals at 5,000 requests/s,
 * short enough to back off within a burst, long enough that one long turn (a stolen task of 32,
 * ~2 ms; a scavenge) does not flip it every turn.
 */
export const INLINE_BUSY_WINDOW_MS = 10;
/**
 * A window longer than this (ms) is not measured: it closes at the first turn end after
 * INLINE_BUSY_WINDOW_MS, so at 1,000 requests/s (a turn a ms) it spans 10-11 ms, and one over
 * twice that held a pause with no checks (an idle spell), whose idle time reads as a quiet front
 * whatever its last 10 ms were. Such a window leaves the front not quiet (the light-load rule
 * still applies) until a window of the right length is measured.
 */
export const INLINE_BUSY_WINDOW_MS_MAX = 2 * INLINE_BUSY_WINDOW_MS;
/** Beyond a few recoveries the front's turn stalls its other sockets: 8 is ~0.5 ms. */
export const INLINE_ITEMS_MAX = 8;
/**
 * How long the server's start waits for its verify workers to start serving (and report their
 * secp256k1 library, VerifyPool.ready) before it listens anyway: a worker loads in ~0.1 s idle and
 * took up to a few seconds on the 2-core test machine at load average ~38; a worker still loading
 * after this is logged as `not started` (a warning with the time waited) and takes its tasks once
 * it serves, as before the wait. A worker that ended before it served (a broken build) fails the
 * start instead (src/gateway/server.ts).
 */
export const VERIFY_WORKERS_START_WAIT_MS = 10_000;
