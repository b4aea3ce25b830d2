// Trading on the real server: both order message forms, exact balances and fees after a match,
// fills and trades, cancel (by id and client id), amend, cancel-all, market orders, order reads.
import { describe, expect, it } from 'vitest';
import { balances, deposit, Wallet, type Api, type StartedServer } from './harness.js';
import { serverPerFile } from './per_file.js';
import { fail, fundedWallet, ok } from './checks.js';

let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const funded = (assets: Record<string, string>): Promise<Wallet> => fundedWallet(s, assets);

/** Fee account balance of `asset`, from conservation: deposits - withdrawals - every user balance. */
function feeAccount(total_in: number, users: any[], asset: string): number {
  let sum = 0;
  for (const b of users) sum += b[asset].available + b[asset].locked;
  return total_in - sum;
}

describe('POST /deposit', () => {
  it('credits available balance and answers the new balance (amount in units)', async () => {
    const w = Wallet.random();
    const d = ok(await deposit(s, w.address, 'USDC', '1234.5'));
    expect(d).toEqual({
      user: w.address, asset: 'USDC', amount: 1_234_500_000,
      balance: { available: 1_234_500_000, locked: 0 }, batch_id: expect.stringMatching(/^[1-9]\d*$/),
    });
    const d2 = ok(await deposit(s, w.address, 'USDC', '0.000001'));
    expect(d2.balance).toEqual({ available: 1_234_500_001, locked: 0 });
    const b = await balances(s, w.address);
    expect(b).toEqual({
      ETH: { available: 0, locked: 0 }, BTC: { available: 0, locked: 0 }, USDC: { available: 1_234_500_001, locked: 0 },
      nonce_high_water: 0, envelope_nonce_high_water: 0, credit: null,
    });
  });

  it('accepts a mixed-case user and answers it lowercase', async () => {
    const w = Wallet.random();
    const mixed = '0x' + w.address.slice(2).toUpperCase();
    const d = ok(await deposit(s, mixed, 'ETH', '2'));
    expect(d.user).toBe(w.address);
    expect((await balances(s, w.address)).ETH.available).toBe(2_000_000);
  });
});

