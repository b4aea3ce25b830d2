// Who checked the signed requests' signatures in a phase of bench/load.ts: the front inline (at
// light load, config verify.inline_items_max), the front stealing a waiting task
// (verify.steal_after_us), or a verify worker. Read from the server's metrics listener
// (ringbook_signatures_verified_total and ringbook_verify_front_checks_total{reason}) before and
// after the phase, so a build's policy shows in the same run as its latency and CPU.
import http from 'node:http';

export interface VerifyChecks {
  all: number;
  inline: number;
  stolen: number;
}

/** Checks of one phase and who ran them, as shares of `checks` (rounded to 0.001). */
export interface VerifyShares {
  checks: number;
  inline_share: number;
  stolen_share: number;
  worker_share: number;
}

/** The server's /metrics text. */
export function scrapeMetrics(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve(text));
    }).on('error', reject);
  });
}

function sample(text: string, line_start: string): number {
  const line = text.split('\n').find((l) => l.startsWith(line_start + ' '));
  return line === undefined ? 0 : Number(line.slice(line_start.length + 1));
}

/** The counters now (null without a metrics port). */
export async function verifyChecks(metrics_port: number | null): Promise<VerifyChecks | null> {
  if (metrics_port === null) return null;
  const text = await scrapeMetrics(metrics_port);
  return {
    all: sample(text, 'ringbook_signatures_verified_total'),
    inline: sample(text, 'ringbook_verify_front_checks_total{reason="inline"}'),
    stolen: sample(text, 'ringbook_verify_front_checks_total{reason="stolen"}'),
  };
}

export function verifyShares(before: VerifyChecks | null, after: VerifyChecks | null): VerifyShares | null {
  if (before === null || after === null) return null;
  const checks = after.all - before.all;
  const share = (n: number): number => (checks > 0 ? Math.round((1000 * n) / checks) / 1000 : 0);
  const inline = after.inline - before.inline;
  const stolen = after.stolen - before.stolen;
  return { checks, inline_share: share(inline), stolen_share: share(stolen), worker_share: share(checks - inline - stolen) };
}

export function sharesText(s: VerifyShares | null): string {
  if (s === null) return 'n/a (no metrics listener)';
  return `${s.checks} checks: front inline ${(100 * s.inline_share).toFixed(1)}%, front stolen ${(100 * s.stolen_share).toFixed(1)}%, ` +
    `verify worker ${(100 * s.worker_share).toFixed(1)}%`;
}
