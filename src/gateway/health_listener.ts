// A second, tiny listener for health checks that speak HTTP/1.0 or send no Host header (simple
// load balancers): uWS 20.30 never parses such requests (docs/api.md "Connections"), so they
// would wait for its 10 s idle close. node:http answers them; only GET and HEAD /health, with the
// same envelope and status (503 while unhealthy) as GET /health on the main port. Off unless config server.health_port is set.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { nextRequestId } from './request_id.js';

/** Requests on this port are one line and a few headers: anything slower is not a health check. */
const HEALTH_REQUEST_TIMEOUT_MS = 5_000;

export class HealthListener {
  private readonly server: http.Server;

  /** `check`: GET /health's answer (routes_public.ts healthCheck): 200 with its data, or 503 OVERLOADED with its message. */
  constructor(check: () => { ok: true; data: unknown } | { ok: false; message: string }) {
    this.server = http.createServer({ requestTimeout: HEALTH_REQUEST_TIMEOUT_MS, headersTimeout: HEALTH_REQUEST_TIMEOUT_MS, requireHostHeader: false }, (req, res) => {
      const request_id = nextRequestId();
      const path = (req.url ?? '').split('?')[0];
      const head = req.method === 'HEAD';
      let status = 200;
      let body: string;
      if (path === '/health' && (req.method === 'GET' || head)) {
        const h = check();
        if (h.ok) body = JSON.stringify({ ok: true, data: h.data });
        else {
          status = 503;
          body = JSON.stringify({ ok: false, error: 'OVERLOADED', message: h.message, request_id });
        }
      } else {
        status = 404;
        body = JSON.stringify({ ok: false, error: 'NOT_FOUND', message: 'this port answers only GET /health', request_id });
      }
      res.writeHead(status, {
        'X-Request-Id': request_id, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body),
      });
      res.end(head ? undefined : body);
    });
  }

  /** Listens on host:port (0: any free port); resolves with the port. */
  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => resolve((this.server.address() as AddressInfo).port));
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
