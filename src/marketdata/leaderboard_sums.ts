// The leaderboard's per-account sums over its window (volume, trades, and per market the cash and
// position the PnL is marked from): leaderboard.ts adds a fill's contribution when it enters the
// window and takes it off when it leaves.
//
// Two exact forms of the same sums:
// - NumberSums, the per-fill path: safe integers in plain numbers. A fill's notional comes from the
//   engine's own exact price x quantity / 1e6 (money/muldiv.ts: exact when the product exceeds 2^53,
//   as 2e9 x 1e8 units does), and every sum is checked against Number.MAX_SAFE_INTEGER after each
//   addition: the operands are safe integers, so a sum whose exact value is safe is computed exactly
//   and one whose exact value is not rounds to a magnitude >= 2^53 (rounding is monotone), which the
//   check sees. `apply` answers false then, and the leaderboard moves to
// - BigSums (bigint), rebuilt from the window's rows, for good (for that leaderboard: a restart
//   rebuilds from the snapshot's rows and moves again at the same fill).
// Both give the same answers (test/marketdata/leaderboard_sums.test.ts). The number form took the
// ~1,000 instructions and ~25 BigInts of a fill's bigint arithmetic off the front thread
// (docs/benchmarks.md, h22m).
import { notionalCeilUnchecked, notionalFloorUnchecked } from '../money/muldiv.js';

/** One fill as the sums read it (the read model's TradeView is one). */
export interface LeaderTrade {
  market: number;
  time_ms: number;
  price: number;
  quantity: number;
  taker_account: number;
  maker_account: number;
  /** 0 bid, 1 ask (the taker's side). */
  taker_side: number;
  /** Signed: a negative fee is a rebate. */
  taker_fee: number;
  maker_fee: number;
}

/** What top() reads of either form. */
export interface LeaderSums {
  /** Adds (sign 1) or removes (sign -1) a fill's contribution; false: a sum left the safe integers (the state is then unusable). */
  apply(t: LeaderTrade, sign: 1 | -1): boolean;
  /** Accounts with a fill in the window and their volume. */
  volumes(): { account: number; volume: bigint }[];
  trades(account: number): number;
  volume(account: number): bigint;
  /** sum over markets of cash + floor(position x last_price / 1e6). */
  pnl(account: number, last_price: readonly number[]): bigint;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const UNITS = 1_000_000n;

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

/** A fill's field that is not a safe integer (a snapshot's row, an event): refused, as BigInt() refused it before. */
function notSafe(t: LeaderTrade): never {
  throw new RangeError(`leaderboard: a fill with a field that is not a safe integer (or a negative price or quantity): ${JSON.stringify(t)}`);
}

class NumberAccount {
  volume = 0;
  trades = 0;
  /** Per market id (0 where it never traded). */
  readonly cash: number[] = [];
  readonly position: number[] = [];
}

export class NumberSums implements LeaderSums {
  /** Per account id (dense, as the read model's address_by_account). */
  private readonly accounts: (NumberAccount | undefined)[] = [];

  apply(t: LeaderTrade, sign: 1 | -1): boolean {
    const price = t.price;
    const q = t.quantity;
    // The boundary of the number form: what it adds must be safe integers (a fill from the engine is;
    // a snapshot's row is checked here too), else the sums could round silently.
    if (!(Number.isSafeInteger(price) && Number.isSafeInteger(q) && Number.isSafeInteger(t.taker_fee) && Number.isSafeInteger(t.maker_fee)
      && price >= 0 && q >= 0 && Number.isSafeInteger(t.market) && t.market >= 0)) notSafe(t);
    const n_floor = notionalFloorUnchecked(price, q);
    const n_ceil = notionalCeilUnchecked(price, q);
    // MONEY_OVERFLOW (-1): the notional itself is not a safe integer.
    if (n_floor < 0 || n_ceil < 0) return false;
    const taker_buys = t.taker_side === 0;
    return this.side(t.taker_account, t.market, n_floor, n_ceil, taker_buys, q, t.taker_fee, sign)
      && this.side(t.maker_account, t.market, n_floor, n_ceil, !taker_buys, q, t.maker_fee, sign);
  }

