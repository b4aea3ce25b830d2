// Wall and process CPU time of one step, and the median of a step's rounds to a tenth: the two
// snapshot benches (bench/matcher_snapshot.ts, bench/gateway_snapshot.ts) time their parts this way.
import { performance } from 'node:perf_hooks';
import { medianUpperMiddle } from './quantile.js';

/** One step's wall time and the whole process's CPU time (user + system) over it, in ms. */
export interface Timed { wall_ms: number; cpu_ms: number }

/** Runs `fn` and times it. */
export function timedSync<T>(fn: () => T): [T, Timed] {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const v = fn();
  const c = process.cpuUsage(c0);
  return [v, { wall_ms: performance.now() - t0, cpu_ms: (c.user + c.system) / 1000 }];
}

/** Runs `fn` (awaited) and times it. */
export async function timedAsync<T>(fn: () => T | Promise<T>): Promise<[T, Timed]> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const v = await fn();
  const c = process.cpuUsage(c0);
  return [v, { wall_ms: performance.now() - t0, cpu_ms: (c.user + c.system) / 1000 }];
}

/**
 * The upper-middle median of the rounds, rounded to a tenth (for the bench's JSON line); NaN (null
 * in the JSON line) for a part no round reached, as a small run's parts can be.
 */
export function medianTenth(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  return Math.round(medianUpperMiddle(xs) * 10) / 10;
}
