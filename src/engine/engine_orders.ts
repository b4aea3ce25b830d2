// The fast engine's order requests: PLACE, AMEND, CANCEL and CANCEL_ALL (docs/engine.md,
// "Requests, in validation order"). One part of the engine (engine.ts), holding the state, the
// books and the matching. PLACE is its checks, in the documented order, as a few named steps
// that return the first reject reason (Reject.NONE when they pass), then what an accepted order
// does; AMEND stays one function (it says why). Unchecked money arithmetic on validated inputs
// (engine.ts says why).
import { Scale, isMultiple as isMultiple_, notionalCeilUnchecked as notionalCeil_ } from '../money/index.js';
import { Link, OF, OI, type LevelStore, type OrderStore } from './book.js';
import { CLIENT_ID_WORDS, clientIdValid as clientIdValid_, clientIdWordsOf as clientIdWordsOf_ } from './client_id.js';
import type { Books } from './engine_books.js';
import type { Matching } from './engine_matching.js';
import { MarketStatus, reject as reject_, type EngineState } from './engine_state.js';
import type { Ledger } from './ledger.js';
import { NO_MARKET as NO_MARKET_, OrderStatus, OrderType, RequestKind, Side, Stp, Tif, type Request } from './types.js';
import { BalanceReason, UpdateReason, type EventSink } from './events.js';
import { Reject as Reject_ } from './codes.js';
// Module-local copies of imported constants used on hot paths: an imported binding is a cell
// that optimized code loads and hole-checks at each use, a module-local const folds to its value
// (src/ring/event_writer.ts; docs/benchmarks.md, h16k).
const NO_MARKET = NO_MARKET_;
const Reject = Reject_;
// Imported functions of the hot paths too: a module-local const is a known target (no cell load, no check).
const isMultiple = isMultiple_;
const notionalCeil = notionalCeil_;
const reject = reject_;
const clientIdValid = clientIdValid_;
const clientIdWordsOf = clientIdWordsOf_;

/** A limit order that may rest after matching (GTC or post-only). */
function mayRest(r: Request): boolean {
  return r.order_type === OrderType.LIMIT && (r.tif === Tif.GTC || r.tif === Tif.POST_ONLY);
}

export class OrderRequests {
  // `declare`: typed by the constructor's first store, not undefined first (book.ts says why).
  private declare readonly st: EngineState;
  // The state's stores, held directly: the hot paths read them on every request (one load, not two).
  private declare readonly orders: OrderStore;
  private declare readonly levels: LevelStore;
  private declare readonly ledger: Ledger;
  private declare readonly books: Books;
  private declare readonly matching: Matching;
  // What the checks of the request being applied found (fields: no allocation per request).
  /**
   * The amount a PLACE locks: quote (notional + worst-case fee) for a limit bid, base for an ask.
   * Starts at -0, a float64, as Matching's taker fields do: a lock beyond V8's small integers
   * would otherwise give this object a new hidden class, which dies with the last engine that has
   * it, and the next engine's code is rebuilt (the matcher bench's fast engine ran ~15% slower
   * after another contender's run; docs/benchmarks.md, 2026-11-26 03:55).
   */
  private lock = -0;
  /** A PLACE FOK that the book cannot fill: accepted, then cancelled without matching. */
  private fok_unfilled = false;
  /** The words of a plain Request's client id (client_id.ts clientIdWordsOf; a WordsRequest brings its own). */
  private readonly client_id_scratch = new Int32Array(CLIENT_ID_WORDS);

  constructor(state: EngineState, books: Books, matching: Matching) {
    this.st = state;
    this.orders = state.orders;
    this.levels = state.levels;
    this.ledger = state.ledger;
    this.books = books;
    this.matching = matching;
  }

  // ---------------------------------------------------------------------------------------------
  // PLACE

  place(r: Request, out: EventSink): void {
    // placeTermsReason goes on to placePriceReason and that to placeRoomReason when they pass: one
    // call from here where there were three (V8 inlines each into the one before it, a budget of
    // their own; docs/benchmarks.md, h18p).
    let reason = this.placeTermsReason(r);
    if (reason === Reject.NONE) reason = this.placeFundsReason(r);
    if (reason !== Reject.NONE) return reject(r, out, reason);

    // Accepted: from here on nothing can fail.
    const order_id = this.st.next_order_id++;
    this.st.acceptSigned(r, order_id, out);
    this.placeAccepted(r, order_id, out);
  }

