// The reference engine's orders (docs/engine.md "Requests, in validation order", "Matching"): PLACE
// with its matching and fills, and CANCEL / AMEND / CANCEL_ALL; the counterpart of the fast
// engine's engine_orders.ts and engine_matching.ts. Batches, the other requests and the admin ones
// are in reference_engine.ts, the state and its helpers in reference_state.ts. Every handler
// validates completely before its first mutation (a Rejection after one is an error: apply in
// reference_engine.ts).
import {
  FEE_ACCOUNT,
  NO_MARKET,
  OrderStatus,
  OrderType,
  Side,
  Stp,
  Tif,
} from '../types.js';
import { BalanceReason, UpdateReason } from '../events.js';
import { REFERRAL_SHARE_PERCENT } from '../rules.js';
import { Reject } from '../codes.js';
import type { Request } from '../types.js';
import { ReferenceState } from './reference_state.js';
import {
  CLIENT_ORDER_ID_RE,
  MAX_SAFE,
  Rejection,
  bidLock,
  isIndex,
  minBig,
  num,
  refFeeCeil,
  refFeeFloor,
  refNotionalCeil,
  refNotionalFloor,
  type RefMarket,
  type RefOrder,
} from './reference_values.js';

export abstract class ReferenceOrders extends ReferenceState {
  // ---------------------------------------------------------------- PLACE

