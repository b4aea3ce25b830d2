// The fast engine's matching: one taker order (a placed order, or an amended one re-entering the
// book) against the opposite side, fill by fill at the makers' prices, then its remainder rested,
// cancelled or reported filled (docs/engine.md, "Matching"). One part of the engine (engine.ts),
// holding the state, the books and the programmes (a fill pays the taker's referrer its share).
//
// Hot path: the taker lives in fields of this object, not in an object per request; events go
// straight to the sink. Unchecked money arithmetic on validated inputs (engine.ts says why).
import {
  feeCeilUnchecked as feeCeil_, feeFloorUnchecked as feeFloor_,
  notionalCeilUnchecked as notionalCeil_, notionalFloorUnchecked as notionalFloor_,
} from '../money/index.js';
import { Link, OF, OI, type LevelStore, type OrderStore } from './book.js';
import { CLIENT_ID_WORDS, clientIdWordsOf as clientIdWordsOf_ } from './client_id.js';
import type { Books } from './engine_books.js';
import type { Programmes } from './engine_programmes.js';
import type { EngineState } from './engine_state.js';
import type { Ledger } from './ledger.js';
import { FEE_ACCOUNT as FEE_ACCOUNT_, OrderStatus, OrderType, Side, Stp, type Request } from './types.js';
import { BalanceReason, UpdateReason, type EventSink } from './events.js';
// Module-local copies of imported constants used on hot paths: an imported binding is a cell
// that optimized code loads and hole-checks at each use, a module-local const folds to its value
// (src/ring/event_writer.ts; docs/benchmarks.md, h16k).
const FEE_ACCOUNT = FEE_ACCOUNT_;
// Imported functions of the hot paths too: a module-local const is a known target (no cell load, no check).
const feeCeil = feeCeil_;
const feeFloor = feeFloor_;
const notionalCeil = notionalCeil_;
const notionalFloor = notionalFloor_;
const clientIdWordsOf = clientIdWordsOf_;

export class Matching {
  // `declare`: typed by the constructor's first store, not undefined first (book.ts says why).
  private declare readonly st: EngineState;
  // The state's stores, held directly: the hot paths read them on every request (one load, not two).
  private declare readonly orders: OrderStore;
  private declare readonly levels: LevelStore;
  private declare readonly ledger: Ledger;
  private declare readonly books: Books;
  private declare readonly programmes: Programmes;
  /** Whether a fill happened since the engine last cleared it (the credit sweep runs after a request with fills). */
  had_fill = false;

  // The order being matched (taker). Fields, not an object: no allocation per request.
  // Money and id fields start at -0, a float64, where 0 would be a small integer: V8 gives a field
  // the representation of its first value, and the first price stored into a small-integer field
  // moved every new engine to a fresh hidden class (FastEngine.shapes, docs/engine.md). The fields
  // are always written before they are read.
  private tk_account = 0;
  private tk_order_id = -0;
  private tk_market = 0;
  private tk_side = 0;
  private tk_type = 0;
  private tk_tif = 0;
  private tk_limit = -0;
  private tk_quantity = -0;
  private tk_filled = -0;
  private tk_remaining = -0;
  private tk_lock = -0;
  private tk_last_price = -0;
  private tk_stop_reason = 0;
  /**
   * The placed taker's client id as words (client_id.ts): its request's, or `client_id_scratch`
   * made from a plain Request's string; read by rest when the remainder rests in a new slot.
   */
  private declare tk_client_id: Int32Array;
  private readonly client_id_scratch = new Int32Array(CLIENT_ID_WORDS);
  /** The taker's self-trade prevention mode (Stp); an amend re-enters with expire_maker. */
  private tk_stp = 0;
  /** The amended order's own slot (kept out of its level while it matches), else Link.NIL. */
  private tk_slot = Link.NIL;
  /**
   * Whether a fill of this taker touched (Ledger.touch) its two pairs of the market and the fee
   * account's quote for FILL: later fills touch only their maker's pairs (settle says why).
   */
  private tk_fill_touched = false;

