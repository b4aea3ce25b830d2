// Where the slowest requests of the 1,000/s phase spend their time (issue 11): each answer the
// native generator read (its --records: scheduled, written, read, and the number of the
// server's X-Request-Id) is joined with the server's stage row of that request (same number,
// src/gateway/stage_timings.ts), which splits its end-to-end latency exactly into
//   send_delay  the generator writing it late against its schedule
//   to_server   written -> the server's route handler runs (loopback, the front's event loop busy)
//   the eight server stages (http_parse ... answer)
//   to_client   the server wrote the answer -> the generator has read all of it
// Both sides stamp on the wall clock (the server: performance.timeOrigin + now(); the generator:
// CLOCK_MONOTONIC plus the realtime offset it read at its start), so the parts add up to the
// latency; `clock_check_us` gives the smallest to_server and to_client seen: a few µs each when
// the clocks agree. A negative to_client can also be the server's front thread losing its core
// between writing an answer and stamping it (seen on a saturated machine: the generator read the
// answer first); that time then counts in `answer` instead. Pure functions over the two record sets.
// bench/light_ab.ts uses the same split over each build's timed phases pooled (tailFiguresOfPhases).
import { REQUEST_NO_AT, STAGE_ROW_F64, STAGE_STAMPS, STAGES } from '../../src/gateway/stage_timings.js';
import type { AnswerRecords } from './lanes.js';
import { medianLowerMiddle, percentileNearestRankOfSorted } from '../quantile.js';

export const TAIL_PARTS = ['send_delay', 'to_server', ...STAGES, 'to_client'] as const;
export type TailPart = (typeof TAIL_PARTS)[number];

/** Slow answers closer together than this (by schedule) count as one episode (one stall). */
export const EPISODE_GAP_MS = 10;

export interface TailGroup {
  /** The group's lower bound on the end-to-end latency (µs), and how many answers are at or above it. */
  threshold_us: number;
  count: number;
  latency_us_mean: number;
  /** Mean µs per part over the group: the parts add up to latency_us_mean. */
  mean_us: Record<TailPart, number>;
  /** For how many of the group each part was the largest. */
  largest: Partial<Record<TailPart, number>>;
  /** Runs of slow answers scheduled within EPISODE_GAP_MS of each other. */
  episodes: number;
  /** Mean µs of front GC pause inside each answer's written -> read span, and how many had any. */
  front_gc_us_mean: number;
  with_front_gc: number;
  /**
   * Mean µs of each answer's batch_wait during which the matcher was still on the previous batch
   * (its apply and its journal commit: published -> that batch's durable stamp); the rest of
   * batch_wait is the matcher asleep, waking or waiting for a core. Only batches that held a
   * signed request have rows, so a previous batch of unsigned requests alone is not seen.
   */
  batch_wait_behind_previous_us_mean: number;
  /** How many of the group had any batch_wait behind the previous batch. */
  behind_previous: number;
}

