// A thread's EEVDF slice request (config threads.matcher_slice_us; docs/operations.md "Thread
// priorities"). On 2 cores the matcher wakes for every batch (~10-15 µs of work at 1,000
// requests/s) while the front, a verify worker, the DA thread or GC hold both cores; EEVDF places a
// woken thread by its virtual deadline (eligible time + slice / weight), so with the default slice
// (1.4 ms here: 0.7 ms x (1 + log2 of 2 CPUs)) it may wait most of a running thread's slice for a
// core (batch_wait p99 1.1-1.7 ms against p50 ~20 µs, docs/benchmarks.md). A short slice asked
// for the matcher alone gives it an earlier deadline at each wake-up; the price, that it is
// preempted after that much of its own work, is small for a thread that works ~15 µs a wake.
//
// The mechanism is native/thread_slice.c (sched_setattr's sched_runtime on SCHED_OTHER/BATCH,
// Linux >= 6.12, unprivileged). The slice is set on a thread found by its name (thread_name.ts
// THREAD_NAMES; the front sets the matcher's after the start, by its kernel thread id: a thread may
// set the attributes of any thread of its own process) or on the calling thread (tid 0), and read
// back with sched_getattr. A failure is reported in the result and logged, never thrown (as
// thread_priority.ts does): the thread then keeps the kernel's default slice. Off (null), nothing
// is called at all. Changing a thread's policy afterwards (sched_setscheduler, chrt) resets its
// slice to the default: the background threads' priority (thread_priority.ts) is never set on a
// thread with a slice.
import { readdirSync, readFileSync } from 'node:fs';
import { findNativeModule } from './native_module.js';
import { componentLog } from './log.js';
import { POLICY_NUMBERS } from './thread_priority.js';

/** The kernel's clamp of a requested slice (kernel/sched/syscalls.c __setscheduler_params): 0.1..100 ms. */
export const SLICE_US_MIN = 100;
export const SLICE_US_MAX = 100_000;

/** What native/build/thread_slice.node returns: `errno` 0 and the kernel's view, or only `errno`. */
interface KernelSched {
  errno: number;
  policy?: number;
  nice?: number;
  runtime_ns?: number;
}

interface NativeSlice {
  getattr(tid: number): KernelSched;
  setSlice(tid: number, runtime_ns: number): KernelSched;
  gettid(): number;
  strerror(errno: number): string;
}

/** A thread's fair-class parameters as sched_getattr reports them. */
export interface ThreadSlice {
  /** SCHED_OTHER 0, SCHED_BATCH 3, SCHED_IDLE 5 (the real-time classes have no slice). */
  policy: number;
  nice: number;
  /** The slice in µs (the default one when none was asked for). */
  slice_us: number;
}

export interface SliceResult {
  applied: boolean;
  /** The thread's kernel id (the caller's when asked with 0), null when unknown. */
  tid: number | null;
  /** The kernel's view afterwards (null when unreadable). */
  now: ThreadSlice | null;
  /** One line for the log: what was done, or why not. */
  message: string;
}

let loaded: { module: NativeSlice } | { absent: string } | undefined;

/** The native module of this thread, or why there is none (off Linux, not built). */
function nativeSlice(): { module: NativeSlice } | { absent: string } {
  loaded ??= findNativeModule<NativeSlice>('thread_slice.node');
  return loaded;
}

function fromKernel(k: KernelSched): ThreadSlice {
  return { policy: k.policy as number, nice: k.nice as number, slice_us: (k.runtime_ns as number) / 1000 };
}

/** Thread `tid`'s (0: the caller's) policy, nice and slice, or why they cannot be read. */
export function readThreadSlice(tid: number): ThreadSlice | string {
  const n = nativeSlice();
  if ('absent' in n) return n.absent;
  const k = n.module.getattr(tid);
  return k.errno === 0 ? fromKernel(k) : `sched_getattr: ${n.module.strerror(k.errno)}`;
}

