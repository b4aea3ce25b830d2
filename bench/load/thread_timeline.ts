// What each server thread did over time during a latency phase (issue 11, the half-max stalls):
// the bench samples every server thread's /proc/<pid>/task/<tid>/schedstat (ns running, ns
// runnable but waiting for a core) and the machine's /proc/stat busy and steal times every SAMPLE_MS, so a
// stall episode (bench/load/stalls.ts) can be read against "the front ran 40 of those 60 ms",
// "the matcher waited 30 ms for a core" or "other processes took the machine". The sampler keeps
// each file open and re-reads it at offset 0 (/proc seq files regenerate on a pread at 0). Cost,
// measured 2026-11-26 16:56 UTC on the 2-vCPU KVM here (a child of 15 idle threads, so every
// state file read too; 9 five-second runs): 4% of a core of this process (3.6-4.3%).
// The windowing is a pure function.
//
// schedstat's wait (run_delay) grows only when the thread finally gets a core: the kernel adds a
// whole wait at its end. Alone it would credit a wait spanning a window's end to the next window
// (an episode's "waiting for a core" read 0 while its thread sat on the run queue). So the
// sampler also reads each thread's state (/proc/<pid>/task/<tid>/stat): a thread in state R whose
// run time did not grow since the last sample had no core over it, and a streak of such samples
// is a wait still going on, credited as it goes (waitSoFarMs). What stays late: a wait's part
// before its first such sample (up to one SAMPLE_MS), and a wait shorter than a sample, both
// credited when the wait ends.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { THREAD_NAMES } from '../../src/util/thread_name.js';

/**
 * Sampling period. The stalls to place last tens of ms (h11t: ~530 answers over p99 in a 10 s
 * phase at ~5,300/s, i.e. ~100 ms of arrivals); 5 ms resolves them at a cost of 4% of a core (header).
 */
export const SAMPLE_MS = 5;
/** Samples kept at most per phase (10 s at SAMPLE_MS is 2,000; a 60 s phase 12,000). */
export const SAMPLES_MAX = 1 << 15;

/**
 * A thread's role by its name (src/util/thread_name.ts), as the bench's per-thread figures name
 * them (phase_cpu.ts inferRoles); the main thread is tid == pid; the rest (GC helpers, libuv's
 * pool, the snapshot writer, an older build's unnamed workers) are "other".
 */
export function roleOfThread(pid: number, tid: number, comm: string): string {
  if (tid === pid) return 'main';
  if (comm === THREAD_NAMES.matcher) return 'matcher';
  if (comm === THREAD_NAMES.da) return 'DA worker';
  if (comm === THREAD_NAMES.verify) return 'verify worker';
  return 'other';
}

/**
 * Running and run-queue-wait ms of a schedstat text (`<run ns> <wait ns> <slices>`); null when
 * unreadable. The run time (sum_exec_runtime) is brought up to date at each scheduler tick of
 * the running thread and when it leaves its core; the wait counts only waits that ended (see the
 * header).
 */
export function parseSchedstat(text: string): { run_ms: number; wait_ms: number } | null {
  const f = text.trim().split(/\s+/);
  if (f.length < 3) return null;
  const run = Number(f[0]);
  const wait = Number(f[1]);
  return Number.isFinite(run) && Number.isFinite(wait) ? { run_ms: run / 1e6, wait_ms: wait / 1e6 } : null;
}

/** The state letter of a /proc/<pid>/task/<tid>/stat text (after the name in parentheses, which may hold spaces or parentheses); null when unreadable. */
export function parseTaskState(stat_text: string): string | null {
  const close = stat_text.lastIndexOf(')');
  if (close < 0 || stat_text.charAt(close + 1) !== ' ') return null;
  const state = stat_text.charAt(close + 2);
  return /^[A-Za-z]$/.test(state) ? state : null;
}

