// The fast engine: the deterministic state machine the matcher thread runs. Rules are in
// docs/engine.md; the reference engine (src/engine/reference/) is the same rules written plainly,
// and the differential tests hold the two to identical events and state.
//
// Hot-path discipline: no allocation per request in steady state (the taker lives in fields, not
// an object; events go straight to the sink), no bigint, no clock, no hash-order iteration.
// Unchecked money arithmetic: every number reaching it passed wellFormed (safe integers) and the
// sign checks of the request (src/money/muldiv.ts says why this matters).
import {
  MONEY_OVERFLOW, feeCeilUnchecked as feeCeil, feeFloorUnchecked as feeFloor, isMultiple,
  notionalCeilUnchecked as notionalCeil, notionalFloorUnchecked as notionalFloor,
} from '../money/index.js';
import type { CanonicalState, EngineConfig, MatchingEngine } from './api.js';
import { NIL } from './book.js';
import {
  assert, feesValid, MARKET_ACTIVE, MARKET_PAUSED, MAX_SAFE,
} from './engine_state.js';
import { ProgrammeState } from './engine_programmes.js';
import {
  BalanceReason, FEE_ACCOUNT, NO_MARKET, OrderStatus, OrderType, Reject, REJECT_CODES, RequestKind,
  Side, Stp, Tif, UpdateReason,
  type EventSink, type Request,
} from './types.js';

const CLIENT_ORDER_ID_PATTERN = /^[A-Za-z0-9_-]{1,36}$/;

export class FastEngine extends ProgrammeState implements MatchingEngine {
  // The order being matched (taker). Fields, not an object: no allocation per request.
  private tk_account = 0;
  private tk_order_id = 0;
  private tk_market = 0;
  private tk_side = 0;
  private tk_type = 0;
  private tk_tif = 0;
  private tk_limit = 0;
  private tk_quantity = 0;
  private tk_filled = 0;
  private tk_remaining = 0;
  private tk_lock = 0;
  private tk_last_price = 0;
  private tk_stop_reason = 0;
  private tk_client_order_id = '';
  /** The taker's self-trade prevention mode (Stp); an amend re-enters with expire_maker. */
  private tk_stp = 0;
  /** The amended order's own slot (kept out of its level while it matches), else NIL. */
  private tk_slot = NIL;
  private had_fill = false;

  apply(r: Request, out: EventSink): void {
    this.ledger.beginRequest();
    this.had_fill = false;
    if (!wellFormed(r)) {
      // Out of contract (the ring decoder never produces it): refused before any other check, so
      // no rule below has to guard against fractions, NaN or values beyond 2^53.
      out.rejected(r.kind, r.account, REJECT_CODES[Reject.REQUEST_MALFORMED], Reject.REQUEST_MALFORMED);
      return;
    }
    switch (r.kind) {
      case RequestKind.PLACE: this.place(r, out); break;
      case RequestKind.AMEND: this.amend(r, out); break;
      case RequestKind.CANCEL: this.cancel(r, out); break;
      case RequestKind.CANCEL_ALL: this.cancelAll(r, out); break;
      case RequestKind.DEPOSIT: this.deposit(r, out); break;
      case RequestKind.WITHDRAW: this.withdraw(r, out); break;
      case RequestKind.PAUSE_MARKET: this.pauseOrResume(r, out, true); break;
      case RequestKind.RESUME_MARKET: this.pauseOrResume(r, out, false); break;
      case RequestKind.SET_FEES: this.setFees(r, out); break;
      case RequestKind.SET_CREDIT: this.setCredit(r, out); break;
      case RequestKind.ADD_MARKET: this.addMarketRequest(r, out); break;
      case RequestKind.REFER: this.refer(r, out); break;
      case RequestKind.FORCE_INCLUDE: this.forceInclude(r, out); break;
      case RequestKind.CANCEL_AFTER: this.cancelAfter(r, out); break;
      case RequestKind.DISCONNECT_CANCEL: this.disconnectCancel(r, out); break;
      case RequestKind.APPROVE_AGENT: this.approveAgent(r, out); break;
      case RequestKind.REVOKE_AGENT: this.revokeAgent(r, out); break;
      default: this.reject(r, out, Reject.KIND_UNKNOWN); return;
    }
    if (this.had_fill && this.credit.count > 0) this.creditSweep(out);
    this.ledger.flush(out);
  }


  // ---------------------------------------------------------------------------------------------
  // Requests