  // The money of the fill being made (fill), read by settle. Fields, not arguments: settle is not
  // inlined into fill, and a number beyond the small integers handed to a call that is not inlined
  // is boxed (a heap number per argument: five per fill). Float64 from the start, as above.
  private fl_n_ceil = -0;
  private fl_n_floor = -0;
  private fl_taker_fee = -0;
  private fl_maker_fee = -0;
  private fl_rebate = -0;

  constructor(state: EngineState, books: Books, programmes: Programmes) {
    this.st = state;
    this.orders = state.orders;
    this.levels = state.levels;
    this.ledger = state.ledger;
    this.books = books;
    this.programmes = programmes;
    this.tk_client_id = this.client_id_scratch;
  }

  /**
   * An accepted PLACE (`order_id` given, `lock` already moved to locked) as the taker: matched
   * unless `match` is false (an FOK that cannot fill), then its remainder rests when `may_rest`.
   */
  takePlaced(r: Request, order_id: number, lock: number, match: boolean, may_rest: boolean, out: EventSink): void {
    this.tk_account = r.account;
    this.tk_order_id = order_id;
    this.tk_market = r.market;
    this.tk_side = r.side;
    this.tk_type = r.order_type;
    this.tk_tif = r.tif;
    this.tk_limit = r.order_type === OrderType.LIMIT ? r.price_units : 0;
    this.tk_quantity = r.quantity_units;
    this.tk_filled = 0;
    this.tk_remaining = r.quantity_units;
    this.tk_lock = lock;
    this.tk_last_price = 0;
    this.tk_stop_reason = UpdateReason.UNFILLED_REMAINDER;
    this.tk_client_id = clientIdWordsOf(r, this.client_id_scratch);
    this.tk_stp = r.stp;
    this.tk_slot = Link.NIL;
    this.tk_fill_touched = false;
    if (match) this.matchTaker(out);
    this.finishTaker(out, may_rest, UpdateReason.PLACED);
  }

  /**
   * An accepted AMEND that re-enters the book: the order in slot `s` (already out of its level,
   * its lock already `new_lock`) matches as if placed now at price `p` for `q` more, keeping its
   * id and filled quantity, with expire_maker self-trade prevention.
   */
  takeAmended(s: number, p: number, q: number, new_lock: number, out: EventSink): void {
    const o = this.orders;
    const filled = o.f[s * OF.STRIDE + OF.FILLED];
    this.tk_account = o.i[s * OI.STRIDE + OI.ACCOUNT];
    this.tk_order_id = o.f[s * OF.STRIDE + OF.ID];
    this.tk_market = o.i[s * OI.STRIDE + OI.MARKET];
    this.tk_side = o.i[s * OI.STRIDE + OI.SIDE];
    this.tk_type = OrderType.LIMIT;
    this.tk_tif = o.i[s * OI.STRIDE + OI.TIF];
    this.tk_limit = p;
    this.tk_quantity = filled + q;
    this.tk_filled = filled;
    this.tk_remaining = q;
    this.tk_lock = new_lock;
    this.tk_last_price = o.f[s * OF.STRIDE + OF.LAST_FILL_PRICE];
    this.tk_stop_reason = UpdateReason.UNFILLED_REMAINDER;
    // tk_client_id is not read: an amended order rests in its own slot (tk_slot), its id kept there.
    this.tk_stp = Stp.EXPIRE_MAKER;
    this.tk_slot = s;
    this.tk_fill_touched = false;
    this.matchTaker(out);
    this.finishTaker(out, true, UpdateReason.AMENDED);
    this.tk_slot = Link.NIL;
  }

