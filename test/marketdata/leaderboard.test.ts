// Leaderboard with synthetic fills: volume on both sides, USDC-quoted markets only, the 30-day
// window on batch time, ranking and ties, pnl with fees and rebates, limit, bounded memory.
import { describe, expect, it } from 'vitest';
import { Leaderboard, LEADER_ROW_WIDTH, LEADERBOARD_WINDOW_MS, type LeaderTrade } from '../../src/marketdata/leaderboard.js';

const T0 = Date.UTC(2026, 10, 1);
const DAY = 86_400_000;
const addr = (a: number): string => '0x' + a.toString(16).padStart(40, '0');

function fill(over: Partial<LeaderTrade>): LeaderTrade {
  return {
    market: 0, time_ms: T0, price: 2_000_000_000, quantity: 1_000_000, taker_account: 1, maker_account: 2,
    taker_side: 0, taker_fee: 0, maker_fee: 0, ...over,
  };
}

describe('leaderboard', () => {
  it('counts quote volume for taker and maker, ranks by volume then address', () => {
    const lb = new Leaderboard();
    lb.onTrade(fill({ taker_account: 1, maker_account: 2, price: 100_000_000, quantity: 2_000_000 }), true); // 200 USDC
    lb.onTrade(fill({ taker_account: 3, maker_account: 2, price: 100_000_000, quantity: 500_000 }), true); // 50 USDC
    lb.onTrade(fill({ taker_account: 4, maker_account: 5, price: 100_000_000, quantity: 5_000_000 }), false); // BTC-ETH etc.: ignored
    const top = lb.top(100, addr);
    expect(top.map((e) => [e.rank, e.address, e.volume_usdc, e.trades])).toEqual([
      [1, addr(2), '250000000', 2],
      [2, addr(1), '200000000', 1],
      [3, addr(3), '50000000', 1],
    ]);
    expect(lb.top(2, addr).length).toBe(2);
    // Tie on volume: lower address first.
    const tie = new Leaderboard();
    tie.onTrade(fill({ taker_account: 9, maker_account: 7 }), true);
    expect(tie.top(10, addr).map((e) => e.address)).toEqual([addr(7), addr(9)]);
  });

  it('pnl: cash flow net of fees and rebates plus position at the last price', () => {
    const lb = new Leaderboard();
    // Account 1 (taker) buys 2 ETH at 100 from account 2 (maker); taker fee 0.1, maker rebate 0.02.
    lb.onTrade(fill({ taker_account: 1, maker_account: 2, taker_side: 0, price: 100_000_000, quantity: 2_000_000, taker_fee: 100_000, maker_fee: -20_000 }), true);
    // Last price 110: account 1 holds +2 (worth 220), paid 200 + 0.1 -> pnl 19.9.
    // Account 2 holds -2 (-220), received 200 + 0.02 rebate -> pnl -19.98.
    lb.onTrade(fill({ taker_account: 3, maker_account: 4, taker_side: 1, price: 110_000_000, quantity: 100, taker_fee: 6, maker_fee: 2 }), true);
    const by = new Map(lb.top(10, addr).map((e) => [e.address, e]));
    expect(by.get(addr(1))!.pnl_usdc).toBe('19900000');
    expect(by.get(addr(2))!.pnl_usdc).toBe('-19980000');
    // Account 3 sold 0.0001 at 110 (notional 11000 units) paying 6: cash 10994, position -100 x 110 = -11000.
    expect(by.get(addr(3))!.pnl_usdc).toBe('-6');
    expect(by.get(addr(4))!.pnl_usdc).toBe('-2');
  });

  it('pnl rounds the buyer notional up and the seller notional down; negative marks round down', () => {
    const lb = new Leaderboard();
    // price 1.000001 x quantity 0.5 = 0.5000005 -> buyer pays 500001, seller gets 500000.
    lb.onTrade(fill({ taker_account: 1, maker_account: 2, taker_side: 0, price: 1_000_001, quantity: 500_000 }), true);
    const by = new Map(lb.top(10, addr).map((e) => [e.address, e]));
    // Buyer: -500001 + floor(500000 x 1000001 / 1e6) = -500001 + 500000 = -1.
    expect(by.get(addr(1))!.pnl_usdc).toBe('-1');
    // Seller: 500000 + floor(-500000.5) = 500000 - 500001 = -1.
    expect(by.get(addr(2))!.pnl_usdc).toBe('-1');
    expect(by.get(addr(1))!.volume_usdc).toBe('500000');
  });

  it('a self-trade counts both sides for the one account', () => {
    const lb = new Leaderboard();
    lb.onTrade(fill({ taker_account: 5, maker_account: 5, price: 1_000_000, quantity: 1_000_000, taker_fee: 3, maker_fee: -1 }), true);
    expect(lb.top(10, addr)).toEqual([{ rank: 1, address: addr(5), volume_usdc: '2000000', pnl_usdc: '-2', trades: 2 }]);
  });

  it('the 30-day window follows batch time: older fills drop out', () => {
    const lb = new Leaderboard();
    lb.onTrade(fill({ time_ms: T0, taker_account: 1, maker_account: 2 }), true);
    lb.onTrade(fill({ time_ms: T0 + 10 * DAY, taker_account: 1, maker_account: 3 }), true);
    lb.advance(T0 + LEADERBOARD_WINDOW_MS); // exactly 30 days: still in
    expect(lb.top(10, addr).map((e) => e.address)).toEqual([addr(1), addr(2), addr(3)]);
    lb.advance(T0 + LEADERBOARD_WINDOW_MS + 1); // first fill out
    expect(lb.top(10, addr).map((e) => [e.address, e.volume_usdc, e.trades, e.pnl_usdc])).toEqual([
      [addr(1), '2000000000', 1, '0'],
      [addr(3), '2000000000', 1, '0'],
    ]);
    lb.advance(T0 + 41 * DAY);
    expect(lb.top(10, addr)).toEqual([]);
    expect(lb.size).toBe(0);
  });

  it('bounded memory: beyond the cap the oldest fills drop out', () => {
    const lb = new Leaderboard({ trades_max: 10 });
    for (let i = 0; i < 25; i++) lb.onTrade(fill({ time_ms: T0 + i, taker_account: 100 + i, maker_account: 1 }), true);
    expect(lb.size).toBe(10);
    const top = lb.top(100, addr);
    expect(top[0]).toMatchObject({ address: addr(1), trades: 10 });
    expect(top.length).toBe(11);
  });

  it('the window ring wraps and grows: exported rows are the kept fills, oldest first, and reload to the same ranking', () => {
    // 5,000 fills through a 3,000-fill cap: the ring grows 1,024 -> 2,048 -> 3,001 rows, then
    // wraps; some fills also age out of a 1-day window in the middle.
    const lb = new Leaderboard({ trades_max: 3000, window_ms: DAY });
    const all: LeaderTrade[] = [];
    for (let i = 0; i < 5000; i++) {
      const t = fill({ time_ms: T0 + i * 20_000, taker_account: 1 + (i % 7), maker_account: 10 + (i % 3), taker_side: i % 2, quantity: 1000 + i, taker_fee: i % 5, maker_fee: -(i % 2) });
      all.push(t);
      lb.onTrade(t, true);
    }
    // 20 s apart: a day holds 4,320 of them, so the 3,000 cap is what bounds the window here.
    expect(lb.size).toBe(3000);
    const { window } = lb.exportState();
    expect(window.length).toBe(3000 * LEADER_ROW_WIDTH);
    const kept = all.slice(2000);
    for (const i of [0, 1, 1499, 2999]) {
      const t = kept[i];
      expect(Array.from(window.subarray(i * LEADER_ROW_WIDTH, (i + 1) * LEADER_ROW_WIDTH))).toEqual([
        t.market, t.time_ms, t.price, t.quantity, t.taker_account, t.maker_account, t.taker_side, t.taker_fee, t.maker_fee,
      ]);
    }
    // The sums equal those of a leaderboard fed only the kept fills; a reload gives the same.
    const fresh = new Leaderboard({ trades_max: 3000, window_ms: DAY });
    for (const t of kept) fresh.onTrade(t, true);
    const reloaded = new Leaderboard({ trades_max: 3000, window_ms: DAY });
    reloaded.importState(lb.exportState());
    expect(lb.top(100, addr)).toEqual(fresh.top(100, addr));
    expect(reloaded.top(100, addr)).toEqual(fresh.top(100, addr));
    // Time moves 12 hours past the last fill: what is older than a day drops out, across the wrap.
    const later = T0 + 4999 * 20_000 + DAY / 2;
    lb.advance(later);
    const in_day = kept.filter((t) => t.time_ms >= later - DAY);
    expect(lb.size).toBe(in_day.length);
    const check = new Leaderboard({ trades_max: 3000, window_ms: DAY });
    for (const t of in_day) check.onTrade(t, true);
    expect(lb.top(100, addr)).toEqual(check.top(100, addr));
  });
});
