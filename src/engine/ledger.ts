// Balances, nonces and the per-request record of which (account, asset) pairs changed.
//
// Balances live in two Float64Arrays indexed by account * asset_count + asset: every value is an
// exact integer (units), a float64 holds those exactly up to 2^53. The "touched" record lets the
// engine emit one balance event per changed pair at the end of a request, in a fixed order,
// whatever order the matching code touched them in.
import { BalanceReason, type EventSink } from './events.js';

/** Priority of balance reasons when one pair is touched several times in one request. */
const REASON_RANK: readonly number[] = [
  /* FILL */ 4, /* ORDER_PLACED */ 2, /* ORDER_CANCELLED */ 3, /* DEPOSIT */ 1, /* WITHDRAWAL */ 1,
];

export class Ledger {
  readonly asset_count: number;
  readonly accounts_max: number;
  account_capacity: number;
  available: Float64Array;
  locked: Float64Array;
  nonce_high_water: Float64Array;
  open_orders: Int32Array;
  /** Head slot of each account's list of open orders (OrderStore.acct_next links). */
  order_head: Int32Array;
  /** 1 when the account has a credit limit (looked up in the credit table then). */
  has_credit: Uint8Array;
  /** Highest account id seen + 1: canonical state walks accounts below it. */
  account_high = 1;

  private request_stamp = 0;
  private touch_stamp: Float64Array;
  private touch_pos: Int32Array;
  private t_key: Int32Array;
  private t_before_available: Float64Array;
  private t_before_locked: Float64Array;
  private t_reason: Uint8Array;
  private t_order: Int32Array;
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
    this.touch_stamp = new Float64Array(n * asset_count);
    this.touch_pos = new Int32Array(n * asset_count);
    const t = 64;
    this.t_key = new Int32Array(t);
    this.t_before_available = new Float64Array(t);
    this.t_before_locked = new Float64Array(t);
    this.t_reason = new Uint8Array(t);
    this.t_order = new Int32Array(t);
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
    const f64 = (x: Float64Array, len: number): Float64Array => {
      const y = new Float64Array(len);
      y.set(x);
      return y;
    };
    this.available = f64(this.available, n * a);
    this.locked = f64(this.locked, n * a);
    this.nonce_high_water = f64(this.nonce_high_water, n);
    this.touch_stamp = f64(this.touch_stamp, n * a);
    const pos = new Int32Array(n * a);
    pos.set(this.touch_pos);
    this.touch_pos = pos;
    const open = new Int32Array(n);
    open.set(this.open_orders);
    this.open_orders = open;
    const head = new Int32Array(n).fill(-1);
    head.set(this.order_head);
    this.order_head = head;
    const credit = new Uint8Array(n);
    credit.set(this.has_credit);
    this.has_credit = credit;
    this.account_capacity = n;
  }

  beginRequest(): void {
    this.request_stamp++;
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
    if (this.touch_stamp[key] === this.request_stamp) return this.retouch(key, reason);
    if (this.t_count === this.t_key.length) this.growTouched();
    const p = this.t_count++;
    this.touch_stamp[key] = this.request_stamp;
    this.touch_pos[key] = p;
    this.t_key[p] = key;
    this.t_before_available[p] = this.available[key];
    this.t_before_locked[p] = this.locked[key];
    this.t_reason[p] = reason;
  }

  /** A pair touched again in this request: keeps the reason of highest rank. */
  private retouch(key: number, reason: number): void {
    const p = this.touch_pos[key];
    if (REASON_RANK[reason] > REASON_RANK[this.t_reason[p]]) this.t_reason[p] = reason;
  }

  /**
   * Emits one balance event per changed pair, ascending by account then asset. The sort is a call
   * of its own, made only when the request touched more than one pair (an amend, a cancel, a place
   * that rests touch one): this function is inlined into FastEngine.apply, and its bytecode counts
   * against apply's inlining budget (docs/benchmarks.md, h15k).
   */
  flush(out: EventSink): void {
    const n = this.t_count;
    const order = this.t_order;
    if (n > 1) this.sortTouched(n);
    else order[0] = 0;
    const keys = this.t_key;
    const a = this.asset_count;
    for (let i = 0; i < n; i++) {
      const p = order[i];
      const key = keys[p];
      const av = this.available[key];
      const lk = this.locked[key];
      if (av === this.t_before_available[p] && lk === this.t_before_locked[p]) continue;
      out.balance((key / a) | 0, key % a, av, lk, this.t_reason[p]);
    }
    this.t_count = 0;
  }

  /** `t_order[0..n)`: the touched pairs' record positions, ascending by key (insertion sort: a request touches a handful of pairs). */
  private sortTouched(n: number): void {
    const order = this.t_order;
    const keys = this.t_key;
    for (let i = 0; i < n; i++) {
      let j = i;
      const k = keys[i];
      while (j > 0 && keys[order[j - 1]] > k) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
  }

  private growTouched(): void {
    const n = this.t_key.length * 2;
    const i32 = (x: Int32Array): Int32Array => {
      const y = new Int32Array(n);
      y.set(x);
      return y;
    };
    const f64 = (x: Float64Array): Float64Array => {
      const y = new Float64Array(n);
      y.set(x);
      return y;
    };
    this.t_key = i32(this.t_key);
    this.t_order = i32(this.t_order);
    this.t_before_available = f64(this.t_before_available);
    this.t_before_locked = f64(this.t_before_locked);
    const r = new Uint8Array(n);
    r.set(this.t_reason);
    this.t_reason = r;
  }
}

export { BalanceReason };
