// The front thread's read model: everything GET endpoints answer, built only from the matcher's
// event stream (so it can be rebuilt by replaying events, and never reads matcher memory).
//
// It is also the front's one decoder of events: `apply` reads each record once, updates the
// model, then hands what it decoded (typed views, never record fields) to its observers in their
// declared order (the front's: the HTTP answers, then the observer tape that replays the batch to
// market data and the WebSocket fan-out once the answers are out; docs/architecture.md). So an
// observer sees the model as it is after the event, and needs no rule of its own about what an
// event means (the filled quantity after a fill, the last fill price an update keeps).
// An observer that declares hears() (views.ts) is called only for the kinds of call it hears, asked
// at each batch's begin (the tape answers for the observers it replays to).
//
// What the model holds, and its reads over it, are read_model_state.ts; this file is the decoder.
import { OrderStatus, RequestKind, Side } from '../engine/types.js';
import {
  AcceptedField, AccountField, BalanceField, BatchField, CreditField, EventType, FeesField, FillField, MarketField, OrderUpdateField, RejectedField, type EventFields,
} from '../ring/event_records.js';
import {
  GuardedObserver, hearsOf, HEARS_ACCEPTED, HEARS_ALL, HEARS_BALANCE, HEARS_FILL, HEARS_ORDER_UPDATE, HEARS_REJECTED,
  type BatchStages, type ReadModelObserver, type TradeView,
} from './views.js';
import { TradeRows } from './fill_rows.js';
import { ReadModelState, type ReadModelLimits } from './read_model_state.js';

export type { ReadModelIndexes, ReadModelLimits } from './read_model_state.js';

/** The read model's part of the config's limits (the server, `ringbook snapshot` and the benches build it alike). */
export function readModelLimits(l: ReadModelLimits): ReadModelLimits {
  return { fills_per_account_kept: l.fills_per_account_kept, trades_per_market_kept: l.trades_per_market_kept, closed_orders_kept: l.closed_orders_kept };
}

export class ReadModel extends ReadModelState {
  /** The consumers of what `apply` decodes, in order, each guarded (observe()). */
  private observers: ReadModelObserver[] = [];
  /** The observers as declared, and the HEARS_* bits each gave at the batch's begin (views.ts hears). */
  private declared: readonly ReadModelObserver[] = [];
  private hears: number[] = [];
  /** Receives what an observer threw (the model and the other observers carry on). */
  onObserverError: (e: unknown) => void = (e) => {
    throw e;
  };
  /**
   * Filled quantity of orders filled earlier in the batch, until their ORDER_UPDATE: a taker's
   * update comes after all of its fills, and `filled` only moves with updates.
   */
  private readonly batch_filled = new Map<number, number>();
  /** Reused for every commit (observers read it during the call). */
  private readonly stages: BatchStages = { started_ms: 0, applied_ms: 0, durable_ms: 0 };

  /**
   * Declares the observers, in the order each event reaches them (replaces any before). Each is
   * guarded: what one throws goes to `onObserverError`, and the model and the others carry on.
   */
  observe(observers: readonly ReadModelObserver[]): void {
    this.observers = observers.map((o) => new GuardedObserver(o, (e) => this.onObserverError(e)));
    this.declared = observers.slice();
    // Until the next batch's begin asks them.
    this.hears = observers.map(() => HEARS_ALL);
  }

