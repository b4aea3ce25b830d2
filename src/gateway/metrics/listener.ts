// The metrics listener: `GET /metrics` in the Prometheus text format on its own address (config
// metrics.host / metrics.port, default 127.0.0.1:9464), apart from the API as exporters are, so
// the API's rate limits and its firewall rules never touch scrapes. node:http is enough for one
// scrape every few seconds.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

/** Prometheus text exposition format 0.0.4 (what prom-client's Registry writes). */
const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export class MetricsListener {
  private readonly server: http.Server;
  port = 0;

  private constructor(server: http.Server) {
    this.server = server;
  }

  /** Listens on host:port (0: any free port); rejects when the address cannot be had. */
  static async start(metrics: Metrics, host: string, port: number): Promise<MetricsListener> {
    const server = http.createServer((req, res) => {
      const url = (req.url ?? '').split('?')[0];
      if (req.method !== 'GET' || url !== '/metrics') {
        res.writeHead(404, { 'Content-Type': 'text/plain' }).end('only GET /metrics here\n');
        return;
      }
      metrics.scrape().then((text) => {
        res.writeHead(200, { 'Content-Type': CONTENT_TYPE }).end(text);
      }, (e: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`metrics failed: ${e instanceof Error ? e.message : String(e)}\n`);
      });
    });
    // One scraper, briefly: idle keep-alive sockets must not hold a clean stop.
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const l = new MetricsListener(server);
    l.port = (server.address() as AddressInfo).port;
    return l;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
