// Structured logs (src/util/log.ts, docs/operations.md "Logs"): every line the real server writes,
// from the front and from its matcher and DA threads, is one JSON object with level, time,
// component and msg; lines about a request carry its request id; pretty lines with a flag; the
// level from config.
import { describe, expect, it } from 'vitest';
import { api, startServer, Wallet, type StartedServer } from './harness.js';
import { REQUEST_ID } from './checks.js';

type Line = Record<string, unknown>;

/** Every non-empty line of `text` as JSON; fails naming the first line that is not. */
function jsonLines(text: string): Line[] {
  return text.split('\n').filter((l) => l !== '').map((l) => {
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      throw new Error(`not a JSON line: ${l}`);
    }
    expect(typeof v === 'object' && v !== null && !Array.isArray(v), l).toBe(true);
    return v as Line;
  });
}

function checkKeys(lines: Line[]): void {
  for (const l of lines) {
    expect(typeof l.level, JSON.stringify(l)).toBe('string');
    expect(['fatal', 'error', 'warn', 'info', 'debug', 'trace']).toContain(l.level);
    expect(String(l.time), JSON.stringify(l)).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(typeof l.component, JSON.stringify(l)).toBe('string');
    expect(typeof l.msg, JSON.stringify(l)).toBe('string');
  }
}

async function stopped(s: StartedServer): Promise<{ stdout: string; stderr: string }> {
  const r = await s.stop();
  expect(r.code).toBe(0);
  return { stdout: r.stdout, stderr: r.stderr };
}

describe('structured logs of the real server', () => {
  it('writes only JSON lines with level, time, component and msg, from the front and its worker threads; request lines carry the request id', async () => {
    const s = await startServer({ config: { log: { level: 'debug' } } });
    const a = api(s.url);
    const health = await a.get('/health');
    const w = Wallet.random();
    const bad = await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }, { signer: () => '0x' + '11'.repeat(65) }));
    expect(bad.status).toBe(401);
    const { stdout, stderr } = await stopped(s);
    const out = jsonLines(stdout);
    checkKeys(out);
    checkKeys(jsonLines(stderr));
    // info and debug on stdout, warn and above on stderr.
    for (const l of out) expect(['info', 'debug', 'trace']).toContain(l.level);
    const components = new Set(out.map((l) => l.component));
    for (const c of ['server', 'http', 'matcher', 'da']) expect(components, c).toContain(c);
    expect(out.find((l) => l.component === 'matcher')?.msg).toMatch(/matcher thread ready at batch 0/);
    expect(out.some((l) => l.component === 'server' && /^ringbook: listening on http/.test(String(l.msg)) && l.port === s.port)).toBe(true);
    expect(out.some((l) => /stopped cleanly/.test(String(l.msg)))).toBe(true);
    // One debug line per exchange, with the id the client got in X-Request-Id.
    const requests = out.filter((l) => l.component === 'http' && l.msg === 'request');
    expect(requests.map((l) => [l.route, l.status, l.request_id])).toEqual([
      ['GET /health', 200, health.headers['x-request-id']],
      ['POST /orders', 401, bad.headers['x-request-id']],
    ]);
    for (const l of requests) expect(String(l.request_id)).toMatch(REQUEST_ID);
  });

  it('writes human-readable lines with RINGBOOK_LOG_PRETTY=1 (as config log.pretty and --pretty), and no debug lines at the default level info', async () => {
    const s = await startServer({ env: { RINGBOOK_LOG_PRETTY: '1' } });
    expect((await api(s.url).get('/health')).status).toBe(200);
    const { stdout } = await stopped(s);
    const first = stdout.split('\n').find((l) => l.includes('listening on')) ?? '';
    expect(first).toMatch(/^\[\d{4}-\d{2}-\d{2} [^\]]+\] INFO: \[server\] ringbook: listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(() => JSON.parse(first)).toThrow();
    expect(stdout).toMatch(/INFO: \[server\] ringbook: stopped cleanly/);
    expect(stdout).not.toMatch(/DEBUG/);
  });
});
