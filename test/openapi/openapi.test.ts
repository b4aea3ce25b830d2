// docs/openapi.yaml against the real server: the description is parsed and checked for
// structural sanity, then a real server (test/server/harness.ts) is driven through a realistic
// session and EVERY response body is validated against the schema documented for its path, method
// and status (and every accepted request body against the documented request schema). Finally
// every documented operation must have been answered 200 at least once in the session.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { keccak_256 } from '@noble/hashes/sha3.js';
import {
  adminHeaders, api, deposit, REPO_ROOT, startServer, Wallet, type Api, type ApiResponse, type StartedServer,
} from '../server/harness.js';
import { collectRefs, resolvePointer, unsupportedKeywords, Validator, type Schema } from './validate.js';

const SPEC_FILE = path.join(REPO_ROOT, 'docs', 'openapi.yaml');
const spec = parse(fs.readFileSync(SPEC_FILE, 'utf8')) as Record<string, any>;
const validator = new Validator(spec);
const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'head', 'options'] as const;

// ---------------------------------------------------------------------------------------------
// Spec helpers

interface Operation {
  key: string; // "GET /orderbook/{market_id}"
  template: string;
  method: string;
  op: Record<string, any>;
  segments: string[];
}

const operations: Operation[] = [];
for (const [template, item] of Object.entries(spec.paths ?? {}) as [string, Record<string, any>][]) {
  for (const m of METHODS) {
    if (item[m]) operations.push({ key: `${m.toUpperCase()} ${template}`, template, method: m, op: item[m], segments: template.split('/').slice(1) });
  }
}

function deref<T = any>(x: any): T {
  let cur = x;
  for (let i = 0; i < 16 && cur && typeof cur.$ref === 'string'; i++) cur = resolvePointer(spec, cur.$ref);
  return cur as T;
}

/** The operation of a concrete request path (query stripped); literal segments beat parameters. */
function findOperation(method: string, url_path: string): Operation | undefined {
  const segs = url_path.split('?')[0].split('/').slice(1);
  let best: Operation | undefined;
  let best_literals = -1;
  for (const o of operations) {
    if (o.method !== method.toLowerCase() || o.segments.length !== segs.length) continue;
    let literals = 0;
    let ok = true;
    for (let i = 0; i < segs.length; i++) {
      const t = o.segments[i];
      if (t.startsWith('{') && t.endsWith('}')) continue;
      if (t !== segs[i]) {
        ok = false;
        break;
      }
      literals++;
    }
    if (ok && literals > best_literals) {
      best = o;
      best_literals = literals;
    }
  }
  return best;
}

function formatErrors(errs: { pointer: string; message: string }[]): string {
  return errs.slice(0, 10).map((e) => `  at ${e.pointer}: ${e.message}`).join('\n');
}

// ---------------------------------------------------------------------------------------------
// The checked client

/** "GET /template" -> statuses answered. */
const exercised = new Map<string, Set<number>>();
let checked_responses = 0;