  protected place(r: Request): void {
    this.checkSigned(r);
    // Judged at the batch time: a replay of the same batches refuses the same orders.
    if (r.expires_after_ms !== 0 && this.time_ms > r.expires_after_ms) throw new Rejection(Reject.EXPIRED);
    if (!isIndex(r.market, this.markets.length)) throw new Rejection(Reject.MARKET_UNKNOWN);
    const m = this.markets[r.market];
    if (m.status !== 'active') throw new Rejection(Reject.MARKET_PAUSED);
    if (r.side !== Side.BID && r.side !== Side.ASK) throw new Rejection(Reject.SIDE_INVALID);
    if (r.order_type !== OrderType.LIMIT && r.order_type !== OrderType.MARKET) throw new Rejection(Reject.ORDER_TYPE_INVALID);
    if (!isIndex(r.tif, 4)) throw new Rejection(Reject.TIF_INVALID);
    if (!isIndex(r.stp, 3)) throw new Rejection(Reject.STP_INVALID);
    const quantity = BigInt(r.quantity_units);
    const price = BigInt(r.price_units);
    if (quantity <= 0n) throw new Rejection(Reject.QUANTITY_NOT_POSITIVE);
    if (quantity % m.lot !== 0n) throw new Rejection(Reject.QUANTITY_NOT_LOT_MULTIPLE);
    const fees = this.fees(m);
    const isLimit = r.order_type === OrderType.LIMIT;
    if (isLimit) {
      if (price <= 0n) throw new Rejection(Reject.PRICE_NOT_POSITIVE);
      if (price % m.tick !== 0n) throw new Rejection(Reject.PRICE_NOT_TICK_MULTIPLE);
      if (bidLock(price, quantity, fees.taker) > MAX_SAFE) throw new Rejection(Reject.NOTIONAL_TOO_LARGE);
    } else {
      if (r.tif !== Tif.IOC && r.tif !== Tif.FOK) throw new Rejection(Reject.MARKET_ORDER_TIF);
      if (price !== 0n) throw new Rejection(Reject.MARKET_ORDER_WITH_PRICE);
    }
    const coid = r.client_order_id;
    if (coid !== '') {
      if (!CLIENT_ORDER_ID_RE.test(coid)) throw new Rejection(Reject.CLIENT_ORDER_ID_INVALID);
      if (this.openOrdersOf(r.account).some((o) => o.client_order_id === coid)) {
        throw new Rejection(Reject.CLIENT_ORDER_ID_DUPLICATE);
      }
    }
    const mayRest = r.tif === Tif.GTC || r.tif === Tif.POST_ONLY; // market orders failed above
    if (mayRest) {
      if (this.openOrdersOf(r.account).length >= this.limits.orders_open_per_account_max) {
        throw new Rejection(Reject.ACCOUNT_OPEN_ORDERS_MAX);
      }
      if (this.allOpenOrders().length >= this.limits.orders_open_max) throw new Rejection(Reject.ENGINE_OPEN_ORDERS_MAX);
      const own = this.sideOf(m, r.side);
      if (!own.some((o) => o.price === price)) {
        const levels = new Set(own.map((o) => o.price)).size;
        if (levels >= this.limits.price_levels_per_book_max) throw new Rejection(Reject.BOOK_LEVELS_MAX);
      }
    }
    if (r.tif === Tif.POST_ONLY && this.crosses(m, r.side, price)) throw new Rejection(Reject.POST_ONLY_WOULD_TAKE);
    let lockAmount = 0n;
    if (r.side === Side.BID) {
      if (isLimit) {
        lockAmount = bidLock(price, quantity, fees.taker);
        if (this.available(r.account, m.quote) < lockAmount) throw new Rejection(Reject.INSUFFICIENT_BALANCE);
      }
    } else {
      lockAmount = quantity;
      if (this.available(r.account, m.base) < quantity) throw new Rejection(Reject.INSUFFICIENT_BALANCE);
    }
    const c = this.credit.get(r.account);
    if (mayRest && c !== undefined) {
      if (this.quotedValue(r.account) + this.orderValue(m, price, quantity) >= c.limit) {
        throw new Rejection(Reject.CREDIT_BREACH);
      }
    }
    let fokUnfillable = false;
    if (r.tif === Tif.FOK) {
      // What the order can really fill: never its own orders (self-trade prevention). expire_maker
      // passes over them (they get cancelled); expire_taker and expire_both stop at the first.
      const opposite = this.sideOf(m, 1 - r.side);
      const crossing = opposite.filter((o) => !isLimit || (r.side === Side.BID ? o.price <= price : o.price >= price));
      const own = crossing.findIndex((o) => o.account === r.account);
      const reachable = (r.stp === Stp.EXPIRE_MAKER || own < 0 ? crossing : crossing.slice(0, own))
        .filter((o) => o.account !== r.account);
      const depth = reachable.reduce((s, o) => s + o.remaining, 0n);
      if (depth < quantity) {
        fokUnfillable = true;
      } else if (!isLimit && r.side === Side.BID) {
        let left = quantity;
        let cost = 0n;
        for (const maker of reachable) {
          if (left === 0n) break;
          const q = minBig(left, maker.remaining);
          const n = refNotionalCeil(maker.price, q);
          cost += n + refFeeCeil(n, fees.taker);
          left -= q;
        }
        if (cost > this.available(r.account, m.quote)) throw new Rejection(Reject.INSUFFICIENT_BALANCE);
      }
    }

    // Accepted.
    const o: RefOrder = {
      order_id: this.next_order_id++, account: r.account, market: r.market, side: r.side,
      order_type: r.order_type, tif: r.tif, price: isLimit ? price : 0n, quantity, filled: 0n,
      remaining: quantity, locked: 0n, priority_seq: 0, client_order_id: coid, last_fill_price: 0n,
    };
    this.acceptSigned(r, o.order_id);
    this.setLock(o, lockAmount, BalanceReason.ORDER_PLACED);
    if (fokUnfillable) {
      this.releaseLock(o, BalanceReason.ORDER_CANCELLED);
      o.remaining = 0n;
      this.emitUpdate(o, OrderStatus.CANCELLED, UpdateReason.UNFILLED_REMAINDER);
      return;
    }
    this.takeAndFinish(o, m, UpdateReason.PLACED, r.stp);
  }