describe('a match, with exact balances and fees (maker -1 bps, taker 5 bps)', () => {
  it('taker buys: notional, taker fee rounded up, maker rebate rounded down, fee account gets the rest', async () => {
    const maker = await funded({ ETH: '10', USDC: '1000' });
    const taker = await funded({ USDC: '100000', ETH: '1' });
    // Maker: ask 0.0003 ETH at 2000.01 USDC, signed in the colon form.
    const placed = ok(await a.post('/orders', maker.order(
      { market_id: 'ETH-USDC', side: 'ask', price: 2_000_010_000, quantity: 300, client_order_id: 'm-ask-1' }, { form: 'colon' })));
    expect(placed).toEqual({
      order_id: expect.any(Number), client_order_id: 'm-ask-1', status: 'open', market_id: 'ETH-USDC', side: 'ask',
      order_type: 'limit', time_in_force: 'gtc', price: 2_000_010_000, quantity: 300, filled_quantity: 0,
      remaining_quantity: 300, last_fill_price: 0, created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO),
      fills: [], batch_id: expect.stringMatching(/^\d+$/),
    });
    expect((await balances(s, maker.address)).ETH).toEqual({ available: 10_000_000 - 300, locked: 300 });
    const book = ok(await a.get('/orderbook/ETH-USDC'));
    expect(book.asks).toContainEqual(['2000010000', '300']);

    // Taker: bid 0.0003 at 2001.00, compact JSON form; fills at the maker's price.
    const taken = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_001_000_000, quantity: 300 })));
    // notional = 2000.01 x 0.0003 = 0.600003 USDC = 600003 units; taker fee ceil(600003 x 5 / 10000) = 301;
    // maker rebate floor(600003 x 1 / 10000) = 60; fee account + 301 - 60 = 241.
    expect(taken).toMatchObject({
      status: 'filled', side: 'bid', price: 2_001_000_000, quantity: 300, filled_quantity: 300, remaining_quantity: 0,
      last_fill_price: 2_000_010_000, client_order_id: '',
    });
    expect(taken.fills).toEqual([{ fill_id: expect.any(Number), price: 2_000_010_000, quantity: 300, fee: 301, is_maker: false }]);
    const tb = await balances(s, taker.address);
    const mb = await balances(s, maker.address);
    expect(tb.USDC).toEqual({ available: 100_000_000_000 - 600_003 - 301, locked: 0 });
    expect(tb.ETH).toEqual({ available: 1_000_000 + 300, locked: 0 });
    expect(mb.ETH).toEqual({ available: 10_000_000 - 300, locked: 0 });
    expect(mb.USDC).toEqual({ available: 1_000_000_000 + 600_003 + 60, locked: 0 });
    expect(feeAccount(101_000_000_000, [tb, mb], 'USDC')).toBe(241);
    expect(feeAccount(11_000_000, [tb, mb], 'ETH')).toBe(0);
    expect(tb.nonce_high_water).toBe(1);
    expect(mb.nonce_high_water).toBe(1);

    // Fills of both sides.
    const tf = ok(await a.get(`/account/${taker.address}/fills`));
    const mf = ok(await a.get(`/account/${maker.address}/fills`));
    const fill_id = taken.fills[0].fill_id;
    expect(tf).toEqual([{
      fill_id, order_id: taken.order_id, market_id: 'ETH-USDC', side: 'bid', price: 2_000_010_000, quantity: 300,
      fee: 301, is_maker: false, batch_id: taken.batch_id, timestamp: expect.stringMatching(ISO),
    }]);
    expect(mf).toEqual([{
      fill_id, order_id: placed.order_id, market_id: 'ETH-USDC', side: 'ask', price: 2_000_010_000, quantity: 300,
      fee: -60, is_maker: true, batch_id: taken.batch_id, timestamp: expect.stringMatching(ISO),
    }]);

    // Public trade, side of the taker; last price in /markets.
    const trades = ok(await a.get('/trades/ETH-USDC'));
    expect(trades[0]).toEqual({
      trade_id: String(fill_id), market_id: 'ETH-USDC', price: '2000010000', quantity: '300', side: 'bid',
      timestamp: expect.stringMatching(ISO),
    });
    const m = ok(await a.get('/markets')).find((x: any) => x.id === 'ETH-USDC');
    expect(m.last_price).toBe('2000.01');
    // The maker's order reads back as filled.
    const mo = ok(await a.get(`/account/${maker.address}/orders/by-client-id/m-ask-1`));
    expect(mo).toMatchObject({ order_id: placed.order_id, status: 'filled', filled_quantity: 300, remaining_quantity: 0, last_fill_price: 2_000_010_000 });
    expect(mo.fills).toBeUndefined();
  });

  it('taker sells into a resting bid: the bid lock is notional + worst-case taker fee, released after the fill', async () => {
    const maker = await funded({ USDC: '500' });
    const taker = await funded({ BTC: '0.001' });
    // Bid 0.00013 BTC at 30000.1: notional 3.900013 USDC = 3900013 units; lock + ceil(3900013 x 5 / 10000) = 1951.
    const bid = ok(await a.post('/orders', maker.order({ market_id: 'BTC-USDC', side: 'bid', price: 30_000_100_000, quantity: 130 })));
    expect(bid.status).toBe('open');
    expect((await balances(s, maker.address)).USDC).toEqual({ available: 500_000_000 - 3_900_013 - 1951, locked: 3_900_013 + 1951 });
    const ask = ok(await a.post('/orders', taker.order(
      { market_id: 'BTC-USDC', side: 'ask', price: 30_000_000_000, quantity: 130, time_in_force: 'ioc' }, { form: 'colon' })));
    expect(ask).toMatchObject({ status: 'filled', time_in_force: 'ioc', filled_quantity: 130, last_fill_price: 30_000_100_000 });
    // Seller (taker) pays ceil(3900013 x 5 / 10000) = 1951 out of the notional; maker rebate floor(390.0013) = 390.
    expect(ask.fills).toEqual([{ fill_id: expect.any(Number), price: 30_000_100_000, quantity: 130, fee: 1951, is_maker: false }]);
    const tb = await balances(s, taker.address);
    const mb = await balances(s, maker.address);
    expect(tb.BTC).toEqual({ available: 1000 - 130, locked: 0 });
    expect(tb.USDC).toEqual({ available: 3_900_013 - 1951, locked: 0 });
    expect(mb.BTC).toEqual({ available: 130, locked: 0 });
    expect(mb.USDC).toEqual({ available: 500_000_000 - 3_900_013 + 390, locked: 0 });
    expect(feeAccount(500_000_000, [tb, mb], 'USDC')).toBe(1951 - 390);
    const mf = ok(await a.get(`/account/${maker.address}/fills`));
    expect(mf[0]).toMatchObject({ side: 'bid', is_maker: true, fee: -390, order_id: bid.order_id });
  });

  it('a partial fill leaves the maker partially_filled and the rest on the book', async () => {
    const maker = await funded({ BTC: '1' });
    const taker = await funded({ USDC: '100000' });
    const ask = ok(await a.post('/orders', maker.order({ market_id: 'BTC-USDC', side: 'ask', price: 45_000_000_000, quantity: 1000 })));
    const bid = ok(await a.post('/orders', taker.order({ market_id: 'BTC-USDC', side: 'bid', price: 45_000_000_000, quantity: 400, time_in_force: 'fok' })));
    expect(bid).toMatchObject({ status: 'filled', filled_quantity: 400, time_in_force: 'fok' });
    const mo = ok(await a.get(`/account/${maker.address}/orders`));
    expect(mo).toEqual([expect.objectContaining({ order_id: ask.order_id, status: 'partially_filled', filled_quantity: 400, remaining_quantity: 600 })]);
    expect(ok(await a.get('/orderbook/BTC-USDC')).asks).toContainEqual(['45000000000', '600']);
    expect((await balances(s, maker.address)).BTC).toEqual({ available: 1_000_000 - 1000, locked: 600 });
    // Clean up so later tests see no crossing levels.
    ok(await a.post('/orders/cancel', maker.cancel({ order_id: ask.order_id })));
  });

  it('no self-trades: a wallet\'s bid meeting its own ask cancels the ask (stp expire_maker, the default)', async () => {
    const w = await funded({ ETH: '1', USDC: '10000' });
    const ask = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'ask', price: 3_333_330_000, quantity: 100 })));
    const bid = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 3_333_330_000, quantity: 100, time_in_force: 'ioc' })));
    expect(bid.status).toBe('cancelled');
    expect(bid.fills).toEqual([]);
    expect(ok(await a.get(`/account/${w.address}/fills`))).toEqual([]);
    const orders = ok(await a.get(`/account/${w.address}/orders?status=cancelled`));
    expect(orders.map((o: any) => o.order_id).sort()).toEqual([ask.order_id, bid.order_id].sort());
    const b = await balances(s, w.address);
    expect(b.USDC).toEqual({ available: 10_000_000_000, locked: 0 });
    expect(b.ETH).toEqual({ available: 1_000_000, locked: 0 });
  });
});

