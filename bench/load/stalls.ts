// When the slow answers of a latency phase happened and what the server was doing then (issue 11:
// the half-max p99 is set by a few stalls of tens of ms, h11t). The answers at or above the
// phase's p99 (scheduled -> read) are clustered by schedule into episodes (EPISODE_GAP_MS, as in
// tail.ts); each episode's window runs from its first slow answer's scheduled time to its last
// one's read, and is laid over everything else the bench knows on the same epoch clock:
//   - GC pauses: the front's (its PerformanceObserver, in the stage file) and every other
//     isolate's (V8's --trace-gc-nvp lines, `--gc`; null without);
//   - the journal: each matcher batch's commit (applied -> durable stamps of the stage rows), the
//     longest one and their sum inside the window, and the longest gap between two batches;
//   - the threads: ms running and ms waiting for a core per role (thread_timeline.ts), and what
//     the rest of the machine ran (other processes and the generator);
//   - the slow answers' own parts (tail.ts): the three largest means.
// A stall the server made itself shows as one of its threads running (a GC, a long commit, a
// long turn of the front); one the machine made shows as run-queue waits and other processes'
// CPU. Pure functions over the records; absent inputs give null fields, never zeros.
import { STAGE_ROW_F64 } from '../../src/gateway/stage_timings.js';
import type { AnswerRecords } from './lanes.js';
import { EPISODE_GAP_MS, overlapUs, partsOf, rowsByRequestNo, TAIL_PARTS } from './tail.js';
import { windowSched, type Timeline } from './thread_timeline.js';
import { percentileNearestRankOfSorted } from '../quantile.js';

/** Episodes reported per phase (the largest by answers): the p99 is theirs. */
export const EPISODES_REPORTED = 5;
/** Parts of the slow answers named per episode. */
const PARTS_NAMED = 3;
/** Stamp indexes in a stage row (src/gateway/stage_timings.ts: arrive, parsed, verify_start, verify_end, published, batch_start, applied, durable, answered). */
const BATCH_START_AT = 5;
const APPLIED_AT = 6;
const DURABLE_AT = 7;

export interface StallOverlap {
  /** The front's GC pauses: ms of them inside the window (summed), and the longest one overlapping it (the `front_gc` sign's figure). */
  front_gc_ms: number | null;
  front_gc_max_ms: number | null;
  /** Pauses of the other isolates (matcher, DA worker, verify workers...), from --trace-gc-nvp; null without `--gc`. */
  other_isolates_gc_ms: number | null;
  other_isolates_gc_max_ms: number | null;
  /** Matcher batches that started in the window, their commits' longest and summed ms inside it, and the longest gap between two batches. */
  batches: number | null;
  journal_commit_max_ms: number | null;
  journal_ms: number | null;
  batch_gap_max_ms: number | null;
  cpu_ms_by_thread: Record<string, number> | null;
  runqueue_ms_by_thread: Record<string, number> | null;
  /** Machine busy minus the server's threads over the window: other processes and the generator (10 ms ticks: coarse). */
  others_cpu_ms: number | null;
  /** Machine busy over the window, % of all cores (/proc/stat's cpuN lines), steal not counted. */
  machine_busy_pct: number | null;
  /** Time the hypervisor stole over the window, % of all cores (a vCPU that wanted to run and did not). */
  machine_steal_pct: number | null;
  /** The cores those % are of (/proc/stat's cpuN lines). */
  machine_cores: number | null;
  /** Roles of the threads running or waiting for a core >= 90% of the window (thread_timeline.ts SATURATED_PCT); null without a timeline. */
  saturated_threads: string[] | null;
}

/**
 * The stretch before an episode's window that is laid over too: the answers over p99 are those
 * scheduled well inside a stall, so what set it off (a GC, a long commit) can lie before the
 * first of them; h11t's half-max episodes run ~100 ms.
 */
export const LEAD_IN_MS = 100;

export interface StallEpisode {
  /** ms after the phase's first scheduled request. */
  start_ms: number;
  length_ms: number;
  answers: number;
  latency_max_ms: number;
  /** The three largest mean parts (ms) of its answers that joined a stage row; null when none joined. */
  largest_parts_ms: Record<string, number> | null;
  overlapping: StallOverlap;
  /** The same over the LEAD_IN_MS before the window. */
  lead_in: StallOverlap;
}

/**
 * How many of the reported episodes show each sign, in the window or its lead-in (null when the
 * source is absent): the run's verdict at a glance. Thresholds: a GC pause or a commit of
 * SIGN_MS or more (the 1,000/s p99 target is 2 ms, the half-max one 5 ms: 5 ms alone would
 * miss the half-max target), a machine >= MACHINE_SATURATED_PCT busy or stolen, others taking at least
 * half a core.
 */
