// Which exchanges take pooled stage stamps (src/gateway/context.ts openExchange): only routes that
// run a signed request; the Reply owns them and gives them back however the exchange ends
// (envelope.ts): answered, refused at its body or query, aborted, or a route that threw, also
// after handing the request to the verify stage (the stamps come back with the verdict, not
// before: the stage still writes them). On a real uWS app on loopback, with the real verify pool.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExchange, postRoute, type GatewayContext, type RouteBasics } from '../../src/gateway/context.js';
import { runSigned } from '../../src/gateway/signed_route.js';
import { loadConfig } from '../../src/config/load.js';
import {
  StageRecorder, StageStamps, stampsGivenBackTwice, stampsOutstanding, stampsPooled, releaseStamps, takeStamps,
} from '../../src/gateway/stage_timings.js';
import { runOrderEntry } from '../../src/gateway/order_entry.js';
import { parseCancel } from '../../src/gateway/signed_requests.js';
import { ArrivalOrder } from '../../src/gateway/arrival_order.js';
import { SignatureBatcher } from '../../src/gateway/signature_batcher.js';
import { createVerifyPool } from '../../src/auth/verify_pool.js';
import { startServer, type TestServer } from './uws_server.js';
import { connect } from 'node:net';
import { configureLogs, logSettings } from '../../src/util/log.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { hasResponses, rawExchange } from '../server/raw_http.js';

/** Puts `n` stamps in the pool (taken and given back: the count of those outstanding stays). */
function seedPool(n: number): void {
  const taken = Array.from({ length: n }, () => takeStamps());
  for (const s of taken) releaseStamps(s);
}