describe('market orders', () => {
  it('a market bid (ioc, no price) pays from available and fills at the resting prices', async () => {
    const maker = await funded({ ETH: '1' });
    const taker = await funded({ USDC: '10' });
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 4_000_000_000, quantity: 300 })));
    // Market bids sign price 0.
    const mkt = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', quantity: 100, order_type: 'market', time_in_force: 'ioc' })));
    expect(mkt).toMatchObject({ order_type: 'market', time_in_force: 'ioc', price: 0, status: 'filled', filled_quantity: 100 });
    expect(mkt.fills).toEqual([{ fill_id: expect.any(Number), price: 4_000_000_000, quantity: 100, fee: 200, is_maker: false }]);
    expect((await balances(s, taker.address)).USDC).toEqual({ available: 10_000_000 - 400_000 - 200, locked: 0 });
    // The colon form works for market orders too (price 0 in the message).
    const mkt2 = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', quantity: 100, order_type: 'market', time_in_force: 'ioc' }, { form: 'colon' })));
    expect(mkt2.status).toBe('filled');
    ok(await a.post('/orders/cancel-all', maker.cancelAll()));
  });

  it('a market bid stops when the next lot would exceed available quote; the rest is cancelled', async () => {
    const maker = await funded({ ETH: '1' });
    const taker = await funded({ USDC: '0.5' });
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 4_100_000_000, quantity: 1000 })));
    const mkt = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', quantity: 1000, order_type: 'market', time_in_force: 'ioc' })));
    // 0.5 USDC buys 100 units (0.41 + fee); 200 units would cost 0.82.
    expect(mkt).toMatchObject({ status: 'cancelled', filled_quantity: 100, remaining_quantity: 0 });
    expect((await balances(s, taker.address)).USDC).toEqual({ available: 500_000 - 410_000 - 205, locked: 0 });
    ok(await a.post('/orders/cancel-all', maker.cancelAll()));
  });

  it('a FOK that cannot fill completely is accepted and cancelled with no fills (nonce advanced)', async () => {
    const taker = await funded({ ETH: '5' });
    const bidder = await funded({ USDC: '10' });
    ok(await a.post('/orders', bidder.order({ market_id: 'ETH-USDC', side: 'bid', price: 10_000, quantity: 100 })));
    const r = ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'ask', quantity: 5_000_000, order_type: 'market', time_in_force: 'fok' })));
    expect(r).toMatchObject({ status: 'cancelled', filled_quantity: 0, fills: [] });
    const b = await balances(s, taker.address);
    expect(b.ETH).toEqual({ available: 5_000_000, locked: 0 });
    expect(b.nonce_high_water).toBe(1);
    ok(await a.post('/orders/cancel-all', bidder.cancelAll()));
  });
});

