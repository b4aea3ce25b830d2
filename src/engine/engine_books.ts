// The fast engine's books: linking an order into its price level and its account's list,
// taking it out again, cancelling resting orders (one, an account's, a market's) and the
// read-only walks the checks before a match need (crossing, FOK liquidity, a market bid's cost,
// credit). The storage is book.ts; the data lives in the engine state (engine_state.ts), which
// this part holds. Unchecked money arithmetic on validated inputs (engine.ts says why).
import { Scale, notionalCeilUnchecked as notionalCeil_ } from '../money/index.js';
import { Link, OF, OI, type BookSide, type LevelStore, type OrderStore } from './book.js';
import { assert as assert_, MAX_SAFE as MAX_SAFE_, type EngineState } from './engine_state.js';
import type { Ledger } from './ledger.js';
import { NO_MARKET as NO_MARKET_, OrderStatus, Side, Stp } from './types.js';
import { BalanceReason, UpdateReason, type EventSink } from './events.js';
// Module-local copies of imported constants used on hot paths: an imported binding is a cell
// that optimized code loads and hole-checks at each use, a module-local const folds to its value
// (src/ring/event_writer.ts; docs/benchmarks.md, h16k).
const MAX_SAFE = MAX_SAFE_;
const NO_MARKET = NO_MARKET_;
// Imported functions of the hot paths too: a module-local const is a known target (no cell load, no check).
const notionalCeil = notionalCeil_;
const assert: (cond: boolean, message: string) => asserts cond = assert_;

export class Books {
  // `declare`: typed by the constructor's first store, not undefined first (book.ts says why).
  private declare readonly st: EngineState;
  // The state's stores, held directly: the hot paths read them on every request (one load, not two).
  private declare readonly orders: OrderStore;
  private declare readonly levels: LevelStore;
  private declare readonly ledger: Ledger;
  /** Slots collected for a cancel in order id order (reused: no allocation per request). */
  private readonly scratch_slots: number[] = [];

  constructor(state: EngineState) {
    this.st = state;
    this.orders = state.orders;
    this.levels = state.levels;
    this.ledger = state.ledger;
  }

  // ---------------------------------------------------------------------------------------------
  // Linking

  /**
   * Appends a slot (price, remaining set) at the tail of its price level, creating the level.
   * Kept small, with the rare steps (a new level, a credit account) in calls of their own and the
   * order's row read through locals: at 438 bytes of bytecode it did not fit the inlining budget
   * of amend (V8 inlines at most 920 bytes into one function, and no callee above 460; a move
   * relinks on 86% of amends; docs/benchmarks.md, h15f).
   */
  linkLevel(s: number): void {
    const o = this.orders;
    const oi = o.i;
    const of = o.f;
    // `| 0` on row arithmetic: int32 steps without overflow checks (OrderStore bounds the rows
    // below 2^31 elements).
    const si = (s * OI.STRIDE) | 0;
    const sf = (s * OF.STRIDE) | 0;
    const m = oi[(si + OI.MARKET) | 0];
    const side = this.st.bookSide(m, oi[(si + OI.SIDE) | 0]);
    // The row's remaining quantity and the account's credit flag read before newLevel's call (rare):
    // after it V8 re-checks the maps of every array it reads.
    const remaining = of[(sf + OF.REMAINING) | 0];
    const credit = this.ledger.has_credit[oi[si + OI.ACCOUNT]] === 1;
    // The level by its price in the side's index (a hash probe); a new one only when there is none.
    // `| 0`: newLevel's result is a number V8 cannot type as int32, and the phi with it made lvl a
    // float64 converted back for every store below.
    let lvl = side.levelAt(of[(sf + OF.PRICE) | 0]);
    if (lvl === Link.NIL) lvl = this.newLevel(side, s) | 0;
    // The level's arrays are read after newLevel (a new level may grow them), once each.
    const levels = this.levels;
    const tails = levels.tail;
    const tail = tails[lvl];
    oi[(si + OI.LEVEL) | 0] = lvl;
    oi[(si + OI.NEXT) | 0] = Link.NIL;
    oi[(si + OI.PREV) | 0] = tail;
    if (tail === Link.NIL) levels.head[lvl] = s;
    else oi[(tail * OI.STRIDE + OI.NEXT) | 0] = s;
    tails[lvl] = s;
    levels.quantity[lvl] += remaining;
    if (credit) this.creditRestChange(s, 1);
  }