  private place(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    // The stale-order guard is judged at the batch time, so a replay refuses exactly the same orders.
    if (r.expires_after_ms !== 0 && this.batch_time_ms > r.expires_after_ms) return this.reject(r, out, Reject.EXPIRED);
    const m = r.market;
    if (!this.marketValid(m)) return this.reject(r, out, Reject.MARKET_UNKNOWN);
    if (this.market_status[m] !== MARKET_ACTIVE) return this.reject(r, out, Reject.MARKET_PAUSED);
    const side = r.side;
    const type = r.order_type;
    const tif = r.tif;
    if (side !== Side.BID && side !== Side.ASK) return this.reject(r, out, Reject.SIDE_INVALID);
    if (type !== OrderType.LIMIT && type !== OrderType.MARKET) return this.reject(r, out, Reject.ORDER_TYPE_INVALID);
    if (!(tif >= Tif.GTC && tif <= Tif.POST_ONLY) || (tif | 0) !== tif) return this.reject(r, out, Reject.TIF_INVALID);
    const stp = r.stp;
    if (stp !== Stp.EXPIRE_MAKER && stp !== Stp.EXPIRE_TAKER && stp !== Stp.EXPIRE_BOTH) return this.reject(r, out, Reject.STP_INVALID);
    const q = r.quantity_units;
    if (!(q > 0)) return this.reject(r, out, Reject.QUANTITY_NOT_POSITIVE);
    if (!isMultiple(q, this.market_lot[m])) return this.reject(r, out, Reject.QUANTITY_NOT_LOT_MULTIPLE);
    this.loadFees(m);
    const p = r.price_units;
    let lock = 0;
    if (type === OrderType.LIMIT) {
      if (!(p > 0)) return this.reject(r, out, Reject.PRICE_NOT_POSITIVE);
      if (!isMultiple(p, this.market_tick[m])) return this.reject(r, out, Reject.PRICE_NOT_TICK_MULTIPLE);
      lock = this.bidLock(p, q);
      if (lock === MONEY_OVERFLOW) return this.reject(r, out, Reject.NOTIONAL_TOO_LARGE);
    } else {
      if (tif !== Tif.IOC && tif !== Tif.FOK) return this.reject(r, out, Reject.MARKET_ORDER_TIF);
      if (p !== 0) return this.reject(r, out, Reject.MARKET_ORDER_WITH_PRICE);
    }
    const account = r.account;
    const coid = r.client_order_id;
    if (coid !== '') {
      if (!CLIENT_ORDER_ID_PATTERN.test(coid)) return this.reject(r, out, Reject.CLIENT_ORDER_ID_INVALID);
      if (this.orders.slot_by_client_id.find(account, coid) !== NIL) return this.reject(r, out, Reject.CLIENT_ORDER_ID_DUPLICATE);
    }
    const may_rest = type === OrderType.LIMIT && (tif === Tif.GTC || tif === Tif.POST_ONLY);
    const own = side === Side.BID ? this.bids[m] : this.asks[m];
    const opposite = side === Side.BID ? this.asks[m] : this.bids[m];
    if (may_rest) {
      if (this.ledger.open_orders[account] >= this.limits.orders_open_per_account_max) return this.reject(r, out, Reject.ACCOUNT_OPEN_ORDERS_MAX);
      if (this.orders.size >= this.limits.orders_open_max) return this.reject(r, out, Reject.ENGINE_OPEN_ORDERS_MAX);
      // Count first: the search runs only when the side is full (rare), not on every order.
      if (own.count >= this.limits.price_levels_per_book_max && own.find(p) < 0) return this.reject(r, out, Reject.BOOK_LEVELS_MAX);
    }
    if (tif === Tif.POST_ONLY && this.crosses(opposite, side, p)) return this.reject(r, out, Reject.POST_ONLY_WOULD_TAKE);
    const base = this.market_base[m];
    const quote = this.market_quote[m];
    const a = this.asset_count;
    if (side === Side.ASK) {
      if (this.ledger.available[account * a + base] < q) return this.reject(r, out, Reject.INSUFFICIENT_BALANCE);
      lock = q;
    } else if (type === OrderType.LIMIT) {
      if (this.ledger.available[account * a + quote] < lock) return this.reject(r, out, Reject.INSUFFICIENT_BALANCE);
    }
    if (may_rest && this.ledger.has_credit[account] === 1) {
      if (this.creditWouldBreach(account, m, q, notionalCeil(p, q))) {
        return this.reject(r, out, Reject.CREDIT_BREACH);
      }
    }
    let fok_unfilled = false;
    if (tif === Tif.FOK) {
      if (this.liquidity(opposite, type === OrderType.LIMIT, side, p, q, account, stp) < q) {
        fok_unfilled = true;
      } else if (side === Side.BID && type === OrderType.MARKET) {
        const cost = this.marketBidCost(opposite, q, account);
        if (cost > this.ledger.available[account * a + quote]) return this.reject(r, out, Reject.INSUFFICIENT_BALANCE);
      }
    }

    // Accepted: from here on nothing can fail.
    const order_id = this.next_order_id++;
    this.acceptSigned(r, order_id, out);
    if (lock > 0) this.moveToLocked(account, side === Side.BID ? quote : base, lock, BalanceReason.ORDER_PLACED);
    this.tk_account = account;
    this.tk_order_id = order_id;
    this.tk_market = m;
    this.tk_side = side;
    this.tk_type = type;
    this.tk_tif = tif;
    this.tk_limit = type === OrderType.LIMIT ? p : 0;
    this.tk_quantity = q;
    this.tk_filled = 0;
    this.tk_remaining = q;
    this.tk_lock = lock;
    this.tk_last_price = 0;
    this.tk_stop_reason = UpdateReason.UNFILLED_REMAINDER;
    this.tk_client_order_id = coid;
    this.tk_stp = stp;
    this.tk_slot = NIL;
    if (!fok_unfilled) this.matchTaker(out);
    this.finishTaker(out, may_rest, UpdateReason.PLACED);
  }