describe('nonces under concurrency', () => {
  it('two orders with the same nonce sent at once: exactly one is accepted', async () => {
    const w = await funded({ USDC: '100' });
    const n = 42;
    const b1 = w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 }, { nonce: n });
    const b2 = w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_010_000_000, quantity: 100 }, { nonce: n });
    const rs = await Promise.all([a.post('/orders', b1), a.post('/orders', b2), a.post('/orders', b1)]);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    for (const r of rs.filter((x) => x.status === 400)) fail(r, 400, 'DUPLICATE_NONCE');
    expect(ok(await a.get(`/account/${w.address}/orders`))).toHaveLength(1);
    w.skipTo(n);
    ok(await a.post('/orders/cancel-all', w.cancelAll()));
  });

  it('a market FOK bid whose total cost exceeds available quote is INSUFFICIENT_BALANCE', async () => {
    const maker = await funded({ ETH: '1' });
    const taker = await funded({ USDC: '1' });
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 8_000_000_000, quantity: 1000 })));
    fail(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', quantity: 1000, order_type: 'market', time_in_force: 'fok' })), 400, 'INSUFFICIENT_BALANCE');
    expect((await balances(s, taker.address))).toMatchObject({ USDC: { available: 1_000_000, locked: 0 }, nonce_high_water: 0 });
    ok(await a.post('/orders/cancel-all', maker.cancelAll()));
  });
});

describe('POST /orders/cancel', () => {
  it('cancels by order id (string or integer) and releases the lock', async () => {
    const w = await funded({ USDC: '100' });
    const o = ok(await a.post('/orders', w.order({ market_id: 'BTC-USDC', side: 'bid', price: 29_000_000_000, quantity: 100, client_order_id: 'c-1' })));
    // 2.9 USDC + ceil(1450) fee locked.
    expect((await balances(s, w.address)).USDC).toEqual({ available: 100_000_000 - 2_901_450, locked: 2_901_450 });
    const c = ok(await a.post('/orders/cancel', w.cancel({ order_id: String(o.order_id) })));
    expect(c).toEqual({
      order_id: o.order_id, client_order_id: 'c-1', status: 'cancelled', market_id: 'BTC-USDC', side: 'bid', order_type: 'limit',
      time_in_force: 'gtc', price: 29_000_000_000, quantity: 100, filled_quantity: 0, remaining_quantity: 0, last_fill_price: 0,
      created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO), batch_id: expect.stringMatching(/^\d+$/),
    });
    const b = await balances(s, w.address);
    expect(b.USDC).toEqual({ available: 100_000_000, locked: 0 });
    expect(b.nonce_high_water).toBe(2);
    // Order id as a JSON integer works too (the message writes it in decimal).
    const o2 = ok(await a.post('/orders', w.order({ market_id: 'BTC-USDC', side: 'bid', price: 29_000_000_000, quantity: 100 })));
    const nonce = w.nextNonce();
    const body = { user: w.address, order_id: o2.order_id, client_order_id: '', nonce, signature: w.sign(`ringbook:cancel:${o2.order_id}::${nonce}`) };
    expect(ok(await a.post('/orders/cancel', body)).status).toBe('cancelled');
  });

  it('cancels by client order id alone (order_id omitted, signed as empty)', async () => {
    const w = await funded({ ETH: '1' });
    const o = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'ask', price: 9_000_000_000, quantity: 100, client_order_id: 'q_2-B' })));
    const c = ok(await a.post('/orders/cancel', w.cancel({ client_order_id: 'q_2-B' })));
    expect(c).toMatchObject({ order_id: o.order_id, status: 'cancelled', client_order_id: 'q_2-B' });
    expect(ok(await a.get(`/account/${w.address}/orders/by-client-id/q_2-B`)).status).toBe('cancelled');
    expect((await balances(s, w.address)).ETH).toEqual({ available: 1_000_000, locked: 0 });
    // The client id is free again for a new open order.
    const o2 = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'ask', price: 9_000_000_000, quantity: 100, client_order_id: 'q_2-B' })));
    expect(ok(await a.get(`/account/${w.address}/orders/by-client-id/q_2-B`)).order_id).toBe(o2.order_id);
    ok(await a.post('/orders/cancel', w.cancel({ order_id: o2.order_id, client_order_id: 'q_2-B' })));
  });

  it('an unknown, closed or foreign order is NOT_FOUND and changes nothing', async () => {
    const w = await funded({ ETH: '1' });
    const other = await funded({ ETH: '1' });
    const o = ok(await a.post('/orders', other.order({ market_id: 'ETH-USDC', side: 'ask', price: 9_500_000_000, quantity: 100, client_order_id: 'x' })));
    fail(await a.post('/orders/cancel', w.cancel({ order_id: 999_999 })), 404, 'NOT_FOUND');
    fail(await a.post('/orders/cancel', w.cancel({ order_id: o.order_id })), 404, 'NOT_FOUND');
    fail(await a.post('/orders/cancel', w.cancel({ client_order_id: 'x' })), 404, 'NOT_FOUND');
    // Right id, wrong client id.
    fail(await a.post('/orders/cancel', other.cancel({ order_id: o.order_id, client_order_id: 'y' })), 404, 'NOT_FOUND');
    expect((await balances(s, w.address)).nonce_high_water).toBe(0);
    ok(await a.post('/orders/cancel', other.cancel({ order_id: o.order_id })));
    fail(await a.post('/orders/cancel', other.cancel({ order_id: o.order_id })), 404, 'NOT_FOUND');
  });
});