  /** Applies one committed event; `seq` is the request it answers (0: none). */
  apply(e: EventFields, seq = 0): void {
    switch (e.type()) {
      case EventType.BATCH_BEGIN: {
        this.batch_id = e.field(BatchField.BATCH_ID);
        this.batch_time_ms = e.field(BatchField.TIME_MS);
        this.rested_bid_max.fill(0);
        this.rested_ask_min.fill(0);
        const obs = this.observers;
        for (let i = 0; i < obs.length; i++) this.hears[i] = hearsOf(this.declared[i], this.onObserverError);
        for (let i = 0; i < obs.length; i++) obs[i].batchBegin(this.batch_id, this.batch_time_ms);
        return;
      }
      case EventType.BATCH_COMMITTED:
        return this.applyCommitted(e);
      case EventType.MARKET: return this.applyMarket(e);
      case EventType.FEES:
        this.maker_fee_bps = e.field(FeesField.MAKER_FEE_BPS);
        this.taker_fee_bps = e.field(FeesField.TAKER_FEE_BPS);
        return;
      case EventType.CREDIT: {
        const account = e.field(CreditField.ACCOUNT);
        const credit_limit = e.field(CreditField.CREDIT_LIMIT_UNITS);
        if (credit_limit === 0) this.credit.delete(account);
        else this.credit.set(account, { credit_limit, auto_cancel_ratio_ppm: e.field(CreditField.AUTO_CANCEL_RATIO_PPM) });
        return;
      }
      case EventType.ACCOUNT: {
        const id = e.field(AccountField.ACCOUNT);
        const address = e.addressHex();
        this.account_by_address.set(address, id);
        this.address_by_account[id] = address;
        return;
      }
      case EventType.ACCEPTED: {
        const kind = e.field(AcceptedField.KIND);
        if (kind === RequestKind.DEPOSIT && e.field(AcceptedField.NONCE) > 0) this.chain_deposit_high_water = e.field(AcceptedField.NONCE);
        // The programmes see answers too: one may close a forced inclusion.
        if (this.programmes.hearsAnswer(kind)) this.programmes.apply(e, this.batch_id, this.batch_time_ms);
        return this.applyAccepted(e, seq, kind);
      }
      case EventType.REJECTED:
        if (this.programmes.hearsAnswer(e.field(RejectedField.KIND))) this.programmes.apply(e, this.batch_id, this.batch_time_ms);
        return this.notifyRejected(seq, e.field(RejectedField.CODE), e.field(RejectedField.REASON));
      case EventType.AGENT:
        return this.agents.apply(e);
      case EventType.REFERRAL:
      case EventType.REFERRAL_SHARE:
      case EventType.INBOX_QUEUED:
      case EventType.INBOX_INCLUDED:
        return this.programmes.apply(e, this.batch_id, this.batch_time_ms);
      case EventType.FILL: return this.applyFill(e, seq);
      case EventType.ORDER_UPDATE: return this.applyOrderUpdate(e, seq);
      case EventType.BALANCE: {
        const account = e.field(BalanceField.ACCOUNT);
        const row = this.row(account);
        let b = row.balances;
        if (b === null) b = row.balances = this.balancesOf(account);
        const asset = e.field(BalanceField.ASSET);
        const available = e.field(BalanceField.AVAILABLE_UNITS);
        const locked = e.field(BalanceField.LOCKED_UNITS);
        (row.seen ?? (row.seen = this.balance_seen.get(account) as Uint8Array))[asset] = 1;
        b[asset * 2] = available;
        b[asset * 2 + 1] = locked;
        const reason = e.field(BalanceField.REASON);
        const obs = this.observers;
        const hears = this.hears;
        for (let i = 0; i < obs.length; i++) if ((hears[i] & HEARS_BALANCE) !== 0) obs[i].balance(account, asset, available, locked, reason);
        return;
      }
      default:
        throw new Error(`read model: unknown event type ${e.type()}`);
    }
  }

  private applyCommitted(e: EventFields): void {
    for (const m of this.changed_markets) {
      const mv = this.markets[m];
      if (mv) {
        mv.book_sequence++;
        mv.book_changed_in_batch = false;
      }
    }
    this.batch_filled.clear();
    const batch_id = e.field(BatchField.BATCH_ID);
    const time_ms = e.field(BatchField.TIME_MS);
    this.stages.started_ms = e.field(BatchField.STARTED_MS);
    this.stages.applied_ms = e.field(BatchField.APPLIED_MS);
    this.stages.durable_ms = e.field(BatchField.DURABLE_MS);
    const obs = this.observers;
    for (let i = 0; i < obs.length; i++) obs[i].batchCommitted(batch_id, time_ms, this.changed_markets, this.stages);
    this.changed_markets.clear();
  }