/**
 * A thread's cumulative run-queue wait with the waits still going on credited as they go:
 * schedstat's wait (ended waits only) plus, through each streak of samples where the thread was
 * runnable (`runnable[i]` 1: state R) and its run time did not grow since the sample before, the
 * time since the streak's first sample. Such a streak is one unbroken wait (a thread leaves R only
 * by running), which began at or before its first sample, so this never exceeds the true wait,
 * and when the wait ends schedstat adds all of it: the series never falls. A thread that ran in
 * a sample's interval shows run time grown as long as a scheduler tick falls inside it (HZ=250
 * here: 4 ms, under SAMPLE_MS; a kernel at HZ=100 would read some running intervals as waits).
 * NaN where a sample failed.
 */
export function waitSoFarMs(t_ms: Float64Array, run_ms: Float64Array, wait_ms: Float64Array, runnable: Uint8Array): Float64Array {
  const out = new Float64Array(t_ms.length);
  let streak_from = -1;
  for (let i = 0; i < t_ms.length; i++) {
    const waiting = i > 0 && runnable[i] === 1 && Number.isFinite(run_ms[i]) && run_ms[i] === run_ms[i - 1];
    if (!waiting) streak_from = -1;
    else if (streak_from < 0) streak_from = i;
    out[i] = wait_ms[i] + (streak_from < 0 ? 0 : t_ms[i] - t_ms[streak_from]);
  }
  return out;
}

/** The whole machine from /proc/stat (ms summed over its cores). */
export interface MachineStat {
  /** user, nice, system, irq, softirq (guest time is inside user): not idle, iowait or steal. */
  busy_ms: number;
  /** Time the hypervisor ran something else while this guest's CPUs wanted to run: not this machine's work, not idle either. */
  steal_ms: number;
  /**
   * The cpuN lines: the CPUs the first line sums over. Not the bench's os.availableParallelism(),
   * which a taskset narrows while /proc/stat still counts every CPU (a bench pinned to 1 of 2
   * cores read the machine 2x as busy).
   */
  cores: number;
}

/** /proc/stat's first line and its cpuN lines; null when unreadable. */
export function parseMachineStat(stat_text: string, clk_tck: number): MachineStat | null {
  const line = stat_text.slice(0, stat_text.indexOf('\n') >>> 0);
  if (!line.startsWith('cpu ')) return null;
  const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (v.length < 8 || v.some((x) => !Number.isFinite(x))) return null;
  const cores = (stat_text.match(/^cpu\d+ /gm) ?? []).length;
  if (cores === 0) return null;
  const busy = v[0] + v[1] + v[2] + v[5] + v[6];
  return { busy_ms: (busy * 1000) / clk_tck, steal_ms: (v[7] * 1000) / clk_tck, cores };
}

/** One phase's samples: times (epoch ms, the stage rows' clock) and cumulative ms per series (NaN: a failed read). */
export interface Timeline {
  t_ms: Float64Array;
  /** Whole machine busy and stolen (MachineStat), ms summed over cores; null when /proc/stat was unreadable. */
  machine_busy_ms: Float64Array | null;
  machine_steal_ms: Float64Array | null;
  /** Cores the machine's times are summed over (/proc/stat's cpuN lines; 0 when unreadable). */
  cores: number;
  /**
   * Per thread: cumulative run and schedstat wait ms, and 1 where the sample found it in state R
   * (read only where its run time did not grow since the sample before; null when its stat file
   * was unreadable: the wait is then schedstat's alone, credited late).
   */
  threads: { tid: number; comm: string; role: string; run_ms: Float64Array; wait_ms: Float64Array; runnable: Uint8Array | null }[];
}

/** Per role over a window: ms running and ms waiting for a core (summed over the role's threads). */
export interface WindowSched {
  cpu_ms_by_thread: Record<string, number>;
  runqueue_ms_by_thread: Record<string, number>;
  /** Machine busy over the window minus the server's CPU (other processes and the generator); null without /proc/stat. */
  others_cpu_ms: number | null;
  /** Machine busy over the window, % of all its cores (steal not counted); null without /proc/stat. */
  machine_busy_pct: number | null;
  /** Time stolen by the hypervisor over the window, % of all cores; null without /proc/stat. */
  machine_steal_pct: number | null;
  /** The cores those % are of (Timeline.cores); null without /proc/stat. */
  machine_cores: number | null;
  /**
   * Roles of the threads that were running or waiting for a core at least SATURATED_PCT of the
   * window: a thread with no idle moment in a stall is the one its backlog waits for.
   */
  saturated_threads: string[];
}