describe('POST /orders/amend', () => {
  it('re-prices and re-sizes an open bid, re-setting its lock', async () => {
    const w = await funded({ USDC: '100' });
    const o = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_900_000_000, quantity: 1000 })));
    expect((await balances(s, w.address)).USDC.locked).toBe(1_900_000 + 950);
    const am = ok(await a.post('/orders/amend', w.amend({ order_id: o.order_id, price: 1_800_000_000, quantity: 500 })));
    expect(am).toMatchObject({ order_id: o.order_id, status: 'open', price: 1_800_000_000, quantity: 500, remaining_quantity: 500, filled_quantity: 0, fills: [] });
    expect(am.batch_id).toMatch(/^\d+$/);
    expect((await balances(s, w.address)).USDC).toEqual({ available: 100_000_000 - 900_450, locked: 900_450 });
    const book = ok(await a.get('/orderbook/ETH-USDC'));
    expect(book.bids).toContainEqual(['1800000000', '500']);
    expect(book.bids.find((l: string[]) => l[0] === '1900000000')).toBeUndefined();
    ok(await a.post('/orders/cancel', w.cancel({ order_id: o.order_id })));
  });

  it('amending a partially filled order: the new quantity is the open quantity, quantity = filled + new', async () => {
    const maker = await funded({ BTC: '1' });
    const taker = await funded({ USDC: '1000' });
    const p = 60_000_000_000;
    const o = ok(await a.post('/orders', maker.order({ market_id: 'BTC-USDC', side: 'ask', price: p, quantity: 1000 })));
    ok(await a.post('/orders', taker.order({ market_id: 'BTC-USDC', side: 'bid', price: p, quantity: 400, time_in_force: 'ioc' })));
    const am = ok(await a.post('/orders/amend', maker.amend({ order_id: o.order_id, price: p, quantity: 300 })));
    expect(am).toMatchObject({ status: 'partially_filled', quantity: 700, filled_quantity: 400, remaining_quantity: 300 });
    expect((await balances(s, maker.address)).BTC).toEqual({ available: 1_000_000 - 700, locked: 300 });
    ok(await a.post('/orders/cancel-all', maker.cancelAll()));
    expect((await balances(s, maker.address)).BTC).toEqual({ available: 1_000_000 - 400, locked: 0 });
  });

  it('a post_only order amended across the spread is refused and keeps its place', async () => {
    const maker = await funded({ ETH: '1' });
    const w = await funded({ USDC: '100' });
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 7_000_000_000, quantity: 100 })));
    const o = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 6_900_000_000, quantity: 100, time_in_force: 'post_only' })));
    fail(await a.post('/orders/amend', w.amend({ order_id: o.order_id, price: 7_000_000_000, quantity: 100 })), 400, 'INVALID_ORDER', 'post_only order would take liquidity');
    expect(ok(await a.get(`/account/${w.address}/orders`))[0]).toMatchObject({ order_id: o.order_id, price: 6_900_000_000, status: 'open' });
    ok(await a.post('/orders/cancel-all', w.cancelAll()));
    ok(await a.post('/orders/cancel-all', maker.cancelAll()));
  });

  it('same price and a smaller quantity keeps the queue place', async () => {
    const first = await funded({ USDC: '100' });
    const second = await funded({ USDC: '100' });
    const seller = await funded({ BTC: '1' });
    const p = 20_000_000_000;
    const o1 = ok(await a.post('/orders', first.order({ market_id: 'BTC-USDC', side: 'bid', price: p, quantity: 100 })));
    const o2 = ok(await a.post('/orders', second.order({ market_id: 'BTC-USDC', side: 'bid', price: p, quantity: 100 })));
    ok(await a.post('/orders/amend', first.amend({ order_id: o1.order_id, price: p, quantity: 50 })));
    const sold = ok(await a.post('/orders', seller.order({ market_id: 'BTC-USDC', side: 'ask', price: p, quantity: 50, time_in_force: 'ioc' })));
    expect(sold.status).toBe('filled');
    expect(ok(await a.get(`/account/${first.address}/orders?status=all`))[0]).toMatchObject({ order_id: o1.order_id, status: 'filled', quantity: 50 });
    expect(ok(await a.get(`/account/${second.address}/orders`))[0]).toMatchObject({ order_id: o2.order_id, status: 'open', remaining_quantity: 100 });
    ok(await a.post('/orders/cancel-all', second.cancelAll()));
  });

  it('an amend that crosses trades as a taker and answers its fills', async () => {
    const maker = await funded({ ETH: '1' });
    const w = await funded({ USDC: '100' });
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 5_000_000_000, quantity: 100 })));
    const o = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 4_000_000_000, quantity: 100 })));
    const am = ok(await a.post('/orders/amend', w.amend({ order_id: o.order_id, price: 5_000_000_000, quantity: 100 })));
    expect(am).toMatchObject({ status: 'filled', filled_quantity: 100 });
    expect(am.fills).toEqual([{ fill_id: expect.any(Number), price: 5_000_000_000, quantity: 100, fee: 250, is_maker: false }]);
  });

  it('amend errors: unknown order NOT_FOUND, bad tick INVALID_ORDER, nothing changes', async () => {
    const w = await funded({ USDC: '100' });
    const o = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 })));
    const before = await balances(s, w.address);
    fail(await a.post('/orders/amend', w.amend({ order_id: 987_654, price: 1_000_000_000, quantity: 100 })), 404, 'NOT_FOUND');
    fail(await a.post('/orders/amend', w.amend({ order_id: o.order_id, price: 1_000_005_000, quantity: 100 })), 400, 'INVALID_ORDER', 'tick');
    fail(await a.post('/orders/amend', w.amend({ order_id: o.order_id, price: 1_000_000_000, quantity: 150 })), 400, 'INVALID_ORDER', 'lot');
    fail(await a.post('/orders/amend', w.amend({ order_id: o.order_id, price: 1_000_000_000, quantity: 0 })), 400, 'INVALID_ORDER', 'quantity must be positive');
    fail(await a.post('/orders/amend', w.amend({ order_id: o.order_id, price: 1_000_000_000, quantity: 1_000_000_000 })), 400, 'INSUFFICIENT_BALANCE');
    expect(await balances(s, w.address)).toEqual(before);
    ok(await a.post('/orders/cancel', w.cancel({ order_id: o.order_id })));
  });
});

