// Per-thread CPU and wake-ups of a process between two /proc samples, keyed by thread name and
// creation rank (bench/light_threads.ts): tids differ between runs and Node leaves most threads
// "node", so "node#3" (the fourth thread called "node", by creation) is what two runs share.
// Run time is schedstat's first field (ns), not stat's utime + stime (10 ms ticks: 2 us per request
// over a 5 s phase at 1,000/s, the size of the figures looked for here).
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadTick {
  /** ns on a CPU (schedstat field 1). */
  run_ns: number;
  /** voluntary_ctxt_switches: the thread went to sleep and was woken again. */
  wakes: number;
  comm: string;
  /** Start time after boot, clock ticks (stat field 22): creation order. */
  start: number;
}

export interface ThreadRow {
  /** 'main' for the main thread, else `${comm}#${rank}`: rank among the threads of that name by creation (start, then tid). */
  key: string;
  us_per_request: number;
  wakes_per_request: number;
}

/** One sample of every thread of `pid` (threads that end between readdir and read are left out). */
export function sampleThreads(pid: number, proc = '/proc'): Map<number, ThreadTick> {
  const out = new Map<number, ThreadTick>();
  for (const t of readdirSync(`${proc}/${pid}/task`)) {
    try {
      const base = `${proc}/${pid}/task/${t}`;
      const stat = readFileSync(`${base}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).trim().split(' ');
      const run_ns = Number(readFileSync(`${base}/schedstat`, 'utf8').trim().split(' ')[0]);
      const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(readFileSync(`${base}/status`, 'utf8'));
      out.set(Number(t), { run_ns, wakes: m === null ? 0 : Number(m[1]), comm: readFileSync(`${base}/comm`, 'utf8').trim(), start: Number(f[19]) });
    } catch {
      // the thread ended between readdir and read
    }
  }
  return out;
}

/**
 * Each thread of sample `b` (a thread new since `a` counts from 0): µs on a CPU and wake-ups per
 * answered request, keyed by name and creation rank; the main thread (tid == pid) is 'main' and
 * does not take a rank. In creation order.
 */
export function threadRows(pid: number, a: ReadonlyMap<number, ThreadTick>, b: ReadonlyMap<number, ThreadTick>, answered: number): ThreadRow[] {
  const n = Math.max(1, answered);
  const order = [...b.entries()].sort((x, y) => x[1].start - y[1].start || x[0] - y[0]);
  const seen = new Map<string, number>();
  const rows: ThreadRow[] = [];
  for (const [tid, t] of order) {
    let key = 'main';
    if (tid !== pid) {
      const k = seen.get(t.comm) ?? 0;
      seen.set(t.comm, k + 1);
      key = `${t.comm}#${k}`;
    }
    const before = a.get(tid);
    rows.push({ key, us_per_request: (t.run_ns - (before?.run_ns ?? 0)) / 1000 / n, wakes_per_request: (t.wakes - (before?.wakes ?? 0)) / n });
  }
  return rows;
}