export interface StallSigns {
  front_saturated: number | null;
  machine_saturated: number | null;
  others_over_half_a_core: number | null;
  front_gc: number | null;
  other_isolates_gc: number | null;
  journal_commit: number | null;
}

export const SIGN_MS = 5;
export const MACHINE_SATURATED_PCT = 95;
/**
 * Shortest window, per core, whose machine_busy_pct the machine_saturated sign trusts (shorter:
 * null). /proc/stat counts in 10 ms units and the kernel credits each core's busy time a tick at a
 * time, so on the 2 cores here a window under ~200 ms reads ±10-20% of its capacity: an 80%-busy
 * window can read 95% (most episodes run ~100 ms, and every lead-in is LEAD_IN_MS).
 */
export const MACHINE_WINDOW_MS_PER_CORE = 100;

export interface StallFigures {
  threshold_ms: number;
  /** Answers at or above the threshold, and the episodes they form. */
  slow_answers: number;
  episodes: number;
  /** Share of the slow answers in the reported episodes. */
  reported_share: number;
  /** Over the reported episodes (StallSigns). */
  signs: StallSigns;
  top: StallEpisode[];
}

/** Counts the episodes for which `test` holds in the window or its lead-in; null when it is null for every one (absent source). */
function countSign(top: StallEpisode[], test: (o: StallOverlap, length_ms: number) => boolean | null): number | null {
  let known = false;
  let n = 0;
  for (const e of top) {
    const a = test(e.overlapping, e.length_ms);
    const b = test(e.lead_in, LEAD_IN_MS);
    if (a === null && b === null) continue;
    known = true;
    if (a === true || b === true) n++;
  }
  return known ? n : null;
}

export function stallSigns(top: StallEpisode[]): StallSigns {
  const atLeast = (x: number | null, min: number): boolean | null => (x === null ? null : x >= min);
  return {
    front_saturated: countSign(top, (o) => (o.saturated_threads === null ? null : o.saturated_threads.includes('main'))),
    // No core idle: busy, or stolen by the hypervisor (a stolen core was not free for the server either).
    machine_saturated: countSign(top, (o, len) => o.machine_busy_pct === null || o.machine_cores === null || len < MACHINE_WINDOW_MS_PER_CORE * o.machine_cores
      ? null
      : o.machine_busy_pct + (o.machine_steal_pct ?? 0) >= MACHINE_SATURATED_PCT),
    others_over_half_a_core: countSign(top, (o, len) => atLeast(o.others_cpu_ms, len / 2)),
    front_gc: countSign(top, (o) => atLeast(o.front_gc_max_ms, SIGN_MS)),
    other_isolates_gc: countSign(top, (o) => atLeast(o.other_isolates_gc_max_ms, SIGN_MS)),
    journal_commit: countSign(top, (o) => atLeast(o.journal_commit_max_ms, SIGN_MS)),
  };
}

/** What the phase's episodes are laid over (each null when the bench did not get it). */
export interface StallSources {
  rows: Float64Array | null;
  /**
   * From this batch start (epoch ms) on the server kept no more rows (the stage file's cut_off_ms,
   * STAGE_ROWS_MAX): a window reaching it gets null journal fields, not "0 batches". Null: none
   * dropped (or an older file that does not say).
   */
  rows_cut_off_ms: number | null;
  front_gc: Float64Array | null;
  /** Other isolates' pauses (start, duration pairs per isolate, epoch ms), the front's isolate left out; null without `--gc`. */
  other_gc: Float64Array[] | null;
  timeline: Timeline | null;
}

const r1 = (x: number): number => Math.round(x * 10) / 10;

/** Batches (sorted by start) from the stage rows: [batch_start, applied, durable] per distinct batch start. */
export function batchesOf(rows: Float64Array): Float64Array {
  const seen = new Map<number, number>();
  const list: number[][] = [];
  for (let at = 0; at + STAGE_ROW_F64 <= rows.length; at += STAGE_ROW_F64) {
    const start = rows[at + BATCH_START_AT];
    if (!(start > 0) || seen.has(start)) continue;
    seen.set(start, list.length);
    list.push([start, rows[at + APPLIED_AT], rows[at + DURABLE_AT]]);
  }
  list.sort((a, b) => a[0] - b[0]);
  return Float64Array.from(list.flat());
}

