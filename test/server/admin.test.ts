// Operator endpoints on the real server: the admin token, admin state, markets, pause/resume,
// fees (global and per market, with exact fee arithmetic), credit limits and CREDIT_BREACH.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  adminHeaders, adminState, settledAdminState, balances, deposit, request, Wallet, type Api, type StartedServer,
} from './harness.js';
import { serverPerFile } from './per_file.js';
import { fail, fundedWallet, ok } from './checks.js';

let s: StartedServer;
let a: Api;
let admin: Record<string, string>;

serverPerFile((started, client) => {
  s = started;
  a = client;
  admin = adminHeaders(started);
});

const funded = (assets: Record<string, string>): Promise<Wallet> => fundedWallet(s, assets);

describe('UNAUTHORIZED (401)', () => {
  const addr = '0x' + '12'.repeat(20);
  const routes: [string, string, unknown][] = [
    ['GET', '/admin/state', undefined],
    ['GET', '/admin/memory', undefined],
    ['POST', '/admin/markets', { base: 'ETH', quote: 'BTC', tick_size: 100, lot_size: 10000 }],
    ['POST', '/admin/markets/ETH-USDC/pause', {}],
    ['POST', '/admin/markets/ETH-USDC/resume', {}],
    ['PUT', '/admin/fees', { maker_fee_bps: 0, taker_fee_bps: 0 }],
    ['PUT', '/admin/markets/ETH-USDC/fees', { maker_fee_bps: 0, taker_fee_bps: 0 }],
    ['PUT', `/admin/accounts/${addr}/credit`, { credit_limit: 1 }],
    ['POST', '/deposit', { user: addr, asset: 'USDC', amount: '1000000' }],
  ];

  it('every admin route refuses a missing, empty, wrong or wrong-case token, and nothing changes', async () => {
    const before = await settledAdminState(s);
    for (const [method, path, body] of routes) {
      const variants: Record<string, string>[] = [{}, { 'X-Admin-Token': '' }, { 'X-Admin-Token': 'wrong' }, { 'X-Admin-Token': s.admin_token.toUpperCase() },
        { 'X-Admin-Token': s.admin_token + ' x' }, { Authorization: `Bearer ${s.admin_token}` }];
      for (const headers of variants) {
        const r = await request(method, s.url + path, body, { headers, agent: false });
        fail(r, 401, 'UNAUTHORIZED');
      }
    }
    const after = await adminState(s);
    for (const k of ['batch_id', 'state_root', 'accounts', 'open_orders', 'markets']) expect(after[k]).toEqual(before[k]);
    expect(ok(await a.get('/markets')).every((m: any) => m.status === 'active')).toBe(true);
    expect((await balances(s, addr)).USDC.available).toBe(0);
  });
});

