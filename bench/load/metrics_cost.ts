// The metrics on/off comparison of bench/load.ts (issue 16: metrics cost nothing measurable on the
// request path). One server, closed-loop runs alternating request-path recording on and off
// (SIGUSR2 flips it: docs/operations.md "Metrics"; off also stops the stage stamps, so "on" is all
// the per-request instrumentation and "off" none of it), in A B B A order so a drift of the shared
// machine falls on both sides. Compared: server CPU per answered request (what the machine's other
// load disturbs least) and answered requests/s.
import { medianMeanOfMiddleTwo } from '../quantile.js';
import { scrapeMetrics } from './verify_checks.js';

export interface CostRun {
  recording: boolean;
  requests_per_s: number;
  server_cpu_us_per_request: number;
  /** The front thread's share (where the request-path recording runs). */
  front_cpu_us_per_request: number;
}

/** The metrics port the server logged at start (its `metrics on http://host:port/metrics` line). */
export function metricsPortOf(stdout_lines: readonly string[]): number | null {
  for (const l of stdout_lines) {
    const m = /metrics on http:\/\/[^:\s]+:(\d+)\/metrics/.exec(l);
    if (m !== null) return Number(m[1]);
  }
  return null;
}

async function scrapeRecording(port: number): Promise<number | null> {
  const m = /^ringbook_metrics_recording (\d+)$/m.exec(await scrapeMetrics(port));
  return m === null ? null : Number(m[1]);
}

/** Flips the server's recording with SIGUSR2 until the scrape shows `on` (at most ~2 s). */
export async function setRecording(pid: number, metrics_port: number, on: boolean): Promise<void> {
  const want = on ? 1 : 0;
  let now = await scrapeRecording(metrics_port);
  if (now === null) throw new Error('metrics scrape has no ringbook_metrics_recording');
  if (now === want) return;
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 100; i++) {
    now = await scrapeRecording(metrics_port);
    if (now === want) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`metrics recording did not turn ${on ? 'on' : 'off'} after SIGUSR2`);
}

/** A B B A: recording on, off, off, on, on, off, ... for `pairs` pairs. */
export function costOrder(pairs: number): boolean[] {
  const out: boolean[] = [];
  for (let i = 0; i < pairs; i++) out.push(...(i % 2 === 0 ? [true, false] : [false, true]));
  return out;
}

export interface CostFigures {
  metrics_on_cpu_us_per_request: number;
  metrics_off_cpu_us_per_request: number;
  /** on / off, server CPU per request (1.00: no measurable cost). */
  metrics_cpu_ratio: number;
  metrics_on_front_cpu_us_per_request: number;
  metrics_off_front_cpu_us_per_request: number;
  metrics_on_requests_per_s: number;
  metrics_off_requests_per_s: number;
  metrics_cost_runs: number;
}

export function costFigures(runs: readonly CostRun[]): CostFigures {
  const side = (on: boolean): CostRun[] => runs.filter((r) => r.recording === on);
  // Both sides have runs: costOrder gives each pair one of each.
  const cpu = (on: boolean): number => medianMeanOfMiddleTwo(side(on).map((r) => r.server_cpu_us_per_request));
  const front = (on: boolean): number => medianMeanOfMiddleTwo(side(on).map((r) => r.front_cpu_us_per_request));
  const rps = (on: boolean): number => medianMeanOfMiddleTwo(side(on).map((r) => r.requests_per_s));
  const r1 = (x: number): number => Math.round(x * 10) / 10;
  return {
    metrics_on_cpu_us_per_request: r1(cpu(true)),
    metrics_off_cpu_us_per_request: r1(cpu(false)),
    metrics_cpu_ratio: Math.round((cpu(true) / Math.max(cpu(false), 1e-9)) * 1000) / 1000,
    metrics_on_front_cpu_us_per_request: r1(front(true)),
    metrics_off_front_cpu_us_per_request: r1(front(false)),
    metrics_on_requests_per_s: Math.round(rps(true)),
    metrics_off_requests_per_s: Math.round(rps(false)),
    metrics_cost_runs: runs.length,
  };
}

export function costLines(runs: readonly CostRun[], f: CostFigures, seconds: number): string[] {
  const lines = [`metrics cost: closed loop, ${runs.length} runs of ${seconds} s alternating request-path recording on/off (SIGUSR2), A B B A`];
  runs.forEach((r, i) => lines.push(`  run ${i + 1} (${r.recording ? 'on ' : 'off'}): ${Math.round(r.requests_per_s)} requests/s, ` +
    `server CPU ${r.server_cpu_us_per_request.toFixed(1)} us per request (front thread ${r.front_cpu_us_per_request.toFixed(1)} us)`));
  lines.push(`  median: on ${f.metrics_on_cpu_us_per_request} us / off ${f.metrics_off_cpu_us_per_request} us of server CPU per request ` +
    `(ratio ${f.metrics_cpu_ratio}); front thread on ${f.metrics_on_front_cpu_us_per_request} us / off ${f.metrics_off_front_cpu_us_per_request} us; ` +
    `${f.metrics_on_requests_per_s} / ${f.metrics_off_requests_per_s} requests/s`);
  return lines;
}
