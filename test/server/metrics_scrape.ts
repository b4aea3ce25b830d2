// Reading the real server's Prometheus scrape in tests: the text format's samples and families,
// one GET of /metrics, the metrics port from the server's log, one sample's value.
import http from 'node:http';
import type { StartedServer } from './harness.js';

/** One sample line of the text format: `name{labels} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The families a scrape declares (`# TYPE name type`). */
export function familiesOf(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1], m[2]);
  return out;
}

export function scrape(port: number): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    // A connection per scrape: Node's global agent keeps sockets alive for 5 s, the metrics
    // listener closes idle ones after its 5 s keepAliveTimeout, and a scrape written on a socket
    // the listener is closing at that moment fails with "socket hang up" (verify_inline.test.ts,
    // twice in full-suite runs at load average 30-40, whose light posts between two scrapes took ~5 s).
    http.get({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text }));
    }).on('error', reject);
  });
}

/** The metrics port the server logged at start. */
export function metricsPort(s: StartedServer): number {
  const m = /metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(s.output().stdout);
  if (m === null) throw new Error('no metrics line in the server log:\n' + s.output().stdout + s.output().stderr);
  return Number(m[1]);
}

/** The value of `name{labels}` (labels in the scrape's order, e.g. `reason="inline"`); 0 when absent. */
export async function metricValue(s: StartedServer, name: string, labels = ''): Promise<number> {
  const { text } = await scrape(metricsPort(s));
  const line = `${name}${labels === '' ? '' : `{${labels}}`} `;
  const hit = text.split('\n').find((l) => l.startsWith(line));
  return hit === undefined ? 0 : Number(hit.slice(line.length));
}
