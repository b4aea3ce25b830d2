// The leaderboard's arithmetic at the edges of the safe integers: the number sums (the per-fill
// path) against a bigint reference that recomputes the rules from the window's fills, for products
// price x quantity above 2^53, sums that reach MAX_SAFE_INTEGER exactly and the fill that passes it
// (the move to bigint), notionals that are not safe integers themselves, negative cash and PnL with
// fees and rebates, fills leaving the window after the move, and inputs that are not safe integers.
import { describe, expect, it } from 'vitest';
import { Leaderboard, type LeaderTrade, type LeaderboardEntry } from '../../src/marketdata/leaderboard.js';
import { BigSums, NumberSums } from '../../src/marketdata/leaderboard_sums.js';
import { Rng } from '../../src/util/prng.js';

const T0 = Date.UTC(2026, 10, 1);
const MAX = Number.MAX_SAFE_INTEGER;
const addr = (a: number): string => '0x' + a.toString(16).padStart(40, '0');

function fill(over: Partial<LeaderTrade>): LeaderTrade {
  return { market: 0, time_ms: T0, price: 2_000_000_000, quantity: 1_000_000, taker_account: 1, maker_account: 2, taker_side: 0, taker_fee: 0, maker_fee: 0, ...over };
}

/** The rules of docs/api.md "GET /leaderboard" in bigint, from the fills in the window (all USDC-quoted). */
function reference(window: readonly LeaderTrade[], last_price: readonly number[]): LeaderboardEntry[] {
  const floorDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));
  const acc = new Map<number, { volume: bigint; trades: number; cash: Map<number, bigint>; pos: Map<number, bigint> }>();
  for (const t of window) {
    const pq = BigInt(t.price) * BigInt(t.quantity);
    const n_floor = pq / 1_000_000n;
    const n_ceil = (pq + 999_999n) / 1_000_000n;
    for (const [account, buys, fee] of [[t.taker_account, t.taker_side === 0, t.taker_fee], [t.maker_account, t.taker_side !== 0, t.maker_fee]] as const) {
      let a = acc.get(account);
      if (a === undefined) acc.set(account, (a = { volume: 0n, trades: 0, cash: new Map(), pos: new Map() }));
      a.volume += n_floor;
      a.trades++;
      a.cash.set(t.market, (a.cash.get(t.market) ?? 0n) + (buys ? -n_ceil : n_floor) - BigInt(fee));
      a.pos.set(t.market, (a.pos.get(t.market) ?? 0n) + (buys ? BigInt(t.quantity) : -BigInt(t.quantity)));
    }
  }
  const list = [...acc].map(([account, a]) => {
    let pnl = 0n;
    for (const [m, c] of a.cash) pnl += c + floorDiv((a.pos.get(m) ?? 0n) * BigInt(last_price[m] ?? 0), 1_000_000n);
    return { address: addr(account), volume: a.volume, trades: a.trades, pnl };
  });
  list.sort((x, y) => (x.volume > y.volume ? -1 : x.volume < y.volume ? 1 : x.address < y.address ? -1 : 1));
  return list.map((e, i) => ({ rank: i + 1, address: e.address, volume_usdc: e.volume.toString(), pnl_usdc: e.pnl.toString(), trades: e.trades }));
}

/** Feeds fills one by one (each with its own time), checking every answer against the reference. */
function feedChecked(lb: Leaderboard, fills: readonly LeaderTrade[], trades_max: number, window_ms: number): LeaderTrade[] {
  let window: LeaderTrade[] = [];
  const last_price: number[] = [];
  for (const t of fills) {
    lb.onTrade(t, true);
    last_price[t.market] = t.price;
    window.push(t);
    window = window.filter((w) => w.time_ms >= t.time_ms - window_ms);
    if (window.length > trades_max) window = window.slice(window.length - trades_max);
    expect(lb.top(1000, addr)).toEqual(reference(window, last_price));
  }
  return window;
}