  private notifyRejected(seq: number, code: number, reason: number): void {
    const obs = this.observers;
    const hears = this.hears;
    for (let i = 0; i < obs.length; i++) if ((hears[i] & HEARS_REJECTED) !== 0) obs[i].rejected(seq, code, reason);
  }

  private applyMarket(e: EventFields): void {
    const m = e.field(MarketField.MARKET);
    const base = this.assets[e.field(MarketField.BASE_ASSET)];
    const quote = this.assets[e.field(MarketField.QUOTE_ASSET)];
    let mv = this.markets[m];
    if (mv === undefined) {
      mv = {
        index: m, id: `${base}-${quote}`, base, quote, tick_size: 0, lot_size: 0, status: 'active',
        fee_override: false, maker_fee_bps: 0, taker_fee_bps: 0, mark_price: 0,
        bids: new Map(), asks: new Map(), book_sequence: 0, book_changed_in_batch: false,
        sorted_cache: null,
      };
      this.markets[m] = mv;
      this.resetTrades(m);
    }
    mv.status = e.field(MarketField.STATUS) === 0 ? 'active' : 'paused';
    mv.tick_size = e.field(MarketField.TICK_UNITS);
    mv.lot_size = e.field(MarketField.LOT_UNITS);
    mv.fee_override = e.field(MarketField.FEE_OVERRIDE) === 1;
    mv.maker_fee_bps = e.field(MarketField.MAKER_FEE_BPS);
    mv.taker_fee_bps = e.field(MarketField.TAKER_FEE_BPS);
  }

  private applyAccepted(e: EventFields, seq: number, kind: number): void {
    const account = e.field(AcceptedField.ACCOUNT);
    const nonce = e.field(AcceptedField.NONCE);
    // A force-include envelope's nonce is its own sequence (the programmes model keeps it).
    if (nonce > 0 && kind !== RequestKind.FORCE_INCLUDE) this.nonce_high_water.set(account, nonce);
    // PLACE: remember what only the request knows (type, tif, client id) for later updates.
    if (kind === RequestKind.PLACE) {
      const order_id = e.field(AcceptedField.ORDER_ID);
      const quantity = e.field(AcceptedField.QUANTITY_UNITS);
      const client_order_id = e.clientOrderId();
      this.indexOrder(account, order_id);
      // The client id points at the newest order using it: this one, from its placement on. Set
      // here once, not at each of the order's updates (a key string, its flat copy and a probe of
      // a map of every such order per update; issue 11): the engine refuses a client id one of the
      // account's open orders holds (CLIENT_ORDER_ID_DUPLICATE), so an order that used it before
      // is closed and gets no update that could claim it back.
      if (client_order_id !== '') this.client_ids.set(account, client_order_id, order_id);
      this.orders.set(order_id, {
        order_id, account, market: e.field(AcceptedField.MARKET), side: e.field(AcceptedField.SIDE),
        order_type: e.field(AcceptedField.ORDER_TYPE), tif: e.field(AcceptedField.TIF),
        price: e.field(AcceptedField.PRICE_UNITS), quantity, filled: 0,
        remaining: quantity, status: OrderStatus.OPEN, client_order_id,
        last_fill_price: 0, created_ms: this.batch_time_ms, updated_ms: this.batch_time_ms,
        resting_price: 0, resting_quantity: 0,
      });
    } else if (kind === RequestKind.WITHDRAW) {
      const key = `${account}:${nonce}`;
      this.pending_withdrawals.set(key, {
        account, asset: e.field(AcceptedField.ASSET), amount: e.field(AcceptedField.AMOUNT_UNITS), nonce, batch_id: this.batch_id,
      });
    }
    const order_id = e.field(AcceptedField.ORDER_ID);
    const obs = this.observers;
    const hears = this.hears;
    for (let i = 0; i < obs.length; i++) if ((hears[i] & HEARS_ACCEPTED) !== 0) obs[i].accepted(seq, kind, account, order_id);
  }

