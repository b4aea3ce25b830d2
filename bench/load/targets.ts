// The issue-11 figures of the load bench: the signature ceiling (what the machine's cores could
// verify with native libsecp256k1), the server's CPU per request against one recovery, latency at
// a light fixed rate and at half the max rate, and the latency per pipeline stage from the
// server's stage timings (src/gateway/stage_timings.ts). Pure functions over what load.ts measured.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { readStageFile, stagePercentiles, STAGES, type StageFile, type StageName, type StagePercentiles } from '../../src/gateway/stage_timings.js';
import type { Histogram } from './lanes.js';

/** Light fixed rate of the latency targets (requests/s). */
export const LIGHT_RATE_PER_S = 1000;
export const TARGET_P50_MS_AT_1000 = 0.5;
export const TARGET_P99_MS_AT_1000 = 2;
export const TARGET_P999_MS_AT_1000 = 5;
export const TARGET_P99_MS_AT_HALF_MAX = 5;
export const TARGET_CEILING_RATIO = 0.5;
/** Server CPU per request at most this many single-core recoveries. */
export const TARGET_CPU_TO_RECOVERY = 1.6;

export interface CeilingFigures {
  signature_recoveries_per_s_one_core: number;
  signature_ceiling_per_s: number;
  signature_ceiling_ratio: number;
  server_cpu_us_per_request: number;
  server_cpu_to_recovery_ratio: number;
}

/**
 * `recoveries_per_cpu_s`: native ecdsaRecover per CPU-second of one thread, measured before the
 * timed phases; `accepted_per_s`: accepted signed requests (orders + cancels) per second at max
 * rate; `server_cpu_ms` and `answered` over that same max-rate run.
 */
export function ceilingFigures(recoveries_per_cpu_s: number, cores: number, accepted_per_s: number, server_cpu_ms: number, answered: number): CeilingFigures {
  const ceiling = recoveries_per_cpu_s * cores;
  const cpu_us = answered > 0 ? (server_cpu_ms * 1000) / answered : 0;
  const recovery_us = 1e6 / recoveries_per_cpu_s;
  const r3 = (x: number): number => Math.round(x * 1000) / 1000;
  return {
    signature_recoveries_per_s_one_core: Math.round(recoveries_per_cpu_s),
    signature_ceiling_per_s: Math.round(ceiling),
    signature_ceiling_ratio: r3(accepted_per_s / ceiling),
    server_cpu_us_per_request: Math.round(cpu_us * 10) / 10,
    server_cpu_to_recovery_ratio: r3(cpu_us / recovery_us),
  };
}

export function ceilingLines(c: CeilingFigures): string[] {
  return [
    `signature ceiling: ${c.signature_recoveries_per_s_one_core.toLocaleString('en-US')} native recoveries/s on one core x cores = ` +
      `${c.signature_ceiling_per_s.toLocaleString('en-US')}/s; accepted signed requests at max rate / ceiling = ${c.signature_ceiling_ratio}` +
      ` (target >= ${TARGET_CEILING_RATIO}: ${c.signature_ceiling_ratio >= TARGET_CEILING_RATIO ? 'PASS' : 'MISS'})`,
    `server CPU per answered request ${c.server_cpu_us_per_request} us = ${c.server_cpu_to_recovery_ratio} x one recovery` +
      ` (target <= ${TARGET_CPU_TO_RECOVERY}: ${c.server_cpu_to_recovery_ratio <= TARGET_CPU_TO_RECOVERY ? 'PASS' : 'MISS'})`,
  ];
}

function pctMs(h: Histogram, p: number): number {
  return h.totalCount === 0 ? 0 : Math.round(h.getValueAtPercentile(p)) / 1000;
}

export interface LatencyFigures {
  p50_ms_at_1000: number;
  p99_ms_at_1000: number;
  p999_ms_at_1000: number;
  half_max_rate_per_s: number;
  p99_ms_at_half_max: number;
}

export function latencyFigures(light: Histogram, half: Histogram, half_rate: number): LatencyFigures {
  return {
    p50_ms_at_1000: pctMs(light, 50),
    p99_ms_at_1000: pctMs(light, 99),
    p999_ms_at_1000: pctMs(light, 99.9),
    half_max_rate_per_s: Math.round(half_rate),
    p99_ms_at_half_max: pctMs(half, 99),
  };
}

export function latencyLines(l: LatencyFigures): string[] {
  const v = (ok: boolean): string => (ok ? 'PASS' : 'MISS');
  return [
    `at ${LIGHT_RATE_PER_S.toLocaleString('en-US')} requests/s (from scheduled send): p50 ${l.p50_ms_at_1000} ms (< ${TARGET_P50_MS_AT_1000}: ${v(l.p50_ms_at_1000 < TARGET_P50_MS_AT_1000)}),` +
      ` p99 ${l.p99_ms_at_1000} ms (< ${TARGET_P99_MS_AT_1000}: ${v(l.p99_ms_at_1000 < TARGET_P99_MS_AT_1000)}),` +
      ` p999 ${l.p999_ms_at_1000} ms (< ${TARGET_P999_MS_AT_1000}: ${v(l.p999_ms_at_1000 < TARGET_P999_MS_AT_1000)})`,
    `at half the max rate (${l.half_max_rate_per_s.toLocaleString('en-US')} requests/s): p99 ${l.p99_ms_at_half_max} ms (< ${TARGET_P99_MS_AT_HALF_MAX}: ${v(l.p99_ms_at_half_max < TARGET_P99_MS_AT_HALF_MAX)})`,
  ];
}

