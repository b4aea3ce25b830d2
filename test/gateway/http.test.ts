// The gateway plumbing against a real uWS server on a loopback port: body reading and limits,
// JSON bodies, envelopes, request ids, aborts, rate limiting and the admin token, through tiny
// test routes that use the helpers the way the real routes will.
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CODE_HTTP_STATUS, CODE_NAMES, Code } from '../../src/engine/codes.js';
import { AdminTokenCheck, ADMIN_TOKEN_HEADER } from '../../src/gateway/admin_auth.js';
import { doubleReplyTotal } from '../../src/gateway/envelope.js';
import { readJsonBody, route, setRouteErrorReporter } from '../../src/gateway/http_route.js';
import { Reply } from '../../src/gateway/http_reply.js';
import { readBody, type BodyErrorKind } from '../../src/gateway/http_body.js';
import { parseQuery, parseUintString } from '../../src/gateway/params.js';
import { clientIpKey, RateLimiter } from '../../src/gateway/rate_limit.js';
import { REQUEST_ID_PREFIX } from '../../src/gateway/request_id.js';
import { startServer, waitFor, type TestServer } from './uws_server.js';

const JSON_LIMIT = 1024;
const RAW_LIMIT = 256 * 1024;
const ADMIN_TOKEN = 's3cret-Admin-Token';

let clock_ms = 1_000_000;
const limiter = new RateLimiter({
  name: 'gets_per_ip',
  label: 'requests per IP',
  limit_per_window: 3,
  window_ms: 60_000,
  keys_max: 1000,
  now_ms: () => clock_ms,
});
const admin = new AdminTokenCheck(ADMIN_TOKEN);

/** What the /abort and /slow routes saw, per request tag. */
interface Seen {
  reply: Reply;
  events: Array<'done' | BodyErrorKind>;
  reply_result?: boolean;
  /** /slow: the route's late answer, called by the test once the client is gone (a gate, not a timer). */
  answer?: () => void;
}
const seen = new Map<string, Seen>();
let last_double: Reply | null = null;
const route_errors: Array<[string, string]> = [];
setRouteErrorReporter((err, request_id) => route_errors.push([request_id, err instanceof Error ? err.message : String(err)]));

