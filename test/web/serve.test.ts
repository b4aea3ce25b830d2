// Serving the web view (src/gateway/routes_web.ts): the files of the bundle folder by name with
// their content types and the page's security headers, nothing else; a clear 503 on `/` when the
// bundle was not built; and no web view at all on a real server with `web.enabled: false`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadWebFiles, registerWebRoutes } from '../../src/gateway/routes_web.js';
import { startServer as startUws, type TestServer } from '../gateway/uws_server.js';
import { api, startServer } from '../server/harness.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-web-'));
fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>t</title>');
fs.writeFileSync(path.join(dir, 'app.js'), 'export {};');
fs.writeFileSync(path.join(dir, 'app.js.map'), '{}');
fs.writeFileSync(path.join(dir, 'notes.txt'), 'not served: no content type for .txt');
fs.mkdirSync(path.join(dir, 'sub'));
fs.writeFileSync(path.join(dir, 'sub', 'x.js'), 'not served: not at the top level');
const servers: TestServer[] = [];

afterAll(() => {
  for (const s of servers) s.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('web routes', () => {
  it('serve the bundle\'s files with their content types and nothing else', async () => {
    const s = await startUws((app) => registerWebRoutes(app, loadWebFiles(dir)));
    servers.push(s);
    const page = await fetch(`${s.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toBe('<!doctype html><title>t</title>');
    const js = await fetch(`${s.url}/web/app.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await js.text()).toBe('export {};');
    expect((await fetch(`${s.url}/web/app.js.map`)).headers.get('content-type')).toBe('application/json; charset=utf-8');
    for (const missing of ['/web/notes.txt', '/web/sub', '/web/missing.js', '/web/..%2Findex.html', '/web/index.html%00']) {
      expect((await fetch(`${s.url}${missing}`)).status, missing).toBe(404);
    }
  });

  it('answer / with 503 and the build command when the bundle is not built', async () => {
    const s = await startUws((app) => registerWebRoutes(app, loadWebFiles(path.join(dir, 'nowhere'))));
    servers.push(s);
    const r = await fetch(`${s.url}/`);
    expect(r.status).toBe(503);
    expect(await r.text()).toContain('run `make build`');
  });

  it('are not registered on a real server with web.enabled false', async () => {
    const s = await startServer({ config: { web: { enabled: false } } });
    try {
      const r = await api(s.url).get('/');
      expect(r.status).toBe(404);
      expect(r.body.error).toBe('NOT_FOUND');
      expect((await api(s.url).get('/web/app.js')).status).toBe(404);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });
});
