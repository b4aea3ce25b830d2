// The short seeded run of the project's fuzzer (bench/fuzz.ts; the long one is
// `node dist/bench/fuzz.js --long`): hostile HTTP requests on every route and WebSocket frames of
// every message type, against a real server. No 5xx, every request that must be answered is,
// the server stays up, the victims' accounts do not move, and it stops cleanly afterwards.
import { expect, it } from 'vitest';
import { runFuzz, SHORT } from '../../bench/fuzz.js';
import { startServer } from './harness.js';

it(`survives ${SHORT.http_requests} hostile HTTP requests and ${SHORT.ws_frames} hostile WebSocket frames (seed ${SHORT.seed})`, async () => {
  const s = await startServer();
  try {
    const report = await runFuzz(s, SHORT);
    expect(report.failures).toEqual([]);
    expect(report.http_sent).toBe(SHORT.http_requests);
    expect(report.ws_sent).toBe(SHORT.ws_frames);
    // Every family of input was tried, and every kind of answer came back (not only refusals).
    for (const k of ['valid', 'object', 'text', 'oversized', 'get', 'method:unrouted', 'ws:valid', 'ws:object', 'ws:text', 'ws:binary', 'ws:oversized']) {
      expect(report.kinds[k] ?? 0, k).toBeGreaterThan(0);
    }
    for (const status of ['200', '400', '401', '404']) expect(report.statuses[status] ?? 0, status).toBeGreaterThan(0);
    expect(Object.keys(report.statuses).filter((k) => k.startsWith('5'))).toEqual([]);
  } finally {
    const stopped = await s.stop();
    expect(stopped.code).toBe(0);
  }
}, 120_000);