  private applyFill(e: EventFields, seq: number): void {
    const t: TradeView = {
      fill_id: e.field(FillField.FILL_ID), market: e.field(FillField.MARKET),
      taker_order_id: e.field(FillField.TAKER_ORDER_ID), maker_order_id: e.field(FillField.MAKER_ORDER_ID),
      taker_account: e.field(FillField.TAKER_ACCOUNT), maker_account: e.field(FillField.MAKER_ACCOUNT),
      taker_side: e.field(FillField.TAKER_SIDE), price: e.field(FillField.PRICE_UNITS),
      quantity: e.field(FillField.QUANTITY_UNITS), taker_fee: e.field(FillField.TAKER_FEE_UNITS),
      maker_fee: e.field(FillField.MAKER_FEE_UNITS), time_ms: this.batch_time_ms,
      batch_id: this.batch_id,
    };
    const mv = this.markets[t.market];
    if (mv) mv.mark_price = t.price;
    this.trades_by_market[t.market].push(t);
    const maker_side = t.taker_side === Side.BID ? Side.ASK : Side.BID;
    this.fillsOf(t.taker_account).push(t.fill_id, t.taker_order_id, t.market, t.taker_side, t.price, t.quantity, t.taker_fee, false, t.batch_id, t.time_ms);
    this.fillsOf(t.maker_account).push(t.fill_id, t.maker_order_id, t.market, maker_side, t.price, t.quantity, t.maker_fee, true, t.batch_id, t.time_ms);
    const taker_filled = this.filledAfter(t.taker_order_id, t.quantity);
    const maker_filled = this.filledAfter(t.maker_order_id, t.quantity);
    const obs = this.observers;
    const hears = this.hears;
    for (let i = 0; i < obs.length; i++) if ((hears[i] & HEARS_FILL) !== 0) obs[i].fill(seq, t, taker_filled, maker_filled);
  }

  /** An order's filled quantity after a fill of `quantity` (see batch_filled). */
  private filledAfter(order_id: number, quantity: number): number {
    const after = (this.batch_filled.get(order_id) ?? this.orders.get(order_id)?.filled ?? 0) + quantity;
    this.batch_filled.set(order_id, after);
    return after;
  }

  /** Market `m`'s trades, none yet (a new market, or one a snapshot loads). */
  resetTrades(m: number): void {
    this.trades_by_market[m] = new TradeRows(this.limits.trades_per_market_kept);
  }