/** A thread running or runnable this share of a window had no idle moment in it (sampling jitter: not 100). */
export const SATURATED_PCT = 90;

/**
 * Linear interpolation of a cumulative series at t; null outside the sampled span or where a
 * bracketing sample is missing (NaN). `lo`: index of the last sample at or before t.
 */
function valueAt(t_ms: Float64Array, v: Float64Array, t: number): number | null {
  const n = t_ms.length;
  if (n === 0 || t < t_ms[0] || t > t_ms[n - 1]) return null;
  let lo = 0;
  let hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (t_ms[mid] <= t) lo = mid;
    else hi = mid;
  }
  const a = v[lo];
  const b = v[hi];
  if (!Number.isFinite(a) || !Number.isFinite(b)) return null;
  const span = t_ms[hi] - t_ms[lo];
  return span <= 0 ? a : a + ((b - a) * (t - t_ms[lo])) / span;
}

/**
 * What the threads did over [from_ms, to_ms] (epoch ms), rounded to 0.1 ms; null when the window
 * is not inside the sampled span (no sampler, or a window outside the phase): absent, not zero.
 */
export function windowSched(tl: Timeline | null, from_ms: number, to_ms: number): WindowSched | null {
  if (tl === null || tl.t_ms.length < 2 || !(to_ms >= from_ms)) return null;
  const n = tl.t_ms.length;
  if (from_ms < tl.t_ms[0] || to_ms > tl.t_ms[n - 1]) return null;
  const cpu: Record<string, number> = {};
  const wait: Record<string, number> = {};
  let server = 0;
  const saturated = new Set<string>();
  for (const th of tl.threads) {
    const waited = th.runnable === null ? th.wait_ms : waitSoFarMs(tl.t_ms, th.run_ms, th.wait_ms, th.runnable);
    const r0 = valueAt(tl.t_ms, th.run_ms, from_ms);
    const r1 = valueAt(tl.t_ms, th.run_ms, to_ms);
    const w0 = valueAt(tl.t_ms, waited, from_ms);
    const w1 = valueAt(tl.t_ms, waited, to_ms);
    // A thread that ended (or was unreadable) around the window is left out.
    if (r0 === null || r1 === null || w0 === null || w1 === null) continue;
    cpu[th.role] = (cpu[th.role] ?? 0) + (r1 - r0);
    wait[th.role] = (wait[th.role] ?? 0) + (w1 - w0);
    server += r1 - r0;
    if (to_ms > from_ms && (100 * (r1 - r0 + w1 - w0)) / (to_ms - from_ms) >= SATURATED_PCT) saturated.add(th.role);
  }
  const r1 = (x: number): number => Math.round(x * 10) / 10;
  const round = (o: Record<string, number>): Record<string, number> => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, r1(v)]));
  let others: number | null = null;
  let busy_pct: number | null = null;
  let steal_pct: number | null = null;
  if (tl.machine_busy_ms !== null && tl.cores > 0) {
    const m0 = valueAt(tl.t_ms, tl.machine_busy_ms, from_ms);
    const m1 = valueAt(tl.t_ms, tl.machine_busy_ms, to_ms);
    const s0 = tl.machine_steal_ms === null ? null : valueAt(tl.t_ms, tl.machine_steal_ms, from_ms);
    const s1 = tl.machine_steal_ms === null ? null : valueAt(tl.t_ms, tl.machine_steal_ms, to_ms);
    const capacity_ms = (to_ms - from_ms) * tl.cores;
    // /proc/stat counts in clock ticks (10 ms per core): over a short window the difference is
    // coarse, and can dip below the server's own (schedstat, ns) time: clamped at 0 and 100%.
    if (m0 !== null && m1 !== null) {
      others = r1(Math.max(0, m1 - m0 - server));
      busy_pct = capacity_ms > 0 ? r1(Math.min(100, (100 * Math.max(m1 - m0, server)) / capacity_ms)) : null;
    }
    if (s0 !== null && s1 !== null && capacity_ms > 0) steal_pct = r1(Math.min(100, Math.max(0, (100 * (s1 - s0)) / capacity_ms)));
  }
  return {
    cpu_ms_by_thread: round(cpu), runqueue_ms_by_thread: round(wait), others_cpu_ms: others, machine_busy_pct: busy_pct, machine_steal_pct: steal_pct,
    machine_cores: busy_pct === null ? null : tl.cores, saturated_threads: [...saturated].sort(),
  };
}