  /** Matches the taker held in the tk_* fields against the opposite side. */
  private matchTaker(out: EventSink): void {
    const m = this.tk_market;
    const taker_bid = this.tk_side === Side.BID;
    const book = this.st.bookSide(m, this.tk_side ^ 1);
    const is_market = this.tk_type === OrderType.MARKET;
    const limit = this.tk_limit;
    const levels = this.levels;
    const o = this.orders;
    const quote_key = this.tk_account * this.st.asset_count + this.st.market_quote[m];
    const lot = this.st.market_lot[m];
    while (this.tk_remaining > 0 && book.count > 0) {
      const lvl = book.levels[book.count - 1];
      const price = levels.price[lvl];
      if (!is_market && (taker_bid ? price > limit : price < limit)) return;
      let s = levels.head[lvl];
      while (s !== Link.NIL && this.tk_remaining > 0) {
        const next = o.i[s * OI.STRIDE + OI.NEXT];
        if (o.i[s * OI.STRIDE + OI.ACCOUNT] === this.tk_account) {
          // Self-trade prevention: never a fill with one account on both sides.
          if (this.tk_stp !== Stp.EXPIRE_TAKER) this.books.cancelResting(s, UpdateReason.SELF_TRADE_PREVENTED, out);
          if (this.tk_stp !== Stp.EXPIRE_MAKER) {
            this.tk_stop_reason = UpdateReason.SELF_TRADE_PREVENTED;
            return;
          }
          s = next;
          continue;
        }
        let q = this.tk_remaining < o.f[s * OF.STRIDE + OF.REMAINING] ? this.tk_remaining : o.f[s * OF.STRIDE + OF.REMAINING];
        if (is_market && taker_bid) {
          q = this.affordable(price, q, this.ledger.available[quote_key], lot);
          if (q === 0) {
            this.tk_stop_reason = UpdateReason.INSUFFICIENT_BALANCE;
            return;
          }
        }
        this.fill(s, lvl, q, out);
        // A market bid may have taken less than the maker has (what it could pay); its own
        // proceeds (a self-trade) can pay for more of the same maker, so stay on it while it rests.
        // (A filled maker's slot was freed with remaining 0, so this only keeps a partial maker.)
        if (o.f[s * OF.STRIDE + OF.REMAINING] > 0) continue;
        s = next;
      }
    }
  }

  /** Largest lot multiple <= q whose cost (notional + taker fee) fits `available`. */
  private affordable(price: number, q: number, available: number, lot: number): number {
    if (this.st.marketBidFillCost(price, q) <= available) return q;
    let lo = 0;
    let hi = q / lot - 1; // q itself is not affordable
    while (lo < hi) {
      const mid = lo + Math.ceil((hi - lo) / 2);
      if (this.st.marketBidFillCost(price, mid * lot) <= available) lo = mid;
      else hi = mid - 1;
    }
    return lo * lot;
  }

  /**
   * One fill between the taker (tk_*) and the resting order in `s`, at the maker's price (its
   * level `lvl`'s: a level index, not the price, is handed over, as a price would be boxed): the
   * fees, the balances, the fill event (and the taker's referrer's share), then both orders.
   */
  private fill(s: number, lvl: number, q: number, out: EventSink): void {
    const st = this.st;
    const price = this.levels.price[lvl];
    const m = this.tk_market;
    const quote = st.market_quote[m];
    const taker = this.tk_account;
    const n_ceil = notionalCeil(price, q);
    const n_floor = notionalFloor(price, q);
    const taker_fee = this.takerFee(n_ceil, n_floor, this.tk_remaining - q);
    const maker_fee = st.fee_maker_bps >= 0 ? this.makerFee(s, n_ceil, n_floor, q) : 0;
    const rebate = st.fee_maker_bps >= 0 ? 0 : this.makerRebate(n_ceil, n_floor, taker_fee);
    this.fl_n_ceil = n_ceil;
    this.fl_n_floor = n_floor;
    this.fl_taker_fee = taker_fee;
    this.fl_maker_fee = maker_fee;
    this.fl_rebate = rebate;
    this.settle(s, q);

    const fill_id = st.next_fill_id++;
    out.fill(fill_id, m, this.tk_order_id, this.orders.f[s * OF.STRIDE + OF.ID], taker, this.orders.i[s * OI.STRIDE + OI.ACCOUNT], this.tk_side, price, q,
      taker_fee, st.fee_maker_bps >= 0 || rebate === 0 ? maker_fee : -rebate);
    if (st.referrals.size > 0 && taker_fee > 0) {
      this.programmes.referralShare(fill_id, taker, quote, taker_fee, n_ceil - n_floor + taker_fee + maker_fee - rebate, out);
    }
    this.had_fill = true;
    st.market_mark[m] = price;
    this.tk_remaining -= q;
    this.tk_filled += q;
    this.tk_last_price = price;
    this.fillMaker(s, q, out);
  }