/** Journal figures of the batches (batchesOf) over [from, to] ms. */
export function journalIn(batches: Float64Array, from: number, to: number): { batches: number; commit_max_ms: number; journal_ms: number; gap_max_ms: number } {
  const n = batches.length / 3;
  let count = 0;
  let max = 0;
  let sum = 0;
  let gap = 0;
  let prev_end = from;
  for (let k = 0; k < n; k++) {
    const start = batches[3 * k];
    const applied = batches[3 * k + 1];
    const durable = batches[3 * k + 2];
    if (durable < from) continue;
    if (start > to) break;
    if (start >= from) count++;
    const inside = Math.min(to, durable) - Math.max(from, applied);
    if (inside > 0) sum += inside;
    if (start >= from) max = Math.max(max, durable - applied);
    gap = Math.max(gap, Math.min(start, to) - prev_end);
    prev_end = Math.max(prev_end, durable);
  }
  gap = Math.max(gap, to - prev_end);
  return { batches: count, commit_max_ms: r1(max), journal_ms: r1(sum), gap_max_ms: r1(gap) };
}

/** The longest of the (start, duration) pauses that overlap [from, to] (whole, not cut at the window's ends). */
function longestPauseIn(p: Float64Array, from: number, to: number): number {
  let max = 0;
  for (let k = 0; k < p.length / 2; k++) {
    if (p[2 * k] < to && p[2 * k] + p[2 * k + 1] > from) max = Math.max(max, p[2 * k + 1]);
  }
  return max;
}

function overlapOf(src: StallSources, batches: Float64Array | null, from: number, to: number): StallOverlap {
  let other_ms: number | null = null;
  let other_max: number | null = null;
  if (src.other_gc !== null) {
    other_ms = 0;
    other_max = 0;
    for (const p of src.other_gc) {
      other_ms += overlapUs(p, from, to) / 1000;
      other_max = Math.max(other_max, longestPauseIn(p, from, to));
    }
    other_ms = r1(other_ms);
    other_max = r1(other_max);
  }
  // Batches starting at or after the cut-off may have no row: the journal over such a window is unknown.
  const cut = src.rows_cut_off_ms;
  const j = batches === null || (cut !== null && to >= cut) ? null : journalIn(batches, from, to);
  const sched = windowSched(src.timeline, from, to);
  return {
    front_gc_ms: src.front_gc === null ? null : r1(overlapUs(src.front_gc, from, to) / 1000),
    front_gc_max_ms: src.front_gc === null ? null : r1(longestPauseIn(src.front_gc, from, to)),
    other_isolates_gc_ms: other_ms,
    other_isolates_gc_max_ms: other_max,
    batches: j?.batches ?? null,
    journal_commit_max_ms: j?.commit_max_ms ?? null,
    journal_ms: j?.journal_ms ?? null,
    batch_gap_max_ms: j?.gap_max_ms ?? null,
    cpu_ms_by_thread: sched?.cpu_ms_by_thread ?? null,
    runqueue_ms_by_thread: sched?.runqueue_ms_by_thread ?? null,
    others_cpu_ms: sched?.others_cpu_ms ?? null,
    machine_busy_pct: sched?.machine_busy_pct ?? null,
    machine_steal_pct: sched?.machine_steal_pct ?? null,
    machine_cores: sched?.machine_cores ?? null,
    saturated_threads: sched?.saturated_threads ?? null,
  };
}

/**
 * The phase's stall episodes: slow answers (at or above the phase's p99 over all its answers)
 * clustered by schedule, the EPISODES_REPORTED largest with what overlapped them; null without
 * records (the Node generator keeps none).
 */