/** Samples a process's threads every SAMPLE_MS from start() until stop() (epoch-ms stamps). */
export class ThreadSampler {
  private readonly pid: number;
  private readonly period_ms: number;
  private timer: NodeJS.Timeout | null = null;
  /** Per thread: its schedstat and its stat (the state letter; null when it would not open). */
  private fds: { tid: number; comm: string; fd: number; state_fd: number | null }[] = [];
  private stat_fd: number | null = null;
  private readonly buf = Buffer.alloc(4096);
  private n = 0;
  private t_ms: Float64Array<ArrayBufferLike> = new Float64Array(0);
  private machine: Float64Array<ArrayBufferLike> = new Float64Array(0);
  private steal: Float64Array<ArrayBufferLike> = new Float64Array(0);
  /** From the first readable /proc/stat (its cpuN lines). */
  private cores = 0;
  private run: Float64Array<ArrayBufferLike>[] = [];
  private wait: Float64Array<ArrayBufferLike>[] = [];
  private runnable: Uint8Array<ArrayBufferLike>[] = [];
  private readonly clk_tck: number;
  private readonly proc: string;

  /** `proc_root`: where /proc is (tests lay out a made-up one); `clk_tck`: /proc/stat's ticks per second. */
  constructor(pid: number, opts: { period_ms?: number; clk_tck?: number; proc_root?: string } = {}) {
    this.pid = pid;
    this.period_ms = opts.period_ms ?? SAMPLE_MS;
    this.clk_tck = opts.clk_tck ?? 100;
    this.proc = opts.proc_root ?? '/proc';
  }

  /** Opens the threads' schedstat files (the threads alive now) and starts sampling. */
  start(): void {
    this.stop();
    try {
      for (const t of readdirSync(`${this.proc}/${this.pid}/task`)) {
        try {
          const comm = readFileSync(`${this.proc}/${this.pid}/task/${t}/comm`, 'utf8').trim();
          const fd = openSync(`${this.proc}/${this.pid}/task/${t}/schedstat`, 'r');
          let state_fd: number | null = null;
          try {
            state_fd = openSync(`${this.proc}/${this.pid}/task/${t}/stat`, 'r');
          } catch {
            // the thread's waits are then schedstat's alone (credited when they end)
          }
          this.fds.push({ tid: Number(t), comm, fd, state_fd });
        } catch {
          // thread gone, or no schedstat in this kernel
        }
      }
      this.stat_fd = openSync(`${this.proc}/stat`, 'r');
    } catch {
      // no /proc: the timeline stays empty (null windows)
    }
    this.n = 0;
    this.cores = 0;
    this.t_ms = new Float64Array(256);
    this.machine = new Float64Array(256);
    this.steal = new Float64Array(256);
    this.run = this.fds.map(() => new Float64Array(256));
    this.wait = this.fds.map(() => new Float64Array(256));
    this.runnable = this.fds.map(() => new Uint8Array(256));
    if (this.fds.length === 0) {
      // No thread readable: no timer, so stop() has nothing to sample; /proc/stat is closed now.
      this.closeFiles();
      return;
    }
    this.sample();
    this.timer = setInterval(() => this.sample(), this.period_ms);
  }

  /** Closes every file start() opened (each path out of start and stop comes here). */
  private closeFiles(): void {
    for (const f of this.fds) {
      closeSync(f.fd);
      if (f.state_fd !== null) closeSync(f.state_fd);
    }
    this.fds = [];
    if (this.stat_fd !== null) closeSync(this.stat_fd);
    this.stat_fd = null;
  }