  private amend(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const account = r.account;
    const s = this.ownOpenOrder(account, r.order_id, '');
    if (s === NIL) return this.reject(r, out, Reject.ORDER_NOT_FOUND);
    const o = this.orders;
    const m = o.market[s];
    if (this.market_status[m] !== MARKET_ACTIVE) return this.reject(r, out, Reject.MARKET_PAUSED);
    const q = r.quantity_units;
    if (!(q > 0)) return this.reject(r, out, Reject.QUANTITY_NOT_POSITIVE);
    if (!isMultiple(q, this.market_lot[m])) return this.reject(r, out, Reject.QUANTITY_NOT_LOT_MULTIPLE);
    const p = r.price_units;
    if (!(p > 0)) return this.reject(r, out, Reject.PRICE_NOT_POSITIVE);
    if (!isMultiple(p, this.market_tick[m])) return this.reject(r, out, Reject.PRICE_NOT_TICK_MULTIPLE);
    this.loadFees(m);
    const bid_lock = this.bidLock(p, q);
    if (bid_lock === MONEY_OVERFLOW) return this.reject(r, out, Reject.NOTIONAL_TOO_LARGE);
    const side = o.side[s];
    const own = side === Side.BID ? this.bids[m] : this.asks[m];
    const opposite = side === Side.BID ? this.asks[m] : this.bids[m];
    const old_price = o.price[s];
    // Moving to a new price level is refused when the side is full, unless the order leaves a
    // level it is alone at (the count of levels then does not grow).
    const alone = this.levels.head[o.level[s]] === s && this.levels.tail[o.level[s]] === s;
    if (p !== old_price && !alone && own.count >= this.limits.price_levels_per_book_max && own.find(p) < 0) {
      return this.reject(r, out, Reject.BOOK_LEVELS_MAX);
    }
    const tif = o.tif[s];
    if (tif === Tif.POST_ONLY && this.crosses(opposite, side, p)) return this.reject(r, out, Reject.POST_ONLY_WOULD_TAKE);
    const lock_asset = side === Side.BID ? this.market_quote[m] : this.market_base[m];
    const new_lock = side === Side.BID ? bid_lock : q;
    const old_lock = o.locked[s];
    const key = account * this.asset_count + lock_asset;
    if (new_lock > this.ledger.available[key] + old_lock) return this.reject(r, out, Reject.INSUFFICIENT_BALANCE);
    const old_remaining = o.remaining[s];
    if (this.ledger.has_credit[account] === 1) {
      const value_delta = notionalCeil(p, q) - notionalCeil(old_price, old_remaining);
      if (this.creditWouldBreach(account, m, q - old_remaining, value_delta)) return this.reject(r, out, Reject.CREDIT_BREACH);
    }

    // Accepted.
    const order_id = o.id[s];
    this.acceptSigned(r, order_id, out);
    const filled = o.filled[s];
    if (p === old_price && q <= old_remaining) {
      // Same price, not larger: keeps its place in the queue.
      this.ledger.touch(account, lock_asset, BalanceReason.ORDER_PLACED);
      this.ledger.available[key] -= new_lock - old_lock;
      this.ledger.locked[key] += new_lock - old_lock;
      o.locked[s] = new_lock;
      const dq = old_remaining - q;
      o.remaining[s] = q;
      o.quantity[s] = filled + q;
      this.levels.quantity[o.level[s]] -= dq;
      if (this.ledger.has_credit[account] === 1) {
        this.credit.onRestChange(account, m, -dq, notionalCeil(p, q) - notionalCeil(p, old_remaining));
      }
      out.orderUpdate(order_id, account, m, side, filled > 0 ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN,
        p, filled + q, filled, q, o.last_fill_price[s], UpdateReason.AMENDED, new_lock, o.priority_seq[s]);
      return;
    }
    // Anything else re-enters the book as if placed now, keeping its id and filled quantity.
    const coid = o.client_order_id[s];
    const last_fill_price = o.last_fill_price[s];
    this.ledger.touch(account, lock_asset, BalanceReason.ORDER_PLACED);
    this.ledger.available[key] += old_lock - new_lock;
    this.ledger.locked[key] += new_lock - old_lock;
    this.unlinkLevel(s);
    this.tk_account = account;
    this.tk_order_id = order_id;
    this.tk_market = m;
    this.tk_side = side;
    this.tk_type = OrderType.LIMIT;
    this.tk_tif = tif;
    this.tk_limit = p;
    this.tk_quantity = filled + q;
    this.tk_filled = filled;
    this.tk_remaining = q;
    this.tk_lock = new_lock;
    this.tk_last_price = last_fill_price;
    this.tk_stop_reason = UpdateReason.UNFILLED_REMAINDER;
    this.tk_client_order_id = coid;
    this.tk_stp = Stp.EXPIRE_MAKER;
    this.tk_slot = s;
    this.matchTaker(out);
    this.finishTaker(out, true, UpdateReason.AMENDED);
    this.tk_slot = NIL;
  }