describe('GET /admin/state', () => {
  it('reports the engine vital signs', async () => {
    const st = ok(await a.get('/admin/state', admin));
    // DECISIONS names these; the server may add more vital signs.
    expect(Object.keys(st)).toEqual(expect.arrayContaining([
      'accounts', 'batch_id', 'markets', 'open_orders', 'operator_address', 'pending_forced_inclusions', 'rings', 'settlement',
      'state_root', 'journal_bytes',
    ]));
    expect(st.batch_id).toMatch(/^\d+$/);
    expect(st.operator_address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(st.settlement).toEqual({
      contract: '0xc0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0', chain_id: 31337,
      assets: {
        ETH: '0x0000000000000000000000000000000000000000',
        BTC: '0x2260fac5e5542a773aa44fbcfedf7c193bc2c599',
        USDC: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      },
      // No chain link configured (settlement.rpc_url null).
      link: null,
    });
    expect(st.markets[0]).toMatchObject({ id: 'ETH-USDC', status: 'active', maker_fee_bps: -1, taker_fee_bps: 5, tick_size: 10000, lot_size: 100 });
    expect(st.rings).toEqual({ request_ring: expect.any(Number), event_ring: expect.any(Number) });
    expect(typeof st.accounts).toBe('number');
    expect(typeof st.open_orders).toBe('number');
    expect(st.pending_forced_inclusions).toEqual([]);
  });

  it('journal_bytes is the size of the journal\'s files (data.mdb + wal.log)', async () => {
    // LMDB's file only grows (the storer may add pages between the stats): bounded by the sizes before and after.
    const sizes = (): number => ['data.mdb', 'wal.log'].reduce((n, f) => n + fs.statSync(path.join(s.data_dir, 'journal', f)).size, 0);
    const low = sizes();
    const st = ok(await a.get('/admin/state', admin));
    const high = sizes();
    expect(Number.isSafeInteger(st.journal_bytes)).toBe(true);
    expect(st.journal_bytes).toBeGreaterThanOrEqual(low);
    expect(st.journal_bytes).toBeLessThanOrEqual(high);
    // The preallocated write-ahead file alone is 4 MB.
    expect(st.journal_bytes).toBeGreaterThanOrEqual(4 * 1024 * 1024);
  });

  it('counts an account from its first deposit and open orders as they rest', async () => {
    const before = ok(await a.get('/admin/state', admin));
    const w = await funded({ USDC: '10' });
    ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 10_000, quantity: 100 })));
    const after = ok(await a.get('/admin/state', admin));
    expect(after.accounts).toBe(before.accounts + 1);
    expect(after.open_orders).toBe(before.open_orders + 1);
    expect(Number(after.batch_id)).toBeGreaterThan(Number(before.batch_id));
    ok(await a.post('/orders/cancel-all', w.cancelAll()));
  });
});

describe('GET /admin/memory', () => {
  it('splits the RSS and answers for the front, matcher and DA threads with their own heaps', async () => {
    const m = ok(await a.get('/admin/memory', admin));
    expect(m.rss_bytes).toBeGreaterThan(0);
    // Linux (CI): the split comes from /proc and adds up to no more than the RSS read at about the same time.
    expect(m.rss_anon_bytes).toBeGreaterThan(0);
    expect(m.rss_file_bytes).toBeGreaterThan(0);
    expect(m.rss_anon_bytes + m.rss_file_bytes).toBeLessThan(m.rss_bytes * 1.5);
    const names = m.threads.map((t: { thread: string }) => t.thread);
    expect(names).toEqual(expect.arrayContaining(['front', 'matcher', 'da']));
    expect(new Set(names).size).toBe(names.length);
    const ids = m.threads.map((t: { thread_id: number }) => t.thread_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const t of m.threads) {
      expect(t.heap_used_bytes).toBeGreaterThan(1 << 20);
      expect(t.heap_used_bytes).toBeLessThanOrEqual(t.heap_total_bytes);
    }
    // Each isolate reports its own heap: the three are not one number repeated.
    expect(new Set(m.threads.map((t: { heap_used_bytes: number }) => t.heap_used_bytes)).size).toBeGreaterThan(1);
  });
});