  /**
   * Matches `o` as a taker, then rests it (gtc / post_only), or cancels its remainder, and emits its
   * one order update. `restReason` is PLACED for a new order, AMENDED for an amend; `stp` is the
   * taker's self-trade prevention mode (an amend's is expire_maker: the amend wire carries none).
   */
  private takeAndFinish(o: RefOrder, m: RefMarket, restReason: number, stp: number): void {
    const stop = this.match(o, m, stp);
    if (o.remaining === 0n) {
      this.releaseLock(o, BalanceReason.FILL);
      this.emitUpdate(o, OrderStatus.FILLED, UpdateReason.FILL);
    } else if (o.order_type === OrderType.LIMIT && (o.tif === Tif.GTC || o.tif === Tif.POST_ONLY) &&
      stop !== UpdateReason.SELF_TRADE_PREVENTED) {
      this.rest(o);
      this.emitUpdate(o, o.filled > 0n ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN, restReason);
    } else {
      this.releaseLock(o, BalanceReason.ORDER_CANCELLED);
      o.remaining = 0n;
      this.emitUpdate(o, OrderStatus.CANCELLED, stop);
    }
  }

  /**
   * Price-time matching of taker `o`; returns why it stopped short (the reason its remainder is
   * cancelled with): INSUFFICIENT_BALANCE when a market bid ran out of quote, SELF_TRADE_PREVENTED
   * when it met its own account's order under expire_taker / expire_both, else UNFILLED_REMAINDER.
   */
  private match(o: RefOrder, m: RefMarket, stp: number): number {
    const fees = this.fees(m);
    const opposite = this.sideOf(m, 1 - o.side);
    const isLimit = o.order_type === OrderType.LIMIT;
    while (o.remaining > 0n && opposite.length > 0) {
      const maker = opposite[0];
      if (isLimit) {
        if (o.side === Side.BID && maker.price > o.price) break;
        if (o.side === Side.ASK && maker.price < o.price) break;
      }
      if (maker.account === o.account) {
        // Self-trade prevention: no fill ever has one account on both sides.
        if (stp !== Stp.EXPIRE_TAKER) this.cancelResting(maker, UpdateReason.SELF_TRADE_PREVENTED);
        if (stp !== Stp.EXPIRE_MAKER) return UpdateReason.SELF_TRADE_PREVENTED;
        continue;
      }
      let q = minBig(o.remaining, maker.remaining);
      if (!isLimit && o.side === Side.BID) {
        q = this.affordable(maker.price, q, m.lot, fees.taker, this.available(o.account, m.quote));
        if (q === 0n) return UpdateReason.INSUFFICIENT_BALANCE;
      }
      this.fill(o, maker, m, q, fees);
    }
    return UpdateReason.UNFILLED_REMAINDER;
  }

  /** Largest lot multiple q' <= q with notionalCeil(p, q') + feeCeil(that, bps) <= budget. */
  private affordable(price: bigint, q: bigint, lot: bigint, taker_bps: bigint, budget: bigint): bigint {
    const cost = (k: bigint): bigint => bidLock(price, k * lot, taker_bps);
    let lo = 0n; // affordable
    let hi = q / lot; // candidate
    if (cost(hi) <= budget) return hi * lot;
    while (hi - lo > 1n) {
      const mid = (lo + hi) / 2n;
      if (cost(mid) <= budget) lo = mid;
      else hi = mid;
    }
    return lo * lot;
  }

