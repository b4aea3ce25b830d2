// Which exchanges take pooled stage stamps (src/gateway/context.ts openExchange): only routes that
// may run a signed request, whose path gives them back (signed_route.ts). A GET's stamps would
// never come back: each GET would drain the pool by one. On a real uWS app on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openExchange, type RouteBasics } from '../../src/gateway/context.js';
import { loadConfig } from '../../src/config.js';
import { StageRecorder, StageStamps, stampsPooled, releaseStamps } from '../../src/gateway/stage_timings.js';
import { startServer, type TestServer } from './uws_server.js';

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
});