describe('POST /admin/markets', () => {
  it('lists a new market that trades at once', async () => {
    const m = ok(await a.post('/admin/markets', { id: 'ETH-BTC', base: 'ETH', quote: 'BTC', tick_size: 100, lot_size: 10_000 }, admin));
    expect(m).toEqual({
      id: 'ETH-BTC', base: 'ETH', quote: 'BTC', status: 'active', tick_size: 100, lot_size: 10_000,
      best_bid: null, best_ask: null, spread: null, last_price: null,
    });
    expect(ok(await a.get('/markets')).map((x: any) => x.id)).toEqual(['ETH-USDC', 'BTC-USDC', 'ETH-BTC']);
    expect(ok(await a.get('/markets/ETH-BTC/fees'))).toEqual({ market_id: 'ETH-BTC', maker_fee_bps: -1, taker_fee_bps: 5 });
    const w = await funded({ ETH: '1' });
    const o = ok(await a.post('/orders', w.order({ market_id: 'ETH-BTC', side: 'ask', price: 5_000_000, quantity: 20_000 })));
    expect(o.status).toBe('open');
    expect(ok(await a.get('/orderbook/ETH-BTC')).asks).toEqual([['5000000', '20000']]);
    ok(await a.post('/orders/cancel-all', w.cancelAll('ETH-BTC')));
  });

  it('the id may be omitted; refuses duplicates, bad sizes, unknown assets, a wrong id and unknown fields', async () => {
    const bad: [unknown, string, string][] = [
      [{ base: 'ETH', quote: 'USDC', tick_size: 10_000, lot_size: 100 }, 'INVALID_REQUEST', 'market already exists'],
      [{ base: 'BTC', quote: 'ETH', tick_size: 3, lot_size: 7 }, 'INVALID_REQUEST', 'multiple of 1,000,000'],
      [{ base: 'BTC', quote: 'ETH', tick_size: 0, lot_size: 1_000_000 }, 'INVALID_REQUEST', 'positive'],
      [{ base: 'DOGE', quote: 'USDC', tick_size: 1, lot_size: 1_000_000 }, 'INVALID_REQUEST', 'listed assets'],
      [{ base: 'ETH', quote: 'ETH', tick_size: 1, lot_size: 1_000_000 }, 'INVALID_REQUEST', 'asset'],
      [{ id: 'BTC-USDC', base: 'BTC', quote: 'ETH', tick_size: 1, lot_size: 1_000_000 }, 'INVALID_REQUEST', 'BASE-QUOTE'],
      [{ base: 'BTC', quote: 'ETH', tick_size: '1', lot_size: 1_000_000 }, 'INVALID_REQUEST', 'tick_size must be an integer'],
      [{ base: 'BTC', quote: 'ETH', tick_size: 1, lot_size: 1_000_000, status: 'active' }, 'INVALID_REQUEST', 'unknown field'],
    ];
    for (const [body, code, msg] of bad) fail(await a.post('/admin/markets', body, admin), 400, code, msg);
    expect(ok(await a.get('/markets')).map((x: any) => x.id)).toEqual(['ETH-USDC', 'BTC-USDC', 'ETH-BTC']);
    const m = ok(await a.post('/admin/markets', { base: 'BTC', quote: 'ETH', tick_size: 1000, lot_size: 1000 }, admin));
    expect(m.id).toBe('BTC-ETH');
  });
});

describe('pause and resume', () => {
  it('pause cancels every resting order of the market and refuses new ones with MARKET_PAUSED; resume reopens', async () => {
    const w = await funded({ USDC: '1000', ETH: '1' });
    const o1 = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_500_000_000, quantity: 100 })));
    const o2 = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_500_000_000, quantity: 100 })));
    const o3 = ok(await a.post('/orders', w.order({ market_id: 'BTC-USDC', side: 'bid', price: 10_000_000_000, quantity: 10 })));
    const p = ok(await a.post('/admin/markets/ETH-USDC/pause', {}, admin));
    expect(p).toMatchObject({ id: 'ETH-USDC', status: 'paused', best_bid: null, best_ask: null });
    const orders = ok(await a.get(`/account/${w.address}/orders?status=all`));
    const byId = new Map(orders.map((o: any) => [o.order_id, o.status]));
    expect(byId.get(o1.order_id)).toBe('cancelled');
    expect(byId.get(o2.order_id)).toBe('cancelled');
    expect(byId.get(o3.order_id)).toBe('open');
    expect(ok(await a.get('/orderbook/ETH-USDC'))).toMatchObject({ bids: [], asks: [] });
    const b = await balances(s, w.address);
    expect(b.ETH).toEqual({ available: 1_000_000, locked: 0 });
    expect(b.USDC.locked).toBe(100_000 + 50);
    expect(ok(await a.get('/markets')).find((m: any) => m.id === 'ETH-USDC').status).toBe('paused');
    const nonce_before = b.nonce_high_water;
    fail(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_500_000_000, quantity: 100 })), 400, 'MARKET_PAUSED', 'paused');
    fail(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', quantity: 100, order_type: 'market', time_in_force: 'ioc' })), 400, 'MARKET_PAUSED');
    expect((await balances(s, w.address)).nonce_high_water).toBe(nonce_before);
    // Pausing twice is fine; other markets trade on.
    ok(await a.post('/admin/markets/ETH-USDC/pause', {}, admin));
    ok(await a.post('/orders', w.order({ market_id: 'BTC-USDC', side: 'bid', price: 10_000_000_000, quantity: 10 })));
    const r = ok(await a.post('/admin/markets/ETH-USDC/resume', {}, admin));
    expect(r).toMatchObject({ id: 'ETH-USDC', status: 'active' });
    const o4 = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_500_000_000, quantity: 100 })));
    expect(o4.status).toBe('open');
    ok(await a.post('/orders/cancel-all', w.cancelAll()));
  });

  it('pausing an unknown market is MARKET_NOT_FOUND', async () => {
    fail(await a.post('/admin/markets/DOGE-USDC/pause', {}, admin), 404, 'MARKET_NOT_FOUND');
    fail(await a.post('/admin/markets/DOGE-USDC/resume', {}, admin), 404, 'MARKET_NOT_FOUND');
  });
});

