// One sample of the real server's Prometheus scrape (its metrics listener's port is in its log).
import http from 'node:http';
import type { StartedServer } from './harness.js';

/** The value of `name{labels}` (labels in the scrape's order, e.g. `reason="inline"`); 0 when absent. */
export async function metricValue(s: StartedServer, name: string, labels = ''): Promise<number> {
  const port = /metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(s.output().stdout)?.[1];
  if (port === undefined) throw new Error('the server logged no metrics port');
  const text = await new Promise<string>((resolve, reject) => {
    // A connection per scrape: Node's global agent keeps sockets alive for 5 s, the metrics
    // listener closes idle ones after its 5 s keepAliveTimeout, and a scrape written on a socket
    // the listener is closing at that moment fails with "socket hang up" (verify_inline.test.ts,
    // twice in full-suite runs at load average 30-40, whose light posts between two scrapes took ~5 s).
    http.get({ host: '127.0.0.1', port: Number(port), path: '/metrics', agent: false }, (res) => {
      let t = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (t += d));
      res.on('end', () => resolve(t));
    }).on('error', reject);
  });
  const line = `${name}${labels === '' ? '' : `{${labels}}`} `;
  const hit = text.split('\n').find((l) => l.startsWith(line));
  return hit === undefined ? 0 : Number(hit.slice(line.length));
}