  private read(fd: number): string | null {
    try {
      const n = readSync(fd, this.buf, 0, this.buf.length, 0);
      return this.buf.toString('latin1', 0, n);
    } catch {
      return null;
    }
  }

  private grow(): void {
    const g = (a: Float64Array): Float64Array => {
      const b = new Float64Array(a.length * 2);
      b.set(a);
      return b;
    };
    this.t_ms = g(this.t_ms);
    this.machine = g(this.machine);
    this.steal = g(this.steal);
    this.run = this.run.map(g);
    this.wait = this.wait.map(g);
    this.runnable = this.runnable.map((a) => {
      const b = new Uint8Array(a.length * 2);
      b.set(a);
      return b;
    });
  }

  private sample(): void {
    if (this.n >= SAMPLES_MAX) return;
    if (this.n === this.t_ms.length) this.grow();
    const i = this.n++;
    this.t_ms[i] = performance.timeOrigin + performance.now();
    this.fds.forEach((f, k) => {
      const text = this.read(f.fd);
      const s = text === null ? null : parseSchedstat(text);
      this.run[k][i] = s === null ? NaN : s.run_ms;
      this.wait[k][i] = s === null ? NaN : s.wait_ms;
      // The state only matters when the run time did not grow (waitSoFarMs): a thread that ran
      // is not read twice (its stat file costs about as much as its schedstat).
      const ran = i > 0 && s !== null && s.run_ms !== this.run[k][i - 1];
      const st = f.state_fd === null || ran ? null : this.read(f.state_fd);
      this.runnable[k][i] = st !== null && parseTaskState(st) === 'R' ? 1 : 0;
    });
    const text = this.stat_fd === null ? null : this.read(this.stat_fd);
    const st = text === null ? null : parseMachineStat(text, this.clk_tck);
    this.machine[i] = st?.busy_ms ?? NaN;
    this.steal[i] = st?.steal_ms ?? NaN;
    if (st !== null && this.cores === 0) this.cores = st.cores;
  }

  /** Stops sampling (one last sample) and returns the timeline, or null when nothing could be read. */
  stop(): Timeline | null {
    if (this.timer === null) {
      this.closeFiles();
      return null;
    }
    clearInterval(this.timer);
    this.timer = null;
    this.sample();
    const n = this.n;
    const machine = this.machine.subarray(0, n);
    const read_stat = machine.some((x) => Number.isFinite(x));
    const tl: Timeline = {
      t_ms: this.t_ms.slice(0, n),
      machine_busy_ms: read_stat ? machine.slice() : null,
      machine_steal_ms: read_stat ? this.steal.slice(0, n) : null,
      cores: this.cores,
      threads: this.fds.map((f, k) => ({
        tid: f.tid, comm: f.comm, role: roleOfThread(this.pid, f.tid, f.comm), run_ms: this.run[k].slice(0, n), wait_ms: this.wait[k].slice(0, n),
        runnable: f.state_fd === null ? null : this.runnable[k].slice(0, n),
      })),
    };
    this.closeFiles();
    return tl;
  }
}

/**
 * Runs `fn` with `pid`'s threads sampled around it, the sampler started `lead_in_ms` before it
 * (and one SAMPLE_MS more: a timer may fire a little early), so a window that reaches back that
 * far before fn's start (a stall episode's lead-in, stalls.ts LEAD_IN_MS) is inside the samples.
 * from_ms / to_ms: fn's start and end (epoch ms).
 */
export async function sampledAround<T>(
  pid: number, lead_in_ms: number, fn: () => Promise<T>, opts: { clk_tck?: number; proc_root?: string } = {},
): Promise<{ value: T; timeline: Timeline | null; from_ms: number; to_ms: number }> {
  const sampler = new ThreadSampler(pid, opts);
  sampler.start();
  try {
    await new Promise((r) => setTimeout(r, lead_in_ms + SAMPLE_MS));
    const from_ms = performance.timeOrigin + performance.now();
    const value = await fn();
    const to_ms = performance.timeOrigin + performance.now();
    return { value, timeline: sampler.stop(), from_ms, to_ms };
  } finally {
    sampler.stop();
  }
}
