// The reference engine: docs/engine.md in code, written to be obviously right rather than fast.
//
// - Each book side is a plain array of order objects, re-sorted after every change (bids: price
//   descending, asks: price ascending, then priority_seq ascending).
// - Every money value is a bigint and every money computation is bigint arithmetic, so this engine
//   shares no arithmetic with src/money/ or the fast engine. Values leave the engine (events,
//   canonical state) through `num()`, which asserts they are safe integers.
// - Balance events are derived, not tracked: the (available, locked) of every (account, asset) a
//   request touches is remembered before the first touch, and at the end the pairs whose value
//   changed are reported with the highest reason that touched them.
//
// The differential tests (test/engine/differential.test.ts) hold the fast engine to this one.
import {
  INBOX_ENTRIES_MAX_DEFAULT,
  INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT,
  type EngineConfig,
  type MatchingEngine,
} from '../api.js';
import { forcedRequestOf, payloadRequest, requestOfForced } from '../programmes.js';
import { AGENT_VALIDITY_MS_MAX, AGENTS_LIVE_MAX } from '../agents.js';
import {
  BalanceReason,
  DEAD_MAN_TIMEOUT_MS_MAX,
  DEAD_MAN_TIMEOUT_MS_MIN,
  FEE_ACCOUNT,
  FORCE_INCLUSION_DEADLINE_MS,
  REFERRAL_ACTIVE_MS,
  REFERRAL_SHARE_PERCENT,
  forcibleKind,
  NO_MARKET,
  OrderStatus,
  OrderType,
  REJECT_CODES,
  Reject,
  RequestKind,
  Side,
  Stp,
  Tif,
  UpdateReason,
} from '../types.js';
import type { EventSink, Request } from '../types.js';
import {
  CLIENT_ORDER_ID_RE, MAX_SAFE, ReferenceState, Rejection, UNITS, bidLock, isIndex, minBig, num, refFeeCeil,
  refFeeFloor, refNotionalCeil, refNotionalFloor, type RefMarket, type RefOrder,
} from './reference_state.js';

class ReferenceEngine extends ReferenceState implements MatchingEngine {
  // ---------------------------------------------------------------- batches and the inbox

  beginBatch(time_ms: number, out: EventSink): void {
    if (!(Number.isSafeInteger(time_ms) && time_ms >= this.time_ms)) throw new Error('reference engine: batch time went back');
    this.time_ms = time_ms;
    // Dead-man switches whose deadline has come, by (deadline, account): each cancels every
    // resting order of its account and disarms, before the inbox.
    const due = [...this.dead_man.entries()].filter(([, d]) => d <= time_ms).sort((x, y) => x[1] - y[1] || x[0] - y[0]);
    for (const [account] of due) {
      this.dead_man.delete(account);
      this.out = out;
      this.before = new Map();
      this.touchReason = new Map();
      out.accepted(RequestKind.DEAD_MAN_CANCEL, account, 0);
      for (const o of this.openOrdersOf(account)) this.cancelResting(o, UpdateReason.DEAD_MAN_SWITCH);
      this.emitBalances();
      this.out = null;
    }
    // Every entry whose hold has passed, oldest first.
    while (this.inbox.length > 0 && this.inbox[0].queued_ms + this.hold_ms <= time_ms) {
      const e = this.inbox.shift()!;
      const r = requestOfForced(e.account, e.request);
      out.inboxIncluded(e.entry_id, r);
      const reason = e.request.reject !== Reject.NONE ? e.request.reject
        : forcibleKind(r.kind) ? Reject.NONE : Reject.FORCED_KIND_INVALID;
      if (reason !== Reject.NONE) out.rejected(r.kind, r.account, REJECT_CODES[reason], reason);
      else this.apply(r, out);
    }
  }

  // ---------------------------------------------------------------- apply

