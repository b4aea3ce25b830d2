// WebSocket channels on the real server, driven by real signed orders over HTTP: every channel's
// messages and fields after a place, a match and a cancel; the order of events; book sequences
// strictly increasing without gaps; WS values equal to the HTTP answers; private channels refused
// before auth and for another address.
import { describe, expect, it } from 'vitest';
import { balances, deposit, Wallet, type Api, type StartedServer } from '../server/harness.js';
import { bookChecksum } from '../../src/util/book_checksum.js';
import { DIGITS, ISO, sleep, wsServerPerFile, type Msg, type WsClient } from './client.js';

let s: StartedServer;
let a: Api;
const { connect } = wsServerPerFile((started, client) => {
  s = started;
  a = client;
});

function privateChannels(w: Wallet): string[] {
  return [`fills:${w.address}`, `orders:${w.address}`, `balances:${w.address}`];
}

async function post(path: string, body: unknown): Promise<any> {
  const r = await a.post(path, body);
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

const P = 2000_000000; // 2000 USDC
const MARKET = 'ETH-USDC';

describe('private channels need auth for the same address', () => {
  it('refuses fills/orders/balances before auth with UNAUTHORIZED and subscribes nothing', async () => {
    const w = Wallet.random();
    const c = await connect();
    c.send({ type: 'subscribe', channels: privateChannels(w), request_id: 'r1' });
    // One error frame for the message (not one per channel), naming each refused channel.
    const e = await c.nextType('error');
    expect(e).toEqual({ type: 'error', code: 'UNAUTHORIZED', message: expect.stringContaining(`${privateChannels(w).length} of ${privateChannels(w).length} channels refused`), request_id: 'r1' });
    for (const ch of privateChannels(w)) expect(e.message).toContain(ch);
    // Nothing subscribed: a deposit to w produces no balance_update here.
    await deposit(s, w.address, 'USDC', '5');
    await c.request({ type: 'ping' }, 'pong');
    await sleep(100);
    expect(c.all.filter((m) => m.type === 'subscribed' || m.type === 'balance_update')).toEqual([]);
  });

  it('refuses another address after auth, accepts its own', async () => {
    const w = Wallet.random();
    const other = Wallet.random();
    const c = await connect();
    const ok = await c.authenticate(w);
    expect(ok).toEqual({ type: 'auth_success', address: w.address });
    c.send({ type: 'subscribe', channels: [`orders:${other.address}`] });
    const e = await c.nextType('error');
    expect(e.code).toBe('UNAUTHORIZED');
    expect(e.message).toContain(w.address);
    expect(e.request_id).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
    // Mixed case names the same address; the canonical (lowercase) channel is answered.
    const mixed = '0x' + w.address.slice(2).toUpperCase();
    const sub = await c.request({ type: 'subscribe', channels: [`balances:${mixed}`, `book:${MARKET}`] }, 'subscribed');
    expect(sub).toEqual({ type: 'subscribed', channels: [`balances:${w.address}`, `book:${MARKET}`] });
    await deposit(s, other.address, 'USDC', '1');
    await deposit(s, w.address, 'USDC', '2.5');
    const b = await c.nextType('balance_update');
    expect(b).toEqual({
      type: 'balance_update', asset: 'USDC', total: '2500000', available: '2500000', reserved: '0', reason: 'deposit',
      timestamp: expect.stringMatching(ISO),
    });
    expect(c.all.filter((m) => m.type === 'balance_update')).toHaveLength(1);
  });
});

describe('place, match and cancel', () => {
  it('delivers every channel with the fields and values of the HTTP answers, in event order', async () => {
    const M = Wallet.random();
    const T = Wallet.random();
    const pub = await connect();
    const cm = await connect();
    const ct = await connect();
    await cm.authenticate(M);
    await ct.authenticate(T);
    const sub = await pub.request({ type: 'subscribe', channels: [`book:${MARKET}`, `trades:${MARKET}`] }, 'subscribed');
    expect(sub.channels).toEqual([`book:${MARKET}`, `trades:${MARKET}`]);
    const first = await pub.nextType('book_snapshot');
    const http_book0 = (await a.get(`/orderbook/${MARKET}`)).body.data;
    expect(first).toEqual({
      type: 'book_snapshot', market_id: MARKET, sequence: http_book0.sequence, bids: http_book0.bids, asks: http_book0.asks,
      checksum: bookChecksum(http_book0.bids, http_book0.asks), timestamp: expect.stringMatching(ISO),
    });
    const seq0 = first.sequence as number;
    await cm.request({ type: 'subscribe', channels: privateChannels(M) }, 'subscribed');
    await ct.request({ type: 'subscribe', channels: privateChannels(T) }, 'subscribed');

    await deposit(s, M.address, 'ETH', '10');
    await deposit(s, T.address, 'USDC', '100000');
    expect(await cm.nextType('balance_update')).toMatchObject({ asset: 'ETH', total: '10000000', available: '10000000', reserved: '0', reason: 'deposit' });
    expect(await ct.nextType('balance_update')).toMatchObject({ asset: 'USDC', total: '100000000000', reason: 'deposit' });

    // 1. Maker rests an ask of 1 ETH at 2000.
    const placed = await post('/orders', M.order({ market_id: MARKET, side: 'ask', price: P, quantity: 1_000000, client_order_id: 'mk-1' }));
    const mk_id = String(placed.order_id);
    expect(await cm.next()).toEqual({
      type: 'order_update', order_id: mk_id, client_order_id: 'mk-1', market_id: MARKET, side: 'ask', status: 'open',
      price: String(P), quantity: '1000000', filled_quantity: '0', remaining_quantity: '1000000', last_fill_price: '0',
      reason: 'placed', timestamp: placed.created_at,
    });
    expect(await cm.next()).toEqual({
      type: 'balance_update', asset: 'ETH', total: '10000000', available: '9000000', reserved: '1000000',
      reason: 'order_placed', timestamp: placed.created_at,
    });
    const snap1 = await pub.nextType('book_snapshot');
    expect(snap1).toEqual({
      type: 'book_snapshot', market_id: MARKET, sequence: seq0 + 1, bids: [], asks: [[String(P), '1000000']],
      checksum: bookChecksum([], [[String(P), '1000000']]), timestamp: placed.created_at,
    });

    // 2. Taker bids 0.4 ETH at 2000: one fill. Taker fee 5 bps, maker rebate 1 bp (config defaults).
    const taken = await post('/orders', T.order({ market_id: MARKET, side: 'bid', price: P, quantity: 400000 }));
    const tk_id = String(taken.order_id);
    expect(taken.status).toBe('filled');
    expect(taken.fills).toHaveLength(1);
    const fill_id = String(taken.fills[0].fill_id);
    const notional = 800_000000;
    const taker_fee = Math.ceil((notional * 5) / 10000);
    const maker_rebate = Math.floor((notional * 1) / 10000);
    const t1 = taken.created_at;

    const trade = await pub.nextType('trade');
    expect(trade).toEqual({
      type: 'trade', market_id: MARKET, trade_id: fill_id, price: String(P), quantity: '400000', side: 'bid', timestamp: t1,
    });
    // The trades channel agrees with GET /trades.
    const http_trade = (await a.get(`/trades/${MARKET}?limit=1`)).body.data[0];
    expect(trade).toEqual({ type: 'trade', ...http_trade });

    // Taker: fill, then order update, then balances (event order).
    const tf = await ct.next();
    expect(tf).toEqual({
      type: 'fill', fill_id, order_id: tk_id, market_id: MARKET, side: 'bid', price: String(P), quantity: '400000',
      filled_quantity_cumulative: '400000', is_maker: false, fee: String(taker_fee), rebate: '0', batch_id: taken.batch_id,
      timestamp: t1,
    });
    expect(await ct.next()).toEqual({
      type: 'order_update', order_id: tk_id, client_order_id: '', market_id: MARKET, side: 'bid', status: 'filled',
      price: String(P), quantity: '400000', filled_quantity: '400000', remaining_quantity: '0', last_fill_price: String(P),
      reason: 'fill', timestamp: t1,
    });
    const tb = [await ct.next(), await ct.next()];
    expect(tb.map((m) => [m.type, m.asset, m.reason])).toEqual([['balance_update', 'ETH', 'fill'], ['balance_update', 'USDC', 'fill']]);

    // Maker: fill (rebate), order update partially filled, balances.
    expect(await cm.next()).toEqual({
      type: 'fill', fill_id, order_id: mk_id, market_id: MARKET, side: 'ask', price: String(P), quantity: '400000',
      filled_quantity_cumulative: '400000', is_maker: true, fee: '0', rebate: String(maker_rebate), batch_id: taken.batch_id,
      timestamp: t1,
    });
    expect(await cm.next()).toEqual({
      type: 'order_update', order_id: mk_id, client_order_id: 'mk-1', market_id: MARKET, side: 'ask',
      status: 'partially_filled', price: String(P), quantity: '1000000', filled_quantity: '400000',
      remaining_quantity: '600000', last_fill_price: String(P), reason: 'fill', timestamp: t1,
    });
    const mb = [await cm.next(), await cm.next()];
    expect(mb.map((m) => [m.type, m.asset, m.reason])).toEqual([['balance_update', 'ETH', 'fill'], ['balance_update', 'USDC', 'fill']]);
    expect(await pub.nextType('book_snapshot')).toEqual({
      type: 'book_snapshot', market_id: MARKET, sequence: seq0 + 2, bids: [], asks: [[String(P), '600000']],
      checksum: bookChecksum([], [[String(P), '600000']]), timestamp: t1,
    });

    // HTTP agrees: fills (fee - rebate = the signed HTTP fee), balances, order records.
    const http_tf = (await a.get(`/account/${T.address}/fills?limit=1`)).body.data[0];
    const http_mf = (await a.get(`/account/${M.address}/fills?limit=1`)).body.data[0];
    expect(http_tf).toMatchObject({ fill_id: Number(fill_id), order_id: Number(tk_id), fee: taker_fee, is_maker: false, timestamp: t1 });
    expect(http_mf).toMatchObject({ fill_id: Number(fill_id), order_id: Number(mk_id), fee: -maker_rebate, is_maker: true, timestamp: t1 });
    const hb_t = await balances(s, T.address);
    const hb_m = await balances(s, M.address);
    for (const [ws_msgs, hb] of [[tb, hb_t], [mb, hb_m]] as const) {
      for (const m of ws_msgs) {
        expect(m.available).toBe(String(hb[m.asset].available));
        expect(m.reserved).toBe(String(hb[m.asset].locked));
        expect(m.total).toBe(String(hb[m.asset].available + hb[m.asset].locked));
      }
    }
    expect(hb_t.USDC.available).toBe(100000_000000 - notional - taker_fee);
    expect(hb_m.USDC.available).toBe(notional + maker_rebate);

    // 3. Maker cancels the rest.
    const cancelled = await post('/orders/cancel', M.cancel({ order_id: Number(mk_id) }));
    expect(await cm.next()).toEqual({
      type: 'order_update', order_id: mk_id, client_order_id: 'mk-1', market_id: MARKET, side: 'ask', status: 'cancelled',
      price: String(P), quantity: '1000000', filled_quantity: String(cancelled.filled_quantity),
      remaining_quantity: String(cancelled.remaining_quantity), last_fill_price: String(cancelled.last_fill_price),
      reason: 'user_cancel', timestamp: cancelled.updated_at,
    });
    expect(await cm.next()).toEqual({
      type: 'balance_update', asset: 'ETH', total: '9600000', available: '9600000', reserved: '0', reason: 'order_cancelled',
      timestamp: cancelled.updated_at,
    });
    const snap3 = await pub.nextType('book_snapshot');
    expect(snap3).toMatchObject({ sequence: seq0 + 3, bids: [], asks: [], timestamp: cancelled.updated_at });
    const http_book = (await a.get(`/orderbook/${MARKET}`)).body.data;
    expect(http_book).toEqual({ market_id: MARKET, sequence: seq0 + 3, bids: [], asks: [] });

    // Nothing else arrived: each batch gave exactly these messages, trades only on the public side.
    await sleep(100);
    expect(pub.all.filter((m) => m.type === 'trade')).toHaveLength(1);
    expect(cm.take('fill')).toEqual([]);
    expect(ct.all.filter((m) => m.type === 'book_snapshot' || m.type === 'trade')).toEqual([]);
  });

  it('counts filled_quantity_cumulative across several fills of one taker in one request', async () => {
    const M = Wallet.random();
    const T = Wallet.random();
    await deposit(s, M.address, 'BTC', '1');
    await deposit(s, T.address, 'USDC', '1000000');
    const ct = await connect();
    await ct.authenticate(T);
    await ct.request({ type: 'subscribe', channels: [`fills:${T.address}`, `orders:${T.address}`] }, 'subscribed');
    const BP = 50000_000000;
    for (const [price, q] of [[BP, 10000], [BP + 100000, 20000], [BP + 200000, 30000]]) {
      await post('/orders', M.order({ market_id: 'BTC-USDC', side: 'ask', price, quantity: q }));
    }
    const taken = await post('/orders', T.order({ market_id: 'BTC-USDC', side: 'bid', price: BP + 200000, quantity: 50000 }));
    expect(taken.fills.map((f: any) => f.quantity)).toEqual([10000, 20000, 20000]);
    const fills = [await ct.next(), await ct.next(), await ct.next()];
    expect(fills.map((f) => [f.type, f.order_id, f.price, f.quantity, f.filled_quantity_cumulative, f.fill_id])).toEqual([
      ['fill', String(taken.order_id), String(BP), '10000', '10000', String(taken.fills[0].fill_id)],
      ['fill', String(taken.order_id), String(BP + 100000), '20000', '30000', String(taken.fills[1].fill_id)],
      ['fill', String(taken.order_id), String(BP + 200000), '20000', '50000', String(taken.fills[2].fill_id)],
    ]);
    for (let i = 0; i < 3; i++) expect(fills[i].fee).toBe(String(taken.fills[i].fee));
    const upd = await ct.next();
    expect(upd).toMatchObject({ type: 'order_update', status: 'filled', filled_quantity: '50000', remaining_quantity: '0', last_fill_price: String(BP + 200000) });
  });
});

describe('book sequence', () => {
  it('is strictly increasing without gaps for every subscriber, late joiners included', async () => {
    // Three wallets: requests sent concurrently come from different wallets (one wallet's nonces
    // must reach the engine in order).
    const ws3 = [Wallet.random(), Wallet.random(), Wallet.random()];
    for (const w of ws3) {
      await deposit(s, w.address, 'ETH', '100');
      await deposit(s, w.address, 'USDC', '1000000');
    }
    const early = await connect();
    await early.request({ type: 'subscribe', channels: ['book:ETH-USDC'] }, 'subscribed');
    const start = (await early.nextType('book_snapshot')).sequence as number;
    let late: WsClient | null = null;
    const ids: (readonly [number, number])[] = [];
    // Concurrent requests land in shared batches; sequential ones in their own.
    for (let i = 0; i < 12; i++) {
      const burst = [];
      for (let k = 0; k < 3; k++) {
        const side = (i + k) % 2 === 0 ? 'bid' : 'ask';
        const price = side === 'bid' ? 1000_000000 - (i * 3 + k) * 10000 : 3000_000000 + (i * 3 + k) * 10000;
        burst.push(post('/orders', ws3[k].order({ market_id: MARKET, side, price, quantity: 10000 })).then((o) => [k, o.order_id] as const));
      }
      for (const o of await Promise.all(burst)) ids.push(o);
      if (i === 5) {
        late = await connect();
        late.send({ type: 'subscribe', channels: ['book:ETH-USDC'] });
      }
    }
    for (const [k, id] of ids.slice(0, 10)) await post('/orders/cancel', ws3[k].cancel({ order_id: id }));
    const final = (await a.get(`/orderbook/${MARKET}`)).body.data;
    expect(final.sequence).toBeGreaterThan(start + 10);
    for (const c of [early, late!]) {
      for (;;) {
        const snap = await c.nextType('book_snapshot');
        if (snap.sequence === final.sequence) break;
      }
      const seqs = c.all.filter((m) => m.type === 'book_snapshot').map((m) => m.sequence as number);
      for (let i = 1; i < seqs.length; i++) expect(seqs[i], `sequence after ${seqs[i - 1]}`).toBe(seqs[i - 1] + 1);
      const last = c.all.filter((m) => m.type === 'book_snapshot').at(-1) as Msg;
      expect(last.bids).toEqual(final.bids);
      expect(last.asks).toEqual(final.asks);
    }
    const late_seqs = late!.all.filter((m) => m.type === 'book_snapshot').map((m) => m.sequence as number);
    expect(late_seqs[0]).toBeGreaterThan(start);
    // The book is whole: 36 orders at distinct prices, 10 cancelled.
    expect(final.bids.length + final.asks.length).toBe(26);
    for (const [p, q] of [...final.bids, ...final.asks]) {
      expect(p).toMatch(DIGITS);
      expect(q).toMatch(DIGITS);
    }
  });
});