describe('fees', () => {
  it('PUT /admin/fees sets the global fees; a positive maker fee is charged (exact arithmetic)', async () => {
    const f = ok(await a.put('/admin/fees', { maker_fee_bps: 2, taker_fee_bps: 10 }, admin));
    expect(f).toEqual({ maker_fee_bps: 2, taker_fee_bps: 10 });
    expect(ok(await a.get('/fees'))).toEqual({ maker_fee_bps: 2, taker_fee_bps: 10 });
    expect(ok(await a.get('/markets/ETH-USDC/fees'))).toEqual({ market_id: 'ETH-USDC', maker_fee_bps: 2, taker_fee_bps: 10 });
    const maker = await funded({ ETH: '1' });
    const taker = await funded({ USDC: '10' });
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_010_000, quantity: 300 })));
    const t = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_010_000, quantity: 300 })));
    // notional 600003; taker ceil(600.003) = 601; maker ceil(120.0006) = 121.
    expect(t.fills).toEqual([{ fill_id: expect.any(Number), price: 2_000_010_000, quantity: 300, fee: 601, is_maker: false }]);
    const tb = await balances(s, taker.address);
    const mb = await balances(s, maker.address);
    expect(tb.USDC).toEqual({ available: 10_000_000 - 600_003 - 601, locked: 0 });
    expect(mb.USDC).toEqual({ available: 600_003 - 121, locked: 0 });
    expect(ok(await a.get(`/account/${maker.address}/fills`))[0]).toMatchObject({ fee: 121, is_maker: true });
    // Fee account: 10 USDC in, users hold the rest.
    expect(10_000_000 - tb.USDC.available - mb.USDC.available).toBe(601 + 121);
  });

  it('PUT /admin/markets/:id/fees overrides one market only', async () => {
    const f = ok(await a.put('/admin/markets/BTC-USDC/fees', { maker_fee_bps: 0, taker_fee_bps: 20 }, admin));
    expect(f).toEqual({ market_id: 'BTC-USDC', maker_fee_bps: 0, taker_fee_bps: 20 });
    expect(ok(await a.get('/markets/BTC-USDC/fees'))).toEqual({ market_id: 'BTC-USDC', maker_fee_bps: 0, taker_fee_bps: 20 });
    expect(ok(await a.get('/fees'))).toEqual({ maker_fee_bps: 2, taker_fee_bps: 10 });
    expect(ok(await a.get('/markets/ETH-USDC/fees'))).toEqual({ market_id: 'ETH-USDC', maker_fee_bps: 2, taker_fee_bps: 10 });
    const maker = await funded({ USDC: '10' });
    const taker = await funded({ BTC: '0.01' });
    ok(await a.post('/orders', maker.order({ market_id: 'BTC-USDC', side: 'bid', price: 30_000_100_000, quantity: 130 })));
    // The bid locks notional + the market's taker fee: 3900013 + ceil(7800.026) = 7801.
    expect((await balances(s, maker.address)).USDC.locked).toBe(3_900_013 + 7801);
    const t = ok(await a.post('/orders', taker.order({ market_id: 'BTC-USDC', side: 'ask', price: 30_000_100_000, quantity: 130, time_in_force: 'ioc' })));
    expect(t.fills[0]).toMatchObject({ fee: 7801, quantity: 130 });
    expect((await balances(s, taker.address)).USDC.available).toBe(3_900_013 - 7801);
    expect((await balances(s, maker.address)).USDC).toEqual({ available: 10_000_000 - 3_900_013, locked: 0 });
    // A later global change does not touch the override.
    ok(await a.put('/admin/fees', { maker_fee_bps: -1, taker_fee_bps: 5 }, admin));
    expect(ok(await a.get('/markets/BTC-USDC/fees'))).toEqual({ market_id: 'BTC-USDC', maker_fee_bps: 0, taker_fee_bps: 20 });
    expect(ok(await a.get('/markets/ETH-USDC/fees'))).toEqual({ market_id: 'ETH-USDC', maker_fee_bps: -1, taker_fee_bps: 5 });
    ok(await a.put('/admin/markets/BTC-USDC/fees', { maker_fee_bps: -1, taker_fee_bps: 5 }, admin));
  });

  it('refuses invalid fees and leaves them unchanged', async () => {
    const bad: unknown[] = [
      { maker_fee_bps: -6, taker_fee_bps: 5 }, { maker_fee_bps: 0, taker_fee_bps: 10_001 }, { maker_fee_bps: -10_001, taker_fee_bps: 10_001 },
      { maker_fee_bps: 6, taker_fee_bps: 5 },
    ];
    for (const b of bad) fail(await a.put('/admin/fees', b, admin), 400, 'INVALID_REQUEST', 'fees must satisfy');
    fail(await a.put('/admin/fees', { maker_fee_bps: 1.5, taker_fee_bps: 5 }, admin), 400, 'INVALID_REQUEST', 'maker_fee_bps must be an integer');
    fail(await a.put('/admin/fees', { taker_fee_bps: 5 }, admin), 400, 'INVALID_REQUEST', 'maker_fee_bps');
    fail(await a.put('/admin/fees', { maker_fee_bps: 1, taker_fee_bps: 5, extra: 1 }, admin), 400, 'INVALID_REQUEST', 'unknown field');
    fail(await a.put('/admin/markets/NOPE-USDC/fees', { maker_fee_bps: 1, taker_fee_bps: 5 }, admin), 404, 'MARKET_NOT_FOUND');
    expect(ok(await a.get('/fees'))).toEqual({ maker_fee_bps: -1, taker_fee_bps: 5 });
  });
});

