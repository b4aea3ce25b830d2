// A thread's --cpu-prof cut to time windows (issue 11, h27h): self and inclusive time per function
// inside the given windows only, so one server's profile answers "where does the front's time go
// per request at max rate" and "... at half the max rate" from the same run (bench/load.ts
// --profile: the median max run's window against the half-max phase's). The whole-life summary
// (profile.ts) mixes funding, warm-up and every phase.
//
// Clocks: a profile's startTime and timeDeltas are V8's TimeTicks in µs (CLOCK_MONOTONIC on Linux,
// the clock of process.hrtime); the bench's windows are epoch ms (performance.timeOrigin + now()).
// `epochMinusMonotonicMs()` read in the bench process converts one to the other (both clocks are
// system-wide, so the server's profile and the bench share them).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { frameWhere, type CpuProfileFile } from './profile.js';

export interface Window {
  from_ms: number;
  to_ms: number;
}

export interface WindowRow {
  name: string;
  where: string;
  /** µs of samples whose leaf is this function, inside the windows. */
  self_us: number;
  /** µs of samples with this function anywhere on the stack (counted once per sample). */
  total_us: number;
}

export interface WindowCut {
  sampled_us: number;
  idle_us: number;
  /** Samples in (program) and (garbage collector): V8's own work outside JS frames. */
  gc_us: number;
  program_us: number;
  busy_us: number;
  rows: WindowRow[];
}

/** Epoch ms minus CLOCK_MONOTONIC ms, read now (add to a profile's µs / 1000 to get epoch ms). */
export function epochMinusMonotonicMs(): number {
  const mono_ms = Number(process.hrtime.bigint()) / 1e6;
  return performance.timeOrigin + performance.now() - mono_ms;
}

/** Sums a profile's samples that fall in any window, per function (name + TypeScript file:line). */
export function cutProfile(file: string, windows: readonly Window[], epoch_minus_mono_ms: number, repo_root: string): WindowCut {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfileFile;
  const parent = new Map<number, number>();
  const byId = new Map<number, CpuProfileFile['nodes'][number]>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const keyOf = new Map<number, { key: string; name: string; where: string }>();
  const key = (id: number): { key: string; name: string; where: string } => {
    let k = keyOf.get(id);
    if (k === undefined) {
      const n = byId.get(id);
      const name = n?.callFrame.functionName || '(anonymous)';
      const where = n === undefined ? '' : frameWhere(n.callFrame, repo_root);
      k = { key: `${name}@${where}`, name, where };
      keyOf.set(id, k);
    }
    return k;
  };
  const cut: WindowCut = { sampled_us: 0, idle_us: 0, gc_us: 0, program_us: 0, busy_us: 0, rows: [] };
  const rows = new Map<string, WindowRow>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  const win = windows.map((w) => ({ from: (w.from_ms - epoch_minus_mono_ms) * 1000, to: (w.to_ms - epoch_minus_mono_ms) * 1000 }));
  let t = p.startTime;
  for (let i = 0; i < samples.length && i < deltas.length; i++) {
    t += deltas[i];
    if (!win.some((w) => t >= w.from && t < w.to)) continue;
    // As profile.ts: a sample stands for the time until the next one.
    const dt = Math.max(0, i + 1 < deltas.length ? deltas[i + 1] : 0);
    cut.sampled_us += dt;
    const leaf = key(samples[i]);
    if (leaf.name === '(idle)') {
      cut.idle_us += dt;
      continue;
    }
    if (leaf.name === '(garbage collector)') cut.gc_us += dt;
    if (leaf.name === '(program)') cut.program_us += dt;
    cut.busy_us += dt;
    const seen = new Set<string>();
    for (let id: number | undefined = samples[i]; id !== undefined; id = parent.get(id)) {
      const k = key(id);
      if (seen.has(k.key)) continue;
      seen.add(k.key);
      let r = rows.get(k.key);
      if (r === undefined) {
        r = { name: k.name, where: k.where, self_us: 0, total_us: 0 };
        rows.set(k.key, r);
      }
      r.total_us += dt;
      if (id === samples[i]) r.self_us += dt;
    }
  }
  cut.rows = [...rows.values()];
  return cut;
}

/** The top `n` rows by self time, each in µs per request (`requests` answered in the windows). */
export function perRequestText(cut: WindowCut, requests: number, n: number, by: 'self_us' | 'total_us' = 'self_us'): string[] {
  const q = Math.max(1, requests);
  const f = (us: number): string => (us / q).toFixed(2).padStart(7);
  const lines = [`busy ${f(cut.busy_us)} µs/request (GC ${(cut.gc_us / q).toFixed(2)}, (program) ${(cut.program_us / q).toFixed(2)}), idle ${f(cut.idle_us)}`];
  const top = [...cut.rows].filter((r) => r.name !== '(root)').sort((a, b) => b[by] - a[by]).slice(0, n);
  for (const r of top) lines.push(`${f(r.self_us)} self ${f(r.total_us)} total  ${r.name}  ${r.where}`);
  return lines;
}

// The main thread's profile: V8 names it CPU.<date>.<time>.<pid>.0.<seq>.cpuprofile (thread 0);
// profile.ts's role guess can say "verify worker" for it, since the front runs the worker's codec
// for its inline and stolen checks.
const MAIN_THREAD_PROFILE = /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/;

export interface PhaseWindow {
  label: string;
  windows: Window[];
  /** Requests answered in the windows together. */
  requests: number;
}

/** The newest main-thread profile in `dir` (file name), or null. */
export function frontProfileFile(dir: string): string | null {
  const files = readdirSync(dir).filter((f) => MAIN_THREAD_PROFILE.test(f)).sort();
  return files.length === 0 ? null : (files[files.length - 1] as string);
}

/**
 * The front's profile (the main thread's) cut to each phase's windows, top functions per request;
 * the windows and the clock offset go to `windows.json` in the profile dir so a later cut
 * (bench/profile_window.ts) can re-read them.
 */
export function frontProfileByPhase(dir: string, repo_root: string, say: (line: string) => void, phases: readonly PhaseWindow[], top_n = 30): void {
  const front = frontProfileFile(dir);
  if (front === null) return;
  const offset = epochMinusMonotonicMs();
  writeFileSync(path.join(dir, 'windows.json'), JSON.stringify({ front, epoch_minus_monotonic_ms: offset, phases }));
  for (const ph of phases) {
    const cut = cutProfile(path.join(dir, front), ph.windows, offset, repo_root);
    say(`  front profile in the ${ph.label} (${ph.requests} requests; µs per request, self and inclusive):`);
    for (const line of perRequestText(cut, ph.requests, top_n)) say(`    ${line}`);
  }
}
