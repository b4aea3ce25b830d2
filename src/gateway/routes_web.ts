// The web view (docs/web.md): `GET /` is its page and `GET /web/<file>` the files of dist/web
// that src/web/bundle.ts writes at `make build`. The files are read once at start and answered
// from memory with their content type; only names found in dist/web are served (no path is ever
// built from the request). Without a built bundle `/` says how to build it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { statusLine } from './reply_head.js';

/** dist/web, seen from dist/src/gateway/. */
export const WEB_DIST_DIR = fileURLToPath(new URL('../../web/', import.meta.url));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * The page's policy: everything from this origin (the socket too: CSP 3 `'self'` covers ws: to
 * the same host), WebAssembly compiled from bytes (hash-wasm's keccak signs the orders), inline
 * style attributes (lightweight-charts sizes its canvases with them).
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface WebFile {
  body: Buffer;
  content_type: string;
}

/** The files of `dir` by name (top level only), or an empty map when the bundle was not built. */
export function loadWebFiles(dir: string = WEB_DIST_DIR): Map<string, WebFile> {
  const files = new Map<string, WebFile>();
  if (!fs.existsSync(dir)) return files;
  for (const name of fs.readdirSync(dir)) {
    const type = CONTENT_TYPES[path.extname(name)];
    const p = path.join(dir, name);
    if (type !== undefined && fs.statSync(p).isFile()) files.set(name, { body: fs.readFileSync(p), content_type: type });
  }
  return files;
}

function send(res: HttpResponse, status: number, content_type: string, body: Buffer | string): void {
  res.cork(() => {
    res.writeStatus(statusLine(status))
      .writeHeader('Content-Type', content_type)
      .writeHeader('Cache-Control', 'no-cache')
      .writeHeader('X-Content-Type-Options', 'nosniff')
      .writeHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY)
      .end(body);
  });
}

export function registerWebRoutes(app: TemplatedApp, files: Map<string, WebFile> = loadWebFiles()): void {
  app.get('/', (res) => {
    const page = files.get('index.html');
    if (page === undefined) {
      send(res, 503, 'text/plain; charset=utf-8', `the web view is not built (no ${path.join(WEB_DIST_DIR, 'index.html')}): run \`make build\`\n`);
      return;
    }
    send(res, 200, page.content_type, page.body);
  });
  app.get('/web/:file', (res, req) => {
    const f = files.get(req.getParameter(0) ?? '');
    if (f === undefined) send(res, 404, 'text/plain; charset=utf-8', 'no such file\n');
    else send(res, 200, f.content_type, f.body);
  });
}
