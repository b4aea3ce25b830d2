// Public GET endpoints of the real server: success shapes, the envelope, X-Request-Id, unknown
// routes and markets, query validation.
import { describe, expect, it } from 'vitest';
import { deposit, Wallet, type Api, type StartedServer } from './harness.js';
import { serverPerFile } from './per_file.js';

let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
});

const REQUEST_ID = /^[0-9a-f]{12}-[0-9a-z]+$/;

function expectFormA(r: { status: number; headers: Record<string, string>; body: any }, status: number, code: string): void {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toBe('application/json');
  expect(Object.keys(r.body).sort()).toEqual(['error', 'message', 'ok', 'request_id']);
  expect(r.body.ok).toBe(false);
  expect(r.body.error).toBe(code);
  expect(typeof r.body.message).toBe('string');
  expect(r.body.message.length).toBeGreaterThan(0);
  expect(r.body.request_id).toMatch(REQUEST_ID);
  expect(r.headers['x-request-id']).toBe(r.body.request_id);
}

describe('GET /health and /time', () => {
  it('GET /health answers status ok, batch id and uptime', async () => {
    const r = await a.get('/health');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-request-id']).toMatch(REQUEST_ID);
    expect(r.body).toEqual({ ok: true, data: { status: 'ok', batch_id: expect.stringMatching(/^\d+$/), uptime_s: expect.any(Number) } });
  });

  it('GET /time answers the server clock in ms and ISO 8601', async () => {
    const before = Date.now();
    const r = await a.get('/time');
    const after = Date.now();
    expect(r.status).toBe(200);
    expect(Object.keys(r.body.data).sort()).toEqual(['iso', 'time_ms']);
    // The server reads this machine's clock after the request was sent and before it was
    // answered: between the two reads, with no slack (a slack would pass a clock off by it).
    expect(r.body.data.time_ms).toBeGreaterThanOrEqual(before);
    expect(r.body.data.time_ms).toBeLessThanOrEqual(after);
    expect(new Date(r.body.data.iso).getTime()).toBe(r.body.data.time_ms);
  });

  it('every response carries a distinct X-Request-Id', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await a.get('/health')).headers['x-request-id']);
    expect(ids.size).toBe(5);
  });

  it('a client X-Request-Id is not echoed (ids are server-made)', async () => {
    const r = await a.get('/health', { 'X-Request-Id': 'client-chosen' });
    expect(r.headers['x-request-id']).toMatch(REQUEST_ID);
  });
});

describe('GET /markets', () => {
  it('lists the default markets with parameters and empty-book nulls', async () => {
    const r = await a.get('/markets');
    expect(r.status).toBe(200);
    expect(r.body.ok).toBe(true);
    expect(r.body.data).toEqual([
      {
        id: 'ETH-USDC', base: 'ETH', quote: 'USDC', status: 'active', tick_size: 10000, lot_size: 100,
        best_bid: null, best_ask: null, spread: null, last_price: null,
      },
      {
        id: 'BTC-USDC', base: 'BTC', quote: 'USDC', status: 'active', tick_size: 100000, lot_size: 10,
        best_bid: null, best_ask: null, spread: null, last_price: null,
      },
    ]);
  });
});