describe('leaderboard sums at the safe-integer edges', () => {
  it('price x quantity above 2^53 stays on the number path, exact', () => {
    // 60,000 USDC x 200 BTC: the product 1.2e19 is far above 2^53, the notional 1.2e13 units is not.
    const lb = new Leaderboard();
    const fills = [
      fill({ price: 60_000_000_000, quantity: 200_000_000, taker_fee: 6_000_000_007, maker_fee: -1_200_000_001 }),
      // A product that is not a multiple of 1e6: floor and ceil differ by one.
      fill({ price: 60_000_000_001, quantity: 199_999_999, taker_side: 1, taker_account: 2, maker_account: 3, taker_fee: 1, maker_fee: -1 }),
    ];
    expect(fills[0].price * fills[0].quantity).toBeGreaterThan(2 ** 53);
    feedChecked(lb, fills, 1000, 1e12);
    expect(lb.wide).toBe(false);
  });

  it('a volume that reaches MAX_SAFE_INTEGER exactly stays numbers; the fill that passes it moves to bigint, exactly', () => {
    const lb = new Leaderboard();
    // Notional (price x quantity / 1e6) of (MAX - 1) / 2 units per fill, for both sides.
    const half = (MAX - 1) / 2; // 4503599627370495
    const a = fill({ price: half, quantity: 1_000_000, taker_account: 1, maker_account: 2 });
    const b = fill({ price: 2, quantity: 1_000_000, taker_account: 1, maker_account: 3 }); // 2 units
    feedChecked(lb, [a, a], 1000, 1e12);
    expect(lb.wide).toBe(false);
    expect(lb.top(1, addr)[0].volume_usdc).toBe(String(MAX - 1));
    lb.onTrade(b, true);
    expect(lb.top(1000, addr)).toEqual(reference([a, a, b], [2]));
    // Account 1 now has MAX - 1 + 2 = 2^53: bigint.
    expect(lb.wide).toBe(true);
    expect(lb.top(1, addr)[0].volume_usdc).toBe((BigInt(MAX) + 1n).toString());
  });

  it('volume exactly MAX_SAFE_INTEGER is still numbers, one unit more is not', () => {
    const lb = new Leaderboard();
    const half = (MAX - 1) / 2;
    feedChecked(lb, [fill({ price: half, quantity: 1_000_000 }), fill({ price: half, quantity: 1_000_000 }), fill({ price: 1, quantity: 1_000_000 })], 1000, 1e12);
    expect(lb.top(1, addr)[0].volume_usdc).toBe(String(MAX)); // 2 x half + 1 = MAX: the last safe integer
    expect(lb.wide).toBe(false);
    feedChecked(new Leaderboard(), [fill({ price: MAX, quantity: 1_000_000, maker_account: 9 }), fill({ price: 1, quantity: 1_000_000 })], 1000, 1e12);
    const over = new Leaderboard();
    over.onTrade(fill({ price: MAX, quantity: 1_000_000 }), true);
    expect(over.wide).toBe(false);
    over.onTrade(fill({ price: 1, quantity: 1_000_000 }), true);
    expect(over.wide).toBe(true);
  });

  it('negative cash: a buyer paying near MAX_SAFE_INTEGER with a fee passes -MAX and moves to bigint; negative PnL is exact', () => {
    const lb = new Leaderboard();
    // The buyer's cash is -notional_ceil - fee: -(MAX - 5) - 5 = -MAX is still safe, a fee of 6 is not.
    const fills = [
      fill({ price: MAX - 5, quantity: 1_000_000, taker_side: 0, taker_fee: 5, maker_fee: -3 }),
      fill({ price: 1_000_001, quantity: 500_000, taker_side: 0, taker_account: 4, maker_account: 5, taker_fee: 2, maker_fee: -1 }),
    ];
    const win = feedChecked(lb, fills, 1000, 1e12);
    expect(lb.wide).toBe(false);
    expect(reference(win, [1_000_001]).some((e) => e.pnl_usdc.startsWith('-'))).toBe(true);
    feedChecked(new Leaderboard(), [fill({ price: MAX - 5, quantity: 1_000_000, taker_side: 0, taker_fee: 6 })], 1000, 1e12);
    const over = new Leaderboard();
    over.onTrade(fill({ price: MAX - 5, quantity: 1_000_000, taker_side: 0, taker_fee: 6 }), true);
    expect(over.wide).toBe(true);
  });

  it('a notional that is not a safe integer (price x quantity / 1e6 > 2^53) moves to bigint at once', () => {
    const lb = new Leaderboard();
    feedChecked(lb, [fill({ price: MAX, quantity: 2_000_000 })], 1000, 1e12);
    expect(lb.wide).toBe(true);
  });

  it('after the move, fills leaving the window (time and cap) keep the answers exact, and a snapshot reload agrees', () => {
    const lb = new Leaderboard({ trades_max: 4, window_ms: 10 });
    const half = (MAX - 1) / 2;
    const fills: LeaderTrade[] = [];
    for (let i = 0; i < 12; i++) fills.push(fill({ time_ms: T0 + 3 * i, price: i % 3 === 0 ? half : 1_000_003 + i, quantity: 1_000_000 + i, taker_side: i % 2, taker_fee: i - 6, maker_fee: -i, taker_account: 1 + (i % 2), maker_account: 3 }));
    feedChecked(lb, fills, 4, 10);
    expect(lb.wide).toBe(true);
    const again = new Leaderboard({ trades_max: 4, window_ms: 10 });
    again.importState(lb.exportState());
    expect(again.top(100, addr)).toEqual(lb.top(100, addr));
  });

  it('random fills around the edges: every answer equals the reference', () => {
    const rng = new Rng(53);
    const edge = (): number => {
      const r = rng.float();
      if (r < 0.3) return MAX - Math.floor(rng.float() * 1000);
      if (r < 0.5) return 1 + Math.floor(rng.float() * 2 ** 40);
      return 1 + Math.floor(rng.float() * 1e10);
    };
    for (const big of [false, true]) {
      const lb = new Leaderboard({ trades_max: 50, window_ms: 100 });
      const fills: LeaderTrade[] = [];
      for (let i = 0; i < 300; i++) {
        const price = big ? edge() : 1 + Math.floor(rng.float() * 1e11);
        const quantity = big ? 1 + Math.floor(rng.float() * 2e6) : 1 + Math.floor(rng.float() * 1e8);
        const fee = Math.floor(rng.float() * 2e6) - 1e6;
        fills.push(fill({
          time_ms: T0 + i, market: Math.floor(rng.float() * 3), price, quantity, taker_side: rng.float() < 0.5 ? 0 : 1,
          taker_account: 1 + Math.floor(rng.float() * 6), maker_account: 1 + Math.floor(rng.float() * 6), taker_fee: fee, maker_fee: -Math.floor(fee / 3),
        }));
      }
      feedChecked(lb, fills, 50, 100);
      expect(lb.wide).toBe(big);
    }
  });

  it('the number and bigint forms agree call by call', () => {
    const rng = new Rng(7);
    const n = new NumberSums();
    const b = new BigSums();
    const kept: LeaderTrade[] = [];
    for (let i = 0; i < 500; i++) {
      const t = fill({ price: 1 + Math.floor(rng.float() * 1e11), quantity: 1 + Math.floor(rng.float() * 1e9), taker_side: i % 2, taker_fee: (i % 7) - 3, maker_fee: -(i % 5), taker_account: i % 9, maker_account: (i * 7) % 11, market: i % 4 });
      expect(n.apply(t, 1)).toBe(true);
      b.apply(t, 1);
      kept.push(t);
      if (i % 3 === 0) {
        const out = kept.shift() as LeaderTrade;
        expect(n.apply(out, -1)).toBe(true);
        b.apply(out, -1);
      }
    }
    const last = [3_000_000_001, 17, 999_999_999, 1];
    expect(n.volumes().sort((x, y) => x.account - y.account)).toEqual(b.volumes().sort((x, y) => x.account - y.account));
    for (let a = 0; a < 12; a++) {
      expect([n.volume(a), n.trades(a), n.pnl(a, last)]).toEqual([b.volume(a), b.trades(a), b.pnl(a, last)]);
    }
  });

  it('refuses a fill whose numbers are not safe integers (a bad snapshot row) rather than round it', () => {
    expect(() => new Leaderboard().onTrade(fill({ quantity: 1.5 }), true)).toThrow(RangeError);
    expect(() => new Leaderboard().onTrade(fill({ taker_fee: 2 ** 53 }), true)).toThrow(RangeError);
    expect(() => new Leaderboard().onTrade(fill({ price: -1 }), true)).toThrow(RangeError);
    expect(() => new Leaderboard().onTrade(fill({ taker_account: 0.5 }), true)).toThrow(RangeError);
    const lb = new Leaderboard();
    lb.onTrade(fill({}), true);
    const state = lb.exportState();
    state.window[3] = 0.25; // the quantity
    expect(() => new Leaderboard().importState(state)).toThrow(RangeError);
  });
});
