// The server under test as a child process (always killed at the end, also on errors and
// signals), and CPU accounting from /proc: process and per-thread utime + stime.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stopChild } from '../../src/util/child_stop.js';
import { GcTrace } from './gc_trace.js';

export interface ServerChild {
  child: ChildProcess;
  pid: number;
  port: number;
  dir: string;
  admin_token: string;
  /** stderr lines of the child (also echoed), for error reports. */
  stderr: string[];
  /** The first stdout lines of the child (startup log: recovery, matcher pinning). */
  stdout_lines: string[];
  /** The server's GCs per isolate (`gc_trace`: its --trace-gc-nvp lines), else null. */
  gc: GcTrace | null;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
const cleanups = new Set<() => Promise<void>>();
/** Server data dirs still on disk: removed at exit whatever the path out. */
const temp_dirs = new Set<string>();

/** Runs `fn` (at most ~2 s) before the process exits on SIGINT/SIGTERM/SIGHUP. */
export function onSignalCleanup(fn: () => Promise<void>): () => void {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}
/** Server stderr lines echoed to ours before the rest are only kept (last 200) for errors. */
const ECHO_LINES_MAX = 20;
let hooks_installed = false;

function installKillHooks(): void {
  if (hooks_installed) return;
  hooks_installed = true;
  const killAll = (): void => {
    for (const c of live) {
      try {
        c.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.on('exit', () => {
    killAll();
    for (const d of [...temp_dirs]) removeDir(d);
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      killAll();
      // Let cleanups (worker threads inside native calls) finish first: exiting under them aborts.
      const done = (): never => process.exit(130);
      setTimeout(done, 2000).unref();
      Promise.allSettled([...cleanups].map((f) => f())).then(done, done);
    });
  }
  process.on('uncaughtException', (e) => {
    console.error('load: uncaught exception:', e);
    killAll();
    process.exit(1);
  });
}

export interface StartOptions {
  main_js: string;
  /** Merged over config/default.json via RINGBOOK_CONFIG. */
  config: unknown;
  admin_token: string;
  /** Extra node flags for the child (e.g. --cpu-prof). */
  node_flags?: string[];
  /** Copy the child's whole stdout here (e.g. its --trace-gc lines, with their times). */
  stdout_file?: string | null;
  /** Run the child with --trace-gc-nvp and count its GCs per isolate as the lines arrive (gc_trace.ts). */
  gc_trace?: boolean;
  startup_timeout_ms?: number;
  /** Extra environment (e.g. the cluster roles' RINGBOOK_ROLE, RINGBOOK_NATS_URLS). */
  env?: Record<string, string>;
}

export async function startServer(opts: StartOptions): Promise<ServerChild> {
  installKillHooks();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ringbook-load-'));
  temp_dirs.add(dir);
  const config_file = path.join(dir, 'config.json');
  writeFileSync(config_file, JSON.stringify(opts.config));
  const gc = opts.gc_trace === true ? new GcTrace() : null;
  const child = spawn(process.execPath, [...(opts.node_flags ?? []), ...(gc !== null ? ['--trace-gc-nvp'] : []), opts.main_js], {
    env: {
      ...process.env,
      RINGBOOK_PORT: '0',
      RINGBOOK_DATA_DIR: path.join(dir, 'data'),
      RINGBOOK_ADMIN_TOKEN: opts.admin_token,
      RINGBOOK_CONFIG: config_file,
      ...(opts.env ?? {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const stderr: string[] = [];
  const stdout_lines: string[] = [];
  let echoed = 0;
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve(code ?? (signal ? -1 : null));
    });
  });
  const copy = opts.stdout_file ? createWriteStream(opts.stdout_file) : null;
  if (copy !== null) child.stdout?.on('data', (d: string) => copy.write(d));
  if (gc !== null) child.stdout?.on('data', (d: string) => gc.feed(String(d), performance.now()));
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (d: string) => {
    for (const line of d.split('\n')) {
      if (line.trim() === '') continue;
      stderr.push(line);
      if (stderr.length > 200) stderr.shift();
      // Echo the first lines only: a failing server can print one per request.
      if (echoed < ECHO_LINES_MAX) process.stderr.write(`  [server] ${line}\n`);
      else if (echoed === ECHO_LINES_MAX) process.stderr.write('  [server] (further stderr lines not shown)\n');
      echoed++;
    }
  });
  const listening = new Promise<number>((resolve, reject) => {
    let out = '';
    // Once the port is known the rest of stdout is not kept here (with --trace-gc-nvp it is ~2 KB per GC).
    let port_seen = false;
    const timer = setTimeout(() => reject(new Error(`server did not start within ${opts.startup_timeout_ms ?? 30000} ms: ${out}`)), opts.startup_timeout_ms ?? 30000);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (d: string) => {
      for (const line of d.split('\n')) {
        // GC trace lines (gc_trace.ts) are not the log lines kept here.
        if (line.trim() !== '' && stdout_lines.length < 200 && !line.includes(' ms: pause=')) stdout_lines.push(line);
      }
      if (port_seen) return;
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        port_seen = true;
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (code ${code}) before listening: ${stderr.slice(-5).join(' | ')}`));
    });
  });
  let port: number;
  try {
    port = await listening;
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    removeDir(dir);
    throw e;
  }
  const stop = (): Promise<void> => stopChild(child, 'SIGTERM', 15_000);
  return { child, pid: child.pid as number, port, dir, admin_token: opts.admin_token, stderr, stdout_lines, gc, exited, stop };
}

export function removeDir(dir: string): void {
  temp_dirs.delete(dir);
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    // best effort
  }
}

// ---- /proc CPU accounting ----

let clk_tck = 0;
/** Clock ticks per second of /proc's CPU counters (getconf CLK_TCK; 100 when unknown). */
export function clockTicks(): number {
  if (clk_tck === 0) {
    try {
      clk_tck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clk_tck = 100;
    }
  }
  return clk_tck;
}

export interface ThreadCpu {
  tid: number;
  comm: string;
  /** utime + stime in ms. */
  cpu_ms: number;
  /** Start time after boot, in clock ticks (creation order). */
  start: number;
  /**
   * Voluntary context switches (/proc status): each is the thread going to sleep (futex, epoll,
   * a blocking syscall) and being woken again, so their count is the thread's wake-ups.
   */
  sleeps: number;
  /**
   * ms the thread was runnable but waiting for a core (/proc/.../schedstat, second field; 0 where
   * the kernel has no schedstat): what tells CPU contention from work on a shared machine.
   */
  wait_ms: number;
}

/** The run-queue wait of a /proc/<pid>/task/<tid>/schedstat text, ms (0 when absent or unreadable). */
export function runQueueWaitMs(schedstat: string): number {
  const f = schedstat.trim().split(' ');
  const ns = Number(f[1]);
  return f.length >= 3 && Number.isFinite(ns) ? ns / 1e6 : 0;
}

function readWaitMs(pid: number, tid: string): number {
  try {
    return runQueueWaitMs(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8'));
  } catch {
    return 0;
  }
}

/** voluntary_ctxt_switches of a /proc/<pid>/task/<tid>/status text (0 when absent). */
function voluntarySwitches(status: string): number {
  const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(status);
  return m === null ? 0 : Number(m[1]);
}

export interface ProcSample {
  at_ms: number;
  cpu_ms: number;
  threads: Map<number, ThreadCpu>;
}

/** Fields of /proc/.../stat after the `(comm)` field: [0] is field 3 (state). */
function statFields(text: string): string[] {
  return text.slice(text.lastIndexOf(')') + 2).trim().split(' ');
}

function cpuOf(f: string[]): number {
  return ((Number(f[11]) + Number(f[12])) * 1000) / clockTicks(); // utime (14), stime (15)
}

export function sampleProc(pid: number, with_threads = true): ProcSample | null {
  try {
    const at_ms = performance.now();
    const cpu_ms = cpuOf(statFields(readFileSync(`/proc/${pid}/stat`, 'utf8')));
    const threads = new Map<number, ThreadCpu>();
    if (with_threads) {
      for (const t of readdirSync(`/proc/${pid}/task`)) {
        try {
          const f = statFields(readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8'));
          const comm = readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
          const sleeps = voluntarySwitches(readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8'));
          threads.set(Number(t), { tid: Number(t), comm, cpu_ms: cpuOf(f), start: Number(f[19]), sleeps, wait_ms: readWaitMs(pid, t) });
        } catch {
          // thread ended between readdir and read
        }
      }
    }
    return { at_ms, cpu_ms, threads };
  } catch {
    return null;
  }
}

export interface CpuDelta {
  wall_ms: number;
  cpu_ms: number;
  /** Percent of one core. */
  pct: number;
  threads: { tid: number; comm: string; cpu_ms: number; pct: number; start: number; sleeps: number; wait_ms: number }[];
}

export function cpuDelta(a: ProcSample | null, b: ProcSample | null): CpuDelta | null {
  if (a === null || b === null) return null;
  const wall = b.at_ms - a.at_ms;
  const threads = [...b.threads.values()].map((t) => {
    const before = a.threads.get(t.tid);
    const cpu = t.cpu_ms - (before?.cpu_ms ?? 0);
    return {
      tid: t.tid, comm: t.comm, cpu_ms: cpu, pct: (100 * cpu) / wall, start: t.start, sleeps: t.sleeps - (before?.sleeps ?? 0),
      wait_ms: t.wait_ms - (before?.wait_ms ?? 0),
    };
  });
  threads.sort((x, y) => x.start - y.start || x.tid - y.tid);
  return { wall_ms: wall, cpu_ms: b.cpu_ms - a.cpu_ms, pct: (100 * (b.cpu_ms - a.cpu_ms)) / wall, threads };
}

export interface MachineSample {
  /** Busy (non-idle, non-iowait) ms summed over all cores. */
  busy_ms: number;
  total_ms: number;
}

/** The `cpu` line of /proc/stat: what the whole machine did (all processes, all cores). */
export function sampleMachine(): MachineSample | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // user nice system idle iowait irq softirq steal
    const idle = (v[3] ?? 0) + (v[4] ?? 0);
    return { busy_ms: ((total - idle) * 1000) / clockTicks(), total_ms: (total * 1000) / clockTicks() };
  } catch {
    return null;
  }
}