  private fill(taker: RefOrder, maker: RefOrder, m: RefMarket, q: bigint, fees: { maker: bigint; taker: bigint }): void {
    const p = maker.price;
    const nCeil = refNotionalCeil(p, q);
    const nFloor = refNotionalFloor(p, q);
    const takerIsBuyer = taker.side === Side.BID;
    const buyer = takerIsBuyer ? taker : maker;
    const seller = takerIsBuyer ? maker : taker;
    // A buyer paying from a lock never pays a fee beyond what the lock keeps above the notional
    // of its remaining quantity.
    const capFor = (b: RefOrder): bigint => b.locked - nCeil - refNotionalCeil(b.price, b.remaining - q);
    const buyerPaysFromLock = buyer.order_type === OrderType.LIMIT;

    let ft = refFeeCeil(takerIsBuyer ? nCeil : nFloor, fees.taker);
    if (takerIsBuyer && buyerPaysFromLock) ft = minBig(ft, capFor(taker));
    let fm = 0n;
    let rebate = 0n;
    const nMaker = takerIsBuyer ? nFloor : nCeil;
    if (fees.maker >= 0n) {
      fm = refFeeCeil(nMaker, fees.maker);
      if (!takerIsBuyer) fm = minBig(fm, capFor(maker));
    } else {
      rebate = minBig(refFeeFloor(nMaker, -fees.maker), ft);
    }
    if (ft < 0n || fm < 0n) throw new Error('reference engine: negative fee after the lock cap');
    const buyerFee = takerIsBuyer ? ft : fm;
    const sellerFee = takerIsBuyer ? fm : ft;

    const F = BalanceReason.FILL;
    // Buyer: pays n_ceil + fee, receives q base.
    if (buyerPaysFromLock) {
      buyer.locked -= nCeil + buyerFee;
      if (buyer.locked < 0n) throw new Error('reference engine: bid lock went negative');
      this.addLocked(buyer.account, m.quote, -(nCeil + buyerFee), F);
    } else {
      this.addAvailable(buyer.account, m.quote, -(nCeil + buyerFee), F);
    }
    this.addAvailable(buyer.account, m.base, q, F);
    // Seller: releases q base from its lock, receives n_floor - fee.
    seller.locked -= q;
    this.addLocked(seller.account, m.base, -q, F);
    this.addAvailable(seller.account, m.quote, nFloor - sellerFee, F);
    // Maker rebate, paid out of this fill's taker fee.
    if (rebate > 0n) this.addAvailable(maker.account, m.quote, rebate, F);
    // Fee account.
    const feeIncome = nCeil - nFloor + ft + fm - rebate;
    if (feeIncome !== 0n) this.addAvailable(FEE_ACCOUNT, m.quote, feeIncome, F);
    else this.touch(FEE_ACCOUNT, m.quote, F);

    for (const o of [taker, maker]) {
      o.filled += q;
      o.remaining -= q;
      o.last_fill_price = p;
    }
    m.mark = p;
    this.filledThisRequest = true;
    const fill_id = this.next_fill_id++;
    this.out!.fill(
      fill_id, taker.market, taker.order_id, maker.order_id, taker.account,
      maker.account, taker.side, num(p), num(q), num(ft), rebate > 0n ? num(-rebate) : num(fm),
    );
    // Referral: 20% (floor) of the taker fee while the referral is active, at most what the fee
    // account earned on this fill.
    const referral = this.referrals.get(taker.account);
    if (referral !== undefined && this.time_ms < referral.until_ms) {
      const share = minBig((ft * BigInt(REFERRAL_SHARE_PERCENT)) / 100n, feeIncome);
      if (share > 0n) {
        this.addAvailable(FEE_ACCOUNT, m.quote, -share, F);
        this.addAvailable(referral.referrer, m.quote, share, F);
        referral.earned[m.quote] += share;
        this.out!.referralShare(fill_id, taker.account, referral.referrer, m.quote, num(share));
      }
    }
    if (maker.remaining === 0n) {
      this.removeFromBook(maker);
      this.releaseLock(maker, F);
      this.emitUpdate(maker, OrderStatus.FILLED, UpdateReason.FILL);
    } else {
      this.emitUpdate(maker, OrderStatus.PARTIALLY_FILLED, UpdateReason.FILL);
    }
  }

  // ---------------------------------------------------------------- CANCEL / AMEND / CANCEL_ALL

