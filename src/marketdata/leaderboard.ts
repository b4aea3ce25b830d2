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
// - Memory: the window keeps at most `limits.leaderboard_trades_max` fills (2,000,000); beyond that, the oldest drop
//   out early. Arithmetic is exact: safe integers in numbers, bigint once a sum would leave them
//   (leaderboard_sums.ts). The window is a ring of Float64 rows
//   (LEADER_ROW_WIDTH = 9 numbers, 72 bytes a fill), not an object per fill: a LeaderTrade object
//   with its boxed numbers cost ~240 bytes of the front's heap (heap snapshot of the soak, issue
//   20), so a full window (2,000,000 fills) held ~480 MB; as rows it is 144 MB, and a snapshot
//   copies the rows instead of building 2,000,000 objects.

import { LEADERBOARD_TRADES_MAX_DEFAULT } from '../config/sections.js';
import { BigSums, NumberSums, type LeaderSums, type LeaderTrade } from './leaderboard_sums.js';

export const LEADERBOARD_WINDOW_MS = 30 * 86_400_000;
/** Numbers per fill in the window's rows (and in a snapshot's leaderboard_window): see putRow. */
export const LEADER_ROW_WIDTH = 9;
/** Rows the ring starts with; it doubles up to trades_max. */
const RING_ROWS_INITIAL = 1024;

export type { LeaderTrade } from './leaderboard_sums.js';

export interface LeaderboardEntry {
  rank: number;
  address: string;
  volume_usdc: string;
  pnl_usdc: string;
  trades: number;
}

function putRow(f: Float64Array, at: number, t: LeaderTrade): void {
  f[at] = t.market; f[at + 1] = t.time_ms; f[at + 2] = t.price; f[at + 3] = t.quantity; f[at + 4] = t.taker_account;
  f[at + 5] = t.maker_account; f[at + 6] = t.taker_side; f[at + 7] = t.taker_fee; f[at + 8] = t.maker_fee;
}

export class Leaderboard {
  /** The window's fills, oldest at `head`, `count` of them, wrapping at `capacity` rows. */
  private rows = new Float64Array(RING_ROWS_INITIAL * LEADER_ROW_WIDTH);
  private capacity = RING_ROWS_INITIAL;
  private head = 0;
  private count = 0;
  /** The per-account sums: numbers until a sum would leave the safe integers (then bigint, rebuilt from the rows). */
  private sums: LeaderSums = new NumberSums();
  private readonly last_price: number[] = [];
  private readonly trades_max: number;
  private readonly window_ms: number;
  private sorted: { account: number; volume: bigint }[] | null = null;

  constructor(opts: { trades_max?: number; window_ms?: number } = {}) {
    this.trades_max = opts.trades_max ?? LEADERBOARD_TRADES_MAX_DEFAULT;
    this.window_ms = opts.window_ms ?? LEADERBOARD_WINDOW_MS;
  }

  /** The batch clock moved to `time_ms`: fills older than the window drop out. */
  advance(time_ms: number): void {
    const cutoff = time_ms - this.window_ms;
    while (this.count > 0 && this.rows[this.head * LEADER_ROW_WIDTH + 1] < cutoff) this.dropOldest();
  }

  /** A committed fill of a market; `usdc_quoted` says whether it counts. */
  onTrade(t: LeaderTrade, usdc_quoted: boolean): void {
    this.last_price[t.market] = t.price;
    if (!usdc_quoted) return;
    this.advance(t.time_ms);
    this.push(t);
    this.apply(t, 1);
    if (this.count > this.trades_max) this.dropOldest();
  }