describe('POST /orders/cancel-all', () => {
  it('cancels per market, then everywhere; answers the cancelled records and a batch id', async () => {
    const w = await funded({ USDC: '1000' });
    const ids: number[] = [];
    for (const [m, p] of [['ETH-USDC', 1_000_000_000], ['ETH-USDC', 1_010_000_000], ['BTC-USDC', 10_000_000_000]] as const) {
      ids.push(ok(await a.post('/orders', w.order({ market_id: m, side: 'bid', price: p, quantity: 100 }))).order_id);
    }
    const eth = ok(await a.post('/orders/cancel-all', w.cancelAll('ETH-USDC')));
    expect(Object.keys(eth).sort()).toEqual(['batch_id', 'cancelled']);
    expect(eth.cancelled.map((o: any) => o.order_id)).toEqual([ids[0], ids[1]]);
    for (const o of eth.cancelled) expect(o).toMatchObject({ status: 'cancelled', market_id: 'ETH-USDC', remaining_quantity: 0 });
    expect(ok(await a.get(`/account/${w.address}/orders`)).map((o: any) => o.order_id)).toEqual([ids[2]]);
    const all = ok(await a.post('/orders/cancel-all', w.cancelAll()));
    expect(all.cancelled.map((o: any) => o.order_id)).toEqual([ids[2]]);
    const none = ok(await a.post('/orders/cancel-all', w.cancelAll()));
    expect(none.cancelled).toEqual([]);
    const b = await balances(s, w.address);
    expect(b.USDC).toEqual({ available: 1_000_000_000, locked: 0 });
    expect(b.nonce_high_water).toBe(6);
    // market_id "*" is the same as omitting it.
    const nonce = w.nextNonce();
    ok(await a.post('/orders/cancel-all', { user: w.address, market_id: '*', nonce, signature: w.sign(`ringbook:cancel-all:*:${nonce}`) }));
  });

  it('an unknown market is MARKET_NOT_FOUND', async () => {
    const w = await funded({ USDC: '1' });
    fail(await a.post('/orders/cancel-all', w.cancelAll('XRP-USDC')), 404, 'MARKET_NOT_FOUND');
  });
});