  protected cancel(r: Request): void {
    this.checkSigned(r);
    let o: RefOrder | undefined;
    if (r.order_id !== 0) {
      o = this.findOpen(r.order_id);
      if (o !== undefined && r.client_order_id !== '' && r.client_order_id !== o.client_order_id) o = undefined;
    } else if (r.client_order_id !== '') {
      o = this.openOrdersOf(r.account).find((x) => x.client_order_id === r.client_order_id);
    }
    if (o === undefined || o.account !== r.account) throw new Rejection(Reject.ORDER_NOT_FOUND);
    this.acceptSigned(r, o.order_id);
    this.cancelResting(o, UpdateReason.USER_CANCEL);
  }

  protected amend(r: Request): void {
    this.checkSigned(r);
    const o = r.order_id !== 0 ? this.findOpen(r.order_id) : undefined;
    if (o === undefined || o.account !== r.account) throw new Rejection(Reject.ORDER_NOT_FOUND);
    const m = this.markets[o.market];
    if (m.status !== 'active') throw new Rejection(Reject.MARKET_PAUSED);
    const quantity = BigInt(r.quantity_units);
    const price = BigInt(r.price_units);
    if (quantity <= 0n) throw new Rejection(Reject.QUANTITY_NOT_POSITIVE);
    if (quantity % m.lot !== 0n) throw new Rejection(Reject.QUANTITY_NOT_LOT_MULTIPLE);
    if (price <= 0n) throw new Rejection(Reject.PRICE_NOT_POSITIVE);
    if (price % m.tick !== 0n) throw new Rejection(Reject.PRICE_NOT_TICK_MULTIPLE);
    const fees = this.fees(m);
    if (bidLock(price, quantity, fees.taker) > MAX_SAFE) throw new Rejection(Reject.NOTIONAL_TOO_LARGE);
    const own = this.sideOf(m, o.side);
    if (!own.some((x) => x.price === price)) {
      // A new level on a full side, unless the order leaves a level it is alone at.
      const alone = own.filter((x) => x.price === o.price).length === 1;
      const levels = new Set(own.map((x) => x.price)).size;
      if (!alone && levels >= this.limits.price_levels_per_book_max) throw new Rejection(Reject.BOOK_LEVELS_MAX);
    }
    if (o.tif === Tif.POST_ONLY && this.crosses(m, o.side, price)) throw new Rejection(Reject.POST_ONLY_WOULD_TAKE);
    const newLock = o.side === Side.BID ? bidLock(price, quantity, fees.taker) : quantity;
    if (newLock > this.available(o.account, this.lockAsset(o)) + o.locked) throw new Rejection(Reject.INSUFFICIENT_BALANCE);
    const c = this.credit.get(o.account);
    if (c !== undefined) {
      const q = this.quotedValue(o.account) - this.orderValue(m, o.price, o.remaining) + this.orderValue(m, price, quantity);
      if (q >= c.limit) throw new Rejection(Reject.CREDIT_BREACH);
    }

    this.acceptSigned(r, o.order_id);
    o.quantity = o.filled + quantity;
    if (price === o.price && quantity <= o.remaining) {
      o.remaining = quantity;
      this.setLock(o, newLock, BalanceReason.ORDER_PLACED);
      this.emitUpdate(o, o.filled > 0n ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN, UpdateReason.AMENDED);
      return;
    }
    this.removeFromBook(o);
    o.price = price;
    o.remaining = quantity;
    this.setLock(o, newLock, BalanceReason.ORDER_PLACED);
    this.takeAndFinish(o, m, UpdateReason.AMENDED, Stp.EXPIRE_MAKER);
  }

  protected cancelAll(r: Request): void {
    this.checkSigned(r);
    if (r.market !== NO_MARKET && !isIndex(r.market, this.markets.length)) throw new Rejection(Reject.MARKET_UNKNOWN);
    this.acceptSigned(r, 0);
    for (const o of this.openOrdersOf(r.account)) {
      if (r.market === NO_MARKET || o.market === r.market) this.cancelResting(o, UpdateReason.CANCEL_ALL);
    }
  }
}