/**
 * Asks for a slice of `slice_us` µs for thread `tid` of this machine (0: the calling thread),
 * keeping its policy and nice value, then reads the kernel's view back: applied only when the
 * kernel reports that very slice (a kernel before 6.12 takes the call and ignores sched_runtime;
 * one outside SLICE_US_MIN..SLICE_US_MAX is clamped). Never throws.
 */
export function setThreadSlice(tid: number, slice_us: number): SliceResult {
  try {
    return trySetThreadSlice(tid, slice_us);
  } catch (e) {
    // The module throws only on arguments it cannot take (a negative id or slice).
    return { applied: false, tid: tid === 0 ? null : tid, now: null, message: `not set to ${slice_us} µs: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function trySetThreadSlice(tid: number, slice_us: number): SliceResult {
  const want = `${slice_us} µs`;
  const n = nativeSlice();
  if ('absent' in n) return { applied: false, tid: tid === 0 ? null : tid, now: null, message: `not set to ${want}: ${n.absent}` };
  const m = n.module;
  const id = tid === 0 ? m.gettid() : tid;
  const before = m.getattr(id);
  if (before.errno !== 0) return { applied: false, tid: id, now: null, message: `not set to ${want}: sched_getattr: ${m.strerror(before.errno)} (thread ${id})` };
  const was = fromKernel(before);
  if (was.policy !== POLICY_NUMBERS.other && was.policy !== POLICY_NUMBERS.batch) {
    return { applied: false, tid: id, now: was, message: `not set to ${want}: policy ${was.policy} takes no slice (only SCHED_OTHER and SCHED_BATCH do) (thread ${id})` };
  }
  const after = m.setSlice(id, Math.round(slice_us * 1000));
  if (after.errno !== 0) {
    const now = readThreadSlice(id);
    return { applied: false, tid: id, now: typeof now === 'string' ? null : now, message: `not set to ${want}: sched_setattr: ${m.strerror(after.errno)} (thread ${id})` };
  }
  const now = fromKernel(after);
  if (now.slice_us !== slice_us) {
    return { applied: false, tid: id, now, message: `not set to ${want}: the kernel reports a slice of ${now.slice_us} µs afterwards (Linux >= 6.12 takes a slice of ${SLICE_US_MIN}..${SLICE_US_MAX} µs) (thread ${id})` };
  }
  return { applied: true, tid: id, now, message: `set to ${want} (was ${was.slice_us} µs; thread ${id})` };
}

/** The ids of this process's threads named `name` (/proc/<pid>/task/<tid>/comm). */
export function threadIdsNamed(name: string, pid: number = process.pid): number[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.filter((t) => {
    try {
      return readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim() === name;
    } catch {
      return false; // a thread that ended meanwhile
    }
  }).map(Number);
}

/**
 * The `role` thread's (named `thread_name`, exactly one in this process) slice set to `slice_us`
 * as config `key` asks, and the outcome logged (info when set, warn when not; the server serves
 * either way). Null: nothing asked (the kernel's default slice, nothing called).
 */
export function applyThreadSlice(role: string, thread_name: string, slice_us: number | null, key: string): SliceResult | null {
  if (slice_us === null) return null;
  const tids = threadIdsNamed(thread_name);
  const r: SliceResult = tids.length === 1 ? setThreadSlice(tids[0], slice_us)
    : { applied: false, tid: null, now: null, message: `not set to ${slice_us} µs: ${tids.length === 0 ? 'no' : tids.length} thread${tids.length === 1 ? '' : 's'} named ${thread_name} in this process` };
  const log = componentLog('threads');
  if (r.applied) log.info(`ringbook: ${role} thread slice ${r.message} (config ${key})`, { role, tid: r.tid, slice_us });
  else log.warn(`ringbook: ${role} thread slice ${r.message} (config ${key}); running with the kernel's default slice`, { role, tid: r.tid, slice_us });
  return r;
}
