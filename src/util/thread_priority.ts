// Scheduling priority of one thread (config threads.background; docs/operations.md "Thread
// priorities"). On 2 cores the server has more hot threads than cores, and the CFS scheduler
// shares a core between runnable threads by weight: a DA thread hashing state roots at the
// default weight takes turns with the front and the verify worker although its work is off the
// answer path (answers go out after the journal commit; roots are published afterwards). Linux
// scheduling is per thread (setpriority(PRIO_PROCESS, tid) acts on that one thread, and an
// unprivileged process may always raise its own threads' nice value), so a background thread
// lowers its own priority at start: nice through Node's os.setPriority(tid) (libuv's
// setpriority), the policy (SCHED_BATCH / SCHED_IDLE) through util-linux `chrt -p 0 <tid>` as
// pin_thread.ts runs `taskset` (no native addon). The kernel's view (/proc/<pid>/task/<tid>/stat)
// is read back. A failure is reported in the result and logged, never thrown: the thread then
// runs at the priority it had. The other threads.* setting, the matcher's EEVDF slice
// (threads.matcher_slice_us), is thread_slice.ts: a policy change through chrt resets a thread's
// slice to the default, so the two are never set on one thread.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { currentThreadId, runThreadTool } from './thread_name.js';
import { componentLog } from './log.js';

/** Linux scheduling policies a thread may move to without privileges (sched(7)). */
export const SCHED_POLICIES = ['other', 'batch', 'idle'] as const;
export type SchedPolicy = (typeof SCHED_POLICIES)[number];
/** The kernel's numbers for them (field 41 of /proc/<pid>/task/<tid>/stat). */
export const POLICY_NUMBERS: Record<SchedPolicy, number> = { other: 0, batch: 3, idle: 5 };
/** chrt's flag for each. */
const CHRT_FLAGS: Record<SchedPolicy, string> = { other: '--other', batch: '--batch', idle: '--idle' };
/** The nice range of setpriority(2). */
export const NICE_MIN = -20;
export const NICE_MAX = 19;

export interface ThreadPriority {
  /** Nice value, -20..19 (0: the default; raising it needs no privilege, lowering it below 0 needs CAP_SYS_NICE). */
  nice: number;
  /** Scheduling policy: `other` (the default, CFS), `batch` (no wake-up preemption), `idle` (runs only when nothing else wants the core). */
  policy: SchedPolicy;
}

/** A thread's nice value and policy as the kernel reports them. */
export interface ThreadSched {
  nice: number;
  /** The policy's name, or `policy <n>` for one outside SCHED_POLICIES (a real-time class). */
  policy: SchedPolicy | string;
}

export interface PriorityResult {
  applied: boolean;
  tid: number | null;
  /** What the kernel reports afterwards (null when unreadable). */
  now: ThreadSched | null;
  /** One line for the log: what was done, or why not. */
  message: string;
}

/** /proc/<pid>/task/<tid>/stat's nice (field 19) and policy (field 41); null when unreadable. */
export function readThreadSched(tid: number, pid: number = process.pid): ThreadSched | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name, which is in parentheses and may itself hold spaces or ')'.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const nice = Number(rest[19 - 3]);
  const policy_no = Number(rest[41 - 3]);
  if (!Number.isInteger(nice) || !Number.isInteger(policy_no)) return null;
  const name = SCHED_POLICIES.find((p) => POLICY_NUMBERS[p] === policy_no);
  return { nice, policy: name ?? `policy ${policy_no}` };
}

const describe = (p: ThreadSched): string => `nice ${p.nice}, policy ${p.policy}`;

/**
 * Gives thread `tid` of this process the priority `want`: the policy first (sched_setscheduler
 * keeps the nice value of the normal classes), then the nice value; then reads the kernel's view
 * back. Never throws.
 */
export function setThreadPriority(tid: number, want: ThreadPriority): PriorityResult {
  const before = readThreadSched(tid);
  if (before === null) return { applied: false, tid, now: null, message: `not set to ${describe(want)}: thread ${tid} is not in /proc/${process.pid}/task` };
  const fail = (why: string): PriorityResult => ({ applied: false, tid, now: readThreadSched(tid), message: `not set to ${describe(want)}: ${why} (thread ${tid})` });
  if (before.policy !== want.policy) {
    const why = runThreadTool('chrt', [CHRT_FLAGS[want.policy], '-p', '0', String(tid)]);
    if (why !== null) return fail(why);
  }
  if (before.nice !== want.nice) {
    try {
      os.setPriority(tid, want.nice);
    } catch (e) {
      return fail(`setpriority: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const now = readThreadSched(tid);
  const applied = now !== null && now.nice === want.nice && now.policy === want.policy;
  if (!applied) return fail(`the kernel reports ${now === null ? 'nothing' : describe(now)} afterwards`);
  return { applied, tid, now, message: `set to ${describe(want)} (thread ${tid})` };
}

/** The calling thread's priority set to `want` (see setThreadPriority); off Linux: not applied. */
export function setCurrentThreadPriority(want: ThreadPriority): PriorityResult {
  if (process.platform !== 'linux') return { applied: false, tid: null, now: null, message: `not set: thread priorities need Linux (this is ${process.platform})` };
  const tid = currentThreadId();
  if (tid === null) return { applied: false, tid: null, now: null, message: 'not set: /proc/thread-self is not readable' };
  return setThreadPriority(tid, want);
}

/** True when `p` asks for nothing (the default priority every thread starts with). */
export function isDefaultPriority(p: ThreadPriority): boolean {
  return p.nice === 0 && p.policy === 'other';
}

/**
 * A background thread's first act (DA worker, snapshot writer): lower its own priority as
 * configured and log the outcome (info when set, warn when not; the thread carries on either
 * way). `role` names the thread in the log line. Returns the result (null: nothing asked).
 */
export function prioritizeBackgroundThread(role: string, want: ThreadPriority | null): PriorityResult | null {
  if (want === null || isDefaultPriority(want)) return null;
  const r = setCurrentThreadPriority(want);
  const log = componentLog('threads');
  if (r.applied) log.info(`ringbook: ${role} thread ${r.message} (config threads.background)`, { role, tid: r.tid });
  else log.warn(`ringbook: ${role} thread priority ${r.message} (config threads.background); running at the default priority`, { role, tid: r.tid });
  return r;
}