  private cancel(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const s = this.ownOpenOrder(r.account, r.order_id, r.client_order_id);
    if (s === NIL) return this.reject(r, out, Reject.ORDER_NOT_FOUND);
    this.acceptSigned(r, this.orders.id[s], out);
    this.cancelResting(s, UpdateReason.USER_CANCEL, out);
  }

  private cancelAll(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const m = r.market;
    if (m !== NO_MARKET && !this.marketValid(m)) return this.reject(r, out, Reject.MARKET_UNKNOWN);
    this.acceptSigned(r, 0, out);
    this.cancelAccountOrders(r.account, m, UpdateReason.CANCEL_ALL, out);
  }

  private deposit(r: Request, out: EventSink): void {
    // Asset and amount before the account: the matcher registers a new address only for a
    // deposit that would be accepted (depositRejectReason), so its reason must come first.
    const reason = this.depositRejectReason(r.asset, r.amount_units, r.nonce);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const account = r.account;
    if (!this.accountValid(account)) return this.reject(r, out, Reject.ACCOUNT_UNKNOWN);
    const asset = r.asset;
    const amount = r.amount_units;
    this.ledger.ensure(account);
    out.accepted(RequestKind.DEPOSIT, account, 0);
    if (r.nonce > 0) this.chain_deposit_high_water = r.nonce;
    this.ledger.touch(account, asset, BalanceReason.DEPOSIT);
    this.ledger.available[account * this.asset_count + asset] += amount;
    this.deposits[asset] += amount;
  }

  /**
   * The deposit checks that do not depend on the account (Reject.NONE when they pass).
   * `chain_deposit_id` > 0: an on-chain deposit, credited once (above the high-water mark).
   */
  depositRejectReason(asset: number, amount: number, chain_deposit_id: number): number {
    if (!(chain_deposit_id >= 0)) return Reject.REQUEST_MALFORMED;
    if (chain_deposit_id > 0 && !(chain_deposit_id > this.chain_deposit_high_water)) return Reject.NONCE_NOT_ABOVE_HIGH_WATER;
    if (!this.assetValid(asset)) return Reject.ASSET_UNKNOWN;
    if (!(amount > 0)) return Reject.AMOUNT_NOT_POSITIVE;
    // Lifetime deposits stay a safe integer; so then does the supply (deposits - withdrawals) and
    // every balance and sum of balances.
    if (this.deposits[asset] + amount > MAX_SAFE) return Reject.AMOUNT_TOO_LARGE;
    return Reject.NONE;
  }