describe('GET /account/:a/orders', () => {
  it('filters by status and market, newest first, with a limit', async () => {
    const w = await funded({ USDC: '1000', ETH: '1' });
    const o1 = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 })));
    const o2 = ok(await a.post('/orders', w.order({ market_id: 'BTC-USDC', side: 'bid', price: 10_000_000_000, quantity: 100 })));
    const o3 = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'ask', price: 9_900_000_000, quantity: 100 })));
    ok(await a.post('/orders/cancel', w.cancel({ order_id: o1.order_id })));
    const ids = (data: any[]): number[] => data.map((o) => o.order_id);
    expect(ids(ok(await a.get(`/account/${w.address}/orders`)))).toEqual([o3.order_id, o2.order_id]);
    expect(ids(ok(await a.get(`/account/${w.address}/orders?status=open`)))).toEqual([o3.order_id, o2.order_id]);
    expect(ids(ok(await a.get(`/account/${w.address}/orders?status=cancelled`)))).toEqual([o1.order_id]);
    expect(ids(ok(await a.get(`/account/${w.address}/orders?status=all`)))).toEqual([o3.order_id, o2.order_id, o1.order_id]);
    expect(ids(ok(await a.get(`/account/${w.address}/orders?status=all&market_id=ETH-USDC`)))).toEqual([o3.order_id, o1.order_id]);
    expect(ids(ok(await a.get(`/account/${w.address}/orders?status=all&limit=1`)))).toEqual([o3.order_id]);
    expect(ids(ok(await a.get(`/account/${w.address}/orders?status=filled`)))).toEqual([]);
    const rec = ok(await a.get(`/account/${w.address}/orders?market_id=BTC-USDC`))[0];
    expect(Object.keys(rec).sort()).toEqual([
      'client_order_id', 'created_at', 'filled_quantity', 'last_fill_price', 'market_id', 'order_id', 'order_type', 'price',
      'quantity', 'remaining_quantity', 'side', 'status', 'time_in_force', 'updated_at',
    ]);
    ok(await a.post('/orders/cancel-all', w.cancelAll()));
  });

  it('by-client-id answers the order record', async () => {
    const w = await funded({ USDC: '100' });
    const o = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, client_order_id: 'abc-123_X' })));
    const r = ok(await a.get(`/account/${w.address}/orders/by-client-id/abc-123_X`));
    expect(r).toEqual({
      order_id: o.order_id, client_order_id: 'abc-123_X', status: 'open', market_id: 'ETH-USDC', side: 'bid', order_type: 'limit',
      time_in_force: 'gtc', price: 1_000_000_000, quantity: 100, filled_quantity: 0, remaining_quantity: 100, last_fill_price: 0,
      created_at: expect.stringMatching(ISO), updated_at: expect.stringMatching(ISO),
    });
    fail(await a.get(`/account/${w.address}/orders/by-client-id/abc-123_Y`), 404, 'NOT_FOUND');
    ok(await a.post('/orders/cancel-all', w.cancelAll()));
  });

  it('fills honour limit, newest first', async () => {
    const maker = await funded({ ETH: '1' });
    const taker = await funded({ USDC: '100' });
    ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 6_000_000_000, quantity: 300 })));
    for (let i = 0; i < 3; i++) {
      ok(await a.post('/orders', taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 6_000_000_000, quantity: 100, time_in_force: 'ioc' })));
    }
    const all = ok(await a.get(`/account/${taker.address}/fills`));
    expect(all).toHaveLength(3);
    expect(all[0].fill_id).toBeGreaterThan(all[1].fill_id);
    const one = ok(await a.get(`/account/${taker.address}/fills?limit=1`));
    expect(one).toEqual([all[0]]);
    const trades = ok(await a.get('/trades/ETH-USDC?limit=2'));
    expect(trades.map((t: any) => t.trade_id)).toEqual([String(all[0].fill_id), String(all[1].fill_id)]);
  });
});

