// One sample of the real server's Prometheus scrape (its metrics listener's port is in its log).
import http from 'node:http';
import type { StartedServer } from './harness.js';

/** The value of `name{labels}` (labels in the scrape's order, e.g. `reason="inline"`); 0 when absent. */
export async function metricValue(s: StartedServer, name: string, labels = ''): Promise<number> {
  const port = /metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(s.output().stdout)?.[1];
  if (port === undefined) throw new Error('the server logged no metrics port');
  const text = await new Promise<string>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: Number(port), path: '/metrics' }, (res) => {
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
