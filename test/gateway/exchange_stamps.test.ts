// Which exchanges take pooled stage stamps (src/gateway/context.ts openExchange): only routes that
// run a signed request, whose path gives them back (signed_route.ts). A GET's stamps would never
// come back: each GET would drain the pool by one; so would an unsigned POST (postRoute without
// `stamped`: /withdrawal-signature, an open /deposit, /force-include, /orders/batch). On a real
// uWS app on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExchange, postRoute, type GatewayContext, type RouteBasics } from '../../src/gateway/context.js';
import { runSigned } from '../../src/gateway/signed_route.js';
import { loadConfig } from '../../src/config/load.js';
import { StageRecorder, StageStamps, stampsPooled, releaseStamps } from '../../src/gateway/stage_timings.js';
import { runOrderEntry } from '../../src/gateway/order_entry.js';
import { startServer, type TestServer } from './uws_server.js';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

describe('stage stamps per exchange', () => {
  // Stage rows on (metrics off): every exchange that may be signed is stamped.
  const ctx: RouteBasics = {
    cfg: loadConfig({}), metrics: null, stages: new StageRecorder(), open_exchanges: 0, closing: false, access_log: false,
    limiters: { gets_per_ip: null as never },
  };
  const seen: { route: string; stamps: StageStamps | null }[] = [];
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer((app) => {
      app.get('/read', (res) => {
        const reply = openExchange(ctx, res);
        seen.push({ route: 'get', stamps: reply?.stamps ?? null });
        reply?.ok({ fine: true });
      });
      // postRoute as the gateway registers its routes: an unsigned one, and a signed one whose
      // request ends at its body (runSigned gives the stamps back).
      const gw = { ...ctx, cfg: ctx.cfg } as unknown as GatewayContext;
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
      app.post('/signed', (res) => {
        const reply = openExchange(ctx, res, true);
        seen.push({ route: 'post', stamps: reply?.stamps ?? null });
        reply?.ok({ fine: true });
      });
    });
  });
  afterAll(() => server.close());

  it('a GET takes none from the pool; an exchange that may be signed takes one, arrival stamped', async () => {
    for (let i = 0; i < 3; i++) releaseStamps(new StageStamps());
    const pooled = stampsPooled();
    for (let i = 0; i < 5; i++) expect((await fetch(`${server.url}/read`)).status).toBe(200);
    expect(stampsPooled(), 'GETs leave the pool as it was').toBe(pooled);
    expect((await fetch(`${server.url}/signed`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect(stampsPooled()).toBe(pooled - 1);
    expect(seen.filter((x) => x.route === 'get').map((x) => x.stamps)).toEqual([null, null, null, null, null]);
    const post = seen.find((x) => x.route === 'post');
    expect(post?.stamps).toBeInstanceOf(StageStamps);
    expect(post?.stamps?.arrive).toBeGreaterThan(0);
  });

  it('unsigned POSTs take none, and signed ones ended early give theirs back: the pool does not drain', async () => {
    for (let i = 0; i < 3; i++) releaseStamps(new StageStamps());
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
    for (let i = 0; i < 3; i++) releaseStamps(new StageStamps());
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
    for (let i = 0; i < 3; i++) releaseStamps(new StageStamps());
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
});