  /** The credit-setting checks that do not depend on the account (Reject.NONE when they pass). */
  creditRejectReason(limit: number, ratio_ppm: number): number {
    if (!Number.isSafeInteger(limit) || limit < 0 || !Number.isSafeInteger(ratio_ppm) || ratio_ppm <= 0 || ratio_ppm > 1_000_000) {
      return Reject.CREDIT_INVALID;
    }
    return Reject.NONE;
  }

  private withdraw(r: Request, out: EventSink): void {
    const reason = this.checkSigned(r);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const account = r.account;
    const asset = r.asset;
    if (!this.assetValid(asset)) return this.reject(r, out, Reject.ASSET_UNKNOWN);
    const amount = r.amount_units;
    if (!(amount > 0)) return this.reject(r, out, Reject.AMOUNT_NOT_POSITIVE);
    const key = account * this.asset_count + asset;
    if (!(this.ledger.available[key] >= amount)) return this.reject(r, out, Reject.INSUFFICIENT_BALANCE);
    this.acceptSigned(r, 0, out);
    this.ledger.touch(account, asset, BalanceReason.WITHDRAWAL);
    this.ledger.available[key] -= amount;
    this.withdrawals[asset] += amount;
    // Nonces only grow per account, so appending keeps (account, nonce) order within an account;
    // insert to keep the whole list ascending by account.
    let i = this.pending_withdrawals.length;
    while (i > 0 && this.pending_withdrawals[i - 1].account > account) i--;
    this.pending_withdrawals.splice(i, 0, { account, nonce: r.nonce, asset, amount_units: amount });
  }

  private pauseOrResume(r: Request, out: EventSink, pause: boolean): void {
    const m = r.market;
    if (!this.marketValid(m)) return this.reject(r, out, Reject.MARKET_UNKNOWN);
    out.accepted(r.kind, r.account, 0);
    if (!pause) {
      this.market_status[m] = MARKET_ACTIVE;
      return;
    }
    if (this.market_status[m] === MARKET_PAUSED) return;
    this.market_status[m] = MARKET_PAUSED;
    const slots = this.scratch_slots;
    slots.length = 0;
    for (const book of [this.bids[m], this.asks[m]]) {
      for (let i = 0; i < book.count; i++) {
        for (let s = this.levels.head[book.levels[i]]; s !== NIL; s = this.orders.next[s]) slots.push(s);
      }
    }
    this.cancelSlotsById(slots, UpdateReason.MARKET_PAUSED, out);
  }

  private setFees(r: Request, out: EventSink): void {
    const m = r.market;
    if (m !== NO_MARKET && !this.marketValid(m)) return this.reject(r, out, Reject.MARKET_UNKNOWN);
    if (!feesValid(r.maker_fee_bps, r.taker_fee_bps)) return this.reject(r, out, Reject.FEES_INVALID);
    out.accepted(RequestKind.SET_FEES, r.account, 0);
    if (m === NO_MARKET) {
      this.maker_bps_global = r.maker_fee_bps;
      this.taker_bps_global = r.taker_fee_bps;
    } else {
      this.market_fee_override[m] = 1;
      this.market_maker_bps[m] = r.maker_fee_bps;
      this.market_taker_bps[m] = r.taker_fee_bps;
    }
  }

  private setCredit(r: Request, out: EventSink): void {
    const limit = r.credit_limit_units;
    const ratio = r.auto_cancel_ratio_ppm;
    const reason = this.creditRejectReason(limit, ratio);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    const account = r.account;
    if (!this.accountValid(account)) return this.reject(r, out, Reject.ACCOUNT_UNKNOWN);
    this.ledger.ensure(account);
    out.accepted(RequestKind.SET_CREDIT, account, 0);
    if (limit === 0) {
      this.credit.remove(account);
      this.ledger.has_credit[account] = 0;
      return;
    }
    const entry = this.credit.set(account, limit, ratio);
    if (this.ledger.has_credit[account] === 0) {
      // Start tracking: count what the account already has resting.
      entry.rest_quantity.fill(0);
      entry.rest_value.fill(0);
      const o = this.orders;
      for (let s = this.ledger.order_head[account]; s !== NIL; s = o.acct_next[s]) {
        entry.rest_quantity[o.market[s]] += o.remaining[s];
        entry.rest_value[o.market[s]] += notionalCeil(o.price[s], o.remaining[s]);
      }
      this.ledger.has_credit[account] = 1;
    }
  }