describe('docs/api.md worked examples', () => {
  // The key and signatures printed in docs/api.md ("Signed messages"), sent verbatim.
  const key = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
  const doc = new Wallet(Uint8Array.from(Buffer.from(key, 'hex')));

  it('the example wallet, orders, cancels, amend, cancel-all and withdrawal are accepted as printed', async () => {
    expect(doc.address).toBe('0x2c7536e3605d9c16a7a3d7b1898e529396a65c23');
    ok(await deposit(s, doc.address, 'USDC', '10'));
    ok(await deposit(s, doc.address, 'ETH', '1'));
    const o1 = ok(await a.post('/orders', {
      user: doc.address, market_id: 'ETH-USDC', side: 'bid', price: 2000010000, quantity: 300, order_type: 'limit', time_in_force: 'gtc', nonce: 1,
      signature: '0x2f49ce1524d743c5c0f1a66e16dd97428f6fa14e0f45990cbc5567adeb3974b049519e6c017cd4dda3977da9786124419c7808eae02d9a1351f790ffa2a3fd171c',
    }));
    expect(o1.order_id).toEqual(expect.any(Number));
    ok(await a.post('/orders', {
      user: doc.address, market_id: 'ETH-USDC', side: 'bid', price: 2000010000, quantity: 300, order_type: 'limit', time_in_force: 'gtc', nonce: 2,
      signature: '0x013e46f2fe0948a2e535a9838ad4d25e6c2d416d66f052528582085ac054297635682d68d3e96f5ec4af16b3b08219c3237f02da41d4a379bbdd9171d10c13da1c',
    }));
    // Order 17 and client id mm-bid-1 are not this wallet's: the signature passes, the engine answers NOT_FOUND.
    fail(await a.post('/orders/cancel', {
      user: doc.address, order_id: '17', client_order_id: '', nonce: 3,
      signature: '0x3b6207cd0efb188383584c13a5976777756bfd4c5eda00a0defae0bd124d9957660b46719b222d8e8e409fd03a146e56f63ca7aa6ef4741a5e55db4d112f51301b',
    }), 404, 'NOT_FOUND');
    fail(await a.post('/orders/cancel', {
      user: doc.address, client_order_id: 'mm-bid-1', nonce: 4,
      signature: '0x0a7731af91ecfdeb462cf286786ec3a05a733e6d7422b22765f3e311bdcf8c5c511c1850e00885529531085a75b8d3c294aedef5426ceaf3e9ccef7d319ea7d51b',
    }), 404, 'NOT_FOUND');
    fail(await a.post('/orders/amend', {
      user: doc.address, order_id: 17, price: 1999990000, quantity: 200, nonce: 5,
      signature: '0x153faa945c9e6c866b7ba3c4a0f4c8b0cf64be2916926047b45f7c4f924fcb7c5376f58b2484004fd149c449ff5112959e85599b53b507d8b4fddfd9df2a5e501c',
    }), 404, 'NOT_FOUND');
    const ca = ok(await a.post('/orders/cancel-all', {
      user: doc.address, nonce: 6,
      signature: '0xa519f4a49f0cdb23dd7386ec143ee14d9682ed434dfb710ef707c6262835260337bd1aee1aff63f9d33d7a0b51391afcfa69ef8f923eb092b289f56f790df9c11b',
    }));
    expect(ca.cancelled.length).toBeLessThanOrEqual(2);
    ok(await a.post('/withdrawals', {
      address: doc.address, asset: 'ETH', amount: '500000000000000000', nonce: 7,
      signature: '0x35936a9669d6a7b4fdd3a6425ad894dc6f2b829fa5985f2bd2924a59b35810d3295deae88bacf422a38368a12b2ff9b341b876c8d118ab2d3fe95e59a8b8e46b1c',
    }));
    expect((await balances(s, doc.address)).nonce_high_water).toBe(7);
  });
});