function routes(app: TemplatedApp): void {
  app.post('/echo', (res: HttpResponse, req: HttpRequest) => {
    const reply = new Reply(res);
    readJsonBody(reply, JSON_LIMIT, req.getHeader('content-length'), (value) => {
      reply.ok({ echo: value });
    });
  });
  app.post('/raw', (res: HttpResponse, req: HttpRequest) => {
    const reply = new Reply(res);
    readBody(
      res,
      RAW_LIMIT,
      (body) => reply.ok({ length: body.length, sha256: createHash('sha256').update(body).digest('hex') }),
      (kind) => {
        if (kind === 'too_large') reply.error('INVALID_REQUEST', 'body too large', 400, true);
      },
      req.getHeader('content-length'),
    );
  });
  // Records the body events; the test aborts the request mid-body.
  app.post('/abort/:tag', (res: HttpResponse, req: HttpRequest) => {
    const reply = new Reply(res);
    const entry: Seen = { reply, events: [] };
    seen.set(req.getParameter(0), entry);
    readBody(
      res,
      JSON_LIMIT,
      () => {
        entry.events.push('done');
        reply.ok(null);
      },
      (kind) => entry.events.push(kind),
      req.getHeader('content-length'),
    );
  });
  // Answers when the test says (as a route waiting on the engine would); the test disconnects first.
  app.get('/slow/:tag', (res: HttpResponse, req: HttpRequest) => {
    const reply = new Reply(res);
    const entry: Seen = { reply, events: [] };
    entry.answer = () => {
      entry.reply_result = reply.ok({ late: true });
    };
    seen.set(req.getParameter(0), entry);
  });
  app.get('/later', (res: HttpResponse) => {
    const reply = new Reply(res);
    setTimeout(() => reply.ok('later'), 5);
  });
  app.get('/double', (res: HttpResponse) => {
    const reply = new Reply(res);
    last_double = reply;
    reply.ok(1);
    reply.ok(2);
    reply.error('INTERNAL_ERROR', 'second');
    reply.rateLimited(5, 'third');
  });
  app.get('/error/:code', (res: HttpResponse, req: HttpRequest) => {
    const reply = new Reply(res);
    const override = parseUintString(req.getQuery('status') || '0', 'status');
    const status = override.ok && override.value > 0 ? override.value : undefined;
    reply.error(req.getParameter(0), `failed with ${req.getParameter(0)}`, status);
  });
  app.get('/unencodable', (res: HttpResponse) => {
    new Reply(res).ok({ big: 1n });
  });
  app.get('/limited', (res: HttpResponse) => {
    const reply = new Reply(res);
    const decision = limiter.take(clientIpKey(res));
    if (!decision.allowed) {
      reply.rateLimited(decision.retry_after_s, limiter.sentence(decision.retry_after_s));
      return;
    }
    reply.ok({ allowed: true });
  });
  app.get('/admin', (res: HttpResponse, req: HttpRequest) => {
    const reply = new Reply(res);
    if (!admin.check(req.getHeader(ADMIN_TOKEN_HEADER))) {
      reply.error('UNAUTHORIZED', 'missing or wrong X-Admin-Token');
      return;
    }
    reply.ok({ admin: true });
  });
  app.get('/q', (res: HttpResponse, req: HttpRequest) => {
    const reply = new Reply(res);
    const parsed = parseQuery(req.getQuery() ?? '');
    if (!parsed.ok) {
      reply.error('INVALID_REQUEST', parsed.message);
      return;
    }
    reply.ok(Object.fromEntries(parsed.value));
  });
  app.get('/throw', route(() => {
    throw new Error('route bug');
  }));
  app.get('/reject', route(async (reply) => {
    await new Promise((r) => setTimeout(r, 5));
    if (!reply.done) throw new Error('async route bug');
  }));
  app.post('/body-throw', route((reply, req) => {
    readJsonBody(reply, JSON_LIMIT, req.getHeader('content-length'), () => {
      throw new Error('body callback bug');
    });
  }));
  app.get('/routed/:name', route((reply, req) => {
    reply.ok({ name: req.getParameter(0) });
  }));
  app.any('/*', (res: HttpResponse) => {
    new Reply(res).error('NOT_FOUND', 'no such route');
  });
}

let server: TestServer;
beforeAll(async () => {
  server = await startServer(routes);
});
afterAll(() => {
  server?.close();
});

interface Answer {
  status: number;
  status_text: string;
  headers: Headers;
  body: Record<string, unknown>;
}

async function call(path: string, init?: RequestInit): Promise<Answer> {
  const r = await fetch(server.url + path, init);
  const text = await r.text();
  return { status: r.status, status_text: r.statusText, headers: r.headers, body: JSON.parse(text) as Record<string, unknown> };
}

function postJson(path: string, body: string | Uint8Array): Promise<Answer> {
  return call(path, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
}

function streamOf(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < pieces.length) controller.enqueue(pieces[i++]);
      else controller.close();
    },
  });
}

function postStream(path: string, pieces: Uint8Array[]): Promise<Answer> {
  const init = { method: 'POST', body: streamOf(pieces), duplex: 'half' } as RequestInit;
  return call(path, init);
}

function expectFormA(a: Answer, code: string, status: number): void {
  expect(a.status).toBe(status);
  expect(a.headers.get('content-type')).toBe('application/json');
  const id = a.headers.get('x-request-id');
  expect(id).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
  expect(Object.keys(a.body)).toEqual(['ok', 'error', 'message', 'request_id']);
  expect(a.body.ok).toBe(false);
  expect(a.body.error).toBe(code);
  expect(typeof a.body.message).toBe('string');
  expect(a.body.request_id).toBe(id);
}