  /**
   * An accepted place: its lock moves, then it rests at once (restPlaced) or goes to the matching.
   * A call of its own, taking no price or lock (place keeps its inlining budget for its checks,
   * which run on every place, and left the lock move and the crossing test as calls: their price
   * and lock arguments were boxed, ~25 bytes allocated per place; docs/benchmarks.md, h15h).
   */
  private placeAccepted(r: Request, order_id: number, out: EventSink): void {
    const st = this.st;
    const lock = this.lock;
    if (lock > 0) this.lockPlaced(r);
    const m = r.market;
    const side = r.side;
    if (mayRest(r) && !this.books.crosses(st.bookSide(m, side ^ 1), side, r.price_units)) {
      this.restPlaced(r, order_id, out);
      return;
    }
    this.matching.takePlaced(r, order_id, lock, !this.fok_unfilled, mayRest(r), out);
  }

  /**
   * An accepted place's lock (`this.lock`, not an argument) moves from available to locked. A
   * method taking the request only: when V8 leaves it a call from place (whose inlining budget
   * goes to the checks), no lock beyond the small integers is boxed for it, as it was for
   * EngineState.moveToLocked's `amount` (docs/benchmarks.md, h20b).
   */
  private lockPlaced(r: Request): void {
    const st = this.st;
    const lock_asset = r.side === Side.BID ? st.market_quote[r.market] : st.market_base[r.market];
    st.moveToLocked(r.account, lock_asset, this.lock, BalanceReason.ORDER_PLACED);
  }

  /**
   * An accepted GTC or post-only place that cannot cross (most GTC places) rests at once, as
   * Matching.takePlaced would leave it (matchTaker would stop at the opposite best, finishTaker
   * would rest it): written here, not through the taker's fields and three calls (as amend's
   * move; docs/engine.md). A function of its own, not part of place: V8 inlines callees by call
   * frequency, so place's checks (every place) took its inlining budget and openSlot and linkLevel
   * (this path only) stayed calls; here they are inlined (docs/benchmarks.md, h15h). Its lock is
   * `this.lock`, not an argument: a lock beyond the small integers handed to a call is boxed.
   */
  private restPlaced(r: Request, order_id: number, out: EventSink): void {
    const o = this.orders;
    const m = r.market;
    const side = r.side;
    const p = r.price_units;
    const q = r.quantity_units;
    const lock = this.lock;
    // The sequence taken before openSlot's call (after it V8 re-checks the state's map).
    const seq = this.st.next_priority_seq++;
    const s = this.books.openSlot(order_id, r.account, m, side, r.tif, clientIdWordsOf(r, this.client_id_scratch));
    // `| 0`: openSlot's result is a call's, not typed int32; the row's index then is (int32
    // arithmetic, no overflow checks: OrderStore bounds the rows below 2^31 elements).
    const sf = (s * OF.STRIDE) | 0;
    const f = o.f;
    f[(sf + OF.PRICE) | 0] = p;
    f[(sf + OF.QUANTITY) | 0] = q;
    f[(sf + OF.FILLED) | 0] = 0;
    f[(sf + OF.REMAINING) | 0] = q;
    f[(sf + OF.LOCKED) | 0] = lock;
    f[(sf + OF.PRIORITY_SEQ) | 0] = seq;
    f[(sf + OF.LAST_FILL_PRICE) | 0] = 0;
    this.books.linkLevel(s);
    out.orderUpdate(order_id, r.account, m, side, OrderStatus.OPEN, p, q, 0, q, 0, UpdateReason.PLACED, lock, seq);
  }

  /** The expiry (the signature was checked by FastEngine.apply), the market, the order's kind (side, type, time in force, self-trade mode), its quantity; then placePriceReason. */
  private placeTermsReason(r: Request): number {
    const st = this.st;
    // The stale-order guard is judged at the batch time, so a replay refuses exactly the same orders.
    if (r.expires_after_ms !== 0 && st.batch_time_ms > r.expires_after_ms) return Reject.EXPIRED;
    const m = r.market;
    if (!st.marketValid(m)) return Reject.MARKET_UNKNOWN;
    if (st.market_status[m] !== MarketStatus.ACTIVE) return Reject.MARKET_PAUSED;
    const tif = r.tif;
    const stp = r.stp;
    if (r.side !== Side.BID && r.side !== Side.ASK) return Reject.SIDE_INVALID;
    if (r.order_type !== OrderType.LIMIT && r.order_type !== OrderType.MARKET) return Reject.ORDER_TYPE_INVALID;
    if (!(tif >= Tif.GTC && tif <= Tif.POST_ONLY) || (tif | 0) !== tif) return Reject.TIF_INVALID;
    if (stp !== Stp.EXPIRE_MAKER && stp !== Stp.EXPIRE_TAKER && stp !== Stp.EXPIRE_BOTH) return Reject.STP_INVALID;
    const q = r.quantity_units;
    if (!(q > 0)) return Reject.QUANTITY_NOT_POSITIVE;
    if (!isMultiple(q, st.market_lot[m])) return Reject.QUANTITY_NOT_LOT_MULTIPLE;
    return this.placePriceReason(r);
  }