  private addMarketRequest(r: Request, out: EventSink): void {
    const reason = this.addMarket(r.asset, r.asset_quote, r.tick_size_units, r.lot_size_units);
    if (reason !== Reject.NONE) return this.reject(r, out, reason);
    out.accepted(RequestKind.ADD_MARKET, r.account, 0);
  }

  // ---------------------------------------------------------------------------------------------
  // Matching

  /** Matches the taker held in the tk_* fields against the opposite side. */
  private matchTaker(out: EventSink): void {
    const m = this.tk_market;
    const taker_bid = this.tk_side === Side.BID;
    const book = taker_bid ? this.asks[m] : this.bids[m];
    const is_market = this.tk_type === OrderType.MARKET;
    const limit = this.tk_limit;
    const levels = this.levels;
    const o = this.orders;
    const quote_key = this.tk_account * this.asset_count + this.market_quote[m];
    const lot = this.market_lot[m];
    while (this.tk_remaining > 0 && book.count > 0) {
      const lvl = book.levels[book.count - 1];
      const price = levels.price[lvl];
      if (!is_market && (taker_bid ? price > limit : price < limit)) return;
      let s = levels.head[lvl];
      while (s !== NIL && this.tk_remaining > 0) {
        const next = o.next[s];
        if (o.account[s] === this.tk_account) {
          // Self-trade prevention: never a fill with one account on both sides.
          if (this.tk_stp !== Stp.EXPIRE_TAKER) this.cancelResting(s, UpdateReason.SELF_TRADE_PREVENTED, out);
          if (this.tk_stp !== Stp.EXPIRE_MAKER) {
            this.tk_stop_reason = UpdateReason.SELF_TRADE_PREVENTED;
            return;
          }
          s = next;
          continue;
        }
        let q = this.tk_remaining < o.remaining[s] ? this.tk_remaining : o.remaining[s];
        if (is_market && taker_bid) {
          q = this.affordable(price, q, this.ledger.available[quote_key], lot);
          if (q === 0) {
            this.tk_stop_reason = UpdateReason.INSUFFICIENT_BALANCE;
            return;
          }
        }
        this.fill(s, price, q, out);
        // A market bid may have taken less than the maker has (what it could pay); its own
        // proceeds (a self-trade) can pay for more of the same maker, so stay on it while it rests.
        // (A filled maker's slot was freed with remaining 0, so this only keeps a partial maker.)
        if (o.remaining[s] > 0) continue;
        s = next;
      }
    }
  }

  /** Largest lot multiple <= q whose cost (notional + taker fee) fits `available`. */
  private affordable(price: number, q: number, available: number, lot: number): number {
    if (this.marketBidFillCost(price, q) <= available) return q;
    let lo = 0;
    let hi = q / lot - 1; // q itself is not affordable
    while (lo < hi) {
      const mid = lo + Math.ceil((hi - lo) / 2);
      if (this.marketBidFillCost(price, mid * lot) <= available) lo = mid;
      else hi = mid - 1;
    }
    return lo * lot;
  }