  apply(request: Request, out: EventSink): void {
    this.out = out;
    this.before = new Map();
    this.touchReason = new Map();
    this.filledThisRequest = false;
    const r = request;
    try {
      if (!this.wellFormed(r)) throw new Rejection(Reject.REQUEST_MALFORMED);
      switch (r.kind) {
        case RequestKind.DEPOSIT: this.deposit(r); break;
        case RequestKind.WITHDRAW: this.withdraw(r); break;
        case RequestKind.PLACE: this.place(r); break;
        case RequestKind.CANCEL: this.cancel(r); break;
        case RequestKind.AMEND: this.amend(r); break;
        case RequestKind.CANCEL_ALL: this.cancelAll(r); break;
        case RequestKind.PAUSE_MARKET: this.pauseResume(r, 'paused'); break;
        case RequestKind.RESUME_MARKET: this.pauseResume(r, 'active'); break;
        case RequestKind.SET_FEES: this.setFees(r); break;
        case RequestKind.SET_CREDIT: this.setCredit(r); break;
        case RequestKind.ADD_MARKET: this.addMarket(r); break;
        case RequestKind.REFER: this.refer(r); break;
        case RequestKind.FORCE_INCLUDE: this.forceInclude(r); break;
        case RequestKind.CANCEL_AFTER: this.cancelAfter(r); break;
        case RequestKind.DISCONNECT_CANCEL: this.disconnectCancel(r); break;
        case RequestKind.APPROVE_AGENT: this.approveAgent(r); break;
        case RequestKind.REVOKE_AGENT: this.revokeAgent(r); break;
        default: throw new Rejection(Reject.KIND_UNKNOWN);
      }
    } catch (e) {
      if (!(e instanceof Rejection)) throw e;
      // Every handler validates completely before its first mutation.
      if (this.before.size !== 0) throw new Error('reference engine: rejected after a mutation');
      out.rejected(r.kind, r.account, REJECT_CODES[e.reason], e.reason);
      this.out = null;
      return;
    }
    if (this.filledThisRequest) this.creditAutoCancel();
    this.emitBalances();
    this.out = null;
  }

  /**
   * Out-of-contract input (never the decoder's output): numeric fields that are not safe integers.
   * Answered INVALID_REQUEST (REQUEST_MALFORMED) before any other check, so nothing below has to
   * guard against fractions, NaN or huge values.
   */
  private wellFormed(r: Request): boolean {
    const fields = [
      r.kind, r.account, r.nonce, r.market, r.side, r.order_type, r.tif, r.price_units,
      r.quantity_units, r.order_id, r.asset, r.asset_quote, r.amount_units, r.maker_fee_bps,
      r.taker_fee_bps, r.credit_limit_units, r.auto_cancel_ratio_ppm, r.tick_size_units,
      r.lot_size_units, r.referrer_account, r.inner_kind, r.inner_nonce, r.inner_reject, r.stp, r.expires_after_ms,
      r.signer, r.agent_account,
    ];
    return fields.every((x) => Number.isSafeInteger(x)) && typeof r.client_order_id === 'string';
  }

  // ---------------------------------------------------------------- DEPOSIT / WITHDRAW

  private deposit(r: Request): void {
    // An on-chain deposit (nonce = its contract deposit id) is credited once: ids only go up.
    if (r.nonce < 0) throw new Rejection(Reject.REQUEST_MALFORMED);
    if (r.nonce > 0 && r.nonce <= this.chain_deposit_high_water) throw new Rejection(Reject.NONCE_NOT_ABOVE_HIGH_WATER);
    if (!isIndex(r.asset, this.assets.length)) throw new Rejection(Reject.ASSET_UNKNOWN);
    const amount = BigInt(r.amount_units);
    if (amount <= 0n) throw new Rejection(Reject.AMOUNT_NOT_POSITIVE);
    // Lifetime deposits stay safe integers (so does supply, which is never larger).
    if (this.deposits[r.asset] + amount > MAX_SAFE) throw new Rejection(Reject.AMOUNT_TOO_LARGE);
    // The account comes last (docs/engine.md): a refused deposit never registers an address.
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    this.out!.accepted(r.kind, r.account, 0);
    if (r.nonce > 0) this.chain_deposit_high_water = r.nonce;
    this.addAvailable(r.account, r.asset, amount, BalanceReason.DEPOSIT);
    this.deposits[r.asset] += amount;
  }

  private withdraw(r: Request): void {
    this.checkSigned(r);
    if (!isIndex(r.asset, this.assets.length)) throw new Rejection(Reject.ASSET_UNKNOWN);
    const amount = BigInt(r.amount_units);
    if (amount <= 0n) throw new Rejection(Reject.AMOUNT_NOT_POSITIVE);
    if (this.available(r.account, r.asset) < amount) throw new Rejection(Reject.INSUFFICIENT_BALANCE);
    this.acceptSigned(r, 0);
    this.addAvailable(r.account, r.asset, -amount, BalanceReason.WITHDRAWAL);
    this.withdrawals[r.asset] += amount;
    this.pending.push({ account: r.account, nonce: r.nonce, asset: r.asset, amount });
  }

  // ---------------------------------------------------------------- REFER / FORCE_INCLUDE

