// The verify pool's named limits (config `verify`, src/config.ts; docs/operations.md "The verify
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