  /** One fill between the taker (tk_*) and the resting order in `s`, at the maker's price. */
  private fill(s: number, price: number, q: number, out: EventSink): void {
    const o = this.orders;
    const L = this.ledger;
    const a = this.asset_count;
    const m = this.tk_market;
    const base = this.market_base[m];
    const quote = this.market_quote[m];
    const taker = this.tk_account;
    const maker = o.account[s];
    const taker_bid = this.tk_side === Side.BID;
    const buyer = taker_bid ? taker : maker;
    const seller = taker_bid ? maker : taker;
    const n_ceil = notionalCeil(price, q);
    const n_floor = notionalFloor(price, q);
    const maker_rem_after = o.remaining[s] - q;
    const taker_rem_after = this.tk_remaining - q;
    const tb = this.fee_taker_bps;
    const mb = this.fee_maker_bps;

    // Taker fee, capped for a locked bid so its lock still covers the rest (docs/engine.md).
    let taker_fee: number;
    if (taker_bid) {
      taker_fee = feeCeil(n_ceil, tb);
      if (this.tk_type === OrderType.LIMIT) {
        const cap = this.tk_lock - n_ceil - notionalCeil(this.tk_limit, taker_rem_after);
        if (taker_fee > cap) taker_fee = cap;
      }
    } else {
      taker_fee = feeCeil(n_floor, tb);
    }
    let maker_fee = 0;
    let rebate = 0;
    if (mb >= 0) {
      if (taker_bid) {
        maker_fee = feeCeil(n_floor, mb);
      } else {
        maker_fee = feeCeil(n_ceil, mb);
        const cap = o.locked[s] - n_ceil - notionalCeil(o.price[s], maker_rem_after);
        if (maker_fee > cap) maker_fee = cap;
      }
    } else {
      rebate = feeFloor(taker_bid ? n_floor : n_ceil, -mb);
      if (rebate > taker_fee) rebate = taker_fee;
    }
    const buyer_fee = taker_bid ? taker_fee : maker_fee;
    const seller_fee = taker_bid ? maker_fee : taker_fee;
    const buyer_rebate = taker_bid ? 0 : rebate;
    const seller_rebate = taker_bid ? rebate : 0;

    L.touch(buyer, quote, BalanceReason.FILL);
    L.touch(buyer, base, BalanceReason.FILL);
    L.touch(seller, quote, BalanceReason.FILL);
    L.touch(seller, base, BalanceReason.FILL);
    L.touch(FEE_ACCOUNT, quote, BalanceReason.FILL);

    // Buyer pays notional + fee: from the order's lock, or from available for a market bid.
    const buyer_cost = n_ceil + buyer_fee;
    if (taker_bid) {
      if (this.tk_type === OrderType.LIMIT) {
        this.tk_lock -= buyer_cost;
        L.locked[buyer * a + quote] -= buyer_cost;
      } else {
        L.available[buyer * a + quote] -= buyer_cost;
      }
    } else {
      o.locked[s] -= buyer_cost;
      L.locked[buyer * a + quote] -= buyer_cost;
    }
    L.available[buyer * a + quote] += buyer_rebate;
    L.available[buyer * a + base] += q;
    // Seller delivers the base it locked and receives notional - fee (+ rebate).
    if (taker_bid) o.locked[s] -= q;
    else this.tk_lock -= q;
    L.locked[seller * a + base] -= q;
    L.available[seller * a + quote] += n_floor - seller_fee + seller_rebate;
    L.available[FEE_ACCOUNT * a + quote] += n_ceil - n_floor + taker_fee + maker_fee - rebate;

    const fill_id = this.next_fill_id++;
    out.fill(fill_id, m, this.tk_order_id, o.id[s], taker, maker, this.tk_side, price, q,
      taker_fee, mb >= 0 || rebate === 0 ? maker_fee : -rebate);
    if (this.referrals.size > 0 && taker_fee > 0) {
      this.referralShare(fill_id, taker, quote, taker_fee, n_ceil - n_floor + taker_fee + maker_fee - rebate, out);
    }
    this.had_fill = true;
    this.market_mark[m] = price;
    this.tk_remaining = taker_rem_after;
    this.tk_filled += q;
    this.tk_last_price = price;

    // Maker side of the book.
    o.remaining[s] = maker_rem_after;
    o.filled[s] += q;
    o.last_fill_price[s] = price;
    this.levels.quantity[o.level[s]] -= q;
    if (L.has_credit[maker] === 1) {
      this.credit.onRestChange(maker, m, -q, -(notionalCeil(o.price[s], q)));
    }
    if (maker_rem_after === 0) {
      const left = o.locked[s];
      if (left > 0) {
        const lock_asset = o.side[s] === Side.BID ? quote : base;
        L.touch(maker, lock_asset, BalanceReason.FILL);
        L.locked[maker * a + lock_asset] -= left;
        L.available[maker * a + lock_asset] += left;
        o.locked[s] = 0;
      }
      out.orderUpdate(o.id[s], maker, m, o.side[s], OrderStatus.FILLED, o.price[s], o.quantity[s],
        o.filled[s], 0, price, UpdateReason.FILL, 0, 0);
      this.removeResting(s);
    } else {
      out.orderUpdate(o.id[s], maker, m, o.side[s], OrderStatus.PARTIALLY_FILLED, o.price[s],
        o.quantity[s], o.filled[s], maker_rem_after, price, UpdateReason.FILL, o.locked[s], o.priority_seq[s]);
    }
  }