  /** The taker's fee, capped for a locked bid so its lock still covers the rest (docs/engine.md). */
  private takerFee(n_ceil: number, n_floor: number, taker_rem_after: number): number {
    const tb = this.st.fee_taker_bps;
    if (this.tk_side !== Side.BID) return feeCeil(n_floor, tb);
    const fee = feeCeil(n_ceil, tb);
    if (this.tk_type !== OrderType.LIMIT) return fee;
    const cap = this.tk_lock - n_ceil - notionalCeil(this.tk_limit, taker_rem_after);
    return fee > cap ? cap : fee;
  }

  /** A non-negative maker fee, capped for a maker bid so its lock still covers the rest. */
  private makerFee(s: number, n_ceil: number, n_floor: number, q: number): number {
    const mb = this.st.fee_maker_bps;
    if (this.tk_side === Side.BID) return feeCeil(n_floor, mb);
    const o = this.orders;
    const fee = feeCeil(n_ceil, mb);
    const cap = o.f[s * OF.STRIDE + OF.LOCKED] - n_ceil - notionalCeil(o.f[s * OF.STRIDE + OF.PRICE], o.f[s * OF.STRIDE + OF.REMAINING] - q);
    return fee > cap ? cap : fee;
  }

  /** A negative maker fee paid as a rebate, never more than the taker fee it comes out of. */
  private makerRebate(n_ceil: number, n_floor: number, taker_fee: number): number {
    const rebate = feeFloor(this.tk_side === Side.BID ? n_floor : n_ceil, -this.st.fee_maker_bps);
    return rebate > taker_fee ? taker_fee : rebate;
  }