  /** Loads the market's fees; a limit price on the tick with a bid lock below 2^53 (sets `lock`), or a market order's terms; then placeRoomReason. */
  private placePriceReason(r: Request): number {
    const st = this.st;
    st.loadFees(r.market);
    const p = r.price_units;
    this.lock = 0;
    if (r.order_type === OrderType.LIMIT) {
      if (!(p > 0)) return Reject.PRICE_NOT_POSITIVE;
      if (!isMultiple(p, st.market_tick[r.market])) return Reject.PRICE_NOT_TICK_MULTIPLE;
      this.lock = st.bidLock(p, r.quantity_units);
      if (this.lock === Scale.MONEY_OVERFLOW) return Reject.NOTIONAL_TOO_LARGE;
    } else {
      if (r.tif !== Tif.IOC && r.tif !== Tif.FOK) return Reject.MARKET_ORDER_TIF;
      if (p !== 0) return Reject.MARKET_ORDER_WITH_PRICE;
    }
    // One call site for both kinds: V8 inlines it at one (the market orders' site was left a call,
    // compiled apart in the bench's second run; docs/benchmarks.md, h19a).
    return this.placeRoomReason(r);
  }

  /** The client order id; room for an order that may rest (the account's, the engine's, the book's levels); post-only must not take. */
  private placeRoomReason(r: Request): number {
    const st = this.st;
    const account = r.account;
    // The id's words, not its string: a replayed request brings them from its record (client_id.ts).
    const coid = clientIdWordsOf(r, this.client_id_scratch);
    if (coid[0] !== 0) {
      if (!clientIdValid(coid, 0)) return Reject.CLIENT_ORDER_ID_INVALID;
      if (this.orders.slot_by_client_id.find(account, coid, 0) !== Link.NIL) return Reject.CLIENT_ORDER_ID_DUPLICATE;
    }
    const m = r.market;
    const p = r.price_units;
    if (mayRest(r)) {
      const own = st.bookSide(m, r.side);
      if (this.ledger.open_orders[account] >= st.limits.orders_open_per_account_max) return Reject.ACCOUNT_OPEN_ORDERS_MAX;
      if (this.orders.size >= st.limits.orders_open_max) return Reject.ENGINE_OPEN_ORDERS_MAX;
      // Count first: the search runs only when the side is full (rare), not on every order.
      if (own.count >= st.price_levels_max && own.find(p) < 0) return Reject.BOOK_LEVELS_MAX;
    }
    const opposite = st.bookSide(m, r.side ^ 1);
    if (r.tif === Tif.POST_ONLY && this.books.crosses(opposite, r.side, p)) return Reject.POST_ONLY_WOULD_TAKE;
    return Reject.NONE;
  }

  /**
   * The balance for the lock (an ask locks its quantity: sets `lock`), the credit limit for an
   * order that may rest, and for an FOK whether the book can fill it (sets `fok_unfilled`) and a
   * market FOK bid can pay for it.
   */
  private placeFundsReason(r: Request): number {
    const st = this.st;
    const account = r.account;
    const m = r.market;
    const p = r.price_units;
    const q = r.quantity_units;
    const a = st.asset_count;
    const quote_key = account * a + st.market_quote[m];
    if (r.side === Side.ASK) {
      if (this.ledger.available[account * a + st.market_base[m]] < q) return Reject.INSUFFICIENT_BALANCE;
      this.lock = q;
    } else if (r.order_type === OrderType.LIMIT) {
      if (this.ledger.available[quote_key] < this.lock) return Reject.INSUFFICIENT_BALANCE;
    }
    if (mayRest(r) && this.ledger.has_credit[account] === 1) {
      if (this.books.creditWouldBreach(account, m, q, notionalCeil(p, q))) return Reject.CREDIT_BREACH;
    }
    this.fok_unfilled = false;
    if (r.tif !== Tif.FOK) return Reject.NONE;
    const opposite = st.bookSide(m, r.side ^ 1);
    if (this.books.liquidity(opposite, r.order_type === OrderType.LIMIT, r.side, p, q, account, r.stp) < q) {
      this.fok_unfilled = true;
    } else if (r.side === Side.BID && r.order_type === OrderType.MARKET) {
      if (this.books.marketBidCost(opposite, q, account) > this.ledger.available[quote_key]) return Reject.INSUFFICIENT_BALANCE;
    }
    return Reject.NONE;
  }

