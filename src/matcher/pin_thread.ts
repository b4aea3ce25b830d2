// Pinning the calling thread to one CPU (config matcher.cpu; docs/operations.md "Pinning the
// matcher thread"). Node has no affinity API and the project builds no native addon for it, so on
// Linux the thread reads its own kernel thread id from /proc/thread-self and runs util-linux
// `taskset -pc <cpu> <tid>` (sched_setaffinity on that one thread, not the process), then reads
// /proc/thread-self/status back to check the kernel took it. Elsewhere it reports "not pinned".
import { readFileSync } from 'node:fs';
import { currentThreadId, runThreadTool } from '../util/thread_name.js';

// Re-exported for test/engine/pin_thread.test.ts, which loads this module alone in a fresh worker.
export { currentThreadId };

export interface PinResult {
  pinned: boolean;
  /** Kernel thread id (null when unknown, off Linux). */
  tid: number | null;
  /** The CPUs the thread may run on afterwards, as the kernel lists them (e.g. "1"), or null. */
  cpus_allowed: string | null;
  /** One line for the log: what was done, or why not. */
  message: string;
}

function cpusAllowed(): string | null {
  try {
    const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync('/proc/thread-self/status', 'utf8'));
    return m ? m[1] : null;
  } catch {
    return null;
  }
}

/**
 * Pins the calling thread to `cpu` (an integer the caller validated against the CPU count).
 * Never throws: a failure is reported in the result (the thread then runs unpinned).
 */
export function pinCurrentThread(cpu: number): PinResult {
  if (process.platform !== 'linux') {
    return { pinned: false, tid: null, cpus_allowed: null, message: `not pinned: thread pinning needs Linux (this is ${process.platform})` };
  }
  const tid = currentThreadId();
  if (tid === null) return { pinned: false, tid: null, cpus_allowed: null, message: 'not pinned: /proc/thread-self is not readable' };
  const why = runThreadTool('taskset', ['-pc', String(cpu), String(tid)]);
  if (why !== null) return { pinned: false, tid, cpus_allowed: cpusAllowed(), message: `not pinned to CPU ${cpu}: ${why}` };
  const allowed = cpusAllowed();
  const pinned = allowed === String(cpu);
  return {
    pinned, tid, cpus_allowed: allowed,
    message: pinned ? `pinned to CPU ${cpu} (thread ${tid})` : `not pinned to CPU ${cpu}: the kernel allows CPUs ${allowed ?? '?'} after taskset (thread ${tid})`,
  };
}
