// Self-trade prevention and the stale-order guard on the real server: each stp mode with the
// orders and balances it leaves, the order_update reason on the WebSocket, the signed JSON form's
// optional members (the colon form refused), and an EXPIRED order that locks nothing.
import { describe, expect, it } from 'vitest';
import { WsClient, type Msg } from '../ws/client.js';
import { balances, Wallet, type Api, type StartedServer } from './harness.js';
import { fail, fundedWallet, ok } from './checks.js';
import { serverPerFile } from './per_file.js';

let s: StartedServer;
let a: Api;
serverPerFile((started, client) => {
  s = started;
  a = client;
});

const MARKET = 'ETH-USDC';
const P = 2_000_000_000;
const Q = 300;

const funded = (): Promise<Wallet> => fundedWallet(s, { ETH: '1', USDC: '10000' });

/**
 * Each case uses a price below the asks earlier cases left, so its bid meets only its own two.
 * A fresh book at a price of its own: `self`'s ask first, `other`'s ask behind it at the same price. */
async function twoAsks(price: number): Promise<{ self: Wallet; other: Wallet; own_ask: number; other_ask: number }> {
  const self = await funded();
  const other = await funded();
  const own_ask = ok(await a.post('/orders', self.order({ market_id: MARKET, side: 'ask', price, quantity: Q }))).order_id;
  const other_ask = ok(await a.post('/orders', other.order({ market_id: MARKET, side: 'ask', price, quantity: Q }))).order_id;
  return { self, other, own_ask, other_ask };
}

async function statusOf(w: Wallet, order_id: number): Promise<string> {
  const all = ok(await a.get(`/account/${w.address}/orders?status=all`)) as { order_id: number; status: string }[];
  return all.find((o) => o.order_id === order_id)?.status ?? 'missing';
}

describe('self-trade prevention (stp)', () => {
  it('expire_maker (default): the own ask is cancelled with reason self_trade_prevented, the bid fills against the other ask', async () => {
    const { self, own_ask, other_ask } = await twoAsks(P + 30_000);
    const ws = await WsClient.connect(s.url);
    try {
      await ws.authenticate(self);
      ws.send({ type: 'subscribe', channels: [`orders:${self.address}`] });
      await ws.nextType('subscribed');
      const bid = ok(await a.post('/orders', self.order({ market_id: MARKET, side: 'bid', price: P + 30_000, quantity: Q })));
      expect(bid.status).toBe('filled');
      expect(bid.fills.map((f: Msg) => f.quantity)).toEqual([Q]);
      expect(await statusOf(self, own_ask)).toBe('cancelled');
      expect(await statusOf(self, other_ask)).toBe('missing'); // the other account's order
      const update = await ws.next((m) => m.type === 'order_update' && m.order_id === String(own_ask));
      expect(update.status).toBe('cancelled');
      expect(update.reason).toBe('self_trade_prevented');
    } finally {
      ws.close();
    }
    // No fill with the same account on both sides: its fills are all the bid's, as taker.
    const fills = ok(await a.get(`/account/${self.address}/fills`)) as Msg[];
    expect(fills.every((f) => f.order_id !== String(own_ask) && f.order_id !== own_ask)).toBe(true);
  });

  it('expire_taker: the bid is cancelled unfilled, both asks stay, nothing moved', async () => {
    const { self, own_ask, other_ask, other } = await twoAsks(P + 20_000);
    const before = await balances(s, self.address);
    const bid = ok(await a.post('/orders', self.order({ market_id: MARKET, side: 'bid', price: P + 20_000, quantity: Q, stp: 'expire_taker' })));
    expect(bid.status).toBe('cancelled');
    expect(bid.filled_quantity).toBe(0);
    expect(bid.fills).toEqual([]);
    expect(await statusOf(self, own_ask)).toBe('open');
    expect(await statusOf(other, other_ask)).toBe('open');
    const after = await balances(s, self.address);
    expect(after.USDC).toEqual(before.USDC);
    expect(after.ETH).toEqual(before.ETH);
  });

  it('expire_both: the own ask and the bid are both cancelled; the other ask stays', async () => {
    const { self, own_ask, other_ask, other } = await twoAsks(P + 10_000);
    const bid = ok(await a.post('/orders', self.order({ market_id: MARKET, side: 'bid', price: P + 10_000, quantity: Q, stp: 'expire_both' })));
    expect(bid.status).toBe('cancelled');
    expect(bid.fills).toEqual([]);
    expect(await statusOf(self, own_ask)).toBe('cancelled');
    expect(await statusOf(other, other_ask)).toBe('open');
    expect((await balances(s, self.address)).ETH).toEqual({ available: 1_000_000, locked: 0 });
  });

  it('an unknown stp is INVALID_ORDER; stp signed only in the colon form is INVALID_ORDER naming the JSON form', async () => {
    const w = await funded();
    fail(await a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P, quantity: Q, stp: 'cancel_newest' })),
      400, 'INVALID_ORDER', 'stp must be expire_maker, expire_taker or expire_both');
    fail(await a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P, quantity: Q, stp: 'expire_taker' }, { form: 'colon' })),
      400, 'INVALID_ORDER', 'JSON form');
    // A body member added after signing (not covered by the signature) is INVALID_SIGNATURE.
    const body = w.order({ market_id: MARKET, side: 'bid', price: P, quantity: Q });
    fail(await a.post('/orders', { ...body, stp: 'expire_both' }), 401, 'INVALID_SIGNATURE');
    expect((await balances(s, w.address)).nonce_high_water).toBe(0);
  });
});

describe('stale-order guard (expires_after_ms)', () => {
  it('an order whose expires_after_ms has passed is refused with EXPIRED (400) and locks nothing', async () => {
    const w = await funded();
    const before = await balances(s, w.address);
    const stale = Date.now() - 1_000;
    fail(await a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P, quantity: Q, expires_after_ms: stale })),
      400, 'EXPIRED', 'expires_after_ms');
    const after = await balances(s, w.address);
    expect(after).toEqual(before);
    expect(after.nonce_high_water).toBe(0);
    expect(ok(await a.get(`/account/${w.address}/orders?status=all`))).toEqual([]);
  });

  it('an order still fresh when its batch is stamped is accepted', async () => {
    const w = await funded();
    const o = ok(await a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P - 10_000, quantity: Q, expires_after_ms: Date.now() + 60_000 })));
    expect(o.status).toBe('open');
    fail(await a.post('/orders', w.order({ market_id: MARKET, side: 'bid', price: P, quantity: Q, expires_after_ms: 0 })),
      400, 'INVALID_ORDER', 'expires_after_ms must be a positive integer');
  });
});
