// POST /orders/batch on the real server: mixed successes answered per item in order, applied
// contiguously in one engine batch (an order and its cancel by client id in the same call), a
// malformed envelope refused whole, and each item counted against its wallet's rate limit.
import { describe, expect, it } from 'vitest';
import { balances, Wallet, type Api, type StartedServer } from './harness.js';
import { serverPerFile } from './per_file.js';
import { fail, fundedWallet, ok } from './checks.js';

const ORDERS_PER_WALLET = 8;
let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
}, { config: { rate_limits: { orders_per_wallet: ORDERS_PER_WALLET } } });

const MARKET = 'ETH-USDC';
const P = 1_500_000_000;

const funded = (): Promise<Wallet> => fundedWallet(s, { ETH: '1', USDC: '10000' });

describe('POST /orders/batch', () => {
  it('answers every item in order: successes and failures of every kind, accepted items in one engine batch', async () => {
    const w = await funded();
    const other = Wallet.random();
    const bad_signature = { ...w.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100 }), signature: other.sign('x') };
    const requests = [
      { kind: 'order', ...w.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100, client_order_id: 'b1' }) },
      { kind: 'order', ...bad_signature },
      { kind: 'order', ...w.order({ market_id: MARKET, side: 'bid', price: P + 1, quantity: 100 }) }, // off-tick: engine refuses
      { kind: 'cancel', ...w.cancel({ client_order_id: 'b1' }) }, // the order placed two items earlier
      { kind: 'order', ...w.order({ market_id: MARKET, side: 'ask', price: P + 100_000, quantity: 200 }) },
      { kind: 'amend', ...w.amend({ order_id: 999_999_999, price: P, quantity: 100 }) },
      { kind: 'bogus', nonce: 1 },
      { kind: 'cancel_all', ...w.cancelAll(MARKET) },
    ];
    const data = ok(await a.post('/orders/batch', { requests })) as any[];
    expect(data).toHaveLength(requests.length);
    expect(data.map((x) => x.ok)).toEqual([true, false, false, true, true, false, false, true]);
    for (const x of data.filter((d) => !d.ok)) expect(Object.keys(x).sort()).toEqual(['error', 'message', 'ok']);
    // Each record is the order as the committed batch left it: cancelled by item 3 of the same batch.
    expect(data[0].data).toMatchObject({ client_order_id: 'b1', status: 'cancelled', side: 'bid', fills: [] });
    expect(data[1]).toMatchObject({ error: 'INVALID_SIGNATURE' });
    expect(data[2]).toEqual({ ok: false, error: 'INVALID_ORDER', message: 'price must be a multiple of the tick size' });
    expect(data[3].data).toMatchObject({ order_id: data[0].data.order_id, status: 'cancelled' });
    expect(data[4].data).toMatchObject({ status: 'cancelled', side: 'ask', quantity: 200 });
    expect(data[5]).toMatchObject({ error: 'NOT_FOUND' });
    expect(data[6]).toEqual({ ok: false, error: 'INVALID_REQUEST', message: 'kind must be order, cancel, amend or cancel_all' });
    expect(data[7].data.cancelled.map((o: any) => o.order_id)).toEqual([data[4].data.order_id]);
    // Applied contiguously in one engine batch.
    const batch_ids = new Set([data[0], data[3], data[4], data[7]].map((x) => x.data.batch_id));
    expect(batch_ids.size).toBe(1);
    // Nothing left locked; the nonce is the last accepted item's.
    const b = await balances(s, w.address);
    expect(b.USDC).toEqual({ available: 10_000_000_000, locked: 0 });
    expect(b.ETH).toEqual({ available: 1_000_000, locked: 0 });
    expect(b.nonce_high_water).toBe(requests.length - 1); // the bogus item carried no wallet nonce
  });

  it('refuses a malformed envelope as a whole with 400', async () => {
    const w = await funded();
    const one = { kind: 'order', ...w.order({ market_id: MARKET, side: 'bid', price: P, quantity: 100 }) };
    fail(await a.post('/orders/batch', { requests: one }), 400, 'INVALID_REQUEST', 'requests must be an array of 1 to 20');
    fail(await a.post('/orders/batch', { requests: [] }), 400, 'INVALID_REQUEST', 'requests must be an array');
    fail(await a.post('/orders/batch', { requests: Array.from({ length: 21 }, () => one) }), 400, 'INVALID_REQUEST', 'requests must be an array');
    fail(await a.post('/orders/batch', { requests: [one], extra: 1 }), 400, 'INVALID_REQUEST', 'unknown field');
    expect((await balances(s, w.address)).nonce_high_water).toBe(0);
  });

  it('counts every item against its wallet\'s rate limit: the items past the limit are RATE_LIMITED', async () => {
    const w = await funded();
    const n = ORDERS_PER_WALLET + 2;
    const requests = Array.from({ length: n }, (_, i) => ({
      kind: 'order', ...w.order({ market_id: MARKET, side: 'bid', price: P - (i + 1) * 10_000, quantity: 100 }),
    }));
    const data = ok(await a.post('/orders/batch', { requests })) as any[];
    expect(data.slice(0, ORDERS_PER_WALLET).every((x) => x.ok)).toBe(true);
    for (const x of data.slice(ORDERS_PER_WALLET)) {
      expect(x).toEqual({ ok: false, error: 'RATE_LIMITED', message: `Too many orders from this wallet: the limit is ${ORDERS_PER_WALLET} per minute.` });
    }
    // The wallet is now limited for single requests too (one limit for both).
    const single = await a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P - 500_000, quantity: 100 }));
    expect(single.status).toBe(429);
    ok(await a.post('/orders/cancel-all', w.cancelAll(MARKET)));
  });
});