describe('order books', () => {
  it('GET /orderbook/:m and /markets/:m/book answer the same body', async () => {
    const r1 = await a.get('/orderbook/ETH-USDC');
    const r2 = await a.get('/markets/ETH-USDC/book');
    expect(r1.status).toBe(200);
    expect(r2.status).toBe(200);
    expect(r1.body).toEqual({ ok: true, data: { market_id: 'ETH-USDC', sequence: expect.any(Number), bids: [], asks: [] } });
    expect(r2.body).toEqual(r1.body);
  });

  it('books show levels as [price, quantity] strings, best first, and display strings in /markets', async () => {
    const w = Wallet.random();
    expect((await deposit(s, w.address, 'BTC', '1')).status).toBe(200);
    expect((await deposit(s, w.address, 'USDC', '100000')).status).toBe(200);
    const place = async (side: string, price: number, quantity: number): Promise<void> => {
      const r = await a.post('/orders', w.order({ market_id: 'BTC-USDC', side, price, quantity }));
      expect(r.status, r.text).toBe(200);
    };
    await place('bid', 30_000_000_000, 100);
    await place('bid', 30_100_000_000, 100);
    await place('bid', 30_100_000_000, 50);
    await place('ask', 31_000_000_000, 20);
    await place('ask', 30_900_500_000, 30);
    const r1 = await a.get('/orderbook/BTC-USDC');
    const r2 = await a.get('/markets/BTC-USDC/book');
    expect(r1.body.data).toEqual({
      market_id: 'BTC-USDC',
      sequence: expect.any(Number),
      bids: [['30100000000', '150'], ['30000000000', '100']],
      asks: [['30900500000', '30'], ['31000000000', '20']],
    });
    expect(r1.body.data.sequence).toBeGreaterThan(0);
    expect(r2.body).toEqual(r1.body);
    const depth1 = await a.get('/orderbook/BTC-USDC?depth=1');
    expect(depth1.body.data.bids).toEqual([['30100000000', '150']]);
    expect(depth1.body.data.asks).toEqual([['30900500000', '30']]);
    const m = (await a.get('/markets')).body.data.find((x: any) => x.id === 'BTC-USDC');
    expect(m).toMatchObject({ best_bid: '30100', best_ask: '30900.5', spread: '800.5', last_price: null, status: 'active' });
  });

  it('an unknown market is MARKET_NOT_FOUND (404) on every market route', async () => {
    for (const p of ['/orderbook/DOGE-USDC', '/markets/DOGE-USDC/book', '/markets/DOGE-USDC/fees', '/trades/DOGE-USDC', '/orderbook/eth-usdc']) {
      expectFormA(await a.get(p), 404, 'MARKET_NOT_FOUND');
    }
  });

  it('a bad depth is INVALID_REQUEST', async () => {
    for (const q of ['depth=0', 'depth=abc', 'depth=-1', 'depth=501', 'depth=1&depth=2']) {
      expectFormA(await a.get(`/orderbook/ETH-USDC?${q}`), 400, 'INVALID_REQUEST');
    }
  });
});

describe('fees', () => {
  it('GET /fees answers the global maker and taker bps', async () => {
    const r = await a.get('/fees');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, data: { maker_fee_bps: -1, taker_fee_bps: 5 } });
  });

  it('GET /markets/:id/fees answers the market fees with market_id', async () => {
    const r = await a.get('/markets/ETH-USDC/fees');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, data: { market_id: 'ETH-USDC', maker_fee_bps: -1, taker_fee_bps: 5 } });
  });
});

describe('GET /trades/:m', () => {
  it('answers an empty array for a market without trades', async () => {
    const r = await a.get('/trades/ETH-USDC');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ok: true, data: [] });
  });

  it('refuses a bad limit', async () => {
    expectFormA(await a.get('/trades/ETH-USDC?limit=0'), 400, 'INVALID_REQUEST');
    expectFormA(await a.get('/trades/ETH-USDC?limit=x'), 400, 'INVALID_REQUEST');
    expectFormA(await a.get('/trades/ETH-USDC?limit=%ZZ'), 400, 'INVALID_REQUEST');
  });
});