  // ---------------------------------------------------------------------------------------------
  // AMEND

  /**
   * One function on purpose, unlike place: AMEND is 82% of the matcher bench's mix, and split into
   * check and accept steps (three calls V8 did not inline) the bench lost ~10% of cpu_ops_per_s
   * against main; as one function, ~5% (medians of alternated runs, docs/benchmarks.md). All its
   * checks in one call of their own, to leave V8's inlining budget to the relinking, lost 7-8%
   * (docs/benchmarks.md, h15d).
   */
  amend(r: Request, out: EventSink): void {
    const st = this.st;
    const account = r.account;
    const o = this.orders;
    // Books.ownOpenOrder without a client id (an amend names its order by id), written out: its
    // 133 bytes of bytecode came out of this function's inlining budget, and with them and
    // checkSigned's call gone (apply makes it) V8 inlines the crossing test below
    // (docs/benchmarks.md, 2026-11-26, branch h15e).
    const s = o.slot_by_id.get(r.order_id);
    // The order's rows, and every index below, with `| 0`: int32 arithmetic without overflow
    // checks (OrderStore bounds the rows below 2^31 elements, the ledger its arrays likewise).
    const si = (s * OI.STRIDE) | 0;
    const sf = (s * OF.STRIDE) | 0;
    if (s === Link.NIL || o.i[si + OI.ACCOUNT] !== account) return reject(r, out, Reject.ORDER_NOT_FOUND);
    // The order's float fields are read here, at once, though the checks below need them late:
    // their cache line is then fetched while the integer fields' line (read just above) is.
    const old_price = o.f[(sf + OF.PRICE) | 0];
    const old_lock = o.f[(sf + OF.LOCKED) | 0];
    const old_remaining = o.f[(sf + OF.REMAINING) | 0];
    const m = o.i[(si + OI.MARKET) | 0];
    // The order's level read with its other integer fields (their cache line is in hand), not
    // after the calls of acceptance (V8 then re-checks the store's map and reloads its array).
    const lvl = o.i[(si + OI.LEVEL) | 0];
    if (st.market_status[m] !== MarketStatus.ACTIVE) return reject(r, out, Reject.MARKET_PAUSED);
    const q = r.quantity_units;
    if (!(q > 0)) return reject(r, out, Reject.QUANTITY_NOT_POSITIVE);
    if (!isMultiple(q, st.market_lot[m])) return reject(r, out, Reject.QUANTITY_NOT_LOT_MULTIPLE);
    const p = r.price_units;
    if (!(p > 0)) return reject(r, out, Reject.PRICE_NOT_POSITIVE);
    if (!isMultiple(p, st.market_tick[m])) return reject(r, out, Reject.PRICE_NOT_TICK_MULTIPLE);
    st.loadFees(m);
    const bid_lock = st.bidLock(p, q);
    if (bid_lock === Scale.MONEY_OVERFLOW) return reject(r, out, Reject.NOTIONAL_TOO_LARGE);
    const side = o.i[(si + OI.SIDE) | 0];
    const own = st.bookSide(m, side);
    const opposite = st.bookSide(m, side ^ 1);
    // Moving to a new price level is refused when the side is full, unless the order leaves a
    // level it is alone at (the count of levels then does not grow).
    // Whether it is alone at its level is read last: only a full side asks (rare), and the level's
    // head and tail are a cache line a size-only amend never needs.
    if (p !== old_price && own.count >= st.price_levels_max && !this.aloneAtLevel(s) && own.find(p) < 0) {
      return reject(r, out, Reject.BOOK_LEVELS_MAX);
    }
    if (o.i[(si + OI.TIF) | 0] === Tif.POST_ONLY && this.books.crosses(opposite, side, p)) return reject(r, out, Reject.POST_ONLY_WOULD_TAKE);
    const lock_asset = side === Side.BID ? st.market_quote[m] : st.market_base[m];
    const new_lock = side === Side.BID ? bid_lock : q;
    const key = (account * st.asset_count + lock_asset) | 0;
    const L = this.ledger;
    if (new_lock > L.available[key] + old_lock) return reject(r, out, Reject.INSUFFICIENT_BALANCE);
    // Read once: acceptance and the move below do not change it, and a re-read after their calls
    // is a map check and an array reload.
    const credit = L.has_credit[account] === 1;
    if (credit) {
      const value_delta = notionalCeil(p, q) - notionalCeil(old_price, old_remaining);
      if (this.books.creditWouldBreach(account, m, q - old_remaining, value_delta)) return reject(r, out, Reject.CREDIT_BREACH);
    }

    // Accepted.
    const order_id = o.f[(sf + OF.ID) | 0];
    st.acceptSigned(r, order_id, out);
    L.touch(account, lock_asset, BalanceReason.ORDER_PLACED);
    L.available[key] -= new_lock - old_lock;
    L.locked[key] += new_lock - old_lock;
    const filled = o.f[(sf + OF.FILLED) | 0];
    // What the update reports from the row, read before the move's call: after a call V8 re-checks
    // the store's map and reloads its array.
    const last_fill_price = o.f[(sf + OF.LAST_FILL_PRICE) | 0];
    let seq = o.f[(sf + OF.PRIORITY_SEQ) | 0];
    if (p === old_price && q <= old_remaining) {
      // Same price, not larger: keeps its place in the queue.
      o.f[(sf + OF.LOCKED) | 0] = new_lock;
      const dq = old_remaining - q;
      o.f[(sf + OF.REMAINING) | 0] = q;
      o.f[(sf + OF.QUANTITY) | 0] = filled + q;
      this.levels.quantity[lvl] -= dq;
      if (credit) {
        this.st.credit.onRestChange(account, m, -dq, notionalCeil(p, q) - notionalCeil(p, old_remaining));
      }
    } else {
      // Re-enters the book as if placed now, keeping its id and filled quantity. The crossing test
      // before the order leaves its level: that changes its own side, the test reads the other.
      if (this.books.crosses(opposite, side, p)) {
        this.books.unlinkLevel(s);
        this.matching.takeAmended(s, p, q, new_lock, out);
        return;
      }
      // Nothing to match (most moves): the order rests at once at its new price, as
      // Matching.rest would leave it (matchTaker would stop at the opposite best). Written here,
      // not through a call: a price or lock passed to a call V8 does not inline is boxed (a heap
      // number per move; amend's inlining budget is spent on its checks). Its old remaining
      // quantity (and a credit account's old rest) leaves the old level while the row is still old
      // (unlinkLevel's first and last steps), then moveLevel relinks it in one call.
      this.levels.quantity[lvl] -= old_remaining;
      if (credit) this.books.creditRestChange(s, -1);
      o.f[(sf + OF.PRICE) | 0] = p;
      o.f[(sf + OF.QUANTITY) | 0] = filled + q;
      o.f[(sf + OF.REMAINING) | 0] = q;
      o.f[(sf + OF.LOCKED) | 0] = new_lock;
      seq = st.next_priority_seq++;
      o.f[(sf + OF.PRIORITY_SEQ) | 0] = seq;
      this.books.moveLevel(s);
    }
    // One call site for both outcomes: V8 inlines a counting sink's method at one, not at two.
    out.orderUpdate(order_id, account, m, side, filled > 0 ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN,
      p, filled + q, filled, q, last_fill_price, UpdateReason.AMENDED, new_lock, seq);
  }

  /** Whether slot s is the only order at its price level. */
  private aloneAtLevel(s: number): boolean {
    const lvl = this.orders.i[s * OI.STRIDE + OI.LEVEL];
    return this.levels.head[lvl] === s && this.levels.tail[lvl] === s;
  }

  // ---------------------------------------------------------------------------------------------
  // CANCEL, CANCEL_ALL

  cancel(r: Request, out: EventSink): void {
    const st = this.st;
    const s = this.books.ownOpenOrder(r.account, r.order_id, clientIdWordsOf(r, this.client_id_scratch));
    if (s === Link.NIL) return reject(r, out, Reject.ORDER_NOT_FOUND);
    st.acceptSigned(r, this.orders.f[s * OF.STRIDE + OF.ID], out);
    this.books.cancelResting(s, UpdateReason.USER_CANCEL, out);
  }

  cancelAll(r: Request, out: EventSink): void {
    const st = this.st;
    const m = r.market;
    if (m !== NO_MARKET && !st.marketValid(m)) return reject(r, out, Reject.MARKET_UNKNOWN);
    st.acceptSigned(r, 0, out);
    this.books.cancelAccountOrders(r.account, m, UpdateReason.CANCEL_ALL, out);
  }
}
