// The read model's fills per account and trades per market as rows of numbers in one growing
// Float64Array each, not an object per fill (issue 11, branch h11m). A fill made three objects
// (the trade and both sides' fills, ~130 B each with their boxed time) that every account and
// market list kept for hundreds of batches: each survived the front's scavenges and was promoted,
// ~a fifth of what the front promoted per request at 1,000/s. A row is 80 or 104 bytes in the
// array's backing store, which V8 keeps outside its heap (beyond 64 bytes), so a fill adds nothing
// a scavenge copies. Views are built when a GET reads them (a few per request, dying young).
//
// Bounds are those of the arrays they replace: a list grows to twice `kept`, then keeps the newest
// `kept` (trimmed in bulk), so what GET /account/:address/fills and GET /trades/:market_id answer
// is unchanged. The row layouts are the snapshot's (src/snapshot/front_state.ts copies them).
import type { FillView, TradeView } from './views.js';

/** Numbers per fill row: fill_id, order_id, market, side, price, quantity, fee, is_maker (1/0), batch_id, time_ms. */
export const FILL_ROW_WIDTH = 10;
/** Numbers per trade row: fill_id, market, price, quantity, taker_side, time_ms, taker/maker order ids, taker/maker accounts, taker/maker fees, batch_id. */
export const TRADE_ROW_WIDTH = 13;

/** Rows a list has room for at first (its array then doubles, up to 2 x kept + 1 rows). */
const ROWS_INITIAL = 8;

/** Rows of `width` numbers, oldest first, bounded like the read model's lists (see the file's header). */
class BoundedRows {
  protected declare f: Float64Array;
  private n = 0;
  protected declare readonly width: number;
  private declare readonly kept: number;

  constructor(width: number, kept: number) {
    this.width = width;
    this.kept = kept;
    this.f = new Float64Array(Math.min(ROWS_INITIAL, kept * 2 + 1) * width);
  }

  /** Rows held. */
  get length(): number {
    return this.n;
  }

  /** The rows, oldest first, `width` numbers each (a view of the backing array: copy it to keep it). */
  rows(): Float64Array {
    return this.f.subarray(0, this.n * this.width);
  }

  /** Appends one row's numbers (`row.length` = width: the snapshot's import). */
  pushRow(row: ArrayLike<number>): void {
    const at = this.append(); // first: it may replace the array
    this.f.set(row, at);
    this.trim();
  }

  /** The offset of a new row at the end, the array grown if full (the caller writes it, then trim()). */
  protected append(): number {
    const w = this.width;
    if ((this.n + 1) * w > this.f.length) {
      const grown = new Float64Array(Math.max(this.n + 1, Math.min(this.n * 2, this.kept * 2 + 1)) * w);
      grown.set(this.f.subarray(0, this.n * w));
      this.f = grown;
    }
    return this.n++ * w;
  }

  /** Past twice `kept`, keeps the newest `kept` (the arrays' pushBounded). */
  protected trim(): void {
    if (this.n <= this.kept * 2) return;
    const w = this.width;
    this.f.copyWithin(0, (this.n - this.kept) * w, this.n * w);
    this.n = this.kept;
  }
}

/** One account's fills. */
export class FillRows extends BoundedRows {
  constructor(kept: number) {
    super(FILL_ROW_WIDTH, kept);
  }

  push(fill_id: number, order_id: number, market: number, side: number, price: number, quantity: number,
    fee: number, is_maker: boolean, batch_id: number, time_ms: number): void {
    const at = this.append(); // first: it may replace the array
    const f = this.f;
    f[at] = fill_id; f[at + 1] = order_id; f[at + 2] = market; f[at + 3] = side; f[at + 4] = price;
    f[at + 5] = quantity; f[at + 6] = fee; f[at + 7] = is_maker ? 1 : 0; f[at + 8] = batch_id; f[at + 9] = time_ms;
    this.trim();
  }

  /** Fill `i` (0: the oldest held) as a view. */
  at(i: number): FillView {
    const f = this.f;
    const at = i * FILL_ROW_WIDTH;
    return {
      fill_id: f[at], order_id: f[at + 1], market: f[at + 2], side: f[at + 3], price: f[at + 4], quantity: f[at + 5],
      fee: f[at + 6], is_maker: f[at + 7] === 1, batch_id: f[at + 8], time_ms: f[at + 9],
    };
  }
}

/** One market's trades. */
export class TradeRows extends BoundedRows {
  constructor(kept: number) {
    super(TRADE_ROW_WIDTH, kept);
  }

  push(t: TradeView): void {
    const at = this.append(); // first: it may replace the array
    const f = this.f;
    f[at] = t.fill_id; f[at + 1] = t.market; f[at + 2] = t.price; f[at + 3] = t.quantity; f[at + 4] = t.taker_side;
    f[at + 5] = t.time_ms; f[at + 6] = t.taker_order_id; f[at + 7] = t.maker_order_id; f[at + 8] = t.taker_account;
    f[at + 9] = t.maker_account; f[at + 10] = t.taker_fee; f[at + 11] = t.maker_fee; f[at + 12] = t.batch_id;
    this.trim();
  }

  /** Trade `i` (0: the oldest held) as a view. */
  at(i: number): TradeView {
    const f = this.f;
    const at = i * TRADE_ROW_WIDTH;
    return {
      fill_id: f[at], market: f[at + 1], price: f[at + 2], quantity: f[at + 3], taker_side: f[at + 4], time_ms: f[at + 5],
      taker_order_id: f[at + 6], maker_order_id: f[at + 7], taker_account: f[at + 8], maker_account: f[at + 9],
      taker_fee: f[at + 10], maker_fee: f[at + 11], batch_id: f[at + 12],
    };
  }

  /** Every trade held, oldest first, as views (tests, tools). */
  toArray(): TradeView[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i));
  }
}