  /** Ranked entries, at most `limit`; `addressOf` names an account. */
  top(limit: number, addressOf: (account: number) => string): LeaderboardEntry[] {
    if (this.sorted === null) {
      const list = this.sums.volumes().map(({ account, volume }) => ({ account, volume, address: addressOf(account) }));
      list.sort((a, b) => (a.volume > b.volume ? -1 : a.volume < b.volume ? 1 : a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
      this.sorted = list;
    }
    const out: LeaderboardEntry[] = [];
    for (let i = 0; i < this.sorted.length && out.length < limit; i++) {
      const { account, volume } = this.sorted[i];
      out.push({ rank: i + 1, address: addressOf(account), volume_usdc: volume.toString(), pnl_usdc: this.sums.pnl(account, this.last_price).toString(), trades: this.sums.trades(account) });
    }
    return out;
  }

  /** The window's fills as rows, oldest first (LEADER_ROW_WIDTH each), and the last prices (snapshots); the per-account sums follow from them. */
  exportState(): { window: Float64Array; last_price: number[] } {
    const out = new Float64Array(this.count * LEADER_ROW_WIDTH);
    const first = Math.min(this.count, this.capacity - this.head);
    out.set(this.rows.subarray(this.head * LEADER_ROW_WIDTH, (this.head + first) * LEADER_ROW_WIDTH));
    if (first < this.count) out.set(this.rows.subarray(0, (this.count - first) * LEADER_ROW_WIDTH), first * LEADER_ROW_WIDTH);
    return { window: out, last_price: Array.from(this.last_price, (p) => p ?? 0) };
  }

  /** Loads what `exportState` gave into an empty leaderboard (the sums are recomputed). */
  importState(state: { window: Float64Array; last_price: number[] }): void {
    state.last_price.forEach((p, m) => {
      this.last_price[m] = p;
    });
    for (let at = 0; at + LEADER_ROW_WIDTH <= state.window.length; at += LEADER_ROW_WIDTH) {
      const t = this.rowAt(state.window, at);
      this.push(t);
      this.apply(t, 1);
    }
  }

  /** Fills in the window now. */
  get size(): number {
    return this.count;
  }

  private rowAt(f: Float64Array, at: number): LeaderTrade {
    return {
      market: f[at], time_ms: f[at + 1], price: f[at + 2], quantity: f[at + 3], taker_account: f[at + 4],
      maker_account: f[at + 5], taker_side: f[at + 6], taker_fee: f[at + 7], maker_fee: f[at + 8],
    };
  }

  /** Appends a fill, doubling the ring (up to one row past trades_max) when full. */
  private push(t: LeaderTrade): void {
    if (this.count === this.capacity) {
      const grown = new Float64Array(Math.min(this.capacity * 2, this.trades_max + 1) * LEADER_ROW_WIDTH);
      const first = this.capacity - this.head;
      grown.set(this.rows.subarray(this.head * LEADER_ROW_WIDTH));
      grown.set(this.rows.subarray(0, this.head * LEADER_ROW_WIDTH), first * LEADER_ROW_WIDTH);
      this.rows = grown;
      this.capacity = grown.length / LEADER_ROW_WIDTH;
      this.head = 0;
    }
    putRow(this.rows, ((this.head + this.count) % this.capacity) * LEADER_ROW_WIDTH, t);
    this.count++;
  }

  private dropOldest(): void {
    const t = this.rowAt(this.rows, this.head * LEADER_ROW_WIDTH);
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    this.apply(t, -1);
  }

  /** Adds (sign 1) or removes (sign -1) one fill's contribution to both accounts (the fill is already in, or out of, the rows). */
  private apply(t: LeaderTrade, sign: 1 | -1): void {
    this.sorted = null;
    if (this.sums.apply(t, sign)) return;
    // A sum would leave the safe integers: the bigint form, from the window as it is now.
    const wide = new BigSums();
    for (let i = 0; i < this.count; i++) wide.apply(this.rowAt(this.rows, ((this.head + i) % this.capacity) * LEADER_ROW_WIDTH), 1);
    this.sums = wide;
  }

  /** Whether the sums moved to bigint (tests). */
  get wide(): boolean {
    return this.sums instanceof BigSums;
  }
}