  private applyOrderUpdate(e: EventFields, seq: number): void {
    const order_id = e.field(OrderUpdateField.ORDER_ID);
    const account = e.field(OrderUpdateField.ACCOUNT);
    const market = e.field(OrderUpdateField.MARKET);
    const side = e.field(OrderUpdateField.SIDE);
    const status = e.field(OrderUpdateField.STATUS);
    const price = e.field(OrderUpdateField.PRICE_UNITS);
    const quantity = e.field(OrderUpdateField.QUANTITY_UNITS);
    const last_fill_price = e.field(OrderUpdateField.LAST_FILL_PRICE_UNITS);
    let o = this.orders.get(order_id);
    if (o === undefined) {
      // Only possible for an order accepted before this read model started: build what we can.
      o = {
        order_id, account, market, side, order_type: 0, tif: 0, price, quantity,
        filled: 0, remaining: 0, status, client_order_id: '', last_fill_price: 0,
        created_ms: this.batch_time_ms, updated_ms: this.batch_time_ms, resting_price: 0, resting_quantity: 0,
      };
      this.orders.set(order_id, o);
      this.indexOrder(account, order_id);
    }
    o.price = price;
    o.quantity = quantity;
    o.filled = e.field(OrderUpdateField.FILLED_UNITS);
    o.remaining = e.field(OrderUpdateField.REMAINING_UNITS);
    o.status = status;
    if (last_fill_price > 0) o.last_fill_price = last_fill_price;
    o.updated_ms = this.batch_time_ms;
    // Book: take away what the order contributed, add what it contributes now. Only a real change
    // counts for the book's sequence (an IOC that never rested changes nothing).
    const mv = this.markets[market];
    const book = side === Side.BID ? mv.bids : mv.asks;
    const resting = status === OrderStatus.OPEN || status === OrderStatus.PARTIALLY_FILLED;
    const new_price = resting ? o.price : 0;
    const new_quantity = resting ? o.remaining : 0;
    if (new_price !== o.resting_price || new_quantity !== o.resting_quantity) {
      if (o.resting_quantity > 0) addLevel(book, o.resting_price, -o.resting_quantity);
      if (new_quantity > 0) addLevel(book, new_price, new_quantity);
      o.resting_price = new_price;
      o.resting_quantity = new_quantity;
      mv.sorted_cache = null;
      // One Set.add per market and batch, not one per book change (the flag is reset at commit).
      if (!mv.book_changed_in_batch) {
        mv.book_changed_in_batch = true;
        this.changed_markets.add(market);
      }
    }
    if (new_quantity > 0) {
      const m = o.market;
      if (o.side === Side.BID) {
        if (new_price > (this.rested_bid_max[m] ?? 0)) this.rested_bid_max[m] = new_price;
      } else {
        const ask = this.rested_ask_min[m] ?? 0;
        if (ask === 0 || new_price < ask) this.rested_ask_min[m] = new_price;
      }
    }
    // Open orders per account (client ids were indexed at placement: applyAccepted).
    const row = this.row(account);
    let open = row.open;
    if (open === null) {
      open = this.open_orders_by_account.get(account) ?? null;
      if (open === null) {
        open = new Set();
        this.open_orders_by_account.set(account, open);
      }
      row.open = open;
    }
    if (resting) {
      open.add(order_id);
    } else {
      open.delete(order_id);
      this.rememberClosed(order_id);
    }
    if (this.batch_filled.size > 0) this.batch_filled.delete(order_id);
    const reason = e.field(OrderUpdateField.REASON);
    const obs = this.observers;
    const hears = this.hears;
    for (let i = 0; i < obs.length; i++) if ((hears[i] & HEARS_ORDER_UPDATE) !== 0) obs[i].orderUpdate(seq, o, reason);
  }

  /** Closed orders stay readable until `closed_orders_kept` newer ones closed. */
  private rememberClosed(order_id: number): void {
    this.closed_order_ids.push(order_id);
    if (this.closed_order_ids.length - this.closed_head > this.limits.closed_orders_kept) {
      const old = this.closed_order_ids[this.closed_head++];
      const o = this.orders.get(old);
      if (o && o.status !== OrderStatus.OPEN && o.status !== OrderStatus.PARTIALLY_FILLED) {
        this.orders.delete(old);
        (this.row(o.account).ids ?? this.order_ids_by_account.get(o.account))?.delete(old);
        if (o.client_order_id !== '') this.client_ids.forget(o.account, o.client_order_id, old);
      }
      if (this.closed_head > 4096 && this.closed_head * 2 > this.closed_order_ids.length) {
        this.closed_order_ids.splice(0, this.closed_head);
        this.closed_head = 0;
      }
    }
  }

  private indexOrder(account: number, order_id: number): void {
    this.orderIdsOf(account).add(order_id);
  }
}

function addLevel(book: Map<number, number>, price: number, delta: number): void {
  const q = (book.get(price) ?? 0) + delta;
  if (q === 0) book.delete(price);
  else book.set(price, q);
}
