// Kernel event counts on one thread during a phase (issue 11, h27h): `perf stat -t <tid>` over
// tracepoints and software events (syscalls by kind, context switches, the wake-ups the thread
// issues to others), which this VM has although it has no PMU (no instruction counts). Counting
// is done in the kernel, so unlike `strace -c` it does not slow the counted thread: a phase at
// 6,000 requests/s keeps its batching. bench/light_ab.ts and bench/load.ts --perf-stat.
import { spawn, type ChildProcess } from 'node:child_process';

/** The front's per-request events worth counting (tracepoint names as `perf list` gives them). */
export const FRONT_EVENTS = [
  'task-clock', 'context-switches', 'raw_syscalls:sys_enter', 'syscalls:sys_enter_epoll_pwait', 'syscalls:sys_enter_futex',
  'syscalls:sys_enter_sendto', 'syscalls:sys_enter_recvfrom', 'syscalls:sys_enter_read', 'syscalls:sys_enter_write',
  'sched:sched_waking',
] as const;

/**
 * Parses `perf stat -x,` output: `value,unit,event,...` per line; "<not counted>" and
 * "<not supported>" values are left out (the event is absent from the map), comments skipped.
 * task-clock comes in msec.
 */
export function parsePerfStatCsv(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const f = line.split(',');
    if (f.length < 3) continue;
    const v = Number(f[0]);
    const event = f[2].trim();
    if (event === '' || !Number.isFinite(v)) continue;
    out.set(event, (out.get(event) ?? 0) + v);
  }
  return out;
}

export interface PerfStatRun {
  /** Stops counting (SIGINT: perf prints its counts) and returns them by event. */
  stop(): Promise<Map<string, number>>;
}

/** Starts `perf stat -x, -t tid -e events`; its stop() resolves with the counts (empty on any failure). */
export function startPerfStat(tid: number, events: readonly string[], perf = 'perf'): PerfStatRun {
  let err = '';
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  try {
    child = spawn(perf, ['stat', '-x,', '-t', String(tid), '-e', events.join(',')], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (d: string) => {
      err += d;
    });
    const c = child;
    exited = new Promise<void>((resolve) => {
      c.on('close', () => resolve());
      c.on('error', () => resolve());
    });
  } catch {
    child = null;
  }
  return {
    async stop(): Promise<Map<string, number>> {
      if (child === null) return new Map();
      child.kill('SIGINT');
      await exited;
      return parsePerfStatCsv(err);
    },
  };
}

/** "task-clock 61.0, context-switches 0.169, ..." per request (task-clock in µs); "none" without counts. */
export function frontEventsText(events: Map<string, number> | null, requests: number): string {
  if (events === null || events.size === 0) return 'none (perf stat absent or refused)';
  const n = Math.max(1, requests);
  return FRONT_EVENTS.filter((e) => events.has(e))
    .map((e) => e === 'task-clock' ? `${e} ${((events.get(e) as number) * 1000 / n).toFixed(1)}` : `${e} ${((events.get(e) as number) / n).toFixed(3)}`)
    .join(', ');
}