  /** A new level at slot s's price, inserted into its side (slot, not price: a price handed to a call is boxed). */
  private newLevel(side: BookSide, s: number): number {
    const price = this.orders.f[s * OF.STRIDE + OF.PRICE];
    const lvl = this.levels.alloc(price);
    side.insertAt(~side.find(price), lvl, price);
    return lvl;
  }

  /**
   * Takes a resting order out of its price level (removing the level when it empties). Small, as
   * linkLevel (it says why), and with no path to linkLevel in it: an unlinkFifo(s, relink) of both
   * made V8 count linkLevel's body in this function's optimized code (614 bytes, over the 460 a
   * callee may have), so no caller inlined it (docs/benchmarks.md, h19a).
   */
  unlinkLevel(s: number): void {
    const o = this.orders;
    const oi = o.i;
    const si = (s * OI.STRIDE) | 0;
    const lvl = oi[(si + OI.LEVEL) | 0];
    this.levels.quantity[lvl] -= o.f[(((s * OF.STRIDE) | 0) + OF.REMAINING) | 0];
    const account = oi[(si + OI.ACCOUNT) | 0];
    if (this.leaveFifo(oi, si, lvl)) this.dropLevel(s, lvl);
    if (this.ledger.has_credit[account] === 1) this.creditRestChange(s, -1);
  }

  /**
   * Moves a resting order from its level to the level at the price now in its row: out of the old
   * level's FIFO (dropping the level when it empties), then linkLevel. The caller took the order's
   * old remaining quantity off the old level (and, for a credit account, its old rest) before it
   * wrote the new price and quantities. One call for AMEND's move where unlinkLevel and linkLevel
   * were two, with linkLevel inlined here: too large for amend's inlining budget, it stays one call
   * from amend. A moveLevel of two calls (unlink, then link) was itself inlined into amend as a
   * small function, which left amend the two calls (docs/benchmarks.md, h17b).
   */
  moveLevel(s: number): void {
    const oi = this.orders.i;
    const si = (s * OI.STRIDE) | 0;
    const lvl = oi[(si + OI.LEVEL) | 0];
    // The rare drop relinks on a path of its own: a merge with a call behind it makes V8 re-check
    // the maps of everything linkLevel reads (docs/benchmarks.md, h17b).
    if (this.leaveFifo(oi, si, lvl)) {
      this.dropLevel(s, lvl);
      this.linkLevel(s);
      return;
    }
    this.linkLevel(s);
  }

  /**
   * The one FIFO unlink: the order at row `si` (of level `lvl`) out of its level's list, its
   * neighbours (or the level's head and tail) joined. True when it was the level's only order (no
   * neighbour either way, not re-read from the level's head): the caller then drops the level.
   * The level's quantity is the caller's. Small, so that V8 inlines it into each caller.
   */
  private leaveFifo(oi: Int32Array, si: number, lvl: number): boolean {
    const levels = this.levels;
    const prev = oi[(si + OI.PREV) | 0];
    const next = oi[(si + OI.NEXT) | 0];
    if (prev === Link.NIL) levels.head[lvl] = next;
    else oi[(prev * OI.STRIDE + OI.NEXT) | 0] = next;
    if (next === Link.NIL) levels.tail[lvl] = prev;
    else oi[(next * OI.STRIDE + OI.PREV) | 0] = prev;
    return prev === Link.NIL && next === Link.NIL;
  }