export function stallFigures(rec: AnswerRecords | null | undefined, src: StallSources): StallFigures | null {
  if (rec === null || rec === undefined || rec.sched_ms.length === 0) return null;
  const n = rec.sched_ms.length;
  const latency = new Float64Array(n);
  let t0 = Infinity;
  for (let i = 0; i < n; i++) {
    latency[i] = rec.done_ms[i] - rec.sched_ms[i];
    t0 = Math.min(t0, rec.sched_ms[i]);
  }
  const sorted = latency.slice().sort();
  const threshold = percentileNearestRankOfSorted(sorted, 99);
  const slow: number[] = [];
  for (let i = 0; i < n; i++) if (latency[i] >= threshold) slow.push(i);
  slow.sort((a, b) => rec.sched_ms[a] - rec.sched_ms[b]);
  const groups: number[][] = [];
  for (let k = 0; k < slow.length; k++) {
    if (k === 0 || rec.sched_ms[slow[k]] - rec.sched_ms[slow[k - 1]] > EPISODE_GAP_MS) groups.push([]);
    groups[groups.length - 1].push(slow[k]);
  }
  const ranked = [...groups].sort((a, b) => b.length - a.length || rec.sched_ms[a[0]] - rec.sched_ms[b[0]]).slice(0, EPISODES_REPORTED);
  const row_of = src.rows === null ? null : rowsByRequestNo(src.rows);
  const batches = src.rows === null ? null : batchesOf(src.rows);
  const parts = new Float64Array(TAIL_PARTS.length);
  const top = ranked.map((g): StallEpisode => {
    let from = Infinity;
    let to = -Infinity;
    let lat_max = 0;
    const sum = new Float64Array(TAIL_PARTS.length);
    let joined = 0;
    for (const i of g) {
      from = Math.min(from, rec.sched_ms[i]);
      to = Math.max(to, rec.done_ms[i]);
      lat_max = Math.max(lat_max, latency[i]);
      const at = row_of === null || !(rec.request_no[i] > 0) ? undefined : row_of.get(rec.request_no[i]);
      if (at === undefined || src.rows === null) continue;
      partsOf(rec, i, src.rows, at, parts);
      for (let k = 0; k < parts.length; k++) sum[k] += parts[k];
      joined++;
    }
    let largest: Record<string, number> | null = null;
    if (joined > 0) {
      largest = {};
      const order = TAIL_PARTS.map((name, k) => [name, sum[k] / joined / 1000] as const).sort((a, b) => b[1] - a[1]).slice(0, PARTS_NAMED);
      for (const [name, v] of order) largest[name] = r1(v);
    }
    return {
      start_ms: r1(from - t0), length_ms: r1(to - from), answers: g.length, latency_max_ms: r1(lat_max),
      largest_parts_ms: largest, overlapping: overlapOf(src, batches, from, to), lead_in: overlapOf(src, batches, from - LEAD_IN_MS, from),
    };
  });
  top.sort((a, b) => a.start_ms - b.start_ms);
  const in_top = ranked.reduce((s, g) => s + g.length, 0);
  return {
    threshold_ms: Math.round(threshold * 1000) / 1000, slow_answers: slow.length, episodes: groups.length,
    reported_share: Math.round((in_top / Math.max(1, slow.length)) * 1000) / 1000, signs: stallSigns(top), top,
  };
}

/** The human lines: one per reported episode. */
export function stallLines(s: StallFigures | null, phase: string): string[] {
  if (s === null) return [`stall episodes at ${phase}: no answer records (Node generator)`];
  const g = s.signs;
  const c = (x: number | null): string => (x === null ? 'n/a' : String(x));
  const lines = [
    `stall episodes at ${phase}: ${s.slow_answers} answers >= p99 ${s.threshold_ms} ms in ${s.episodes} episode(s); the ${s.top.length} largest hold ${Math.round(s.reported_share * 100)}% of them;`,
    `  of those, in the window or the ${LEAD_IN_MS} ms before: front saturated ${c(g.front_saturated)}, machine >= ${MACHINE_SATURATED_PCT}% busy or stolen ${c(g.machine_saturated)}, ` +
      `other processes + generator >= half a core ${c(g.others_over_half_a_core)}, a front GC pause >= ${SIGN_MS} ms ${c(g.front_gc)}, ` +
      `another isolate's ${c(g.other_isolates_gc)}, a journal commit >= ${SIGN_MS} ms ${c(g.journal_commit)}:`,
  ];
  const rec = (o: Record<string, number> | null): string => o === null ? 'n/a' : Object.entries(o).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
  const v = (x: number | null): string => (x === null ? 'n/a' : String(x));
  const overlapLines = (label: string, o: StallOverlap): string[] => [
    `    ${label}: GC front ${v(o.front_gc_ms)} ms (longest ${v(o.front_gc_max_ms)}), other isolates ${v(o.other_isolates_gc_ms)} ms (longest ${v(o.other_isolates_gc_max_ms)}); ` +
      `${v(o.batches)} batches, journal ${v(o.journal_ms)} ms (longest commit ${v(o.journal_commit_max_ms)}), longest gap between batches ${v(o.batch_gap_max_ms)} ms; machine ${v(o.machine_busy_pct)}% busy (${v(o.machine_steal_pct)}% stolen); saturated threads: ${o.saturated_threads === null ? 'n/a' : o.saturated_threads.join(', ') || 'none'}`,
    `      running ms: ${rec(o.cpu_ms_by_thread)}; waiting for a core ms: ${rec(o.runqueue_ms_by_thread)}; other processes + generator ${v(o.others_cpu_ms)} ms`,
  ];
  for (const e of s.top) {
    lines.push(`  at ${e.start_ms} ms for ${e.length_ms} ms: ${e.answers} answers (max ${e.latency_max_ms} ms), largest parts ${rec(e.largest_parts_ms)}`);
    lines.push(...overlapLines('in it', e.overlapping), ...overlapLines(`${LEAD_IN_MS} ms before`, e.lead_in));
  }
  return lines;
}
