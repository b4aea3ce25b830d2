// Leaderboard (GET /leaderboard): accounts ranked by 30-day volume in USDC-quoted markets.
//
// Rules (docs/api.md, "GET /leaderboard"):
// - Window: trades whose batch time is at or after (latest batch time - 30 days). Time is the
//   batch clock, never the wall clock; trades drop out as later batches arrive.
// - Only markets whose quote asset is USDC count. Each fill counts for both its taker and its
//   maker (a self-trade counts twice for the one account).
// - volume_usdc: sum of fill notionals floor(price x quantity / 1e6), in USDC units.
// - trades: number of fills (sides) the account had in the window.
// - pnl_usdc: mark-to-market PnL of the window's fills net of fees: per account and market,
//   cash = sum(sells: +floor(notional) - fee) + sum(buys: -ceil(notional) - fee) (a rebate is a
//   negative fee, so it adds), position = bought - sold base in the window, and
//   pnl = cash + floor(position x last_price / 1e6), summed over markets. last_price is the
//   market's latest trade price.
// - Ranking: volume descending, then address ascending; only accounts with a fill in the window.
// - Memory: the window keeps at most LEADERBOARD_TRADES_MAX fills; beyond that, the oldest drop
//   out early. Arithmetic is bigint (exact).

export const LEADERBOARD_WINDOW_MS = 30 * 86_400_000;
export const LEADERBOARD_TRADES_MAX = 2_000_000;

const UNITS = 1_000_000n;

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

export interface LeaderboardEntry {
  rank: number;
  address: string;
  volume_usdc: string;
  pnl_usdc: string;
  trades: number;
}

interface AccountStats {
  volume: bigint;
  trades: number;
  /** market -> [cash, position] */
  markets: Map<number, { cash: bigint; position: bigint }>;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

export class Leaderboard {
  private readonly window: LeaderTrade[] = [];
  private head = 0;
  private readonly stats = new Map<number, AccountStats>();
  private readonly last_price: number[] = [];
  private readonly trades_max: number;
  private readonly window_ms: number;
  private sorted: { account: number; volume: bigint }[] | null = null;

  constructor(opts: { trades_max?: number; window_ms?: number } = {}) {
    this.trades_max = opts.trades_max ?? LEADERBOARD_TRADES_MAX;
    this.window_ms = opts.window_ms ?? LEADERBOARD_WINDOW_MS;
  }

  /** The batch clock moved to `time_ms`: fills older than the window drop out. */
  advance(time_ms: number): void {
    const cutoff = time_ms - this.window_ms;
    while (this.head < this.window.length && this.window[this.head].time_ms < cutoff) this.dropOldest();
  }

  /** A committed fill of a market; `usdc_quoted` says whether it counts. */
  onTrade(t: LeaderTrade, usdc_quoted: boolean): void {
    this.last_price[t.market] = t.price;
    if (!usdc_quoted) return;
    this.advance(t.time_ms);
    this.window.push(t);
    this.apply(t, 1n);
    if (this.window.length - this.head > this.trades_max) this.dropOldest();
  }

  /** Ranked entries, at most `limit`; `addressOf` names an account. */
  top(limit: number, addressOf: (account: number) => string): LeaderboardEntry[] {
    if (this.sorted === null) {
      const list: { account: number; volume: bigint; address: string }[] = [];
      for (const [account, s] of this.stats) list.push({ account, volume: s.volume, address: addressOf(account) });
      list.sort((a, b) => (a.volume > b.volume ? -1 : a.volume < b.volume ? 1 : a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
      this.sorted = list;
    }
    const out: LeaderboardEntry[] = [];
    for (let i = 0; i < this.sorted.length && out.length < limit; i++) {
      const { account } = this.sorted[i];
      const s = this.stats.get(account)!;
      out.push({ rank: i + 1, address: addressOf(account), volume_usdc: s.volume.toString(), pnl_usdc: this.pnl(s).toString(), trades: s.trades });
    }
    return out;
  }

  /** The window's fills and the last prices (snapshots); the per-account sums follow from them. */
  exportState(): { window: LeaderTrade[]; last_price: number[] } {
    return { window: this.window.slice(this.head), last_price: Array.from(this.last_price, (p) => p ?? 0) };
  }

  /** Loads what `exportState` gave into an empty leaderboard (the sums are recomputed). */
  importState(state: { window: LeaderTrade[]; last_price: number[] }): void {
    state.last_price.forEach((p, m) => {
      this.last_price[m] = p;
    });
    for (const t of state.window) {
      this.window.push(t);
      this.apply(t, 1n);
    }
  }

  /** Fills in the window now. */
  get size(): number {
    return this.window.length - this.head;
  }

  private pnl(s: AccountStats): bigint {
    let total = 0n;
    for (const [m, p] of s.markets) {
      total += p.cash;
      if (p.position !== 0n) total += floorDiv(p.position * BigInt(this.last_price[m] ?? 0), UNITS);
    }
    return total;
  }

  private dropOldest(): void {
    const t = this.window[this.head++];
    this.apply(t, -1n);
    if (this.head > 4096 && this.head * 2 > this.window.length) {
      this.window.splice(0, this.head);
      this.head = 0;
    }
  }

  /** Adds (sign 1) or removes (sign -1) one fill's contribution to both accounts. */
  private apply(t: LeaderTrade, sign: 1n | -1n): void {
    const pq = BigInt(t.price) * BigInt(t.quantity);
    const n_floor = pq / UNITS;
    const n_ceil = (pq + UNITS - 1n) / UNITS;
    const taker_buys = t.taker_side === 0;
    this.side(t.taker_account, t.market, n_floor, taker_buys, n_ceil, BigInt(t.quantity), BigInt(t.taker_fee), sign);
    this.side(t.maker_account, t.market, n_floor, !taker_buys, n_ceil, BigInt(t.quantity), BigInt(t.maker_fee), sign);
    this.sorted = null;
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
}