describe('credit', () => {
  it('PUT /admin/accounts/:a/credit, utilization in balances, CREDIT_BREACH at 1.0', async () => {
    const mm = await funded({ ETH: '10', BTC: '1' });
    const set = ok(await a.put(`/admin/accounts/${mm.address}/credit`, { credit_limit: 1_000_000_000, auto_cancel_ratio: 0.95 }, admin));
    expect(set).toEqual({ address: mm.address, credit_limit: 1_000_000_000, auto_cancel_ratio: 0.95 });
    expect((await balances(s, mm.address)).credit).toEqual({ credit_limit: 1_000_000_000, auto_cancel_ratio: 0.95, quoted_value: 0, utilization: 0 });

    // A market without trades values resting orders at their own price: 2 ETH at 50 (ETH-BTC) = 100.
    const listed = await a.post('/admin/markets', { base: 'ETH', quote: 'BTC', tick_size: 100, lot_size: 10_000 }, admin);
    expect([200, 400]).toContain(listed.status);
    const q0 = ok(await a.post('/orders', mm.order({ market_id: 'ETH-BTC', side: 'ask', price: 50_000_000, quantity: 2_000_000 })));
    const c0 = (await balances(s, mm.address)).credit;
    expect(c0.quoted_value).toBe(100_000_000);
    expect(c0.utilization).toBeCloseTo(0.1, 12);
    ok(await a.post('/orders/cancel', mm.cancel({ order_id: q0.order_id })));

    // A market with trades values them at the mark (last trade price), whatever the order's price.
    const buyer = await funded({ USDC: '1000' });
    const seller = await funded({ BTC: '0.001' });
    ok(await a.post('/orders', seller.order({ market_id: 'BTC-USDC', side: 'ask', price: 40_000_000_000, quantity: 10 })));
    expect(ok(await a.post('/orders', buyer.order({ market_id: 'BTC-USDC', side: 'bid', price: 40_000_000_000, quantity: 10, time_in_force: 'ioc' }))).status).toBe('filled');
    const q1 = ok(await a.post('/orders', mm.order({ market_id: 'BTC-USDC', side: 'ask', price: 50_000_000_000, quantity: 10_000 })));
    const c1 = (await balances(s, mm.address)).credit;
    expect(c1.quoted_value).toBe(400_000_000); // 0.01 BTC x 40000 (mark), not x 50000
    expect(c1.utilization).toBeCloseTo(0.4, 12);
    // Up to 999.6 is fine; reaching 1000 is CREDIT_BREACH.
    const q2 = ok(await a.post('/orders', mm.order({ market_id: 'BTC-USDC', side: 'ask', price: 50_000_000_000, quantity: 14_990 })));
    expect((await balances(s, mm.address)).credit.quoted_value).toBe(999_600_000);
    const before = await balances(s, mm.address);
    fail(await a.post('/orders', mm.order({ market_id: 'BTC-USDC', side: 'ask', price: 50_000_000_000, quantity: 10 })), 400, 'CREDIT_BREACH', 'credit utilization to 1.0');
    expect(await balances(s, mm.address)).toEqual(before);
    // IOC orders never rest, so they are not credit-checked.
    const ioc = ok(await a.post('/orders', mm.order({ market_id: 'BTC-USDC', side: 'ask', price: 50_000_000_000, quantity: 10, time_in_force: 'ioc' })));
    expect(ioc.status).toBe('cancelled');
    ok(await a.post('/orders/cancel', mm.cancel({ order_id: q2.order_id })));
    expect((await balances(s, mm.address)).credit.quoted_value).toBe(400_000_000);
    ok(await a.post('/orders/cancel', mm.cancel({ order_id: q1.order_id })));
    // Limit 0 stops tracking.
    ok(await a.put(`/admin/accounts/${mm.address}/credit`, { credit_limit: 0 }, admin));
    expect((await balances(s, mm.address)).credit).toBeNull();
  });

  it('a fill that pushes utilization past the ratio cancels every resting order of the account', async () => {
    const mm = await funded({ USDC: '1000' });
    const taker = await funded({ ETH: '1' });
    ok(await a.put(`/admin/accounts/${mm.address}/credit`, { credit_limit: 100_000_000, auto_cancel_ratio: 0.5 }, admin));
    const p = 20_000_000_000;
    const b1 = ok(await a.post('/orders', mm.order({ market_id: 'ETH-USDC', side: 'bid', price: p, quantity: 1000 })));
    // A fill at 20000 sets the mark: 900 units left x 20000 = 18 USDC (U = 0.18 < 0.5, no cancel).
    ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'ask', price: p, quantity: 100, time_in_force: 'ioc' })));
    expect((await balances(s, mm.address)).credit.utilization).toBeCloseTo(0.18, 12);
    const b2 = ok(await a.post('/orders', mm.order({ market_id: 'ETH-USDC', side: 'bid', price: p, quantity: 1000 })));
    // U = 0.78: above the ratio but below 1.0, so placing is allowed (the ratio acts on fills).
    const b3 = ok(await a.post('/orders', mm.order({ market_id: 'ETH-USDC', side: 'bid', price: p, quantity: 2000 })));
    expect(b3.status).toBe('open');
    expect((await balances(s, mm.address)).credit.utilization).toBeCloseTo(0.78, 12);
    // The next fill leaves U = 0.76 > 0.5: every resting order of the account is cancelled.
    ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'ask', price: p, quantity: 100, time_in_force: 'ioc' })));
    const all = ok(await a.get(`/account/${mm.address}/orders?status=all`));
    for (const id of [b1.order_id, b2.order_id, b3.order_id]) {
      expect(all.find((o: any) => o.order_id === id).status).toBe('cancelled');
    }
    expect(ok(await a.get(`/account/${mm.address}/orders`))).toEqual([]);
    const b = await balances(s, mm.address);
    expect(b.USDC.locked).toBe(0);
    expect(b.credit.quoted_value).toBe(0);
    expect(b.credit.utilization).toBe(0);
  });

  it('refuses bad credit settings', async () => {
    const w = await funded({ USDC: '1' });
    fail(await a.put(`/admin/accounts/${w.address}/credit`, { credit_limit: 10, auto_cancel_ratio: 0 }, admin), 400, 'INVALID_REQUEST', 'auto_cancel_ratio');
    fail(await a.put(`/admin/accounts/${w.address}/credit`, { credit_limit: 10, auto_cancel_ratio: 1.5 }, admin), 400, 'INVALID_REQUEST', 'auto_cancel_ratio');
    fail(await a.put(`/admin/accounts/${w.address}/credit`, { credit_limit: 10, auto_cancel_ratio: '0.5' }, admin), 400, 'INVALID_REQUEST', 'auto_cancel_ratio');
    fail(await a.put(`/admin/accounts/${w.address}/credit`, { credit_limit: '10' }, admin), 400, 'INVALID_REQUEST', 'credit_limit must be an integer');
    fail(await a.put(`/admin/accounts/${w.address}/credit`, { credit_limit: 10, x: 1 }, admin), 400, 'INVALID_REQUEST', 'unknown field');
    fail(await a.put('/admin/accounts/0x12/credit', { credit_limit: 10 }, admin), 400, 'INVALID_REQUEST', 'address');
    expect((await balances(s, w.address)).credit).toBeNull();
  });

  // A SET_CREDIT the engine rejects must not reach the read model (no CREDIT event).
  it('a rejected credit setting (negative limit) leaves the reported credit unchanged', async () => {
    const w = await funded({ USDC: '1' });
    fail(await a.put(`/admin/accounts/${w.address}/credit`, { credit_limit: -5 }, admin), 400, 'INVALID_REQUEST', 'credit_limit');
    expect((await balances(s, w.address)).credit).toBeNull();
  });

  it('a rejected credit setting (ratio rounding to 0 ppm) leaves the reported credit unchanged', async () => {
    const w = await funded({ USDC: '1' });
    ok(await a.put(`/admin/accounts/${w.address}/credit`, { credit_limit: 100, auto_cancel_ratio: 0.5 }, admin));
    fail(await a.put(`/admin/accounts/${w.address}/credit`, { credit_limit: 100, auto_cancel_ratio: 0.0000001 }, admin), 400, 'INVALID_REQUEST');
    expect((await balances(s, w.address)).credit).toMatchObject({ credit_limit: 100, auto_cancel_ratio: 0.5 });
  });
});