  /**
   * The balances of one fill: the buyer pays notional (ceil) + fee from its order's lock, or from
   * available for a market bid; the seller delivers the base it locked and receives notional
   * (floor) - fee; a rebate goes to the maker; the fee account keeps the rounding and the fees.
   * The fill's notional and fees are in the fl_* fields (fill says why).
   */
  private settle(s: number, q: number): void {
    const n_ceil = this.fl_n_ceil;
    const n_floor = this.fl_n_floor;
    const taker_fee = this.fl_taker_fee;
    const maker_fee = this.fl_maker_fee;
    const rebate = this.fl_rebate;
    const st = this.st;
    const o = this.orders;
    const L = this.ledger;
    const a = st.asset_count;
    const m = this.tk_market;
    const base = st.market_base[m];
    const quote = st.market_quote[m];
    const taker_bid = this.tk_side === Side.BID;
    const maker = o.i[s * OI.STRIDE + OI.ACCOUNT];
    const buyer = taker_bid ? this.tk_account : maker;
    const seller = taker_bid ? maker : this.tk_account;
    // Every pair a fill changes is touched for FILL first: the maker's base and quote, the
    // taker's, the fee account's quote. The taker's and the fee account's once per taker: a
    // second touch with the same reason changes nothing in the record (the reason of highest
    // rank is kept, the balances before the request were taken at the first touch), and a taker
    // that takes several makers touched them 3 times per fill (docs/benchmarks.md, h17e).
    if (!this.tk_fill_touched) {
      L.touch(this.tk_account, quote, BalanceReason.FILL);
      L.touch(this.tk_account, base, BalanceReason.FILL);
      L.touch(FEE_ACCOUNT, quote, BalanceReason.FILL);
      this.tk_fill_touched = true;
    }
    // Base before quote: a pair's key is account * assets + asset, and where a market's base
    // asset is listed before its quote (every configured market: ETH and BTC before USDC) the
    // maker's two keys enter the record in the order flush sorts them into, one step less of its
    // insertion sort per fill. The order of touches changes nothing else: the record keeps the
    // balances before the request and the reason of highest rank.
    L.touch(maker, base, BalanceReason.FILL);
    L.touch(maker, quote, BalanceReason.FILL);

    const buyer_cost = n_ceil + (taker_bid ? taker_fee : maker_fee);
    // The buyer's quote pair indexed once, and its rebate added in the one branch that has one
    // (a taker bid added 0 to its available).
    const buyer_quote = buyer * a + quote;
    if (!taker_bid) {
      o.f[s * OF.STRIDE + OF.LOCKED] -= buyer_cost;
      L.locked[buyer_quote] -= buyer_cost;
      L.available[buyer_quote] += rebate;
    } else if (this.tk_type === OrderType.LIMIT) {
      this.tk_lock -= buyer_cost;
      L.locked[buyer_quote] -= buyer_cost;
    } else {
      L.available[buyer_quote] -= buyer_cost;
    }
    L.available[buyer * a + base] += q;
    if (taker_bid) o.f[s * OF.STRIDE + OF.LOCKED] -= q;
    else this.tk_lock -= q;
    L.locked[seller * a + base] -= q;
    L.available[seller * a + quote] += n_floor - (taker_bid ? maker_fee : taker_fee) + (taker_bid ? rebate : 0);
    L.available[FEE_ACCOUNT * a + quote] += n_ceil - n_floor + taker_fee + maker_fee - rebate;
  }

  /**
   * The maker's side of a fill at the price fill left in tk_last_price (not an argument: it would
   * be boxed): its order and level updated; filled, it releases what is left of its lock and
   * leaves the book.
   */
  private fillMaker(s: number, q: number, out: EventSink): void {
    const price = this.tk_last_price;
    const st = this.st;
    const o = this.orders;
    const L = this.ledger;
    const m = this.tk_market;
    const maker = o.i[s * OI.STRIDE + OI.ACCOUNT];
    const maker_rem_after = o.f[s * OF.STRIDE + OF.REMAINING] - q;
    o.f[s * OF.STRIDE + OF.REMAINING] = maker_rem_after;
    o.f[s * OF.STRIDE + OF.FILLED] += q;
    o.f[s * OF.STRIDE + OF.LAST_FILL_PRICE] = price;
    this.levels.quantity[o.i[s * OI.STRIDE + OI.LEVEL]] -= q;
    if (L.has_credit[maker] === 1) {
      st.credit.onRestChange(maker, m, -q, -(notionalCeil(o.f[s * OF.STRIDE + OF.PRICE], q)));
    }
    const partial = maker_rem_after > 0;
    if (!partial) {
      const left = o.f[s * OF.STRIDE + OF.LOCKED];
      if (left > 0) {
        const a = st.asset_count;
        const lock_asset = o.i[s * OI.STRIDE + OI.SIDE] === Side.BID ? st.market_quote[m] : st.market_base[m];
        // No touch: settle touched both of the maker's pairs of this market for FILL.
        L.locked[maker * a + lock_asset] -= left;
        L.available[maker * a + lock_asset] += left;
        o.f[s * OF.STRIDE + OF.LOCKED] = 0;
      }
    }
    // One call site for the partial and the full fill: V8 inlined the writer at one of the two
    // sites and left the other a call, whose twelve number arguments were boxed (a heap number
    // each beyond the small integers; docs/benchmarks.md, h20b). A filled maker reports 0 left,
    // 0 locked and sequence 0.
    out.orderUpdate(o.f[s * OF.STRIDE + OF.ID], maker, m, o.i[s * OI.STRIDE + OI.SIDE],
      partial ? OrderStatus.PARTIALLY_FILLED : OrderStatus.FILLED, o.f[s * OF.STRIDE + OF.PRICE],
      o.f[s * OF.STRIDE + OF.QUANTITY], o.f[s * OF.STRIDE + OF.FILLED], partial ? maker_rem_after : 0, price, UpdateReason.FILL,
      partial ? o.f[s * OF.STRIDE + OF.LOCKED] : 0, partial ? o.f[s * OF.STRIDE + OF.PRIORITY_SEQ] : 0);
    if (!partial) this.books.removeResting(s);
  }