export interface TailFigures {
  joined: number;
  /** Answers without a stage row (not a signed request that reached the matcher, or an older server's rows). */
  unjoined: number;
  clock_check_us: { to_server_min: number; to_client_min: number };
  /** Median µs per part over every joined answer (medians do not add up). */
  median_us: Record<TailPart, number>;
  /** The front's GC pauses during the phase (first scheduled -> last read): count, total and longest ms. */
  front_gc: { pauses: number; total_ms: number; max_ms: number };
  above_p99: TailGroup;
  above_p999: TailGroup;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** The parts (µs) of one joined answer: rec index i, stage row at `at`. */
export function partsOf(rec: AnswerRecords, i: number, rows: Float64Array, at: number, out: Float64Array): void {
  out[0] = (rec.sent_ms[i] - rec.sched_ms[i]) * 1000;
  out[1] = (rows[at] - rec.sent_ms[i]) * 1000;
  for (let k = 0; k < STAGES.length; k++) out[2 + k] = (rows[at + k + 1] - rows[at + k]) * 1000;
  out[TAIL_PARTS.length - 1] = (rec.done_ms[i] - rows[at + STAGE_STAMPS - 1]) * 1000;
}

/** Each stage row's offset in `rows` by its request number (rows without a number are left out). */
export function rowsByRequestNo(rows: Float64Array): Map<number, number> {
  const row_of = new Map<number, number>();
  for (let at = 0; at + STAGE_ROW_F64 <= rows.length; at += STAGE_ROW_F64) {
    const no = rows[at + REQUEST_NO_AT];
    if (no > 0) row_of.set(no, at);
  }
  return row_of;
}

/** µs of the pauses (start, duration pairs, ms, in start order) that fall inside [from, to] ms. */
export function overlapUs(pauses: Float64Array, from: number, to: number): number {
  let lo = 0;
  let hi = pauses.length / 2;
  while (lo < hi) { // first pause ending after `from`
    const mid = (lo + hi) >> 1;
    if (pauses[2 * mid] + pauses[2 * mid + 1] <= from) lo = mid + 1;
    else hi = mid;
  }
  let us = 0;
  for (let k = lo; k < pauses.length / 2 && pauses[2 * k] < to; k++) {
    us += (Math.min(to, pauses[2 * k] + pauses[2 * k + 1]) - Math.max(from, pauses[2 * k])) * 1000;
  }
  return us;
}

/** Offset of the batch_start and durable stamps in a row (arrive, parsed, verify_start, verify_end, published, batch_start, applied, durable, answered). */
const PUBLISHED_AT = 4;
const BATCH_START_AT = 5;
const DURABLE_AT = 7;

/**
 * The matcher's batches seen in the rows, by start: each distinct batch_start stamp with its
 * durable stamp, sorted by start (the rows of one batch share both stamps).
 */
export function batchesOf(rows: Float64Array): { start_ms: Float64Array; durable_ms: Float64Array } {
  const durable_of = new Map<number, number>();
  for (let at = 0; at + STAGE_ROW_F64 <= rows.length; at += STAGE_ROW_F64) durable_of.set(rows[at + BATCH_START_AT], rows[at + DURABLE_AT]);
  const start_ms = Float64Array.from(durable_of.keys()).sort();
  const durable_ms = new Float64Array(start_ms.length);
  for (let k = 0; k < start_ms.length; k++) durable_ms[k] = durable_of.get(start_ms[k]) as number;
  return { start_ms, durable_ms };
}

/**
 * µs of the row's batch_wait (published -> batch_start) spent while the matcher was still on the
 * batch before (from its start to its durable stamp): the request waited behind that batch's
 * commit rather than for the matcher to wake or get a core.
 */
export function behindPreviousUs(rows: Float64Array, at: number, batches: { start_ms: Float64Array; durable_ms: Float64Array }): number {
  const published = rows[at + PUBLISHED_AT];
  const start = rows[at + BATCH_START_AT];
  let lo = 0;
  let hi = batches.start_ms.length;
  while (lo < hi) { // first batch starting at or after this one
    const mid = (lo + hi) >> 1;
    if (batches.start_ms[mid] < start) lo = mid + 1;
    else hi = mid;
  }
  if (lo === 0) return 0;
  const from = Math.max(published, batches.start_ms[lo - 1]);
  const to = Math.min(start, batches.durable_ms[lo - 1]);
  return to > from ? (to - from) * 1000 : 0;
}

function groupOf(threshold_us: number, picked: number[], latency_us: Float64Array, parts: Float64Array[], sched_ms: Float64Array, gc_us: Float64Array, behind_us: Float64Array): TailGroup {
  const P = TAIL_PARTS.length;
  const sum = new Float64Array(P);
  const largest: Partial<Record<TailPart, number>> = {};
  let lat = 0;
  let gc = 0;
  let with_gc = 0;
  let behind = 0;
  let with_behind = 0;
  for (const j of picked) {
    lat += latency_us[j];
    behind += behind_us[j];
    if (behind_us[j] > 0) with_behind++;
    gc += gc_us[j];
    if (gc_us[j] > 0) with_gc++;
    let top = 0;
    for (let k = 0; k < P; k++) {
      sum[k] += parts[j][k];
      if (parts[j][k] > parts[j][top]) top = k;
    }
    largest[TAIL_PARTS[top]] = (largest[TAIL_PARTS[top]] ?? 0) + 1;
  }
  const n = Math.max(1, picked.length);
  const mean_us = {} as Record<TailPart, number>;
  TAIL_PARTS.forEach((name, k) => {
    mean_us[name] = round1(sum[k] / n);
  });
  const times = picked.map((j) => sched_ms[j]).sort((a, b) => a - b);
  let episodes = 0;
  for (let k = 0; k < times.length; k++) if (k === 0 || times[k] - times[k - 1] > EPISODE_GAP_MS) episodes++;
  return {
    threshold_us: round1(threshold_us), count: picked.length, latency_us_mean: round1(lat / n), mean_us, largest, episodes,
    front_gc_us_mean: round1(gc / n), with_front_gc: with_gc,
    batch_wait_behind_previous_us_mean: round1(behind / n), behind_previous: with_behind,
  };
}

/**
 * Joins the phase's answers with the stage rows (by request number) and summarises the answers
 * at or above the phase's p99 and p999 end-to-end latency (scheduled -> read, over the joined
 * answers); null when nothing joins (no records, or a server whose rows carry no numbers).
 */
export function tailFigures(rows: Float64Array, rec: AnswerRecords, gc_pauses: Float64Array = new Float64Array(0)): TailFigures | null {
  const row_of = rowsByRequestNo(rows);
  const batches = batchesOf(rows);
  const parts: Float64Array[] = [];
  const behind: number[] = [];
  const latency: number[] = [];
  const sched: number[] = [];
  const gc: number[] = [];
  let first_ms = Infinity;
  let last_ms = -Infinity;
  let unjoined = 0;
  for (let i = 0; i < rec.request_no.length; i++) {
    const at = rec.request_no[i] > 0 ? row_of.get(rec.request_no[i]) : undefined;
    if (at === undefined) {
      unjoined++;
      continue;
    }
    const p = new Float64Array(TAIL_PARTS.length);
    partsOf(rec, i, rows, at, p);
    parts.push(p);
    latency.push((rec.done_ms[i] - rec.sched_ms[i]) * 1000);
    sched.push(rec.sched_ms[i]);
    gc.push(overlapUs(gc_pauses, rec.sent_ms[i], rec.done_ms[i]));
    behind.push(behindPreviousUs(rows, at, batches));
    first_ms = Math.min(first_ms, rec.sched_ms[i]);
    last_ms = Math.max(last_ms, rec.done_ms[i]);
  }
  const n = parts.length;
  if (n === 0) return null;
  const latency_us = Float64Array.from(latency);
  const sched_ms = Float64Array.from(sched);
  const gc_us = Float64Array.from(gc);
  const behind_us = Float64Array.from(behind);
  let pauses = 0;
  let gc_total_ms = 0;
  let gc_max_ms = 0;
  for (let k = 0; k < gc_pauses.length / 2; k++) {
    if (gc_pauses[2 * k] + gc_pauses[2 * k + 1] < first_ms || gc_pauses[2 * k] > last_ms) continue;
    pauses++;
    gc_total_ms += gc_pauses[2 * k + 1];
    gc_max_ms = Math.max(gc_max_ms, gc_pauses[2 * k + 1]);
  }
  const sorted = latency_us.slice().sort();
  const at_pct = (p: number): number => percentileNearestRankOfSorted(sorted, p);
  const median_us = {} as Record<TailPart, number>;
  const column = new Float64Array(n);
  TAIL_PARTS.forEach((name, k) => {
    for (let j = 0; j < n; j++) column[j] = parts[j][k];
    median_us[name] = round1(medianLowerMiddle(column));
  });
  let to_server_min = Infinity;
  let to_client_min = Infinity;
  for (const p of parts) {
    to_server_min = Math.min(to_server_min, p[1]);
    to_client_min = Math.min(to_client_min, p[TAIL_PARTS.length - 1]);
  }
  const above = (threshold: number): TailGroup => {
    const picked: number[] = [];
    for (let j = 0; j < n; j++) if (latency_us[j] >= threshold) picked.push(j);
    return groupOf(threshold, picked, latency_us, parts, sched_ms, gc_us, behind_us);
  };
  return {
    joined: n,
    unjoined,
    clock_check_us: { to_server_min: round1(to_server_min), to_client_min: round1(to_client_min) },
    median_us,
    front_gc: { pauses, total_ms: round1(gc_total_ms), max_ms: round1(gc_max_ms) },
    above_p99: above(at_pct(99)),
    above_p999: above(at_pct(99.9)),
  };
}

/** One timed phase of a server: its answers' records and its span (epoch ms, from before its first send to after its last read). */
export interface TailPhase {
  records: AnswerRecords;
  from_ms: number;
  to_ms: number;
}

/** The phases' answers as one record set, in phase order (a server's request numbers do not repeat across its phases). */
export function concatRecords(recs: readonly AnswerRecords[]): AnswerRecords {
  const n = recs.reduce((sum, r) => sum + r.request_no.length, 0);
  const out: AnswerRecords = {
    sched_ms: new Float64Array(n), sent_ms: new Float64Array(n), done_ms: new Float64Array(n),
    request_no: new Float64Array(n), status: new Uint16Array(n),
  };
  let at = 0;
  for (const r of recs) {
    out.sched_ms.set(r.sched_ms, at);
    out.sent_ms.set(r.sent_ms, at);
    out.done_ms.set(r.done_ms, at);
    out.request_no.set(r.request_no, at);
    out.status.set(r.status, at);
    at += r.request_no.length;
  }
  return out;
}

/** The pauses (start, duration pairs, ms) that overlap at least one of the windows, in their order. */
export function pausesWithin(pauses: Float64Array, windows: readonly { from_ms: number; to_ms: number }[]): Float64Array {
  const kept: number[] = [];
  for (let k = 0; k < pauses.length / 2; k++) {
    const start = pauses[2 * k];
    const end = start + pauses[2 * k + 1];
    if (windows.some((w) => end >= w.from_ms && start <= w.to_ms)) kept.push(start, pauses[2 * k + 1]);
  }
  return Float64Array.from(kept);
}

/**
 * The tail split over several phases of one server (bench/light_ab.ts: a build's timed phases,
 * alternated with the other build's): their answers pooled, so the group at or above p99 is the
 * server's slowest 1% over all its phases (~300 answers over 6 phases of 5 s at 1,000/s, against
 * ~50 in one phase: steadier means per part), and only the front GC pauses that overlap one of
 * the phases counted (between them the server idles while the other build runs its phases).
 */
export function tailFiguresOfPhases(rows: Float64Array, phases: readonly TailPhase[], gc_pauses: Float64Array = new Float64Array(0)): TailFigures | null {
  return tailFigures(rows, concatRecords(phases.map((p) => p.records)), pausesWithin(gc_pauses, phases));
}

/** The human table: per part the median of all, the mean above p99 and above p999, and how often it was the largest. */
/** `phase`: how the report names the phase ("1,000/s", "half the max rate"). */
export function tailLines(t: TailFigures | null, phase = '1,000/s'): string[] {
  if (t === null) return [`tail at ${phase}: no joined answers (Node generator, or a server whose stage rows carry no request numbers)`];
  const g99 = t.above_p99;
  const g999 = t.above_p999;
  const lines = [
    `where the slowest requests at ${phase} spend their time (${t.joined.toLocaleString('en-US')} answers joined with the server's stage rows, ${t.unjoined} not; us):`,
    `  ${'part'.padEnd(14)} ${'median all'.padStart(10)} ${`mean >=p99 (${g99.count})`.padStart(18)} ${`mean >=p999 (${g999.count})`.padStart(18)}   largest in >=p99`,
  ];
  for (const name of TAIL_PARTS) {
    lines.push(`  ${name.padEnd(14)} ${String(t.median_us[name]).padStart(10)} ${String(g99.mean_us[name]).padStart(18)} ${String(g999.mean_us[name]).padStart(18)}   ${g99.largest[name] ?? 0}`);
  }
  lines.push(`  ${'latency'.padEnd(14)} ${''.padStart(10)} ${String(g99.latency_us_mean).padStart(18)} ${String(g999.latency_us_mean).padStart(18)}` +
    `   (p99 ${g99.threshold_us} us in ${g99.episodes} episodes, p999 ${g999.threshold_us} us in ${g999.episodes}; episode: slow answers < ${EPISODE_GAP_MS} ms apart)`);
  lines.push(`  front GC pauses in the phase: ${t.front_gc.pauses} (${t.front_gc.total_ms} ms, longest ${t.front_gc.max_ms} ms); ` +
    `inside the slow answers: >=p99 ${g99.with_front_gc} of ${g99.count} (mean ${g99.front_gc_us_mean} us), >=p999 ${g999.with_front_gc} of ${g999.count} (mean ${g999.front_gc_us_mean} us)`);
  lines.push(`  batch_wait behind the previous batch's apply and commit (the rest: the matcher waking or waiting for a core): ` +
    `>=p99 ${g99.behind_previous} of ${g99.count} (mean ${g99.batch_wait_behind_previous_us_mean} of ${g99.mean_us.batch_wait} us), ` +
    `>=p999 ${g999.behind_previous} of ${g999.count} (mean ${g999.batch_wait_behind_previous_us_mean} of ${g999.mean_us.batch_wait} us)`);
  lines.push(`  clock check: smallest to_server ${t.clock_check_us.to_server_min} us, to_client ${t.clock_check_us.to_client_min} us (a few us when the clocks agree; negative: a clock skew, or a thread descheduled between its write and its stamp)`);
  return lines;
}