  private side(account: number, market: number, n_floor: number, n_ceil: number, buys: boolean, q: number, fee: number, sign: 1 | -1): boolean {
    let s = this.accounts[account];
    if (s === undefined) {
      if (!(Number.isSafeInteger(account) && account >= 0)) throw new RangeError(`leaderboard: account ${account} is not an account id`);
      s = this.accounts[account] = new NumberAccount();
    }
    const volume = s.volume + sign * n_floor;
    const cash = (buys ? -n_ceil : n_floor) - fee;
    if (volume > MAX_SAFE || cash > MAX_SAFE || cash < -MAX_SAFE) return false;
    const cs = s.cash;
    const ps = s.position;
    while (cs.length <= market) {
      cs.push(0);
      ps.push(0);
    }
    const c = cs[market] + sign * cash;
    const p = ps[market] + (buys ? sign * q : -sign * q);
    if (c > MAX_SAFE || c < -MAX_SAFE || p > MAX_SAFE || p < -MAX_SAFE) return false;
    s.volume = volume;
    s.trades += sign;
    cs[market] = c;
    ps[market] = p;
    return true;
  }

  volumes(): { account: number; volume: bigint }[] {
    const out: { account: number; volume: bigint }[] = [];
    this.accounts.forEach((s, account) => {
      if (s !== undefined && s.trades > 0) out.push({ account, volume: BigInt(s.volume) });
    });
    return out;
  }

  trades(account: number): number {
    return this.accounts[account]?.trades ?? 0;
  }

  volume(account: number): bigint {
    return BigInt(this.accounts[account]?.volume ?? 0);
  }

  pnl(account: number, last_price: readonly number[]): bigint {
    const s = this.accounts[account];
    let total = 0n;
    if (s === undefined) return total;
    for (let m = 0; m < s.cash.length; m++) {
      total += BigInt(s.cash[m]);
      if (s.position[m] !== 0) total += floorDiv(BigInt(s.position[m]) * BigInt(last_price[m] ?? 0), UNITS);
    }
    return total;
  }
}

interface BigAccount {
  volume: bigint;
  trades: number;
  /** market -> [cash, position] */
  markets: Map<number, { cash: bigint; position: bigint }>;
}

export class BigSums implements LeaderSums {
  private readonly stats = new Map<number, BigAccount>();

  apply(t: LeaderTrade, sign: 1 | -1): boolean {
    const pq = BigInt(t.price) * BigInt(t.quantity);
    if (pq < 0n) notSafe(t);
    const n_floor = pq / UNITS;
    const n_ceil = (pq + UNITS - 1n) / UNITS;
    const taker_buys = t.taker_side === 0;
    const s = BigInt(sign);
    this.side(t.taker_account, t.market, n_floor, taker_buys, n_ceil, BigInt(t.quantity), BigInt(t.taker_fee), s);
    this.side(t.maker_account, t.market, n_floor, !taker_buys, n_ceil, BigInt(t.quantity), BigInt(t.maker_fee), s);
    return true;
  }

  private side(account: number, market: number, n_floor: bigint, buys: boolean, n_ceil: bigint, q: bigint, fee: bigint, sign: bigint): void {
    let s = this.stats.get(account);
    if (s === undefined) {
      s = { volume: 0n, trades: 0, markets: new Map() };
      this.stats.set(account, s);
    }
    s.volume += sign * n_floor;
    s.trades += Number(sign);
    let p = s.markets.get(market);
    if (p === undefined) {
      p = { cash: 0n, position: 0n };
      s.markets.set(market, p);
    }
    const cash = (buys ? -n_ceil : n_floor) - fee;
    p.cash += sign * cash;
    p.position += sign * (buys ? q : -q);
    if (s.trades === 0) this.stats.delete(account);
  }

  volumes(): { account: number; volume: bigint }[] {
    const out: { account: number; volume: bigint }[] = [];
    for (const [account, s] of this.stats) out.push({ account, volume: s.volume });
    return out;
  }

  trades(account: number): number {
    return this.stats.get(account)?.trades ?? 0;
  }

  volume(account: number): bigint {
    return this.stats.get(account)?.volume ?? 0n;
  }

  pnl(account: number, last_price: readonly number[]): bigint {
    const s = this.stats.get(account);
    let total = 0n;
    if (s === undefined) return total;
    for (const [m, p] of s.markets) {
      total += p.cash;
      if (p.position !== 0n) total += floorDiv(p.position * BigInt(last_price[m] ?? 0), UNITS);
    }
    return total;
  }
}
