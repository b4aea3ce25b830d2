// GET /health on the real server's health listener (config server.health_port; its port is in the start log).
import http from 'node:http';
import type { StartedServer } from './harness.js';

export function healthListener(s: StartedServer): Promise<{ status: number; body: any }> {
  const port = /health checks on http:\/\/127\.0\.0\.1:(\d+)\/health/.exec(s.output().stdout)?.[1];
  if (port === undefined) throw new Error('the server logged no health port');
  return new Promise((resolve, reject) => {
    // A connection per request (agent: false): see metric_value.ts.
    http.get({ host: '127.0.0.1', port: Number(port), path: '/health', agent: false }, (res) => {
      let t = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (t += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(t) }));
    }).on('error', reject);
  });
}
