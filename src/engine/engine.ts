// The fast engine: the deterministic state machine the matcher thread runs. Rules are in
// docs/engine.md; the reference engine (src/engine/reference/) is the same rules written plainly,
// and the differential tests hold the two to identical events and state.
//
// Hot-path discipline: no allocation per request in steady state (the taker lives in fields, not
// an object; events go straight to the sink), no bigint, no clock, no hash-order iteration.
// Unchecked money arithmetic: every number reaching it passed wellFormed (safe integers) and the
// sign checks of the request (src/money/muldiv.ts says why this matters).
import { MONEY_OVERFLOW, isMultiple, notionalCeilUnchecked as notionalCeil } from '../money/index.js';
import type { CanonicalState, EngineConfig, MatchingEngine } from './api.js';
import { NIL } from './book.js';
import { canonicalStateOf, loadCanonical } from './canonical.js';
import { Books } from './engine_books.js';
import { Matching } from './engine_matching.js';
import { Programmes, type RequestApplier } from './engine_programmes.js';
import {
  EngineState, feesValid, MARKET_ACTIVE, MARKET_PAUSED, MAX_SAFE, reject,
} from './engine_state.js';
import {
  BalanceReason, NO_MARKET, OrderStatus, OrderType, Reject, REJECT_CODES, RequestKind,
  Side, Stp, Tif, UpdateReason,
  type EventSink, type MarketInfo, type Request,
} from './types.js';

const CLIENT_ORDER_ID_PATTERN = /^[A-Za-z0-9_-]{1,36}$/;

export class FastEngine implements MatchingEngine, RequestApplier {
  // The engine's parts, each an object with its own job, all over the one state:
  private readonly st: EngineState;
  /** Linking, unlinking and cancelling resting orders; the walks the checks need. */
  private readonly books: Books;
  /** Referrals, forced inclusion, dead-man switches and batch start. */
  private readonly programmes: Programmes;
  /** One taker order against the book. */
  private readonly matching: Matching;

  constructor(config: EngineConfig) {
    this.st = new EngineState(config);
    this.books = new Books(this.st);
    this.programmes = new Programmes(this.st, this.books, this);
    this.matching = new Matching(this.st, this.books, this.programmes);
  }

