// A verify worker that dies while the server runs (src/auth/verify_pool.ts; docs/operations.md
// "The verify pool", "Health"), on real servers whose verify worker is a test fixture
// (RINGBOOK_TEST_VERIFY_WORKER_FILE = test/auth/fixtures/verify_worker_dies_after.mjs): it serves
// like the real worker, then dies holding the task of a request in flight.
//  - Its replacement loads: the request in flight is answered 503 OVERLOADED (nothing applied,
//    the same body succeeds when sent again), later requests succeed, the restart is counted in
//    GET /admin/state and /metrics, and /health stays 200.
//  - Its replacement cannot load (a build broken under the running server): the pool is broken;
//    GET /health (both listeners) answers 503, signed requests 503 OVERLOADED, nothing is applied,
//    reads and admin routes are served, and the server still stops cleanly.
// Inline checks and stealing are off so that every check is a worker's task (the fixture counts
// them); the default thread count (cores - 1) is used, so on a machine with more cores only the
// first worker dies and the test sends orders until one meets it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { adminState, api, deposit, startServer, Wallet, type ApiResponse, type StartedServer } from './harness.js';
import { fail, ok } from './checks.js';
import { metricValue } from './metrics_scrape.js';
import { healthListener } from './health_port.js';
import { WsClient } from '../ws/client.js';

const DIES_AFTER = fileURLToPath(new URL('../auth/fixtures/verify_worker_dies_after.mjs', import.meta.url));
const MARKET = 'ETH-USDC';
const PRICE = 2_000_000_000;
const QUANTITY = 10_000;
/** Orders sent one by one until one meets the dying worker (1 worker: the third). */
const ORDERS_MAX = 20;
const WORKER_DIED = /^a signature verify worker died while checking this request .*nothing was applied; retry$/;
const POOL_BROKEN = /^signatures cannot be checked: the server's verify pool is broken .*nothing was applied/;

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

async function startDying(tasks: number, replacement: 'real' | 'broken'): Promise<StartedServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-verify-'));
  dirs.push(dir);
  return startServer({
    config: { verify: { inline_items_max: 0, steal_after_us: 0 }, server: { health_port: 0 } },
    env: {
      RINGBOOK_TEST_VERIFY_WORKER_FILE: DIES_AFTER,
      RINGBOOK_TEST_VERIFY_MARK_FILE: path.join(dir, 'first-worker'),
      RINGBOOK_TEST_VERIFY_DIES_AFTER_TASKS: String(tasks),
      RINGBOOK_TEST_VERIFY_REPLACEMENT: replacement,
    },
  });
}

/** Orders of `w` one at a time until one is refused; the accepted ones and the refused answer with its body. */
async function ordersUntilRefused(s: StartedServer, w: Wallet): Promise<{ accepted: number; refused: ApiResponse; body: Record<string, unknown> }> {
  for (let i = 0; i < ORDERS_MAX; i++) {
    const body = w.order({ market_id: MARKET, side: 'bid', price: PRICE, quantity: QUANTITY });
    const r = await api(s.url).post('/orders', body);
    if (r.status !== 200) return { accepted: i, refused: r, body };
    expect(r.body.data.status).toBe('open');
  }
  throw new Error(`no order of ${ORDERS_MAX} met the dying worker`);
}

/** The server's error lines so far (stderr holds one JSON object per line: docs/operations.md "Logs"), as their messages. */
function errorLines(s: StartedServer): string[] {
  return s.output().stderr.split('\n').filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: string; msg: string })
    .filter((l) => l.level === 'error' || l.level === 'fatal').map((l) => l.msg);
}

/** Admin state once `done(state.verify_pool)` holds (bounded: 300 polls of 50 ms). */
async function poolStateWhen(s: StartedServer, done: (pool: any) => boolean): Promise<any> {
  let st: any = null;
  for (let i = 0; i < 300; i++) {
    st = await adminState(s);
    if (done(st.verify_pool)) return st.verify_pool;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`verify pool state never reached the expected one: ${JSON.stringify(st?.verify_pool)}`);
}