describe('POST /deposit (admin token)', () => {
  it('refuses bad amounts, assets and users with INVALID_REQUEST', async () => {
    const w = await funded({ USDC: '1' });
    for (const amount of ['1.1234567', '-1', '1e3', '', ' 1', '1,5', '.5', 'abc', '0x10']) {
      fail(await deposit(s, w.address, 'USDC', amount), 400, 'INVALID_REQUEST', 'amount');
    }
    fail(await a.post('/deposit', { user: w.address, asset: 'USDC', amount: 5 }, admin), 400, 'INVALID_REQUEST', 'amount must be a decimal string');
    fail(await deposit(s, w.address, 'DOGE', '1'), 400, 'INVALID_REQUEST', 'asset must be one of ETH, BTC, USDC');
    fail(await deposit(s, '0x123', 'USDC', '1'), 400, 'INVALID_REQUEST', 'user');
    fail(await deposit(s, w.address, 'USDC', '0'), 400, 'INVALID_REQUEST', 'amount must be positive');
    fail(await deposit(s, w.address, 'USDC', '9007199254.740992'), 400, 'INVALID_REQUEST');
    expect((await balances(s, w.address)).USDC).toEqual({ available: 1_000_000, locked: 0 });
  });

  // A refused deposit must not register the address (hostile zero deposits cannot fill the registry).
  it('a rejected zero deposit does not create an account', async () => {
    const fresh = Wallet.random();
    const before = (await adminState(s)).accounts;
    fail(await deposit(s, fresh.address, 'USDC', '0'), 400, 'INVALID_REQUEST', 'amount must be positive');
    expect((await adminState(s)).accounts).toBe(before);
  });
});