/** Opens a raw TCP connection, writes `head`, and returns the socket. */
function rawConnect(head: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1', () => {
      socket.write(head, () => resolve(socket));
    });
    socket.on('error', reject);
  });
}

/** Sends raw bytes and collects everything the server writes until it closes or `ms` passes. */
async function rawExchange(text: string, ms = 1000): Promise<string> {
  return (await rawExchangeClosed(text, ms)).text;
}

/** rawExchange, also telling whether the server closed the connection (false: the test's `ms` bound ended it). */
function rawExchangeClosed(text: string, ms: number): Promise<{ text: string; server_closed: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let gave_up = false;
    const socket = net.connect(server.port, '127.0.0.1', () => socket.write(text));
    const timer = setTimeout(() => {
      gave_up = true;
      socket.destroy();
    }, ms);
    socket.on('data', (d) => chunks.push(d));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: Buffer.concat(chunks).toString('latin1'), server_closed: !gave_up });
    });
    socket.on('error', reject);
  });
}

describe('request bodies', () => {
  it('echoes a JSON body within the limit', async () => {
    const a = await postJson('/echo', JSON.stringify({ market_id: 'ETH-USDC', price: 2000000000, nested: { a: [1, 2] } }));
    expect(a.status).toBe(200);
    expect(a.status_text).toBe('OK');
    expect(a.body).toEqual({ ok: true, data: { echo: { market_id: 'ETH-USDC', price: 2000000000, nested: { a: [1, 2] } } } });
    expect(a.headers.get('content-type')).toBe('application/json');
  });

  it('accepts a body of exactly the limit and refuses one byte more (Content-Length, up front)', async () => {
    const pad = (n: number) => JSON.stringify({ p: 'x'.repeat(n - 8) });
    expect(Buffer.byteLength(pad(JSON_LIMIT))).toBe(JSON_LIMIT);
    const at = await postJson('/echo', pad(JSON_LIMIT));
    expect(at.status).toBe(200);
    const over = await postJson('/echo', pad(JSON_LIMIT + 1));
    expectFormA(over, 'INVALID_REQUEST', 400);
    expect(over.status_text).toBe('Bad Request');
    expect(over.body.message).toBe(`body too large: the limit is ${JSON_LIMIT} bytes`);
    expect(over.headers.get('connection')).toBe('close');
  });

  it('refuses a large body with Content-Length without reading it, and the client gets the reply', async () => {
    const a = await postJson('/echo', new Uint8Array(8 * 1024 * 1024));
    expectFormA(a, 'INVALID_REQUEST', 400);
    expect(a.body.message).toMatch(/body too large/);
  });

  it('refuses a Content-Length over the limit before any body byte is sent', async () => {
    const text = await rawExchange(`POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 99999999\r\n\r\n`);
    expect(text.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
    expect(text).toContain('"error":"INVALID_REQUEST"');
    expect(text).toContain('Connection: close');
  });

  it('a Content-Length of 2^31 or more: uWS drops the connection itself, the server carries on', async () => {
    // uWS 20.30 closes such connections right after the handler without writing the reply; the
    // client sees a closed connection, not a hang.
    // Closed by the server, not by the test's bound (a safety limit, not a speed target).
    const { text, server_closed } = await rawExchangeClosed(`POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 999999999999\r\n\r\n`, 20_000);
    expect(server_closed).toBe(true);
    expect(text === '' || text.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
    expect((await call('/later')).status).toBe(200);
  });

  it('reads a chunked body (no Content-Length) within the limit', async () => {
    const json = JSON.stringify({ user: '0xabc', side: 'bid', quantity: 5 });
    const bytes = Buffer.from(json);
    const pieces = [bytes.subarray(0, 5), bytes.subarray(5, 6), bytes.subarray(6, 20), bytes.subarray(20)];
    const a = await postStream('/echo', pieces);
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ ok: true, data: { echo: JSON.parse(json) } });
  });

  it('stops a chunked body as soon as it passes the limit', async () => {
    const pieces = Array.from({ length: 64 }, () => new Uint8Array(100).fill(0x20));
    const a = await postStream('/echo', pieces);
    expectFormA(a, 'INVALID_REQUEST', 400);
    expect(a.body.message).toBe(`body too large: the limit is ${JSON_LIMIT} bytes`);
  });

  it('stops an endless chunked body over the limit and the server keeps serving', async () => {
    const piece = new Uint8Array(64 * 1024);
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent++;
        if (sent > 4096) controller.close(); // 256 MiB if the server never stopped us
        else controller.enqueue(piece);
      },
    });
    const a = await call('/raw', { method: 'POST', body: endless, duplex: 'half' } as RequestInit);
    expectFormA(a, 'INVALID_REQUEST', 400);
    expect(sent).toBeLessThan(4096);
    expect((await call('/later')).status).toBe(200);
  });

  it('keeps every byte of binary bodies split into many chunks (preallocated and chunked paths)', async () => {
    for (const size of [0, 1, 1000, 65_535, 65_536, 200_000, RAW_LIMIT]) {
      const data = randomBytes(size);
      const expected = { length: size, sha256: createHash('sha256').update(data).digest('hex') };
      const with_length = await call('/raw', { method: 'POST', body: data });
      expect(with_length.body).toEqual({ ok: true, data: expected });
      const pieces: Uint8Array[] = [];
      for (let at = 0; at < size; at += 7919) pieces.push(data.subarray(at, Math.min(size, at + 7919)));
      const chunked = await postStream('/raw', pieces);
      expect(chunked.body).toEqual({ ok: true, data: expected });
    }
    const over = await call('/raw', { method: 'POST', body: randomBytes(RAW_LIMIT + 1) });
    expectFormA(over, 'INVALID_REQUEST', 400);
  });

  it('answers malformed and hostile JSON with 400 INVALID_REQUEST', async () => {
    const cases: Array<[string | Uint8Array, RegExp]> = [
      ['', /body is empty/],
      ['{"a":', /not valid JSON/],
      ['{a:1}', /not valid JSON/],
      ['[1,2]', /must be a JSON object/],
      ['null', /must be a JSON object/],
      ['"text"', /must be a JSON object/],
      ['42', /must be a JSON object/],
      ['{"__proto__":{"admin":true}}', /forbidden key "__proto__"/],
      ['{"a":{"constructor":{"prototype":{}}}}', /forbidden key "constructor"/],
      ['{"a":[{"\\u005f_proto__":1}]}', /forbidden key "__proto__"/],
      ['{"quantity":1.0000000000000001}', /rounds to one/],
      ['[['.repeat(40) + ']]'.repeat(40), /nests deeper than 32/],
      [new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), /not valid UTF-8/],
    ];
    for (const [body, message] of cases) {
      const a = await postJson('/echo', body);
      expectFormA(a, 'INVALID_REQUEST', 400);
      expect(a.body.message).toMatch(message);
    }
    // The prototype of plain objects is untouched.
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('aborts', () => {
  it('a client that aborts mid-body gets no reply attempt and the server carries on', async () => {
    const socket = await rawConnect('POST /abort/mid HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n{"a":');
    await waitFor(() => seen.has('mid'));
    socket.destroy();
    await waitFor(() => (seen.get('mid')?.events.length ?? 0) > 0);
    const entry = seen.get('mid')!;
    // A whole request on another connection first: whatever the server had left to do for the
    // aborted one is done by its answer (a round trip, not a 50 ms sleep).
    expect((await postJson('/echo', '{"round":"trip"}')).status).toBe(200);
    expect(entry.events).toEqual(['aborted']);
    expect(entry.reply.aborted).toBe(true);
    expect(entry.reply.sent).toBe(false);
    expect(entry.reply.status).toBe(0);
    // A late reply is a harmless no-op.
    expect(entry.reply.ok({ late: true })).toBe(false);
    expect(entry.reply.error('INTERNAL_ERROR', 'late')).toBe(false);
    expect(entry.reply.ignored_after_abort).toBe(2);
    expect(entry.reply.double_reply_count).toBe(0);
    expect((await postJson('/echo', '{"still":"up"}')).status).toBe(200);
  });

  it('a client that disconnects while the route waits: the late reply is ignored', async () => {
    const socket = await rawConnect('GET /slow/wait HTTP/1.1\r\nHost: t\r\n\r\n');
    await waitFor(() => seen.has('wait'));
    socket.destroy();
    const entry = seen.get('wait')!;
    // The route answers only once the server has seen the client go.
    await waitFor(() => entry.reply.aborted);
    expect(entry.reply_result).toBeUndefined();
    entry.answer!();
    expect(entry.reply_result).toBe(false);
    expect(entry.reply.aborted).toBe(true);
    expect(entry.reply.ignored_after_abort).toBe(1);
    expect((await call('/later')).body).toEqual({ ok: true, data: 'later' });
  });

  it('a client that sends a whole body and leaves at once does not crash the server', async () => {
    const socket = await rawConnect('POST /abort/full HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}');
    socket.destroy();
    await waitFor(() => (seen.get('full')?.events.length ?? 0) > 0);
    // A round trip on another connection instead of a 50 ms sleep: a second event for the
    // closed one would have come before its answer.
    expect((await call('/later')).status).toBe(200);
    const entry = seen.get('full')!;
    // Either the body completed and the reply raced the close, or the abort came first.
    expect(entry.events.length).toBe(1);
    expect(entry.reply.double_reply_count).toBe(0);
    expect((await call('/later')).status).toBe(200);
  });
});

describe('envelopes and request ids', () => {
  it('every response carries a unique X-Request-Id; form A bodies repeat it', async () => {
    const paths = ['/echo', '/later', '/nope', '/error/INVALID_ORDER', '/admin', '/q?a=1'];
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) => {
        const path = paths[i % paths.length];
        return path === '/echo' ? postJson(path, '{"i":1}') : call(path);
      }),
    );
    const ids = answers.map((a) => a.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(new RegExp(`^${REQUEST_ID_PREFIX}-[0-9a-z]+$`));
    expect(new Set(ids).size).toBe(ids.length);
    for (const a of answers) {
      expect(a.headers.get('content-type')).toBe('application/json');
      if (a.body.ok === false) expect(a.body.request_id).toBe(a.headers.get('x-request-id'));
    }
  });

  it('error codes map to their HTTP status and status line', async () => {
    for (let code = 1; code < CODE_NAMES.length; code++) {
      const name = CODE_NAMES[code];
      if (code === Code.RATE_LIMITED) continue; // form C, see rateLimited
      const a = await call(`/error/${name}`);
      expectFormA(a, name, CODE_HTTP_STATUS[code]);
      expect(a.body.message).toBe(`failed with ${name}`);
      const texts: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 500: 'Internal Server Error' };
      expect(a.status_text).toBe(texts[a.status]);
    }
    const overridden = await call('/error/INTERNAL_ERROR?status=503');
    expectFormA(overridden, 'INTERNAL_ERROR', 503);
    expect(overridden.status_text).toBe('Service Unavailable');
    const unknown = await call('/error/NO_SUCH_CODE');
    expectFormA(unknown, 'NO_SUCH_CODE', 500);
    const route = await call('/no/such/route');
    expectFormA(route, 'NOT_FOUND', 404);
  });

  it('a second reply is ignored and counted', async () => {
    const before = doubleReplyTotal();
    const a = await call('/double');
    expect(a.body).toEqual({ ok: true, data: 1 });
    expect(last_double?.double_reply_count).toBe(3);
    expect(doubleReplyTotal() - before).toBe(3);
  });

  it('replies from a later callback (corked outside the handler)', async () => {
    const a = await call('/later');
    expect(a.body).toEqual({ ok: true, data: 'later' });
    expect(a.headers.get('x-request-id')).toBeTruthy();
  });

  it('data JSON cannot encode becomes 500 INTERNAL_ERROR instead of a crash', async () => {
    expectFormA(await call('/unencodable'), 'INTERNAL_ERROR', 500);
  });

  it('query strings are parsed strictly', async () => {
    expect((await call('/q?limit=10&from=0x%41b&note=a+b')).body).toEqual({ ok: true, data: { limit: '10', from: '0xAb', note: 'a b' } });
    expect((await call('/q?a=%zz')).body.message).toMatch(/malformed percent escape/);
    expect((await call('/q?a=1&a=2')).body.message).toMatch(/must not be repeated/);
  });
});