describe('account reads', () => {
  const unknown = '0x' + 'ab'.repeat(20);

  it('balances of an address never seen: zeros for every asset, nonce 0, credit null', async () => {
    const r = await a.get(`/account/${unknown}/balances`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      ok: true,
      data: {
        ETH: { available: 0, locked: 0 },
        BTC: { available: 0, locked: 0 },
        USDC: { available: 0, locked: 0 },
        nonce_high_water: 0,
        envelope_nonce_high_water: 0,
        credit: null,
      },
    });
  });

  it('orders and fills of an address never seen are empty arrays', async () => {
    expect((await a.get(`/account/${unknown}/orders`)).body).toEqual({ ok: true, data: [] });
    expect((await a.get(`/account/${unknown}/orders?status=all`)).body).toEqual({ ok: true, data: [] });
    expect((await a.get(`/account/${unknown}/fills`)).body).toEqual({ ok: true, data: [] });
  });

  it('by-client-id of an unknown order is NOT_FOUND', async () => {
    expectFormA(await a.get(`/account/${unknown}/orders/by-client-id/nope`), 404, 'NOT_FOUND');
  });

  it('addresses compare case-insensitively', async () => {
    const w = Wallet.random();
    await deposit(s, w.address, 'ETH', '1.25');
    const upper = '0x' + w.address.slice(2).toUpperCase();
    const r = await a.get(`/account/${upper}/balances`);
    expect(r.body.data.ETH).toEqual({ available: 1_250_000, locked: 0 });
  });

  it('a malformed address is INVALID_REQUEST', async () => {
    for (const bad of ['0x1234', 'xyz', '0X' + 'ab'.repeat(20), '0x' + 'zz'.repeat(20)]) {
      expectFormA(await a.get(`/account/${bad}/balances`), 400, 'INVALID_REQUEST');
      expectFormA(await a.get(`/account/${bad}/orders`), 400, 'INVALID_REQUEST');
      expectFormA(await a.get(`/account/${bad}/fills`), 400, 'INVALID_REQUEST');
    }
  });

  it('bad order-listing queries are INVALID_REQUEST or MARKET_NOT_FOUND', async () => {
    expectFormA(await a.get(`/account/${unknown}/orders?status=bogus`), 400, 'INVALID_REQUEST');
    expectFormA(await a.get(`/account/${unknown}/orders?limit=0`), 400, 'INVALID_REQUEST');
    expectFormA(await a.get(`/account/${unknown}/orders?limit=1001`), 400, 'INVALID_REQUEST');
    expectFormA(await a.get(`/account/${unknown}/orders?market_id=NOPE-USDC`), 404, 'MARKET_NOT_FOUND');
    expectFormA(await a.get(`/account/${unknown}/fills?limit=-3`), 400, 'INVALID_REQUEST');
  });
});

describe('routes that do not exist', () => {
  it('an unknown path is NOT_FOUND (404) in form A', async () => {
    expectFormA(await a.get('/nope'), 404, 'NOT_FOUND');
    expectFormA(await a.post('/nope', {}), 404, 'NOT_FOUND');
    expectFormA(await a.get('/v1/markets'), 404, 'NOT_FOUND');
  });

  it('a known path with the wrong method is NOT_FOUND, never 5xx', async () => {
    expectFormA(await a.req('DELETE', '/markets'), 404, 'NOT_FOUND');
    expectFormA(await a.get('/orders'), 404, 'NOT_FOUND');
    expectFormA(await a.put('/orders', {}), 404, 'NOT_FOUND');
  });
});

describe('percent-encoded client order ids', () => {
  it('a percent-encoded client id is decoded before lookup', async () => {
    const w = Wallet.random();
    await deposit(s, w.address, 'USDC', '10');
    const r = await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 10_000, quantity: 100, client_order_id: 'a-b_c' }));
    expect(r.status, r.text).toBe(200);
    const got = await a.get(`/account/${w.address}/orders/by-client-id/a%2Db_c`);
    expect(got.status).toBe(200);
    expect(got.body.data.client_order_id).toBe('a-b_c');
    await a.post('/orders/cancel-all', w.cancelAll());
  });

  // A malformed percent escape in a path segment is the client's error, never a 500.
  it('a malformed percent escape in by-client-id is a 4xx, not a 500', async () => {
    const unknown = '0x' + 'cd'.repeat(20);
    for (const bad of ['%ZZ', '%E0%A4%A', '%']) {
      const r = await a.get(`/account/${unknown}/orders/by-client-id/${bad}`);
      expect(r.status, r.text).toBeGreaterThanOrEqual(400);
      expect(r.status, r.text).toBeLessThan(500);
    }
  });
});