/** `stages_us_at_1000`: {stage: {p50_us, p99_us}} of the light phase, or null without a stage file. */
export interface StageFigures {
  stage_rows_at_1000: number;
  stages_us_at_1000: Record<StageName, StagePercentiles> | null;
  /** Signed requests per matcher batch (= per journal commit and per DA root) at 1,000/s and in the median max run. */
  requests_per_batch_at_1000: number | null;
  requests_per_batch_at_max: number | null;
  /** Arrival (route handler) to answer written, at 1,000/s: the part of the latency the server's stamps see. */
  server_us_at_1000: StagePercentiles | null;
  /** The same for the half-max phase: where its p99 goes. */
  stages_us_at_half_max: Record<StageName, StagePercentiles> | null;
  requests_per_batch_at_half_max: number | null;
  server_us_at_half_max: StagePercentiles | null;
}

function perBatch(p: { count: number; batches: number }): number | null {
  return p.batches > 0 ? Math.round((p.count / p.batches) * 100) / 100 : null;
}

/**
 * The rows and the front's GC pauses of `<data_dir>/stage_timings.f64` (written by the server's
 * clean stop), null without the file.
 */
export function readStageRows(data_dir: string): StageFile | null {
  const file = path.join(data_dir, 'stage_timings.f64');
  return existsSync(file) ? readStageFile(readFileSync(file)) : null;
}

/**
 * Picks the light phase's window [from, to) of the server's stage rows (and the median max
 * run's, for its requests per batch).
 */
export function stageFigures(
  rows: Float64Array | null, light: { from_ms: number; to_ms: number }, max_run: { from_ms: number; to_ms: number },
  half: { from_ms: number; to_ms: number },
): StageFigures {
  if (rows === null) {
    return {
      stage_rows_at_1000: 0, stages_us_at_1000: null, requests_per_batch_at_1000: null, requests_per_batch_at_max: null, server_us_at_1000: null,
      stages_us_at_half_max: null, requests_per_batch_at_half_max: null, server_us_at_half_max: null,
    };
  }
  const p = stagePercentiles(rows, light.from_ms, light.to_ms);
  const m = stagePercentiles(rows, max_run.from_ms, max_run.to_ms);
  const h = stagePercentiles(rows, half.from_ms, half.to_ms);
  return {
    stage_rows_at_1000: p.count, stages_us_at_1000: p.count > 0 ? p.stages : null,
    requests_per_batch_at_1000: perBatch(p), requests_per_batch_at_max: perBatch(m),
    server_us_at_1000: p.count > 0 ? p.server_total : null,
    stages_us_at_half_max: h.count > 0 ? h.stages : null, requests_per_batch_at_half_max: perBatch(h),
    server_us_at_half_max: h.count > 0 ? h.server_total : null,
  };
}

function stageTable(st: Record<StageName, StagePercentiles>, total: StagePercentiles | null): string[] {
  const lines: string[] = [];
  for (const name of STAGES) lines.push(`  ${name.padEnd(14)} p50 ${String(st[name].p50_us).padStart(8)}   p99 ${String(st[name].p99_us).padStart(8)}   p999 ${String(st[name].p999_us).padStart(8)}`);
  if (total !== null) lines.push(`  ${'arrive->answer'.padEnd(14)} p50 ${String(total.p50_us).padStart(8)}   p99 ${String(total.p99_us).padStart(8)}   p999 ${String(total.p999_us).padStart(8)}   (the client's latency beyond this is outside the server's stamps)`);
  return lines;
}

export function stageLines(s: StageFigures): string[] {
  if (s.stages_us_at_1000 === null) return ['latency per stage: no stage timings (server without diagnostics.stage_timings?)'];
  const lines = [`latency per stage at ${LIGHT_RATE_PER_S.toLocaleString('en-US')} requests/s (${s.stage_rows_at_1000.toLocaleString('en-US')} signed requests; server clocks, us):`];
  lines.push(...stageTable(s.stages_us_at_1000, s.server_us_at_1000));
  if (s.stages_us_at_half_max !== null) {
    lines.push('latency per stage at half the max rate (server clocks, us):');
    lines.push(...stageTable(s.stages_us_at_half_max, s.server_us_at_half_max));
  }
  lines.push(`signed requests per matcher batch (journal commit, DA root): ${s.requests_per_batch_at_1000 ?? '-'} at 1,000/s, ` +
    `${s.requests_per_batch_at_half_max ?? '-'} at half the max rate, ${s.requests_per_batch_at_max ?? '-'} in the median max run`);
  return lines;
}

/** Epoch ms in this process, comparable with the server's stage stamps (same clock). */
export function epochNowMs(): number {
  return performance.timeOrigin + performance.now();
}