describe('stage stamps per exchange', () => {
  // Stage rows on (metrics off): every exchange that may be signed is stamped.
  const ctx: RouteBasics = {
    cfg: loadConfig({}), metrics: null, stages: new StageRecorder(), open_exchanges: 0, closing: false, access_log: false,
    limiters: { gets_per_ip: null as never },
  };
  const seen: { route: string; stamps: StageStamps | null }[] = [];
  let server: TestServer;
  // The signed path's verify stage: the real pool (no inline checks: every check waits for a task).
  const pool = createVerifyPool({ threads: 1 });
  beforeAll(async () => {
    server = await startServer((app) => {
      app.get('/read', (res) => {
        const reply = openExchange(ctx, res);
        seen.push({ route: 'get', stamps: reply?.stamps ?? null });
        reply?.ok({ fine: true });
      });
      // postRoute as the gateway registers its routes: an unsigned one, and a signed one whose
      // request ends at its body (runSigned gives the stamps back).
      const gw = { ...ctx, cfg: ctx.cfg, failed_signatures: null } as unknown as GatewayContext;
      app.post('/unsigned', postRoute(gw, { admin: false }, (reply) => {
        seen.push({ route: 'unsigned', stamps: reply.stamps });
        reply.ok({ fine: true });
      }));
      app.post('/signed-bad-body', postRoute(gw, { admin: false, stamped: true }, (reply) => {
        seen.push({ route: 'signed-bad-body', stamps: reply.stamps });
        runSigned(gw, reply, { code: 'INVALID_REQUEST', message: 'no signature' }, () => undefined);
      }));
      // POST /orders as the gateway registers it (routes_trading.ts): a request ended at its body
      // or query never reaches runSigned (the tests send none that does: the context is partial).
      app.post('/orders', postRoute(gw, { admin: false, stamped: true }, (reply, body) => {
        runOrderEntry(gw, reply, '/orders', body);
      }));
      // Route code that throws once it has the stamps: before the signed path, and after it
      // handed the request to the verify stage (a wallet the read model does not know: no agents).
      app.post('/throws', postRoute(gw, { admin: false, stamped: true }, (reply) => {
        seen.push({ route: 'throws', stamps: reply.stamps });
        throw new Error('a route bug (test)');
      }));
      const verifying = {
        ...gw, arrival: new ArrivalOrder(), signatures: new SignatureBatcher(pool, 128), rm: { agents: { any: false }, account_by_address: new Map() },
      } as unknown as GatewayContext;
      app.post('/throws-after-verify', postRoute(verifying, { admin: false, stamped: true }, (reply, body) => {
        seen.push({ route: 'throws-after-verify', stamps: reply.stamps });
        runSigned(verifying, reply, parseCancel(body), () => undefined);
        throw new Error('a route bug after the request went on (test)');
      }));
      app.post('/signed', (res) => {
        const reply = openExchange(ctx, res, true);
        seen.push({ route: 'post', stamps: reply?.stamps ?? null });
        reply?.ok({ fine: true });
      });
    });
  });
  afterAll(async () => {
    server.close();
    await pool.close();
  });
  // The throwing routes' error lines are expected here: not printed.
  const log_settings = logSettings();
  beforeAll(() => configureLogs({ ...log_settings, level: 'fatal' }));
  afterAll(() => configureLogs(log_settings));

  it('a GET takes none from the pool; an exchange that may be signed takes one, arrival stamped', async () => {
    seedPool(3);
    const pooled = stampsPooled();
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.url}/read`)).status).toBe(200);
    expect(stampsPooled(), 'GETs leave the pool as it was').toBe(pooled);
    const outstanding = stampsOutstanding();
    expect((await fetch(`${server.url}/signed`, { method: 'POST', body: '{}' })).status).toBe(200);
    // Taken from the pool, and given back by the Reply when it answered.
    expect(stampsPooled()).toBe(pooled);
    expect(stampsOutstanding()).toBe(outstanding);
    expect(seen.filter((x) => x.route === 'get').map((x) => x.stamps)).toEqual([null, null, null, null, null]);
    const post = seen.find((x) => x.route === 'post');
    expect(post?.stamps).toBeInstanceOf(StageStamps);
    expect(post?.stamps?.arrive).toBeGreaterThan(0);
    expect(post?.stamps?.pooled).toBe(true);
  });

  it('unsigned POSTs take none, and signed ones ended early give theirs back: the pool does not drain', async () => {
    seedPool(3);
    const pooled = stampsPooled();
    const REQUESTS = 200;
    for (let i = 0; i < REQUESTS; i++) {
      expect((await fetch(`${server.url}/unsigned`, { method: 'POST', body: '{}' })).status).toBe(200);
    }
    expect(stampsPooled(), 'unsigned POSTs leave the pool as it was').toBe(pooled);
    expect(seen.filter((x) => x.route === 'unsigned').every((x) => x.stamps === null)).toBe(true);
    for (let i = 0; i < REQUESTS; i++) {
      expect((await fetch(`${server.url}/signed-bad-body`, { method: 'POST', body: '{}' })).status).toBe(400);
    }
    // Each took one (the pool's, not a new one) and gave it back when its body was refused.
    expect(seen.filter((x) => x.route === 'signed-bad-body').every((x) => x.stamps instanceof StageStamps)).toBe(true);
    expect(new Set(seen.filter((x) => x.route === 'signed-bad-body').map((x) => x.stamps)).size).toBe(1);
    expect(stampsPooled(), 'signed requests ended early give theirs back').toBe(pooled);
    // A stamped route's request ended at its body (bad JSON, too large) or its query takes one
    // and gives it back there (before the fix each drained the pool by one: 200 taken, none back).
    for (let i = 0; i < REQUESTS; i++) {
      const r = await fetch(`${server.url}/orders`, { method: 'POST', body: '{"market":' });
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: string }).error).toBe('INVALID_REQUEST');
    }
    expect(stampsPooled(), 'bad JSON gives its stamps back').toBe(pooled);
    expect((await fetch(`${server.url}/orders`, { method: 'POST', body: 'x'.repeat(20_000) })).status).toBe(400);
    expect(stampsPooled(), 'a body over the limit gives its stamps back').toBe(pooled);
    expect((await fetch(`${server.url}/orders?a=1&a=2`, { method: 'POST', body: '{}' })).status).toBe(400);
    expect(stampsPooled(), 'a bad query gives its stamps back').toBe(pooled);
  });

  it('a body aborted mid-way gives its stamps back', async () => {
    seedPool(3);
    const pooled = stampsPooled();
    // Headers promise 100 bytes; one is sent, then the connection closes (uWS: aborted).
    const socket = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    socket.write('POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{');
    // Wait (bounded) until the route has taken its stamps, then abort.
    for (let i = 0; i < 200 && stampsPooled() === pooled; i++) await sleep(5);
    expect(stampsPooled(), 'the stamped route took one').toBe(pooled - 1);
    socket.destroy();
    for (let i = 0; i < 200 && stampsPooled() !== pooled; i++) await sleep(5);
    expect(stampsPooled(), 'the aborted body gave its stamps back').toBe(pooled);
  });

  it('a request arriving while the server closes takes no stamps', async () => {
    seedPool(3);
    const pooled = stampsPooled();
    ctx.closing = true;
    try {
      for (let i = 0; i < 5; i++) {
        expect((await fetch(`${server.url}/signed`, { method: 'POST', body: '{}' })).status).toBe(503);
      }
    } finally {
      ctx.closing = false;
    }
    expect(stampsPooled(), 'a 503 SHUTTING_DOWN leaves the pool as it was').toBe(pooled);
  });

  it('a route that throws gives its stamps back', async () => {
    seedPool(3);
    const outstanding = stampsOutstanding();
    for (let i = 0; i < 50; i++) {
      const r = await fetch(`${server.url}/throws`, { method: 'POST', body: '{}' });
      expect(r.status).toBe(500);
    }
    expect(seen.filter((x) => x.route === 'throws').every((x) => x.stamps instanceof StageStamps)).toBe(true);
    // Before the Reply owned them, each throw left its stamps to the GC: 50 outstanding.
    expect(stampsOutstanding(), 'each thrown request gave its stamps back').toBe(outstanding);
  });

  it('a route that throws after the request went to the verify stage: its stamps come back with the verdict, never shared', async () => {
    seedPool(3);
    const outstanding = stampsOutstanding();
    const twice = stampsGivenBackTwice();
    const body = JSON.stringify({ user: '0x' + 'ab'.repeat(20), order_id: '7', nonce: 1, signature: '0x' + '11'.repeat(65) });
    const post = `POST /throws-after-verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const from = seen.length;
    // Two requests in one write: uWS runs both handlers in one go, the second while the first's
    // signature still waits for its task (the pool answers in a later turn). The first was
    // answered 500 already, but its stamps are the verify stage's: the second must get others.
    const got = (await rawExchange(server.port, [post + post], 2000, (text) => hasResponses(text, 2))).text;
    expect(got.match(/HTTP\/1\.1 500 /g)?.length).toBe(2);
    const [first, second] = seen.slice(from).map((x) => x.stamps);
    expect(first).toBeInstanceOf(StageStamps);
    expect(second).toBeInstanceOf(StageStamps);
    expect(second, 'stamps still written by the verify stage handed to another request').not.toBe(first);
    for (let i = 0; i < 400 && stampsOutstanding() !== outstanding; i++) await sleep(5);
    expect(stampsOutstanding(), 'both gave their stamps back once verified').toBe(outstanding);
    expect(stampsGivenBackTwice()).toBe(twice);
    // Back in the pool after the verify stage wrote them (its task's start and end).
    expect(first?.pooled).toBe(true);
    expect(first?.verify_end).toBeGreaterThan(0);
  });
});
