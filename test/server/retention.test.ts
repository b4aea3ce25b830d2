// The read model's retention limits on the real server (issue 20: the long soak's memory must
// level off at named limits): limits.closed_orders_kept forgets the oldest closed orders, and
// limits.leaderboard_trades_max bounds the leaderboard's window; open orders are never forgotten.
import { describe, expect, it } from 'vitest';
import { deposit, Wallet, type Api, type StartedServer } from './harness.js';
import { serverPerFile } from './per_file.js';
import { ok } from './checks.js';

let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
}, { config: { limits: { closed_orders_kept: 3, leaderboard_trades_max: 2 } } });

describe('retention limits', () => {
  it('closed_orders_kept: the 3 newest closed orders stay readable, older ones are forgotten, the open one stays', async () => {
    const w = Wallet.random();
    ok(await deposit(s, w.address, 'USDC', '1000'));
    const open = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, client_order_id: 'keep' })));
    const closed: number[] = [];
    for (let i = 0; i < 6; i++) {
      // IOC with nothing to cross: closed (cancelled) at once.
      const o = ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, time_in_force: 'ioc', client_order_id: `ioc-${i}` })));
      expect(o.status).toBe('cancelled');
      closed.push(o.order_id);
    }
    const all = ok(await a.get(`/account/${w.address}/orders?status=all`)) as { order_id: number }[];
    expect(all.map((o) => o.order_id)).toEqual([...closed.slice(3).reverse(), open.order_id]);
    expect((await a.get(`/account/${w.address}/orders/by-client-id/ioc-0`)).status).toBe(404);
    expect(ok(await a.get(`/account/${w.address}/orders/by-client-id/ioc-5`)).order_id).toBe(closed[5]);
    expect(ok(await a.get(`/account/${w.address}/orders/by-client-id/keep`)).status).toBe('open');
  });

  it('leaderboard_trades_max: the window holds the 2 newest fills', async () => {
    const maker = Wallet.random();
    const takers = [Wallet.random(), Wallet.random(), Wallet.random()];
    ok(await deposit(s, maker.address, 'ETH', '1'));
    for (const t of takers) ok(await deposit(s, t.address, 'USDC', '1000'));
    for (const t of takers) {
      ok(await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2_000_000_000, quantity: 100 })));
      const f = ok(await a.post('/orders', t.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 100 })));
      expect(f.status).toBe('filled');
    }
    const board = ok(await a.get('/leaderboard')) as { address: string; trades: number }[];
    const by = new Map(board.map((e) => [e.address, e.trades]));
    // The first taker's fill dropped out; the maker counts for the two kept fills.
    expect(by.get(maker.address)).toBe(2);
    expect(by.has(takers[0].address)).toBe(false);
    expect(by.get(takers[1].address)).toBe(1);
    expect(by.get(takers[2].address)).toBe(1);
  });
});