  private refer(r: Request): void {
    this.checkSigned(r);
    if (!(r.referrer_account >= 1 && r.referrer_account < this.limits.accounts_max)) throw new Rejection(Reject.REFERRER_UNKNOWN);
    if (r.referrer_account === r.account) throw new Rejection(Reject.SELF_REFERRAL);
    if (this.referrals.has(r.account)) throw new Rejection(Reject.REFERRAL_EXISTS);
    this.acceptSigned(r, 0);
    const until = this.time_ms + REFERRAL_ACTIVE_MS;
    this.referrals.set(r.account, { referrer: r.referrer_account, until_ms: until, earned: this.assets.map(() => 0n) });
    this.out!.referral(r.account, r.referrer_account, until);
  }

  /** The envelope's nonce is its own per-account sequence; the trading mark is not touched. */
  private forceInclude(r: Request): void {
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    if (r.signer !== 0) throw new Rejection(Reject.AGENT_NOT_ALLOWED);
    if (!(r.nonce > (this.envelope_nonces.get(r.account) ?? 0))) throw new Rejection(Reject.ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER);
    if (!(Number.isSafeInteger(r.inner_reject) && r.inner_reject >= 0 && r.inner_reject < REJECT_CODES.length)) {
      throw new Rejection(Reject.REQUEST_MALFORMED);
    }
    const max = this.limits.inbox_entries_max ?? INBOX_ENTRIES_MAX_DEFAULT;
    const per_account = this.limits.inbox_entries_per_account_max ?? INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT;
    if (this.inbox.length >= max) throw new Rejection(Reject.INBOX_FULL);
    if (this.inbox.filter((e) => e.account === r.account).length >= per_account) throw new Rejection(Reject.INBOX_ACCOUNT_FULL);
    const entry_id = this.next_inbox_entry_id++;
    this.envelope_nonces.set(r.account, r.nonce);
    this.out!.accepted(r.kind, r.account, entry_id);
    const deadline = this.time_ms + FORCE_INCLUSION_DEADLINE_MS;
    this.inbox.push({
      entry_id, account: r.account, envelope_nonce: r.nonce, queued_ms: this.time_ms, deadline_ms: deadline,
      request: forcedRequestOf(payloadRequest(r), r.inner_reject),
    });
    this.out!.inboxQueued(entry_id, r.account, r.inner_kind, r.inner_nonce, deadline, r.referrer_account, r.inner_reject);
  }

  /** Operator request: the account's opted-in WebSocket closed. Refused when nothing rests. */
  private disconnectCancel(r: Request): void {
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    const open = this.openOrdersOf(r.account);
    if (open.length === 0) throw new Rejection(Reject.NOTHING_TO_CANCEL);
    this.out!.accepted(r.kind, r.account, 0);
    for (const o of open) this.cancelResting(o, UpdateReason.DISCONNECT);
  }

  // ---------------------------------------------------------------- agent keys