describe('route()', () => {
  it('turns throws and rejections in route code into 500 INTERNAL_ERROR and reports them', async () => {
    route_errors.length = 0;
    for (const [path, init, text] of [
      ['/throw', undefined, 'route bug'],
      ['/reject', undefined, 'async route bug'],
      ['/body-throw', { method: 'POST', body: '{}' }, 'body callback bug'],
    ] as const) {
      const a = await call(path, init);
      expectFormA(a, 'INTERNAL_ERROR', 500);
      expect(a.body.message).toBe('internal error');
      expect(route_errors.at(-1)).toEqual([a.body.request_id, text]);
    }
    expect(route_errors.length).toBe(3);
    expect((await call('/routed/abc')).body).toEqual({ ok: true, data: { name: 'abc' } });
  });
});

describe('rate limiting over HTTP', () => {
  it('answers 429 form C with Retry-After after N requests, and allows again after the window', async () => {
    clock_ms = 5_000_000;
    limiter.clear();
    for (let i = 0; i < 3; i++) {
      const a = await call('/limited');
      expect(a.status).toBe(200);
    }
    const denied = await call('/limited');
    expect(denied.status).toBe(429);
    expect(denied.status_text).toBe('Too Many Requests');
    expect(denied.headers.get('retry-after')).toBe('20');
    expect(denied.headers.get('content-type')).toBe('application/json');
    expect(denied.headers.get('x-request-id')).toMatch(/^[0-9a-f]{12}-/);
    expect(Object.keys(denied.body)).toEqual(['ok', 'data', 'error']);
    expect(denied.body).toEqual({
      ok: false,
      data: null,
      error: 'Too many requests per IP: at most 3 per minute. Retry after 20 seconds.',
    });
    clock_ms += 19_999;
    expect((await call('/limited')).status).toBe(429);
    expect((await call('/limited')).headers.get('retry-after')).toBe('1');
    clock_ms += 1; // one token back
    expect((await call('/limited')).status).toBe(200);
    expect((await call('/limited')).status).toBe(429);
    clock_ms += 60_000; // a full quiet window: the whole burst again
    for (let i = 0; i < 3; i++) expect((await call('/limited')).status).toBe(200);
    expect((await call('/limited')).status).toBe(429);
  });
});

describe('admin token over HTTP', () => {
  it('right token passes; wrong, other length, other case, empty and missing get 401 UNAUTHORIZED', async () => {
    const right = await call('/admin', { headers: { 'X-Admin-Token': ADMIN_TOKEN } });
    expect(right.body).toEqual({ ok: true, data: { admin: true } });
    for (const token of [ADMIN_TOKEN.slice(0, -1) + 'x', ADMIN_TOKEN + 'x', ADMIN_TOKEN.toLowerCase(), 'short', '']) {
      const a = await call('/admin', { headers: { 'X-Admin-Token': token } });
      expectFormA(a, 'UNAUTHORIZED', 401);
    }
    expectFormA(await call('/admin'), 'UNAUTHORIZED', 401);
  });
});