describe('a verify worker that dies after it served', () => {
  it('is replaced: the request in flight is answered 503 OVERLOADED and not applied, later requests succeed, the restart is counted', async () => {
    const s = await startDying(2, 'real');
    try {
      // Every worker serving (the start waits up to 10 s for them; a loaded machine may take longer).
      const before = await poolStateWhen(s, (p) => p.workers_ready === p.threads);
      expect(before).toMatchObject({ worker_restarts: 0, broken: null, broken_at_ms: null });
      const w = Wallet.random();
      ok(await deposit(s, w.address, 'USDC', '100000'));
      const { accepted, refused, body } = await ordersUntilRefused(s, w);
      expect(accepted).toBeGreaterThanOrEqual(2);
      // The request in flight got an answer (no hang): a retryable refusal, not a 500.
      fail(refused, 503, 'OVERLOADED', WORKER_DIED);
      const pool = await poolStateWhen(s, (p) => p.worker_restarts === 1 && p.workers_ready === p.threads);
      expect(pool).toMatchObject({ worker_restarts: 1, broken: null });
      // Nothing of it was applied: the same signed body (same nonce) is accepted now.
      const open_before = ok(await api(s.url).get(`/account/${w.address}/orders`)) as unknown[];
      expect(open_before).toHaveLength(accepted);
      expect(ok(await api(s.url).post('/orders', body)).status).toBe('open');
      for (let i = 0; i < 3; i++) {
        expect(ok(await api(s.url).post('/orders', w.order({ market_id: MARKET, side: 'bid', price: PRICE, quantity: QUANTITY }))).status).toBe('open');
      }
      expect(ok(await api(s.url).get(`/account/${w.address}/orders`))).toHaveLength(accepted + 4);
      expect(await metricValue(s, 'ringbook_verify_worker_restarts_total')).toBe(1);
      expect(await metricValue(s, 'ringbook_verify_pool_broken')).toBe(0);
      expect(await metricValue(s, 'ringbook_verify_workers_ready')).toBe(pool.threads);
      expect(ok(await api(s.url).get('/health')).status).toBe('ok');
      // Error lines go to stderr, one JSON object each (docs/operations.md "Logs").
      const logged = s.output().stderr.split('\n').filter((l) => l.includes('ringbook: verify worker died'));
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0])).toMatchObject({ level: 'error', component: 'verify', worker_restarts: 1 });
      // The front's batcher logs the failed task once, and once that the pool checks again.
      expect(s.output().stderr.split('\n').filter((l) => l.includes('ringbook: verify pool failed'))).toHaveLength(1);
      expect(s.output().stdout.split('\n').filter((l) => l.includes('ringbook: the verify pool checks signatures again'))).toHaveLength(1);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  }, 90_000);

  it('whose replacement cannot load breaks the pool: /health 503, signed requests 503 OVERLOADED and not applied, reads served, a clean stop', async () => {
    const s = await startDying(1, 'broken');
    let stopped = false;
    try {
      await poolStateWhen(s, (p) => p.workers_ready === p.threads);
      const w = Wallet.random();
      ok(await deposit(s, w.address, 'USDC', '100000'));
      const orders_from_ms = Date.now();
      const { accepted, refused } = await ordersUntilRefused(s, w);
      expect(accepted).toBeGreaterThanOrEqual(1);
      // The request the worker died with: refused, retryable (whether the pool had broken yet or not).
      fail(refused, 503, 'OVERLOADED');
      const pool = await poolStateWhen(s, (p) => p.broken !== null);
      const broken_seen_ms = Date.now();
      expect(pool.broken).toBe('a verify worker could not start (broken verify worker replacement)');
      expect(pool).toMatchObject({ workers_ready: 0, worker_restarts: 1 });
      // Stamped when it broke: after the orders began, before it was seen broken (one machine's clock).
      expect(pool.broken_at_ms).toBeGreaterThanOrEqual(orders_from_ms);
      expect(pool.broken_at_ms).toBeLessThanOrEqual(broken_seen_ms);
      const balances_before = ok(await api(s.url).get(`/account/${w.address}/balances`));
      const batch_before = (await adminState(s)).batch_id;

      // Health: 503 on both listeners, the reason left to /admin/state.
      const h = await api(s.url).get('/health');
      fail(h, 503, 'OVERLOADED', /^unhealthy: the verify pool is broken since \d{4}-\d\d-\d\dT.*GET \/admin\/state verify_pool/);
      expect(h.body.message).not.toContain('broken verify worker replacement');
      const hl = await healthListener(s);
      expect(hl.status).toBe(503);
      expect(hl.body).toMatchObject({ ok: false, error: 'OVERLOADED', message: h.body.message });

      // Every kind of signed request is refused, at once, with the documented code.
      fail(await api(s.url).post('/orders', w.order({ market_id: MARKET, side: 'bid', price: PRICE, quantity: QUANTITY })), 503, 'OVERLOADED', POOL_BROKEN);
      // From here the pool fails in one state (broken, failing since the order above): no refusal
      // below adds an error line, whatever path it takes (the callback path of POST /orders, the
      // promise paths of /orders/batch, /force-include and the WebSocket auth).
      const errors_before = errorLines(s);
      fail(await api(s.url).post('/orders/cancel', w.cancel({ order_id: '1' })), 503, 'OVERLOADED', POOL_BROKEN);
      fail(await api(s.url).post('/orders/batch', {
        requests: [{ kind: 'order', ...w.order({ market_id: MARKET, side: 'bid', price: PRICE, quantity: QUANTITY }) }],
      }), 503, 'OVERLOADED', POOL_BROKEN);
      fail(await api(s.url).post('/force-include', w.forceInclude(w.cancel({ order_id: '1' }))), 503, 'OVERLOADED', POOL_BROKEN);
      // A WebSocket auth: OVERLOADED, not INVALID_SIGNATURE, and not counted as the client's failure.
      const c = await WsClient.connect(s.url);
      try {
        for (let i = 0; i < 4; i++) { // more than auth_failures_max (3): still not closed
          const ch = await c.request({ type: 'request_challenge', address: w.address }, 'challenge');
          const e = await c.request({ type: 'auth', address: w.address, signature: w.sign(`Ringbook Exchange\nNonce: ${ch.nonce}`) }, 'auth_success');
          expect(e).toMatchObject({ type: 'error', code: 'OVERLOADED', message: expect.stringMatching(/could not check the signature/) });
        }
        expect(c.closed).toBeNull();
      } finally {
        c.close();
      }

      // Nothing was applied; reads and admin routes are served.
      expect(ok(await api(s.url).get(`/account/${w.address}/orders`))).toHaveLength(accepted);
      expect(ok(await api(s.url).get(`/account/${w.address}/balances`))).toEqual(balances_before);
      expect((await adminState(s)).batch_id).toBe(batch_before);
      ok(await api(s.url).get('/markets'));
      ok(await deposit(s, w.address, 'USDC', '1'));

      expect(await metricValue(s, 'ringbook_verify_pool_broken')).toBe(1);
      expect(await metricValue(s, 'ringbook_verify_worker_restarts_total')).toBe(1);
      expect(await metricValue(s, 'ringbook_verify_workers_ready')).toBe(0);
      // Checked after the reads above: a line written with the last refusal has reached the pipe.
      expect(errorLines(s).slice(errors_before.length)).toEqual([]);
      const broke = s.output().stderr.split('\n').filter((l) => l.includes('ringbook: the verify pool is broken'));
      expect(broke).toHaveLength(1);
      // The front's batcher logs a failing pool once per change (working -> failing), not once per
      // refused check: 9 refused above (orders, cancel, batch, force-include, 4 WS auths, the first). Two at most:
      // with several workers one served between the death and the break.
      const failed = s.output().stderr.split('\n').filter((l) => l.includes('ringbook: verify pool failed'));
      expect(failed.length).toBeGreaterThanOrEqual(1);
      expect(failed.length).toBeLessThanOrEqual(2);
      expect(JSON.parse(broke[0])).toMatchObject({ level: 'error', component: 'verify' });

      // The stop does not wait for the ring no worker will ever serve: a stop that hung would be
      // ended by the harness's SIGKILL (its bound) and not exit 0 (no clock bound asserted here).
      const r = await s.stop();
      stopped = true;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('ringbook: stopped cleanly');
    } finally {
      if (!stopped) await s.stop();
    }
  }, 90_000);
});