async function call(a: Api, method: string, p: string, body: unknown, headers: Record<string, string> | undefined, expect_status: number): Promise<any> {
  const r: ApiResponse = await a.req(method, p, body, { headers });
  const where = `${method} ${p}`;
  if (r.status !== expect_status) throw new Error(`${where}: expected HTTP ${expect_status}, got ${r.status}: ${r.text.slice(0, 300)}`);
  const o = findOperation(method, p);
  if (o === undefined) throw new Error(`${where}: no documented operation matches (docs/openapi.yaml)`);
  const response = deref(o.op.responses?.[String(r.status)]);
  if (response === undefined) throw new Error(`${where} (${o.key}): status ${r.status} is not documented for this operation`);
  const schema = response.content?.['application/json']?.schema as Schema | undefined;
  if (schema === undefined) throw new Error(`${o.key} ${r.status}: no application/json schema documented`);
  if (typeof r.body !== 'object' || r.body === null) throw new Error(`${where}: body is not JSON: ${r.text.slice(0, 200)}`);
  const errs = validator.validate(r.body, schema);
  if (errs.length > 0) {
    throw new Error(`${where} (${o.key}, HTTP ${r.status}): the response does not match docs/openapi.yaml\n${formatErrors(errs)}\nbody: ${r.text.slice(0, 600)}`);
  }
  // Documented headers.
  for (const [name, h0] of Object.entries(response.headers ?? {}) as [string, any][]) {
    const h = deref(h0);
    const value = r.headers[name.toLowerCase()];
    if (value === undefined) {
      if (h.required) throw new Error(`${where}: documented header ${name} missing`);
      continue;
    }
    const hschema = h.schema as Schema;
    const v = hschema.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
    const herrs = validator.validate(v, hschema, `/headers/${name}`);
    if (herrs.length > 0) throw new Error(`${where}: header ${name}: ${value}\n${formatErrors(herrs)}`);
  }
  if (r.body.ok === false && typeof r.body.request_id === 'string' && r.body.request_id !== r.headers['x-request-id']) {
    throw new Error(`${where}: request_id ${r.body.request_id} differs from X-Request-Id ${r.headers['x-request-id']}`);
  }
  // An accepted request must conform to the documented request body.
  if (r.status === 200 && body !== undefined) {
    const rb = deref(o.op.requestBody);
    const rschema = rb?.content?.['application/json']?.schema as Schema | undefined;
    if (rschema === undefined) throw new Error(`${o.key}: the server accepted a body, but no request body is documented`);
    const rerrs = validator.validate(body, rschema);
    if (rerrs.length > 0) throw new Error(`${where}: accepted request body does not match the documented request schema\n${formatErrors(rerrs)}`);
  }
  let set = exercised.get(o.key);
  if (set === undefined) exercised.set(o.key, (set = new Set()));
  set.add(r.status);
  checked_responses++;
  return r.body.ok === true ? r.body.data : r.body;
}

// ---------------------------------------------------------------------------------------------