  /** Removes the emptied level `lvl` (slot s's) from its side and frees it. */
  private dropLevel(s: number, lvl: number): void {
    const st = this.st;
    const o = this.orders;
    const m = o.i[s * OI.STRIDE + OI.MARKET];
    const side = st.bookSide(m, o.i[s * OI.STRIDE + OI.SIDE]);
    const i = side.count > 0 && side.levels[side.count - 1] === lvl ? side.count - 1 : side.find(this.levels.price[lvl]);
    assert(i >= 0 && side.levels[i] === lvl, 'a resting order belongs to a level of its side');
    side.removeAt(i);
    this.levels.release(lvl);
  }

  /** A credit account's resting quantity and value in slot s's market, with slot s's remaining quantity added (sign 1) or taken away (-1). */
  creditRestChange(s: number, sign: number): void {
    const o = this.orders;
    const remaining = o.f[s * OF.STRIDE + OF.REMAINING];
    if (!(remaining > 0)) return;
    this.st.credit.onRestChange(o.i[s * OI.STRIDE + OI.ACCOUNT], o.i[s * OI.STRIDE + OI.MARKET], sign * remaining,
      sign * notionalCeil(o.f[s * OF.STRIDE + OF.PRICE], remaining));
  }

  /**
   * A new slot for an accepted order that is about to rest (its market, side, time in force, and
   * one of the account's open orders); the caller writes its prices and quantities and links its
   * level. Room was checked before acceptance.
   */
  openSlot(order_id: number, account: number, m: number, side: number, tif: number, client_id: Int32Array): number {
    const o = this.orders;
    const s = o.alloc(order_id);
    assert(s !== Link.NIL, 'capacity was checked before acceptance');
    // `| 0` on the row's index: int32 arithmetic without overflow checks (OrderStore bounds the rows below 2^31 elements).
    const si = (s * OI.STRIDE) | 0;
    const oi = o.i;
    // `| 0` on the small-integer arguments: a Smi untagged for the store, where a plain Number
    // argument was converted to a double and truncated back (~10 instructions a field).
    oi[(si + OI.MARKET) | 0] = m | 0;
    oi[(si + OI.SIDE) | 0] = side | 0;
    oi[(si + OI.TIF) | 0] = tif | 0;
    this.linkAccount(s, account, client_id);
    return s;
  }

  /**
   * Makes a new slot one of the account's open orders (its list, its count, its client id:
   * `client_id` in client_id.ts's words, length 0 for none, valid otherwise).
   */
  linkAccount(s: number, account: number, client_id: Int32Array): void {
    const o = this.orders;
    const oi = o.i;
    const L = this.ledger;
    const si = (s * OI.STRIDE) | 0;
    oi[(si + OI.ACCOUNT) | 0] = account | 0;
    const head = L.order_head[account];
    oi[(si + OI.ACCT_PREV) | 0] = Link.NIL;
    oi[(si + OI.ACCT_NEXT) | 0] = head;
    if (head !== Link.NIL) oi[(head * OI.STRIDE + OI.ACCT_PREV) | 0] = s;
    L.order_head[account] = s;
    L.open_orders[account]++;
    if (client_id[0] !== 0) o.slot_by_client_id.add(s, account, client_id, 0);
  }

  /** Drops an order (already out of its level) from its account, the indexes, and frees its slot. */
  forget(s: number): void {
    const o = this.orders;
    const account = o.i[s * OI.STRIDE + OI.ACCOUNT];
    const L = this.ledger;
    const ap = o.i[s * OI.STRIDE + OI.ACCT_PREV];
    const an = o.i[s * OI.STRIDE + OI.ACCT_NEXT];
    if (ap === Link.NIL) L.order_head[account] = an;
    else o.i[ap * OI.STRIDE + OI.ACCT_NEXT] = an;
    if (an !== Link.NIL) o.i[an * OI.STRIDE + OI.ACCT_PREV] = ap;
    L.open_orders[account]--;
    // release takes the client id's entry too.
    o.release(s);
  }

  /** Unlinks a resting order from its level, its account and the indexes, and frees its slot. */
  removeResting(s: number): void {
    this.unlinkLevel(s);
    this.forget(s);
  }

