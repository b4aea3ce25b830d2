// Balances, nonces and the per-request record of which (account, asset) pairs changed.
//
// Balances live in two Float64Arrays indexed by account * asset_count + asset: every value is an
// exact integer (units), a float64 holds those exactly up to 2^53. The "touched" record lets the
// engine emit one balance event per changed pair at the end of a request, in a fixed order,
// whatever order the matching code touched them in.
import { BalanceReason, type EventSink } from './events.js';
import { grownF64, grownI32 } from './grown.js';

/** Priority of balance reasons when one pair is touched several times in one request. */
const REASON_RANK: readonly number[] = [
  /* FILL */ 4, /* ORDER_PLACED */ 2, /* ORDER_CANCELLED */ 3, /* DEPOSIT */ 1, /* WITHDRAWAL */ 1,
];

/**
 * The touched record's fields (float64s per position). A const enum: tsc writes the numbers into
 * the code, where module constants were a context-slot load each in the bytecode, and flush's
 * bytecode counts against FastEngine.apply's inlining budget (docs/benchmarks.md, h17e).
 */
const enum Rec { STRIDE = 4, AVAILABLE = 0, LOCKED = 1, REASON = 2, ACCOUNT = 3 }
/** Above this many touched pairs `sortTouched` uses the typed array's sort, not insertion. */
const SORT_INSERTION_MAX = 32;

// Fields set in the constructor are `declare`d (see book.ts's header, docs/benchmarks.md h16m):
// defined as undefined first, their field type would stay "any" and every typed-array read from
// them would check its map.
export class Ledger {
  declare readonly asset_count: number;
  declare readonly accounts_max: number;
  declare account_capacity: number;
  declare available: Float64Array;
  declare locked: Float64Array;
  declare nonce_high_water: Float64Array;
  declare open_orders: Int32Array;
  /** Head slot of each account's list of open orders (OrderStore.acct_next links). */
  declare order_head: Int32Array;
  /** 1 when the account has a credit limit (looked up in the credit table then). */
  declare has_credit: Uint8Array;
  /** Highest account id seen + 1: canonical state walks accounts below it. */
  account_high = 1;

  /**
   * Per pair (account * asset_count + asset): 0 when the current request has not touched it, else
   * its position in the touched record + 1. `flush` sets the entries of the pairs it emits back
   * to 0 (it reads each one anyway), so a request starts with no stamp to bump or compare: the
   * stamp (an int32 per pair beside the position, and a wrap-around clear every 2^31 requests)
   * cost a load, a compare and a store per touch and a counter per request (docs/benchmarks.md,
   * h17e).
   */
  private declare touch_state: Int32Array;
  /**
   * The touched pairs' keys: in touch order while the request runs, sorted in place by `flush`
   * (keys are unique within a request: a second touch is a `retouch`). A pair's record position
   * is then found through `touch_state`, so the sort moves one value per step, not an index and
   * a lookup.
   */
  private declare t_key: Int32Array;
  /** Per record position p, at [4p..4p+4): available and locked before the request, reason, account. */
  private declare t_rec: Float64Array;
  private t_count = 0;

  constructor(asset_count: number, accounts_max: number, capacity_initial: number) {
    // amend indexes the balances with `| 0` (int32 arithmetic): right only below 2^31 entries.
    if (!(accounts_max * asset_count <= 0x7fffffff)) throw new RangeError(`accounts_max x assets ${accounts_max * asset_count} beyond int32 indexes`);
    this.asset_count = asset_count;
    this.accounts_max = accounts_max;
    const n = Math.max(2, Math.min(capacity_initial, accounts_max));
    this.account_capacity = n;
    this.available = new Float64Array(n * asset_count);
    this.locked = new Float64Array(n * asset_count);
    this.nonce_high_water = new Float64Array(n);
    this.open_orders = new Int32Array(n);
    this.order_head = new Int32Array(n).fill(-1);
    this.has_credit = new Uint8Array(n);
    this.touch_state = new Int32Array(n * asset_count);
    const t = 64;
    this.t_key = new Int32Array(t);
    this.t_rec = new Float64Array(t * Rec.STRIDE);
  }

  /**
   * Makes room for `account` (valid ids are checked by the caller against accounts_max). The
   * check alone stays here (growth is `admit`): under V8's 27 bytes of bytecode, so it is inlined
   * into its callers without spending their inlining budget.
   */
  ensure(account: number): void {
    if (account >= this.account_high) this.admit(account);
  }