  /** After matching: rest the remainder, or cancel it, or report it filled; release its lock. */
  private finishTaker(out: EventSink, may_rest: boolean, rest_reason: number): void {
    const account = this.tk_account;
    const m = this.tk_market;
    // The order's update is written at one call site for all three ends (fillMaker says why):
    // what differs is chosen here.
    let status: number = OrderStatus.FILLED;
    let remaining = 0;
    let reason: number = UpdateReason.FILL;
    let locked = 0;
    let seq = 0;
    // A remainder stopped by self-trade prevention is cancelled even when it could rest.
    if (this.tk_remaining > 0 && may_rest && this.tk_stop_reason !== UpdateReason.SELF_TRADE_PREVENTED) {
      const s = this.rest();
      status = this.tk_filled > 0 ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN;
      remaining = this.tk_remaining;
      reason = rest_reason;
      locked = this.orders.f[s * OF.STRIDE + OF.LOCKED];
      seq = this.orders.f[s * OF.STRIDE + OF.PRIORITY_SEQ];
    } else {
      if (this.tk_lock > 0) {
        const lock_asset = this.tk_side === Side.BID ? this.st.market_quote[m] : this.st.market_base[m];
        this.st.releaseLock(account, lock_asset, this.tk_lock,
          this.tk_remaining > 0 ? BalanceReason.ORDER_CANCELLED : BalanceReason.FILL);
        this.tk_lock = 0;
      }
      if (this.tk_slot !== Link.NIL) {
        // An amended order that filled completely leaves the store.
        this.books.forget(this.tk_slot);
        this.tk_slot = Link.NIL;
      }
      if (this.tk_remaining > 0) {
        status = OrderStatus.CANCELLED;
        reason = this.tk_stop_reason;
      }
    }
    out.orderUpdate(this.tk_order_id, account, m, this.tk_side, status, this.tk_limit,
      this.tk_quantity, this.tk_filled, remaining, this.tk_last_price, reason, locked, seq);
  }

  /**
   * Puts the taker's remainder on its side of the book, at the tail of its price level. An
   * amended order keeps the slot it had (tk_slot), so an amend does not churn the order index.
   * Returns the order's slot.
   */
  private rest(): number {
    const o = this.orders;
    const m = this.tk_market;
    const account = this.tk_account;
    let s = this.tk_slot;
    if (s === Link.NIL) s = this.books.openSlot(this.tk_order_id, account, m, this.tk_side, this.tk_tif, this.tk_client_id);
    o.f[s * OF.STRIDE + OF.PRICE] = this.tk_limit;
    o.f[s * OF.STRIDE + OF.QUANTITY] = this.tk_quantity;
    o.f[s * OF.STRIDE + OF.FILLED] = this.tk_filled;
    o.f[s * OF.STRIDE + OF.REMAINING] = this.tk_remaining;
    o.f[s * OF.STRIDE + OF.LOCKED] = this.tk_lock;
    o.f[s * OF.STRIDE + OF.PRIORITY_SEQ] = this.st.next_priority_seq++;
    o.f[s * OF.STRIDE + OF.LAST_FILL_PRICE] = this.tk_last_price;
    this.books.linkLevel(s);
    return s;
  }
}