  // ---------------------------------------------------------------------------------------------
  // Cancelling

  cancelResting(s: number, reason: number, out: EventSink): void {
    const st = this.st;
    const o = this.orders;
    const oi = o.i;
    const of = o.f;
    // The row read at once through `| 0` indexes (int32 steps, no overflow checks; OrderStore
    // bounds the rows below 2^31 elements), before releaseLock's and the update's code.
    const si = (s * OI.STRIDE) | 0;
    const sf = (s * OF.STRIDE) | 0;
    const m = oi[(si + OI.MARKET) | 0];
    const account = oi[(si + OI.ACCOUNT) | 0];
    const side = oi[(si + OI.SIDE) | 0];
    const locked = of[(sf + OF.LOCKED) | 0];
    if (locked > 0) st.releaseLock(account, side === Side.BID ? st.market_quote[m] : st.market_base[m], locked, BalanceReason.ORDER_CANCELLED);
    out.orderUpdate(of[(sf + OF.ID) | 0], account, m, side, OrderStatus.CANCELLED, of[(sf + OF.PRICE) | 0], of[(sf + OF.QUANTITY) | 0],
      of[(sf + OF.FILLED) | 0], 0, of[(sf + OF.LAST_FILL_PRICE) | 0], reason, 0, 0);
    this.removeResting(s);
  }

  /** Cancels every resting order of the account (in market `market`, or all with NO_MARKET). */
  cancelAccountOrders(account: number, market: number, reason: number, out: EventSink): void {
    const slots = this.scratch_slots;
    slots.length = 0;
    const o = this.orders;
    for (let s = this.ledger.order_head[account]; s !== Link.NIL; s = o.i[s * OI.STRIDE + OI.ACCT_NEXT]) {
      if (market === NO_MARKET || o.i[s * OI.STRIDE + OI.MARKET] === market) slots.push(s);
    }
    this.cancelSlotsById(slots, reason, out);
  }

  /** Cancels every resting order of market `m`, both sides. */
  cancelMarketOrders(m: number, reason: number, out: EventSink): void {
    const st = this.st;
    const slots = this.scratch_slots;
    slots.length = 0;
    for (const book of [st.bookSide(m, Side.BID), st.bookSide(m, Side.ASK)]) {
      for (let i = 0; i < book.count; i++) {
        for (let s = this.levels.head[book.levels[i]]; s !== Link.NIL; s = this.orders.i[s * OI.STRIDE + OI.NEXT]) slots.push(s);
      }
    }
    this.cancelSlotsById(slots, reason, out);
  }

  /** Cancels the given slots in ascending order id (the documented, replayable order). */
  private cancelSlotsById(slots: number[], reason: number, out: EventSink): void {
    const f = this.orders.f;
    slots.sort((x, y) => f[x * OF.STRIDE + OF.ID] - f[y * OF.STRIDE + OF.ID]);
    for (let i = 0; i < slots.length; i++) this.cancelResting(slots[i], reason, out);
    slots.length = 0;
  }