describe('docs/openapi.yaml: structure', () => {
  it('is an OpenAPI 3.x document with paths, schemas and the admin security scheme', () => {
    expect(String(spec.openapi)).toMatch(/^3\.[01]\.\d+$/);
    expect(Object.keys(spec.paths).length).toBeGreaterThan(25);
    expect(spec.components.securitySchemes.AdminToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Admin-Token' });
    expect(spec.components.headers['X-Request-Id']).toBeDefined();
    expect(spec.components.headers['Retry-After']).toBeDefined();
  });

  it('every path has at least one operation, each with a documented 200 and error responses', () => {
    const problems: string[] = [];
    for (const [template, item] of Object.entries(spec.paths) as [string, any][]) {
      const ops = METHODS.filter((m) => item[m]);
      if (ops.length === 0) problems.push(`${template}: no operation`);
      for (const m of ops) {
        const responses = item[m].responses ?? {};
        if (!responses['200']) problems.push(`${m.toUpperCase()} ${template}: no 200`);
        if (!responses['500']) problems.push(`${m.toUpperCase()} ${template}: no 500`);
        // Path parameters are declared.
        for (const name of template.match(/\{[^}]+\}/g) ?? []) {
          const params = (item[m].parameters ?? []).map(deref);
          if (!params.some((x: any) => x.in === 'path' && `{${x.name}}` === name)) problems.push(`${m.toUpperCase()} ${template}: path parameter ${name} not declared`);
        }
        if (item[m].security?.some((s: any) => 'AdminToken' in s) && !responses['401']) problems.push(`${m.toUpperCase()} ${template}: admin without 401`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every $ref resolves', () => {
    const refs = collectRefs(spec);
    expect(refs.length).toBeGreaterThan(100);
    const broken = refs.filter((r) => resolvePointer(spec, r.ref) === undefined).map((r) => `${r.pointer}: ${r.ref}`);
    expect(broken).toEqual([]);
  });

  it('every schema uses only keywords the test validator supports', () => {
    const bad: string[] = [];
    for (const [name, s] of Object.entries(spec.components.schemas)) bad.push(...unsupportedKeywords(s, `/components/schemas/${name}`));
    for (const o of operations) {
      for (const [status, r] of Object.entries(o.op.responses ?? {})) {
        const s = (deref(r) as any)?.content?.['application/json']?.schema;
        if (s) bad.push(...unsupportedKeywords(s, `${o.key} ${status}`));
      }
      const rb = deref(o.op.requestBody)?.content?.['application/json']?.schema;
      if (rb) bad.push(...unsupportedKeywords(rb, `${o.key} requestBody`));
    }
    expect(bad).toEqual([]);
  });

  it('documents the paths of docs/api.md', () => {
    const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'api.md'), 'utf8');
    // "### GET /orderbook/:market_id and GET /markets/:market_id/book" style headings.
    const documented = new Set<string>();
    for (const line of doc.split('\n')) {
      if (!line.startsWith('### ')) continue;
      for (const m of line.matchAll(/\b(GET|POST|PUT) (\/[^\s`?\[]*)/g)) {
        documented.add(`${m[1]} ${m[2].replace(/:([a-z_]+)/g, '{$1}')}`);
      }
    }
    const keys = new Set(operations.map((o) => o.key.replace(/\{[a-z_]+\}/g, '{}')));
    const missing = [...documented].filter((k) => !keys.has(k.replace(/\{[a-z_]+\}/g, '{}')));
    expect(documented.size).toBeGreaterThan(25);
    expect(missing).toEqual([]);
  });
});

describe('docs/openapi.yaml against the real server', () => {
  let s: StartedServer;
  let a: Api;
  let admin: Record<string, string>;

  beforeAll(async () => {
    s = await startServer();
    a = api(s.url);
    admin = adminHeaders(s);
  });

  afterAll(async () => {
    const r = await s?.stop();
    expect(r?.code).toBe(0);
  });

  const get = (p: string, status = 200, headers?: Record<string, string>) => call(a, 'GET', p, undefined, headers, status);
  const post = (p: string, body: unknown, status = 200, headers?: Record<string, string>) => call(a, 'POST', p, body, headers, status);
  const put = (p: string, body: unknown, status = 200, headers?: Record<string, string>) => call(a, 'PUT', p, body, headers, status);

  it('a realistic session: every response matches its documented schema', async () => {
    // --- public reads on a fresh server (null best prices, empty lists) ---
    await get('/health');
    await get('/time');
    const markets = await get('/markets');
    expect(markets.map((m: any) => m.id)).toEqual(expect.arrayContaining(['ETH-USDC', 'BTC-USDC']));
    await get('/fees');
    await get('/orderbook/BTC-USDC');
    await get('/ohlcv/BTC-USDC');
    await get('/leaderboard');

    // --- deposits (the first deposit creates the account) ---
    const maker = Wallet.random();
    const taker = Wallet.random();
    await post('/deposit', { user: maker.address, asset: 'ETH', amount: '10' }, 200, admin);
    await post('/deposit', { user: maker.address, asset: 'USDC', amount: '5000' }, 200, admin);
    await post('/deposit', { user: taker.address.toUpperCase().replace('0X', '0x'), asset: 'USDC', amount: '100000.5' }, 200, admin);
    expect((await deposit(s, taker.address, 'ETH', '1')).status).toBe(200);

    // --- a maker and a taker order that match ---
    const ask = await post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_010_000, quantity: 300, client_order_id: 'mk-ask-1' }));
    expect(ask.status).toBe('open');
    const bid = await post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_001_000_000, quantity: 300 }, { form: 'colon' }));
    expect(bid.status).toBe('filled');
    expect(bid.fills).toHaveLength(1);
    // A market order (price absent) and a FOK that cannot fill (accepted and cancelled).
    await post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_500_000, quantity: 200 }));
    const mkt = await post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', quantity: 100, order_type: 'market', time_in_force: 'ioc' }));
    expect(mkt.price).toBe(0);
    const fok = await post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, time_in_force: 'fok' }));
    expect(fok.status).toBe('cancelled');

    // --- amend (re-enters: new price), cancel by client id, cancel by order id, cancel-all ---
    const resting = await post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_100_000_000, quantity: 500, client_order_id: 'mk-ask-2' }));
    const amended = await post('/orders/amend', maker.amend({ order_id: resting.order_id, price: 2_100_010_000, quantity: 400 }));
    expect(amended.quantity).toBe(400);
    const mb = await post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_900_000_000, quantity: 300, client_order_id: 'mk-bid-1' }));
    const c1 = await post('/orders/cancel', maker.cancel({ client_order_id: 'mk-bid-1' }));
    expect(c1.order_id).toBe(mb.order_id);
    const mb2 = await post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_950_000_000, quantity: 300 }));
    const c2 = await post('/orders/cancel', maker.cancel({ order_id: mb2.order_id }));
    expect(c2.status).toBe('cancelled');
    await post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_990_000_000, quantity: 300, client_order_id: 'mk-bid-2' }));
    await post('/orders', maker.order({ market_id: 'BTC-USDC', side: 'bid', price: 30_000_000_000, quantity: 10 }));
    // The optional signed members (self-trade prevention, stale-order guard).
    await post('/orders', maker.order({
      market_id: 'BTC-USDC', side: 'bid', price: 29_000_000_000, quantity: 10, stp: 'expire_both', expires_after_ms: Date.now() + 60_000,
    }));
    // A batch: an order, its cancel, a refused item, a cancel-all.
    const batch = await post('/orders/batch', { requests: [
      { kind: 'order', ...maker.order({ market_id: 'BTC-USDC', side: 'bid', price: 28_000_000_000, quantity: 10, client_order_id: 'bt-1' }) },
      { kind: 'cancel', ...maker.cancel({ client_order_id: 'bt-1' }) },
      { kind: 'order', ...maker.order({ market_id: 'BTC-USDC', side: 'bid', price: 28_000_000_001, quantity: 10 }) },
      { kind: 'cancel_all', ...taker.cancelAll('BTC-USDC') },
    ] });
    expect(batch.map((x: { ok: boolean }) => x.ok)).toEqual([true, true, false, true]);
    // The book is now two-sided: bids 1990 (ETH), asks 2000.50 rest (100 left) and 2100.01.
    await get('/markets');
    await get('/orderbook/ETH-USDC?depth=10');
    await get('/markets/ETH-USDC/book');
    const ca = await post('/orders/cancel-all', maker.cancelAll('BTC-USDC'));
    expect(ca.cancelled).toHaveLength(2);
    const ca2 = await post('/orders/cancel-all', taker.cancelAll());
    expect(ca2.cancelled).toEqual([]);
    expect((await post('/orders/cancel-after', taker.cancelAfter(3_600_000))).deadline).toMatch(/Z$/);
    expect((await post('/orders/cancel-after', taker.cancelAfter(0))).deadline).toBeNull();
    // Agent keys: approve, trade and list, revoke.
    const hot = Wallet.random();
    expect((await post('/agents', taker.approveAgent(hot.address, 'api-bot', Date.now() + 3_600_000))).agent).toBe(hot.address);
    await post('/orders/cancel-after', hot.cancelAfter(0, { user: taker.address }));
    expect((await get(`/account/${taker.address}/agents`)).agents).toHaveLength(1);
    expect((await post('/agents/revoke', taker.revokeAgent(hot.address))).revoked).toBe(true);

    // --- every read ---
    const trades = await get('/trades/ETH-USDC?limit=5');
    expect(trades.length).toBeGreaterThan(0);
    await get('/markets/ETH-USDC/fees');
    await get(`/account/${maker.address}/balances`);
    await get(`/account/${Wallet.random().address}/balances`);
    await get(`/account/${maker.address}/orders`);
    const all = await get(`/account/${maker.address}/orders?status=all&market_id=ETH-USDC&limit=50`);
    expect(all.length).toBeGreaterThan(3);
    await get(`/account/${maker.address}/orders?status=cancelled`);
    await get(`/account/${maker.address}/orders/by-client-id/mk-ask-1`);
    const fills = await get(`/account/${maker.address}/fills?limit=10`);
    expect(fills.length).toBeGreaterThan(0);
    await get(`/account/${taker.address}/fills`);
    const candles = await get('/ohlcv/ETH-USDC?interval=1m&limit=10');
    expect(candles.length).toBeGreaterThan(0);
    await get('/ohlcv/ETH-USDC?interval=1h&since=2020-01-01');
    const lb = await get('/leaderboard?limit=10');
    expect(lb.length).toBeGreaterThan(0);

    // --- withdrawals ---
    const w = await post('/withdrawals', taker.withdraw('ETH', '300000000000000'));
    expect(w.status).toBe('pending');
    await post('/withdrawal-signature', { user: taker.address, asset: 'ETH', amount: '0.0003', nonce: w.nonce });

    // --- referral programme: the taker is referred by the maker, then takes 0.001 ETH at 2000 ---
    const rn = taker.nextNonce();
    const reg = await post('/referral/register', {
      referred: taker.address, referrer: maker.address, nonce: rn,
      signature: taker.sign(`ringbook:referral:${taker.address}:${maker.address}:${rn}`),
    });
    expect(reg.referrer).toBe(maker.address);
    await post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_000_000, quantity: 1000 }));
    const referred_take = await post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 1000 }));
    expect(referred_take.fills).toHaveLength(1);
    const ref_stats = await get(`/referral/${maker.address}`);
    expect(ref_stats.referred_users).toBe(1);
    expect(ref_stats.total_earnings_usdc).toBe('200'); // 20% of the 1000-unit taker fee
    const referred_stats = await get(`/referral/${taker.address}`);
    expect(referred_stats.referred_by?.referrer).toBe(maker.address);
    await get(`/referral/${Wallet.random().address}`);

    // --- forced inclusion: a cancel-all, envelope nonce n, payload nonce n + 1 ---
    const fn = taker.nextNonce();
    const forced_body = taker.cancelAll(undefined, { nonce: fn + 1 });
    taker.skipTo(fn + 1);
    const forced_json = Buffer.from(JSON.stringify({ kind: 'cancel_all', ...forced_body }), 'utf8');
    const forced_hash = '0x' + Buffer.from(keccak_256(forced_json)).toString('hex');
    const queued = await post('/force-include', {
      user: taker.address, payload: '0x' + forced_json.toString('hex'), nonce: fn,
      signature: taker.sign(`ringbook:force-include:${taker.address}:${forced_hash}:${fn}`),
    });
    expect(queued).toMatchObject({ kind: 'cancel_all', nonce: fn, payload_nonce: fn + 1, payload_hash: forced_hash, status: 'pending' });
    await get(`/force-include/${queued.entry_id}`);
    let included: any;
    for (let i = 0; i < 200 && included?.status !== 'included'; i++) {
      await new Promise((res) => setTimeout(res, 20));
      included = await get(`/force-include/${queued.entry_id}`);
    }
    expect(included.status).toBe('included');
    expect(included.result).toMatchObject({ accepted: true, error: null });

    // --- DA: batches and a fill proof (roots are built a few ms after the commit) ---
    const batches = await get('/da/batches?from=1&limit=100');
    expect(batches.length).toBeGreaterThan(0);
    await get('/da/batches');
    const with_fills = batches.find((b: any) => b.fills.length > 0);
    expect(with_fills).toBeDefined();
    expect(with_fills.state_diff.length).toBeGreaterThan(0);
    await get(`/da/batches/${with_fills.header.batch_id}`);
    let proof: any;
    for (let i = 0; i < 100; i++) {
      const r = await a.get(`/orders/${bid.order_id}/da-proof`);
      if (r.status === 200) {
        proof = await get(`/orders/${bid.order_id}/da-proof`);
        break;
      }
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(proof?.fill_id).toBe(bid.fills[0].fill_id);
    await get(`/orders/${bid.order_id}/da-proof?fill_id=${bid.fills[0].fill_id}`);

    // --- admin ---
    const st = await get('/admin/state', 200, admin);
    expect(st.state_root).not.toBeNull();
    const mem = await get('/admin/memory', 200, admin);
    expect(mem.threads.map((t: { thread: string }) => t.thread)).toEqual(expect.arrayContaining(['front', 'matcher', 'da']));
    expect(st.markets.length).toBeGreaterThanOrEqual(2);
    const created = await post('/admin/markets', { base: 'ETH', quote: 'BTC', tick_size: 100, lot_size: 10_000 }, 200, admin);
    expect(created.id).toBe('ETH-BTC');
    const paused = await post('/admin/markets/ETH-BTC/pause', {}, 200, admin);
    expect(paused.status).toBe('paused');
    await get('/markets');
    await post('/admin/markets/ETH-BTC/resume', {}, 200, admin);
    await put('/admin/fees', { maker_fee_bps: -1, taker_fee_bps: 5 }, 200, admin);
    await put('/admin/markets/BTC-USDC/fees', { maker_fee_bps: 0, taker_fee_bps: 10 }, 200, admin);
    await get('/markets/BTC-USDC/fees');
    await put(`/admin/accounts/${maker.address}/credit`, { credit_limit: 1_000_000_000_000, auto_cancel_ratio: 0.9 }, 200, admin);
    const bal = await get(`/account/${maker.address}/balances`);
    expect(bal.credit).not.toBeNull();
    const snap = await post('/admin/snapshot', {}, 200, admin);
    expect(Number(snap.batch_id)).toBeGreaterThan(0);
    await get('/admin/state', 200, admin);
    await get('/health');
  });

  it('error answers match the documented error envelopes', async () => {
    const w = Wallet.random();
    const stranger = Wallet.random();
    await post('/deposit', { user: w.address, asset: 'USDC', amount: '1000' }, 200, admin);
    const e = async (method: string, p: string, body: unknown, status: number, code: string, headers?: Record<string, string>) => {
      const b = await call(a, method, p, body, headers, status);
      expect(b.error, `${method} ${p}`).toBe(code);
    };
    // INVALID_ORDER: engine check (tick) and shape check (missing side).
    await e('POST', '/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_001, quantity: 100 }), 400, 'INVALID_ORDER');
    await e('POST', '/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 100, expires_after_ms: 1 }), 400, 'EXPIRED');
    const no_side = w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 100 });
    delete no_side.side;
    await e('POST', '/orders', no_side, 400, 'INVALID_ORDER');
    // INVALID_REQUEST: unknown field, bad query parameter, bad deposit amount.
    await e('POST', '/orders', { ...w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 100 }), extra: 1 }, 400, 'INVALID_REQUEST');
    await e('GET', '/orderbook/ETH-USDC?depth=0', undefined, 400, 'INVALID_REQUEST');
    await e('GET', '/ohlcv/ETH-USDC?interval=2m', undefined, 400, 'INVALID_REQUEST');
    await e('GET', '/leaderboard?limit=0', undefined, 400, 'INVALID_REQUEST');
    await e('GET', '/account/0xabc/balances', undefined, 400, 'INVALID_REQUEST');
    await e('POST', '/deposit', { user: w.address, asset: 'USDC', amount: '-1' }, 400, 'INVALID_REQUEST', admin);
    // INSUFFICIENT_BALANCE, INVALID_SIGNATURE, DUPLICATE_NONCE.
    await e('POST', '/orders', w.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_000_000, quantity: 100 }), 400, 'INSUFFICIENT_BALANCE');
    await e('POST', '/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 }, { signer: (m) => stranger.sign(m) }), 401, 'INVALID_SIGNATURE');
    await post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 }, { nonce: 50 }));
    await e('POST', '/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 }, { nonce: 50 }), 400, 'DUPLICATE_NONCE');
    // NOT_FOUND and MARKET_NOT_FOUND.
    await e('GET', `/account/${w.address}/orders/by-client-id/nope`, undefined, 404, 'NOT_FOUND');
    await e('POST', '/orders/cancel', w.cancel({ order_id: 999_999 }, { nonce: 60 }), 404, 'NOT_FOUND');
    w.skipTo(60);
    await e('POST', '/orders', stranger.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 }), 400, 'INSUFFICIENT_BALANCE');
    await e('GET', '/da/batches/999999', undefined, 404, 'NOT_FOUND');
    await e('GET', '/orders/999999/da-proof', undefined, 404, 'NOT_FOUND');
    await e('POST', '/withdrawal-signature', { user: w.address, asset: 'ETH', amount: '1', nonce: 1 }, 404, 'NOT_FOUND');
    await e('GET', '/orderbook/NOPE-USDC', undefined, 404, 'MARKET_NOT_FOUND');
    await e('GET', '/ohlcv/eth-usdc', undefined, 404, 'MARKET_NOT_FOUND');
    await e('GET', `/account/${w.address}/orders?market_id=NOPE-USDC`, undefined, 404, 'MARKET_NOT_FOUND');
    await e('POST', '/admin/markets/NOPE-USDC/pause', {}, 404, 'MARKET_NOT_FOUND', admin);
    // UNAUTHORIZED: admin routes and deposits without the token.
    await e('GET', '/admin/state', undefined, 401, 'UNAUTHORIZED');
    await e('GET', '/admin/memory', undefined, 401, 'UNAUTHORIZED');
    await e('GET', '/admin/state', undefined, 401, 'UNAUTHORIZED', { 'X-Admin-Token': 'wrong' });
    await e('POST', '/deposit', { user: w.address, asset: 'USDC', amount: '1' }, 401, 'UNAUTHORIZED');
    await e('PUT', '/admin/fees', { maker_fee_bps: 0, taker_fee_bps: 5 }, 401, 'UNAUTHORIZED');
    // Referral: INVALID_REFERRAL (self), REFERRAL_EXISTS, malformed address. Any address may be
    // the referrer, funded or not.
    const referral = (referrer: string) => {
      const n = w.nextNonce();
      return { referred: w.address, referrer, nonce: n, signature: w.sign(`ringbook:referral:${w.address}:${referrer}:${n}`) };
    };
    await e('POST', '/referral/register', referral(w.address), 400, 'INVALID_REFERRAL');
    const referrer = Wallet.random();
    await post('/referral/register', referral(referrer.address));
    await e('POST', '/referral/register', referral(referrer.address), 400, 'REFERRAL_EXISTS');
    await e('GET', '/referral/0xabc', undefined, 400, 'INVALID_REQUEST');
    // Forced inclusion: unknown entry, payload not hex.
    await e('GET', '/force-include/999999', undefined, 404, 'NOT_FOUND');
    const fn = w.nextNonce();
    await e('POST', '/force-include', { user: w.address, payload: '0xzz', nonce: fn, signature: w.sign('x') }, 400, 'INVALID_REQUEST');
    // MARKET_PAUSED.
    await post('/admin/markets/BTC-USDC/pause', {}, 200, admin);
    await e('POST', '/orders', w.order({ market_id: 'BTC-USDC', side: 'bid', price: 30_000_000_000, quantity: 10 }), 400, 'MARKET_PAUSED');
    await post('/admin/markets/BTC-USDC/resume', {}, 200, admin);
  });

  it('every documented operation was answered 200 at least once', () => {
    const missing = operations.filter((o) => !exercised.get(o.key)?.has(200)).map((o) => o.key);
    expect(missing).toEqual([]);
    expect(checked_responses).toBeGreaterThan(80);
  });
});

describe('the validator catches drift', () => {
  const order_result = deref(spec.paths['/orders'].post.responses['200']).content['application/json'].schema;
  const good = {
    ok: true,
    data: {
      order_id: 7, client_order_id: '', status: 'filled', market_id: 'ETH-USDC', side: 'bid', order_type: 'limit',
      time_in_force: 'gtc', price: 2_001_000_000, quantity: 300, filled_quantity: 300, remaining_quantity: 0,
      last_fill_price: 2_000_010_000, created_at: '2026-11-22T08:43:11.123Z', updated_at: '2026-11-22T08:43:11.123Z',
      fills: [{ fill_id: 7, price: 2_000_010_000, quantity: 300, fee: 301, is_maker: false }], batch_id: '31',
    },
  };
  it('accepts the docs/api.md example and names the JSON pointer of each mismatch', () => {
    expect(validator.validate(good, order_result)).toEqual([]);
    const bad = structuredClone(good) as any;
    bad.data.extra = 1;
    delete bad.data.batch_id;
    bad.data.fills[0].fee = '301';
    bad.data.status = 'rejected';
    bad.data.created_at = '2026-11-22 08:43:11';
    const pointers = validator.validate(bad, order_result).map((x) => x.pointer).sort();
    expect(pointers).toEqual(['/data/batch_id', '/data/created_at', '/data/extra', '/data/fills/0/fee', '/data/status']);
  });
  it('checks the error envelopes (form A, form C) strictly', () => {
    const err = spec.components.schemas.Error;
    expect(validator.validate({ ok: false, error: 'NOT_FOUND', message: 'x', request_id: '3f9a0c71d2e4-1a' }, err)).toEqual([]);
    expect(validator.validate({ ok: false, error: 'RATE_LIMITED', message: 'x', request_id: '3f9a0c71d2e4-1a' }, err)).toHaveLength(1);
    const c = spec.components.schemas.RateLimitedError;
    expect(validator.validate({ ok: false, data: null, error: 'Too many' }, c)).toEqual([]);
    expect(validator.validate({ ok: false, data: null, error: 'Too many', request_id: 'x' }, c).map((x) => x.pointer)).toEqual(['/request_id']);
  });
});

describe('docs/openapi.yaml: the rate-limited form C', () => {
  it('429 with Retry-After and {ok:false,data:null,error} matches the documented RateLimited response', async () => {
    const s = await startServer({ config: { rate_limits: { gets_per_ip: 2, orders_per_wallet: 1 } } });
    try {
      const a = api(s.url);
      await call(a, 'GET', '/time', undefined, undefined, 200);
      await call(a, 'GET', '/markets', undefined, undefined, 200);
      const body = await call(a, 'GET', '/time', undefined, undefined, 429);
      expect(body).toMatchObject({ ok: false, data: null });
      const w = Wallet.random();
      expect((await deposit(s, w.address, 'USDC', '1000')).status).toBe(200);
      await call(a, 'POST', '/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 }), undefined, 200);
      await call(a, 'POST', '/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 }), undefined, 429);
      expect((await s.stop()).code).toBe(0);
    } finally {
      await s.stop();
    }
  });
});