  apply(r: Request, out: EventSink): void {
    this.st.ledger.beginRequest();
    this.matching.had_fill = false;
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
      case RequestKind.REFER: this.programmes.refer(r, out); break;
      case RequestKind.FORCE_INCLUDE: this.programmes.forceInclude(r, out); break;
      case RequestKind.CANCEL_AFTER: this.programmes.cancelAfter(r, out); break;
      case RequestKind.DISCONNECT_CANCEL: this.programmes.disconnectCancel(r, out); break;
      case RequestKind.APPROVE_AGENT: this.programmes.approveAgent(r, out); break;
      case RequestKind.REVOKE_AGENT: this.programmes.revokeAgent(r, out); break;
      default: reject(r, out, Reject.KIND_UNKNOWN); return;
    }
    if (this.matching.had_fill && this.st.credit.count > 0) this.books.creditSweep(out);
    this.st.ledger.flush(out);
  }


  // ---------------------------------------------------------------------------------------------
  // Requests

  private place(r: Request, out: EventSink): void {
    const reason = this.st.checkSigned(r);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    // The stale-order guard is judged at the batch time, so a replay refuses exactly the same orders.
    if (r.expires_after_ms !== 0 && this.st.batch_time_ms > r.expires_after_ms) return reject(r, out, Reject.EXPIRED);
    const m = r.market;
    if (!this.st.marketValid(m)) return reject(r, out, Reject.MARKET_UNKNOWN);
    if (this.st.market_status[m] !== MARKET_ACTIVE) return reject(r, out, Reject.MARKET_PAUSED);
    const side = r.side;
    const type = r.order_type;
    const tif = r.tif;
    if (side !== Side.BID && side !== Side.ASK) return reject(r, out, Reject.SIDE_INVALID);
    if (type !== OrderType.LIMIT && type !== OrderType.MARKET) return reject(r, out, Reject.ORDER_TYPE_INVALID);
    if (!(tif >= Tif.GTC && tif <= Tif.POST_ONLY) || (tif | 0) !== tif) return reject(r, out, Reject.TIF_INVALID);
    const stp = r.stp;
    if (stp !== Stp.EXPIRE_MAKER && stp !== Stp.EXPIRE_TAKER && stp !== Stp.EXPIRE_BOTH) return reject(r, out, Reject.STP_INVALID);
    const q = r.quantity_units;
    if (!(q > 0)) return reject(r, out, Reject.QUANTITY_NOT_POSITIVE);
    if (!isMultiple(q, this.st.market_lot[m])) return reject(r, out, Reject.QUANTITY_NOT_LOT_MULTIPLE);
    this.st.loadFees(m);
    const p = r.price_units;
    let lock = 0;
    if (type === OrderType.LIMIT) {
      if (!(p > 0)) return reject(r, out, Reject.PRICE_NOT_POSITIVE);
      if (!isMultiple(p, this.st.market_tick[m])) return reject(r, out, Reject.PRICE_NOT_TICK_MULTIPLE);
      lock = this.st.bidLock(p, q);
      if (lock === MONEY_OVERFLOW) return reject(r, out, Reject.NOTIONAL_TOO_LARGE);
    } else {
      if (tif !== Tif.IOC && tif !== Tif.FOK) return reject(r, out, Reject.MARKET_ORDER_TIF);
      if (p !== 0) return reject(r, out, Reject.MARKET_ORDER_WITH_PRICE);
    }
    const account = r.account;
    const coid = r.client_order_id;
    if (coid !== '') {
      if (!CLIENT_ORDER_ID_PATTERN.test(coid)) return reject(r, out, Reject.CLIENT_ORDER_ID_INVALID);
      if (this.st.orders.slot_by_client_id.find(account, coid) !== NIL) return reject(r, out, Reject.CLIENT_ORDER_ID_DUPLICATE);
    }
    const may_rest = type === OrderType.LIMIT && (tif === Tif.GTC || tif === Tif.POST_ONLY);
    const own = side === Side.BID ? this.st.bids[m] : this.st.asks[m];
    const opposite = side === Side.BID ? this.st.asks[m] : this.st.bids[m];
    if (may_rest) {
      if (this.st.ledger.open_orders[account] >= this.st.limits.orders_open_per_account_max) return reject(r, out, Reject.ACCOUNT_OPEN_ORDERS_MAX);
      if (this.st.orders.size >= this.st.limits.orders_open_max) return reject(r, out, Reject.ENGINE_OPEN_ORDERS_MAX);
      // Count first: the search runs only when the side is full (rare), not on every order.
      if (own.count >= this.st.limits.price_levels_per_book_max && own.find(p) < 0) return reject(r, out, Reject.BOOK_LEVELS_MAX);
    }
    if (tif === Tif.POST_ONLY && this.books.crosses(opposite, side, p)) return reject(r, out, Reject.POST_ONLY_WOULD_TAKE);
    const base = this.st.market_base[m];
    const quote = this.st.market_quote[m];
    const a = this.st.asset_count;
    if (side === Side.ASK) {
      if (this.st.ledger.available[account * a + base] < q) return reject(r, out, Reject.INSUFFICIENT_BALANCE);
      lock = q;
    } else if (type === OrderType.LIMIT) {
      if (this.st.ledger.available[account * a + quote] < lock) return reject(r, out, Reject.INSUFFICIENT_BALANCE);
    }
    if (may_rest && this.st.ledger.has_credit[account] === 1) {
      if (this.books.creditWouldBreach(account, m, q, notionalCeil(p, q))) {
        return reject(r, out, Reject.CREDIT_BREACH);
      }
    }
    let fok_unfilled = false;
    if (tif === Tif.FOK) {
      if (this.books.liquidity(opposite, type === OrderType.LIMIT, side, p, q, account, stp) < q) {
        fok_unfilled = true;
      } else if (side === Side.BID && type === OrderType.MARKET) {
        const cost = this.books.marketBidCost(opposite, q, account);
        if (cost > this.st.ledger.available[account * a + quote]) return reject(r, out, Reject.INSUFFICIENT_BALANCE);
      }
    }

    // Accepted: from here on nothing can fail.
    const order_id = this.st.next_order_id++;
    this.st.acceptSigned(r, order_id, out);
    if (lock > 0) this.st.moveToLocked(account, side === Side.BID ? quote : base, lock, BalanceReason.ORDER_PLACED);
    this.matching.takePlaced(r, order_id, lock, !fok_unfilled, may_rest, out);
  }

  private amend(r: Request, out: EventSink): void {
    const reason = this.st.checkSigned(r);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    const account = r.account;
    const s = this.books.ownOpenOrder(account, r.order_id, '');
    if (s === NIL) return reject(r, out, Reject.ORDER_NOT_FOUND);
    const o = this.st.orders;
    const m = o.market[s];
    if (this.st.market_status[m] !== MARKET_ACTIVE) return reject(r, out, Reject.MARKET_PAUSED);
    const q = r.quantity_units;
    if (!(q > 0)) return reject(r, out, Reject.QUANTITY_NOT_POSITIVE);
    if (!isMultiple(q, this.st.market_lot[m])) return reject(r, out, Reject.QUANTITY_NOT_LOT_MULTIPLE);
    const p = r.price_units;
    if (!(p > 0)) return reject(r, out, Reject.PRICE_NOT_POSITIVE);
    if (!isMultiple(p, this.st.market_tick[m])) return reject(r, out, Reject.PRICE_NOT_TICK_MULTIPLE);
    this.st.loadFees(m);
    const bid_lock = this.st.bidLock(p, q);
    if (bid_lock === MONEY_OVERFLOW) return reject(r, out, Reject.NOTIONAL_TOO_LARGE);
    const side = o.side[s];
    const own = side === Side.BID ? this.st.bids[m] : this.st.asks[m];
    const opposite = side === Side.BID ? this.st.asks[m] : this.st.bids[m];
    const old_price = o.price[s];
    // Moving to a new price level is refused when the side is full, unless the order leaves a
    // level it is alone at (the count of levels then does not grow).
    const alone = this.st.levels.head[o.level[s]] === s && this.st.levels.tail[o.level[s]] === s;
    if (p !== old_price && !alone && own.count >= this.st.limits.price_levels_per_book_max && own.find(p) < 0) {
      return reject(r, out, Reject.BOOK_LEVELS_MAX);
    }
    const tif = o.tif[s];
    if (tif === Tif.POST_ONLY && this.books.crosses(opposite, side, p)) return reject(r, out, Reject.POST_ONLY_WOULD_TAKE);
    const lock_asset = side === Side.BID ? this.st.market_quote[m] : this.st.market_base[m];
    const new_lock = side === Side.BID ? bid_lock : q;
    const old_lock = o.locked[s];
    const key = account * this.st.asset_count + lock_asset;
    if (new_lock > this.st.ledger.available[key] + old_lock) return reject(r, out, Reject.INSUFFICIENT_BALANCE);
    const old_remaining = o.remaining[s];
    if (this.st.ledger.has_credit[account] === 1) {
      const value_delta = notionalCeil(p, q) - notionalCeil(old_price, old_remaining);
      if (this.books.creditWouldBreach(account, m, q - old_remaining, value_delta)) return reject(r, out, Reject.CREDIT_BREACH);
    }

    // Accepted.
    const order_id = o.id[s];
    this.st.acceptSigned(r, order_id, out);
    const filled = o.filled[s];
    if (p === old_price && q <= old_remaining) {
      // Same price, not larger: keeps its place in the queue.
      this.st.ledger.touch(account, lock_asset, BalanceReason.ORDER_PLACED);
      this.st.ledger.available[key] -= new_lock - old_lock;
      this.st.ledger.locked[key] += new_lock - old_lock;
      o.locked[s] = new_lock;
      const dq = old_remaining - q;
      o.remaining[s] = q;
      o.quantity[s] = filled + q;
      this.st.levels.quantity[o.level[s]] -= dq;
      if (this.st.ledger.has_credit[account] === 1) {
        this.st.credit.onRestChange(account, m, -dq, notionalCeil(p, q) - notionalCeil(p, old_remaining));
      }
      out.orderUpdate(order_id, account, m, side, filled > 0 ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN,
        p, filled + q, filled, q, o.last_fill_price[s], UpdateReason.AMENDED, new_lock, o.priority_seq[s]);
      return;
    }
    // Anything else re-enters the book as if placed now, keeping its id and filled quantity.
    this.st.ledger.touch(account, lock_asset, BalanceReason.ORDER_PLACED);
    this.st.ledger.available[key] += old_lock - new_lock;
    this.st.ledger.locked[key] += new_lock - old_lock;
    this.books.unlinkLevel(s);
    this.matching.takeAmended(s, p, q, new_lock, out);
  }

  private cancel(r: Request, out: EventSink): void {
    const reason = this.st.checkSigned(r);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    const s = this.books.ownOpenOrder(r.account, r.order_id, r.client_order_id);
    if (s === NIL) return reject(r, out, Reject.ORDER_NOT_FOUND);
    this.st.acceptSigned(r, this.st.orders.id[s], out);
    this.books.cancelResting(s, UpdateReason.USER_CANCEL, out);
  }

  private cancelAll(r: Request, out: EventSink): void {
    const reason = this.st.checkSigned(r);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    const m = r.market;
    if (m !== NO_MARKET && !this.st.marketValid(m)) return reject(r, out, Reject.MARKET_UNKNOWN);
    this.st.acceptSigned(r, 0, out);
    this.books.cancelAccountOrders(r.account, m, UpdateReason.CANCEL_ALL, out);
  }

  private deposit(r: Request, out: EventSink): void {
    // Asset and amount before the account: the matcher registers a new address only for a
    // deposit that would be accepted (depositRejectReason), so its reason must come first.
    const reason = this.depositRejectReason(r.asset, r.amount_units, r.nonce);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    const account = r.account;
    if (!this.st.accountValid(account)) return reject(r, out, Reject.ACCOUNT_UNKNOWN);
    const asset = r.asset;
    const amount = r.amount_units;
    this.st.ledger.ensure(account);
    out.accepted(RequestKind.DEPOSIT, account, 0);
    if (r.nonce > 0) this.st.chain_deposit_high_water = r.nonce;
    this.st.ledger.touch(account, asset, BalanceReason.DEPOSIT);
    this.st.ledger.available[account * this.st.asset_count + asset] += amount;
    this.st.deposits[asset] += amount;
  }

  /**
   * The deposit checks that do not depend on the account (Reject.NONE when they pass).
   * `chain_deposit_id` > 0: an on-chain deposit, credited once (above the high-water mark).
   */
  depositRejectReason(asset: number, amount: number, chain_deposit_id: number): number {
    if (!(chain_deposit_id >= 0)) return Reject.REQUEST_MALFORMED;
    if (chain_deposit_id > 0 && !(chain_deposit_id > this.st.chain_deposit_high_water)) return Reject.NONCE_NOT_ABOVE_HIGH_WATER;
    if (!this.st.assetValid(asset)) return Reject.ASSET_UNKNOWN;
    if (!(amount > 0)) return Reject.AMOUNT_NOT_POSITIVE;
    // Lifetime deposits stay a safe integer; so then does the supply (deposits - withdrawals) and
    // every balance and sum of balances.
    if (this.st.deposits[asset] + amount > MAX_SAFE) return Reject.AMOUNT_TOO_LARGE;
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
    const reason = this.st.checkSigned(r);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    const account = r.account;
    const asset = r.asset;
    if (!this.st.assetValid(asset)) return reject(r, out, Reject.ASSET_UNKNOWN);
    const amount = r.amount_units;
    if (!(amount > 0)) return reject(r, out, Reject.AMOUNT_NOT_POSITIVE);
    const key = account * this.st.asset_count + asset;
    if (!(this.st.ledger.available[key] >= amount)) return reject(r, out, Reject.INSUFFICIENT_BALANCE);
    this.st.acceptSigned(r, 0, out);
    this.st.ledger.touch(account, asset, BalanceReason.WITHDRAWAL);
    this.st.ledger.available[key] -= amount;
    this.st.withdrawals[asset] += amount;
    // Nonces only grow per account, so appending keeps (account, nonce) order within an account;
    // insert to keep the whole list ascending by account.
    let i = this.st.pending_withdrawals.length;
    while (i > 0 && this.st.pending_withdrawals[i - 1].account > account) i--;
    this.st.pending_withdrawals.splice(i, 0, { account, nonce: r.nonce, asset, amount_units: amount });
  }

  private pauseOrResume(r: Request, out: EventSink, pause: boolean): void {
    const m = r.market;
    if (!this.st.marketValid(m)) return reject(r, out, Reject.MARKET_UNKNOWN);
    out.accepted(r.kind, r.account, 0);
    if (!pause) {
      this.st.market_status[m] = MARKET_ACTIVE;
      return;
    }
    if (this.st.market_status[m] === MARKET_PAUSED) return;
    this.st.market_status[m] = MARKET_PAUSED;
    this.books.cancelMarketOrders(m, UpdateReason.MARKET_PAUSED, out);
  }

  private setFees(r: Request, out: EventSink): void {
    const m = r.market;
    if (m !== NO_MARKET && !this.st.marketValid(m)) return reject(r, out, Reject.MARKET_UNKNOWN);
    if (!feesValid(r.maker_fee_bps, r.taker_fee_bps)) return reject(r, out, Reject.FEES_INVALID);
    out.accepted(RequestKind.SET_FEES, r.account, 0);
    if (m === NO_MARKET) {
      this.st.maker_bps_global = r.maker_fee_bps;
      this.st.taker_bps_global = r.taker_fee_bps;
    } else {
      this.st.market_fee_override[m] = 1;
      this.st.market_maker_bps[m] = r.maker_fee_bps;
      this.st.market_taker_bps[m] = r.taker_fee_bps;
    }
  }

  private setCredit(r: Request, out: EventSink): void {
    const limit = r.credit_limit_units;
    const ratio = r.auto_cancel_ratio_ppm;
    const reason = this.creditRejectReason(limit, ratio);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    const account = r.account;
    if (!this.st.accountValid(account)) return reject(r, out, Reject.ACCOUNT_UNKNOWN);
    this.st.ledger.ensure(account);
    out.accepted(RequestKind.SET_CREDIT, account, 0);
    if (limit === 0) {
      this.st.credit.remove(account);
      this.st.ledger.has_credit[account] = 0;
      return;
    }
    const entry = this.st.credit.set(account, limit, ratio);
    if (this.st.ledger.has_credit[account] === 0) {
      // Start tracking: count what the account already has resting.
      entry.rest_quantity.fill(0);
      entry.rest_value.fill(0);
      const o = this.st.orders;
      for (let s = this.st.ledger.order_head[account]; s !== NIL; s = o.acct_next[s]) {
        entry.rest_quantity[o.market[s]] += o.remaining[s];
        entry.rest_value[o.market[s]] += notionalCeil(o.price[s], o.remaining[s]);
      }
      this.st.ledger.has_credit[account] = 1;
    }
  }


  private addMarketRequest(r: Request, out: EventSink): void {
    const reason = this.st.addMarket(r.asset, r.asset_quote, r.tick_size_units, r.lot_size_units);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    out.accepted(RequestKind.ADD_MARKET, r.account, 0);
  }

  // ---------------------------------------------------------------------------------------------
  // Batch start and read-outs (the matcher's; rare)

  beginBatch(time_ms: number, out: EventSink): void {
    this.programmes.beginBatch(time_ms, out);
  }

  /** When the next batch must start even on an idle exchange (Programmes.nextDueMs). */
  nextDueMs(): number {
    return this.programmes.nextDueMs();
  }

  marketCount(): number {
    return this.st.market_count;
  }

  marketInfo(m: number): MarketInfo {
    return this.st.marketInfo(m);
  }

  globalFees(): [number, number] {
    return [this.st.maker_bps_global, this.st.taker_bps_global];
  }

  // ---------------------------------------------------------------------------------------------
  // Canonical state

  canonicalState(): CanonicalState {
    return canonicalStateOf(this.st);
  }

  /** Loads a canonical state into this freshly constructed engine (canonical.ts, loadCanonical). */
  loadCanonical(state: CanonicalState): void {
    loadCanonical(this.st, this.books, state);
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

