// The verify ring: how the front thread hands signature checks to one verify worker without a
// message per task (issue 11). One SharedArrayBuffer per worker, one producer (the front) and one
// consumer (the worker):
//
//   header (VERIFY_RING_HEADER_BYTES): int32 words, each on its own 64-byte line
//     PUBLISHED  tasks the front has written (wrapping int32 count)
//     DONE       tasks the worker has answered (wrapping int32 count)
//     WAITERS    1 while the worker sleeps in Atomics.wait on PUBLISHED (the front notifies only then)
//     CLOSED     set by the front's close(): the worker's task returns when it has nothing left
//     READY      set by the worker when it starts serving (a worker that dies before is a broken build)
//     LIBRARY    the secp256k1 library the worker's recoverer calls, 1 + its index in
//                SECP256K1_LIBRARIES (recoverer.ts), stored before READY: the operator sees the
//                workers' own choice (GET /admin/state `secp256k1`), not the front's guess of it
//     FUTEX      1: the worker sleeps on DOORBELL with the native futex (src/util/futex.ts), set by
//                the front before the worker starts; 0: on PUBLISHED with Atomics.wait
//     DOORBELL   bumped by the front before it wakes a sleeping worker (publish or close): the
//                worker's futex waits on it, so a close between its look at CLOSED and its sleep
//                still wakes it (the futex compares this word, not CLOSED)
//     FRONT_BELL the front's loop bell id (src/util/loop_bell.ts), set before the worker starts; 0:
//                the front waits for DONE with Atomics.waitAsync
//     FRONT_WAITS 1 while the front wants a ring of its bell for this ring's next DONE (a worker
//                that swaps it from 1 to 0 rings; the front sets it again when tasks are left)
//   data area: tasks back to back, each at an 8-byte aligned offset:
//     u32 task bytes (8-aligned, header included) | u32 answer bytes | u32 claim | u32 unused
//     | answer area (the checker writes the verdicts and its times here, verify_codec.ts)
//     | the packed batch (verify_codec.ts encodePackedBatchInto)
//   A task that does not fit before the end of the area starts at offset 0; the front writes
//   WRAP_MARKER where it would have started so the worker follows it.
//
// The front alone decides where tasks go and when their bytes are free again (after it read their
// answers, in order), so the worker only reads PUBLISHED, writes DONE and follows the records.
// Ordering: the front writes a task's bytes, then Atomics.store(PUBLISHED); the worker
// Atomics.load(PUBLISHED), then reads them (sequentially consistent atomics: the plain writes
// happen-before). The same the other way for the answers and DONE. Sleeping: the worker reads
// DOORBELL, sets WAITERS, re-reads PUBLISHED and CLOSED, then sleeps on DOORBELL (the native
// futex) or PUBLISHED (Atomics.wait); the front stores PUBLISHED (or CLOSED), then, only when
// WAITERS is set, bumps DOORBELL and wakes it (no wake-up while the worker is busy, none lost: the
// spsc_ring.ts argument; only the worker writes WAITERS, so no store of the front can hide its
// announcement). The front learns of answers through its loop bell: it asks (FRONT_WAITS = 1), then
// re-reads DONE; the worker stores DONE, then rings when it swaps FRONT_WAITS from 1. Here both
// sides write the word, and the worker's swap can come late: it stored DONE, was preempted, the
// front read that DONE anyway (its re-check, or a ring of another worker's), collected and asked
// again, and the late swap took that new ask back. So every call of the front's bell callback asks
// again on each ring it waits for and found nothing new on, then re-reads DONE (verify_pool.ts
// #rung): every swap that takes an ask rings, and that ring's callback puts the ask back, so an
// ask stands whenever the front sleeps (the lost wake-up of h23o2's route, fixed by h25o:
// test/auth/verify_wake_race.test.ts). Without the native modules, Atomics.waitAsync
// on DONE and the worker's Atomics.notify. Why not V8's Atomics route, which both sides took
// before (issue 11, h23o2): its one process-wide futex mutex, taken by the notifier and again by
// the woken thread (contended: ~1.3 extra futex calls per hand-off on each side), a platform task
// and a promise per answer, and a waiter node and promise per sleep of the front
// (docs/benchmarks.md, h23o2).
//
// Claims: a task is checked by whoever first swaps its claim word from OPEN (Atomics.compareExchange):
// the worker (WORKER) before it checks a task, or the front (FRONT) when the task has waited past
// `verify.steal_after_us` (verify_pool.ts). A task the front took is skipped by the worker, which
// still counts it in DONE, so DONE stays "tasks passed, in order" and the front frees bytes as
// before. The answer area is written only by the claim's winner.

/** Int32 word indices of the header fields. */
export const VR_PUBLISHED = 0;
export const VR_DONE = 16;
export const VR_WAITERS = 32;
export const VR_CLOSED = 48;
export const VR_READY = 49;
export const VR_LIBRARY = 50;
export const VR_FUTEX = 51;
export const VR_FRONT_BELL = 52;
export const VR_DOORBELL = 64;
export const VR_FRONT_WAITS = 80;
/**
 * The longest a worker sleeps on the native futex before it looks again (a raw futex wait is not
 * interrupted by Worker.terminate: a process that exits without closing the pool waits this long
 * for the worker's thread at most). 5 looks a second at idle; the front's wake-up ends a sleep at once.
 */
export const VR_FUTEX_SLEEP_MS_MAX = 200;
export const VERIFY_RING_HEADER_BYTES = 384;
/** Bytes before a task's answer area: its size, its answer area's size, its claim, one unused word. */
export const VR_TASK_HEADER_BYTES = 16;
/** Uint32 index of the claim word within a task's header. */
export const VR_TASK_CLAIM_WORD = 2;
/** Claim word values: nobody yet, the worker, the front thread. */
export const VR_CLAIM_OPEN = 0;
export const VR_CLAIM_WORKER = 1;
export const VR_CLAIM_FRONT = 2;
/** In a task's size word: the next task starts at offset 0 of the data area. */
export const VR_WRAP_MARKER = 0xffffffff;

/**
 * Default data area per worker: 1 MiB. A task of 100 signed orders reserves ~52 KB (a 96-byte
 * fixed record, up to 3 bytes of padding and a ~140-char message at 3 bytes per char, per item)
 * and writes ~24 KB, so at least 19 tasks (1,900 checks, 15 event-loop turns at verify_batch_max
 * 128) are in a ring before the front keeps further tasks in its own backlog.
 */
export const VERIFY_RING_DATA_BYTES_DEFAULT = 1 << 20;
export const VERIFY_RING_DATA_BYTES_MIN = 64 * 1024;
export const VERIFY_RING_DATA_BYTES_MAX = 64 << 20;

/** The one task the front gives each verify worker: the ring it serves. */
export interface VerifyWorkerData {
  ring: SharedArrayBuffer;
  backend?: 'native' | 'noble';
}

export function align8(n: number): number {
  return (n + 7) & ~7;
}