  /**
   * The user approves `agent_account` until amount_units (epoch ms), named client_order_id. Entries
   * not live at the batch time leave first (their marks raise the floor); a new entry's nonce mark
   * starts at the floor, so an agent approved again cannot have its old signatures replayed.
   */
  private approveAgent(r: Request): void {
    this.checkSigned(r);
    const agent = r.agent_account;
    if (!(agent >= 1 && agent < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNTS_MAX);
    if (agent === r.account) throw new Rejection(Reject.AGENT_SELF);
    if (!/^[A-Za-z0-9_.-]{1,16}$/.test(r.client_order_id)) throw new Rejection(Reject.AGENT_NAME_INVALID);
    const until = r.amount_units;
    if (!(until > this.time_ms && until - this.time_ms <= AGENT_VALIDITY_MS_MAX)) throw new Rejection(Reject.AGENT_VALIDITY_INVALID);
    const u = this.agent_keys.get(r.account) ?? { floor: 0, agents: new Map() };
    const live = [...u.agents.entries()].filter(([, e]) => e.until_ms > this.time_ms);
    if (!live.some(([a]) => a === agent) && live.length >= (this.limits.agents_live_per_account_max ?? AGENTS_LIVE_MAX)) throw new Rejection(Reject.AGENTS_MAX);
    this.agent_keys.set(r.account, u);
    this.acceptSigned(r, 0);
    for (const a of [...u.agents.keys()].sort((x, y) => x - y)) {
      if (u.agents.get(a)!.until_ms <= this.time_ms) this.dropAgent(r.account, a);
    }
    const e = u.agents.get(agent) ?? { name: '', until_ms: 0, nonce: u.floor };
    e.name = r.client_order_id;
    e.until_ms = until;
    u.agents.set(agent, e);
    this.out!.agent(r.account, agent, until, e.nonce, u.floor, e.name);
  }

  private revokeAgent(r: Request): void {
    this.checkSigned(r);
    if (this.agent_keys.get(r.account)?.agents.has(r.agent_account) !== true) throw new Rejection(Reject.AGENT_NOT_FOUND);
    this.acceptSigned(r, 0);
    this.dropAgent(r.account, r.agent_account);
  }

  private dropAgent(account: number, agent: number): void {
    const u = this.agent_keys.get(account)!;
    const e = u.agents.get(agent)!;
    u.agents.delete(agent);
    u.floor = Math.max(u.floor, e.nonce);
    this.out!.agent(account, agent, 0, 0, u.floor, '');
  }

  /** Arms the dead-man switch at batch time + timeout (amount_units); 0 disarms. */
  private cancelAfter(r: Request): void {
    this.checkSigned(r);
    const t = r.amount_units;
    if (!(t === 0 || (t >= DEAD_MAN_TIMEOUT_MS_MIN && t <= DEAD_MAN_TIMEOUT_MS_MAX))) throw new Rejection(Reject.TIMEOUT_INVALID);
    this.acceptSigned(r, 0);
    if (t === 0) this.dead_man.delete(r.account);
    else this.dead_man.set(r.account, this.time_ms + t);
  }

  // ---------------------------------------------------------------- PLACE

  private place(r: Request): void {
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

  private cancel(r: Request): void {
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

  private amend(r: Request): void {
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

  private cancelAll(r: Request): void {
    this.checkSigned(r);
    if (r.market !== NO_MARKET && !isIndex(r.market, this.markets.length)) throw new Rejection(Reject.MARKET_UNKNOWN);
    this.acceptSigned(r, 0);
    for (const o of this.openOrdersOf(r.account)) {
      if (r.market === NO_MARKET || o.market === r.market) this.cancelResting(o, UpdateReason.CANCEL_ALL);
    }
  }

  // ---------------------------------------------------------------- admin

  private pauseResume(r: Request, status: 'active' | 'paused'): void {
    if (!isIndex(r.market, this.markets.length)) throw new Rejection(Reject.MARKET_UNKNOWN);
    const m = this.markets[r.market];
    this.out!.accepted(r.kind, r.account, 0);
    m.status = status;
    if (status === 'paused') {
      const resting = [...m.bids, ...m.asks].sort((a, b) => a.order_id - b.order_id);
      for (const o of resting) this.cancelResting(o, UpdateReason.MARKET_PAUSED);
    }
  }

  private setFees(r: Request): void {
    if (r.market !== NO_MARKET && !isIndex(r.market, this.markets.length)) throw new Rejection(Reject.MARKET_UNKNOWN);
    const maker = r.maker_fee_bps;
    const taker = r.taker_fee_bps;
    if (!(maker >= -10000 && Math.abs(maker) <= taker && taker <= 10000)) throw new Rejection(Reject.FEES_INVALID);
    this.out!.accepted(r.kind, r.account, 0);
    if (r.market === NO_MARKET) {
      this.maker_bps = BigInt(maker);
      this.taker_bps = BigInt(taker);
    } else {
      this.markets[r.market].fees = { maker: BigInt(maker), taker: BigInt(taker) };
    }
  }

  private setCredit(r: Request): void {
    if (!(r.credit_limit_units >= 0 && r.auto_cancel_ratio_ppm > 0 && r.auto_cancel_ratio_ppm <= 1_000_000)) {
      throw new Rejection(Reject.CREDIT_INVALID);
    }
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    this.out!.accepted(r.kind, r.account, 0);
    if (r.credit_limit_units === 0) this.credit.delete(r.account);
    else this.credit.set(r.account, { limit: BigInt(r.credit_limit_units), ratio_ppm: BigInt(r.auto_cancel_ratio_ppm) });
  }

  private addMarket(r: Request): void {
    const base = r.asset;
    const quote = r.asset_quote;
    if (!isIndex(base, this.assets.length) || !isIndex(quote, this.assets.length) || base === quote) {
      throw new Rejection(Reject.ASSET_UNKNOWN);
    }
    const tick = BigInt(r.tick_size_units);
    const lot = BigInt(r.lot_size_units);
    if (tick <= 0n || lot <= 0n || (tick * lot) % UNITS !== 0n) throw new Rejection(Reject.MARKET_INVALID);
    if (this.markets.some((m) => m.base === base && m.quote === quote)) throw new Rejection(Reject.MARKET_EXISTS);
    if (this.markets.length >= this.limits.markets_max) throw new Rejection(Reject.MARKETS_MAX);
    this.out!.accepted(r.kind, r.account, 0);
    this.markets.push({
      id: `${this.assets[base]}-${this.assets[quote]}`, base, quote, tick, lot, status: 'active',
      fees: null, mark: 0n, bids: [], asks: [],
    });
  }

}

export function createReferenceEngine(config: EngineConfig): MatchingEngine {
  return new ReferenceEngine(config);
}