  /** A new highest account: raises account_high, and grows the arrays when it is beyond them. */
  admit(account: number): void {
    this.account_high = account + 1;
    if (account < this.account_capacity) return;
    let n = this.account_capacity;
    while (n <= account) n *= 2;
    n = Math.min(n, this.accounts_max);
    const a = this.asset_count;
    this.available = grownF64(this.available, n * a);
    this.locked = grownF64(this.locked, n * a);
    this.nonce_high_water = grownF64(this.nonce_high_water, n);
    this.touch_state = grownI32(this.touch_state, n * a);
    this.open_orders = grownI32(this.open_orders, n);
    const head = new Int32Array(n).fill(-1);
    head.set(this.order_head);
    this.order_head = head;
    const credit = new Uint8Array(n);
    credit.set(this.has_credit);
    this.has_credit = credit;
    this.account_capacity = n;
  }

  /**
   * A request starts with an empty touched record. `flush` leaves it empty; only a request that
   * ended without one (an engine assertion thrown in the middle) leaves pairs marked, and they
   * are cleared here, so the next request cannot take them for its own.
   */
  beginRequest(): void {
    if (this.t_count !== 0) this.discardTouched();
  }

  private discardTouched(): void {
    for (let i = 0; i < this.t_count; i++) this.touch_state[this.t_key[i]] = 0;
    this.t_count = 0;
  }

  /**
   * Records that (account, asset) is about to change. Call before changing it. The pair's second
   * touch in a request (`retouch`) and the growth of the record are calls of their own: most
   * requests touch a pair once, and this function's bytecode counts against the inlining budget
   * of every caller (amend's, docs/benchmarks.md, h15f).
   */
  touch(account: number, asset: number, reason: number): void {
    const key = account * this.asset_count + asset;
    const ts = this.touch_state;
    const at = ts[key];
    if (at !== 0) return this.retouch(at, reason);
    const p = this.t_count;
    if (p === this.t_key.length) this.growTouched();
    const count = p + 1;
    this.t_count = count;
    ts[key] = count;
    this.t_key[p] = key;
    const rec = this.t_rec;
    const b = p * Rec.STRIDE;
    rec[b] = this.available[key]; // Rec.AVAILABLE, 0: `b + 0` was bytecode of its own
    rec[b + Rec.LOCKED] = this.locked[key];
    rec[b + Rec.REASON] = reason;
    rec[b + Rec.ACCOUNT] = account;
  }

  /**
   * A pair touched again in this request (`state`: its touch_state entry, record position + 1;
   * the - 1 is here, not in touch, whose bytecode counts against amend's inlining budget):
   * keeps the reason of highest rank.
   */
  private retouch(state: number, reason: number): void {
    const at = (state - 1) * Rec.STRIDE + Rec.REASON;
    if (REASON_RANK[reason] > REASON_RANK[this.t_rec[at]]) this.t_rec[at] = reason;
  }

  /**
   * Emits one balance event per changed pair, ascending by account then asset. The sort is a call
   * of its own, made only when the request touched more than one pair (an amend, a cancel, a place
   * that rests touch one): this function is inlined into FastEngine.apply, and its bytecode counts
   * against apply's inlining budget (docs/benchmarks.md, h15k).
   */
  flush(out: EventSink): void {
    const n = this.t_count;
    if (n > 1) this.sortTouched(n);
    const keys = this.t_key;
    const ts = this.touch_state;
    const rec = this.t_rec;
    const a = this.asset_count;
    for (let i = 0; i < n; i++) {
      const key = keys[i];
      const b = (ts[key] - 1) * Rec.STRIDE;
      ts[key] = 0;
      const av = this.available[key];
      const lk = this.locked[key];
      if (av === rec[b + Rec.AVAILABLE] && lk === rec[b + Rec.LOCKED]) continue;
      // The account is kept with the record: no integer division per balance event.
      const account = rec[b + Rec.ACCOUNT];
      out.balance(account, key - account * a, av, lk, rec[b + Rec.REASON]);
    }
    this.t_count = 0;
  }

  /**
   * `t_key[0..n)` ascending, in place: an insertion sort for the handful of pairs a request
   * usually touches (a fill: five or six), the typed array's numeric sort (n log n) beyond
   * SORT_INSERTION_MAX, where insertion was quadratic (a market pause touches the lock of every
   * order owner: 100,000 pairs would have been ~2.5e9 steps).
   */
  private sortTouched(n: number): void {
    const k = this.t_key;
    if (n > SORT_INSERTION_MAX) {
      k.subarray(0, n).sort();
      return;
    }
    for (let i = 1; i < n; i++) {
      const v = k[i];
      let j = i;
      while (j > 0 && k[j - 1] > v) {
        k[j] = k[j - 1];
        j--;
      }
      k[j] = v;
    }
  }

  private growTouched(): void {
    const n = this.t_key.length * 2;
    this.t_key = grownI32(this.t_key, n);
    this.t_rec = grownF64(this.t_rec, n * Rec.STRIDE);
  }
}

export { BalanceReason };