  /** After a request with fills: every credit account whose quoted value passed its threshold loses its orders. */
  creditSweep(out: EventSink): void {
    const st = this.st;
    const accounts = st.credit.accounts_ascending;
    for (let i = 0; i < accounts.length; i++) {
      const account = accounts[i];
      if (this.ledger.order_head[account] === Link.NIL) continue;
      const entry = st.credit.get(account);
      if (this.quotedValue(entry.rest_quantity, entry.rest_value) > entry.threshold_units) {
        this.cancelAccountOrders(account, NO_MARKET, UpdateReason.CREDIT_AUTO_CANCEL, out);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Walks for the checks before a match

  /**
   * The account's open order by id (and client id when given), or by client id alone; Link.NIL
   * when none. `client_id` in client_id.ts's words (length 0: none).
   */
  ownOpenOrder(account: number, order_id: number, client_id: Int32Array): number {
    const o = this.orders;
    let s: number | undefined;
    if (order_id !== 0) {
      s = o.slot_by_id.get(order_id);
      if (s === Link.NIL || o.i[s * OI.STRIDE + OI.ACCOUNT] !== account) return Link.NIL;
      if (client_id[0] !== 0 && !o.slot_by_client_id.matches(s, client_id, 0)) return Link.NIL;
      return s;
    }
    if (client_id[0] === 0) return Link.NIL;
    return o.slot_by_client_id.find(account, client_id, 0);
  }

  crosses(opposite: BookSide, side: number, p: number): boolean {
    const best = opposite.best();
    if (best === Link.NIL) return false;
    const bp = this.levels.price[best];
    return side === Side.BID ? p >= bp : p <= bp;
  }

  /**
   * Resting quantity on `book` a taker of `account` could fill, counted up to `enough`. Under
   * self-trade prevention the account's own orders are never filled: expire_maker skips them (they
   * would be cancelled and matching goes on), expire_taker / expire_both stop at the first one.
   * Only FOK orders ask (rare), so the walk goes order by order.
   */
  liquidity(book: BookSide, limited: boolean, side: number, limit: number, enough: number, account: number, stp: number): number {
    let total = 0;
    const o = this.orders;
    const levels = this.levels;
    for (let i = book.count - 1; i >= 0 && total < enough; i--) {
      const lvl = book.levels[i];
      const price = levels.price[lvl];
      if (limited && (side === Side.BID ? price > limit : price < limit)) break;
      for (let s = levels.head[lvl]; s !== Link.NIL && total < enough; s = o.i[s * OI.STRIDE + OI.NEXT]) {
        if (o.i[s * OI.STRIDE + OI.ACCOUNT] === account) {
          if (stp !== Stp.EXPIRE_MAKER) return total;
          continue;
        }
        total += o.f[s * OF.STRIDE + OF.REMAINING];
      }
    }
    return total;
  }

  /** What a market bid for `q` by `account` would pay over the fills it would make (own orders as in liquidity). Needs loadFees. */
  marketBidCost(book: BookSide, q: number, account: number): number {
    let left = q;
    let cost = 0;
    const o = this.orders;
    const levels = this.levels;
    for (let i = book.count - 1; i >= 0 && left > 0; i--) {
      const lvl = book.levels[i];
      const price = levels.price[lvl];
      for (let s = levels.head[lvl]; s !== Link.NIL && left > 0; s = o.i[s * OI.STRIDE + OI.NEXT]) {
        if (o.i[s * OI.STRIDE + OI.ACCOUNT] === account) continue;
        const take = left < o.f[s * OF.STRIDE + OF.REMAINING] ? left : o.f[s * OF.STRIDE + OF.REMAINING];
        cost += this.st.marketBidFillCost(price, take);
        left -= take;
      }
    }
    return cost;
  }

  /** Quoted value Q of a credit account (docs/engine.md, Credit), saturating at MAX_SAFE. */
  quotedValue(rest_quantity: Float64Array, rest_value: Float64Array): number {
    const st = this.st;
    let q = 0;
    for (let m = 0; m < st.market_count; m++) {
      const mark = st.market_mark[m];
      const v = mark > 0 ? notionalCeil(mark, rest_quantity[m]) : rest_value[m];
      if (v === Scale.MONEY_OVERFLOW || q + v > MAX_SAFE) return MAX_SAFE;
      q += v;
    }
    return q;
  }

  /** Whether adding (quantity, own-price value) in market m would bring Q to the limit or above. */
  creditWouldBreach(account: number, m: number, d_quantity: number, d_value: number): boolean {
    const entry = this.st.credit.get(account);
    entry.rest_quantity[m] += d_quantity;
    entry.rest_value[m] += d_value;
    const q = this.quotedValue(entry.rest_quantity, entry.rest_value);
    entry.rest_quantity[m] -= d_quantity;
    entry.rest_value[m] -= d_value;
    return q >= entry.credit_limit_units;
  }
}