  /** After matching: rest the remainder, or cancel it, or report it filled; release its lock. */
  private finishTaker(out: EventSink, may_rest: boolean, rest_reason: number): void {
    const account = this.tk_account;
    const m = this.tk_market;
    const lock_asset = this.tk_side === Side.BID ? this.market_quote[m] : this.market_base[m];
    // A remainder stopped by self-trade prevention is cancelled even when it could rest.
    if (this.tk_remaining > 0 && may_rest && this.tk_stop_reason !== UpdateReason.SELF_TRADE_PREVENTED) {
      const s = this.rest();
      out.orderUpdate(this.tk_order_id, account, m, this.tk_side,
        this.tk_filled > 0 ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN, this.tk_limit,
        this.tk_quantity, this.tk_filled, this.tk_remaining, this.tk_last_price, rest_reason,
        this.orders.locked[s], this.orders.priority_seq[s]);
      return;
    }
    if (this.tk_lock > 0) {
      this.releaseLock(account, lock_asset, this.tk_lock,
        this.tk_remaining > 0 ? BalanceReason.ORDER_CANCELLED : BalanceReason.FILL);
      this.tk_lock = 0;
    }
    if (this.tk_slot !== NIL) {
      // An amended order that filled completely leaves the store.
      this.forget(this.tk_slot);
      this.tk_slot = NIL;
    }
    if (this.tk_remaining > 0) {
      out.orderUpdate(this.tk_order_id, account, m, this.tk_side, OrderStatus.CANCELLED, this.tk_limit,
        this.tk_quantity, this.tk_filled, 0, this.tk_last_price, this.tk_stop_reason, 0, 0);
    } else {
      out.orderUpdate(this.tk_order_id, account, m, this.tk_side, OrderStatus.FILLED, this.tk_limit,
        this.tk_quantity, this.tk_filled, 0, this.tk_last_price, UpdateReason.FILL, 0, 0);
    }
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
    if (s === NIL) {
      s = o.alloc(this.tk_order_id);
      assert(s !== NIL, 'capacity was checked before acceptance');
      o.market[s] = m;
      o.side[s] = this.tk_side;
      o.tif[s] = this.tk_tif;
      this.linkAccount(s, account, this.tk_client_order_id);
    }
    o.price[s] = this.tk_limit;
    o.quantity[s] = this.tk_quantity;
    o.filled[s] = this.tk_filled;
    o.remaining[s] = this.tk_remaining;
    o.locked[s] = this.tk_lock;
    o.priority_seq[s] = this.next_priority_seq++;
    o.last_fill_price[s] = this.tk_last_price;
    this.linkLevel(s);
    return s;
  }

}

/**
 * A fast engine in the state `state` (a snapshot): built with the state's markets in index order,
 * then loaded. Applying the same requests to it and to the engine the state was taken from gives
 * the same events and states (test/engine/restore.test.ts).
 */
export function restoreFastEngine(config: EngineConfig, state: CanonicalState): FastEngine {
  const markets = state.markets.map((m) => ({
    id: m.id, base: m.base, quote: m.quote, tick_size_units: m.tick_size_units, lot_size_units: m.lot_size_units,
  }));
  const engine = new FastEngine({ ...config, markets });
  engine.loadCanonical(state);
  return engine;
}

export function createFastEngine(config: EngineConfig): MatchingEngine {
  return new FastEngine(config);
}
const isSafe = Number.isSafeInteger;

/** Every numeric field a safe integer (the engine's input contract; docs/engine.md). */
function wellFormed(r: Request): boolean {
  return isSafe(r.kind) && isSafe(r.account) && isSafe(r.nonce) && isSafe(r.market) && isSafe(r.side) &&
    isSafe(r.order_type) && isSafe(r.tif) && isSafe(r.price_units) && isSafe(r.quantity_units) &&
    isSafe(r.order_id) && isSafe(r.asset) && isSafe(r.asset_quote) && isSafe(r.amount_units) &&
    isSafe(r.maker_fee_bps) && isSafe(r.taker_fee_bps) && isSafe(r.credit_limit_units) &&
    isSafe(r.auto_cancel_ratio_ppm) && isSafe(r.tick_size_units) && isSafe(r.lot_size_units) &&
    isSafe(r.referrer_account) && isSafe(r.inner_kind) && isSafe(r.inner_nonce) && isSafe(r.inner_reject) &&
    isSafe(r.stp) && isSafe(r.expires_after_ms) && isSafe(r.signer) && isSafe(r.agent_account);
}

