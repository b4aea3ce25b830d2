// Small formatting and sanity helpers the load bench's phases and report share.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import type { Histogram, PhaseResult } from './lanes.js';

export const ms = (us: number): number => Math.round(us) / 1000;
export const f1 = (x: number): string => x.toFixed(1);
export const int = (x: number): string => Math.round(x).toLocaleString('en-US');

export function pct(h: Histogram, p: number): number {
  return h.totalCount === 0 ? 0 : ms(h.getValueAtPercentile(p));
}

export function mapText(m: Map<string, number>): string {
  if (m.size === 0) return 'none';
  return [...m.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');
}

export function mergeRejects(results: PhaseResult[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of results) {
    for (const st of [r.stats.order, r.stats.cancel]) {
      for (const [k, v] of st.rejects) out.set(k, (out.get(k) ?? 0) + v);
    }
  }
  return out;
}

/** Load average and CPU pressure: how much of the machine other processes were using. */
export function machineLoad(): string {
  let psi = '';
  try {
    const m = /avg10=([0-9.]+) avg60=([0-9.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    if (m) psi = `, CPU pressure (some) avg10 ${m[1]}% avg60 ${m[2]}%`;
  } catch {
    // no PSI
  }
  return `load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}${psi}`;
}

/**
 * The flow is built so that orders are accepted (only cancels of since-filled orders may answer
 * NOT_FOUND): if most orders are refused, the figures would measure the wrong path (e.g. a
 * dist/ rebuilt mid-run by someone else answering INVALID_SIGNATURE), so stop instead.
 */
export function saneOrThrow(what: string, r: PhaseResult): void {
  const answered = r.stats.order.ok + r.stats.order.rejected();
  if (answered >= 50 && r.stats.order.ok < answered / 2) {
    throw new Error(`${what}: only ${r.stats.order.ok} of ${answered} answered orders were accepted (rejects: ${mapText(r.stats.order.rejects)}); ` +
      'the server refuses the pre-signed flow, so its figures would be meaningless (is dist/ consistent? rebuild and rerun)');
  }
}
