// The event-stream invariants (docs/engine.md, "Invariants"): OrderTracker, fed (request, events)
// one request at a time; it also rebuilds balances and open orders from the events alone, so
// checkAgainstState can prove the events are a faithful account of every state change.
// Independent of both engines, like the state invariants (state_invariants.ts).
import type { CanonicalOrder, CanonicalState, EngineConfig } from './api.js';
import type { EngineEvent } from './event_log.js';
import { isSafeNat } from './state_invariants.js';
import { NO_MARKET, OrderStatus, OrderType, RequestKind, Side, Tif, type OrderProgress } from './types.js';
import { REFERRAL_SHARE_PERCENT } from './rules.js';
import { REJECT_CODES } from './codes.js';
import { UpdateReason } from './events.js';
import type { Request } from './types.js';

/** `filled` is the sum of the order's fills seen in fill events. */
interface TrackedOrder extends OrderProgress {
  /** Lock, time priority and last fill price as its last update carried them. */
  locked: number;
  priority_seq: number;
  last_fill_price: number;
  done: boolean;
}

/**
 * Consumes (request, events) pairs in order and checks the event-stream invariants:
 * - event shape: one `rejected` alone (with the code its reason answers with), or `accepted` of
 *   the request's kind first; balance events last, ascending by (account, asset), non-negative;
 * - post_only orders never take; FOK takers fill completely or not at all; ioc, fok and market
 *   orders never end open or partially filled;
 * - every order update: filled + remaining + cancelled = quantity, remaining 0 when terminal,
 *   filled equal to the sum of the order's fills, nothing after a terminal update; a live one has
 *   a time priority, a terminal one neither lock nor priority (checkAgainstState then holds each
 *   resting order's lock, priority and last fill price, and next_priority_seq, to its updates);
 * - fills at the maker's price, never worse than the taker's limit, fill ids consecutive.
 */
export class OrderTracker {
  private readonly orders = new Map<number, TrackedOrder>();
  /** Balances rebuilt from balance events: key account * nAssets + asset. */
  private readonly balances = new Map<number, [number, number]>();
  private nextFillId = -1;
  /** 1 + the highest time priority an order update carried (every order entering a book gets one). */
  private next_priority_seq = 1;

  constructor(private readonly config: EngineConfig) {}

  observe(request: Request, events: readonly EngineEvent[]): string[] {
    const v: string[] = [];
    if (events.length === 0) return ['no events for a request'];
    const first = events[0];
    if (first.type === 'rejected') {
      if (events.length !== 1) v.push('rejected is not the only event');
      if (first.kind !== request.kind || first.account !== request.account) v.push('rejected kind/account differ from the request');
      if (first.reason > 0 && first.code !== REJECT_CODES[first.reason]) v.push(`rejected code ${first.code} is not the code of reason ${first.reason}`);
      return v;
    }
    if (first.type !== 'accepted') return ['first event is neither accepted nor rejected'];
    if (first.kind !== request.kind || first.account !== request.account) v.push('accepted kind/account differ from the request');

    let takerId = 0;
    if (request.kind === RequestKind.PLACE) {
      takerId = first.order_id;
      if (this.orders.has(takerId)) v.push(`PLACE accepted with reused order id ${takerId}`);
      this.orders.set(takerId, {
        order_id: takerId, account: request.account, market: request.market, side: request.side,
        order_type: request.order_type, tif: request.tif,
        price: request.order_type === OrderType.MARKET ? 0 : request.price_units,
        quantity: request.quantity_units, filled: 0, remaining: request.quantity_units,
        locked: 0, priority_seq: 0, last_fill_price: 0, done: false,
      });
    } else if (request.kind === RequestKind.AMEND) {
      takerId = first.order_id;
      const o = this.orders.get(takerId);
      if (o === undefined || o.done) {
        v.push(`AMEND accepted for order ${takerId} not known open`);
      } else {
        o.price = request.price_units;
        o.quantity = o.filled + request.quantity_units;
      }
    } else if (request.kind === RequestKind.CANCEL) {
      const o = this.orders.get(first.order_id);
      if (o === undefined || o.done) v.push(`CANCEL accepted for order ${first.order_id} not known open`);
    }

    let sawBalance = false;
    let lastBalanceKey = -1;
    let takerUpdates = 0;
    const nAssets = this.config.assets.length;
    for (let i = 1; i < events.length; i++) {
      const e = events[i];
      switch (e.type) {
        case 'accepted':
        case 'rejected':
          v.push(`event ${i}: a second ${e.type}`);
          break;
        case 'fill': {
          if (sawBalance) v.push(`event ${i}: fill after balance events`);
          if (this.nextFillId >= 0 && e.fill_id !== this.nextFillId) v.push(`fill id ${e.fill_id}, expected ${this.nextFillId}`);
          this.nextFillId = e.fill_id + 1;
          if (e.taker_order_id !== takerId) v.push(`fill ${e.fill_id}: taker ${e.taker_order_id} is not the request's order ${takerId}`);
          if (!(e.quantity_units > 0)) v.push(`fill ${e.fill_id}: quantity ${e.quantity_units}`);
          if (!(e.taker_fee_units >= 0)) v.push(`fill ${e.fill_id}: taker fee ${e.taker_fee_units} negative`);
          if (e.maker_fee_units < 0 && -e.maker_fee_units > e.taker_fee_units) v.push(`fill ${e.fill_id}: rebate above the taker fee`);
          const t = this.orders.get(e.taker_order_id);
          const m = this.orders.get(e.maker_order_id);
          if (t === undefined || m === undefined) {
            v.push(`fill ${e.fill_id}: unknown taker or maker`);
            break;
          }
          if (t.tif === Tif.POST_ONLY) v.push(`fill ${e.fill_id}: post_only order ${t.order_id} took liquidity`);
          if (m.done) v.push(`fill ${e.fill_id}: maker ${m.order_id} already terminal`);
          if (t.side === m.side || e.taker_side !== t.side) v.push(`fill ${e.fill_id}: sides wrong`);
          if (t.market !== m.market || e.market !== t.market) v.push(`fill ${e.fill_id}: markets differ`);
          if (e.taker_account !== t.account || e.maker_account !== m.account) v.push(`fill ${e.fill_id}: accounts wrong`);
          // Self-trade prevention (DECISIONS "Market-maker features"): never one account on both sides.
          if (e.taker_account === e.maker_account) v.push(`fill ${e.fill_id}: account ${e.taker_account} on both sides (a self-trade)`);
          if (e.price_units !== m.price) v.push(`fill ${e.fill_id}: price ${e.price_units} is not the maker price ${m.price}`);
          if (t.order_type === OrderType.LIMIT) {
            const worse = t.side === Side.BID ? e.price_units > t.price : e.price_units < t.price;
            if (worse) v.push(`fill ${e.fill_id}: price ${e.price_units} worse than the taker limit ${t.price}`);
          }
          for (const o of [t, m]) {
            o.filled += e.quantity_units;
            if (o.filled > o.quantity) v.push(`fill ${e.fill_id}: order ${o.order_id} overfilled`);
          }
          break;
        }
        case 'orderUpdate': {
          if (sawBalance) v.push(`event ${i}: order update after balance events`);
          const o = this.orders.get(e.order_id);
          const at = `order ${e.order_id} update (status ${e.status}, reason ${e.reason})`;
          if (o === undefined) {
            v.push(`${at}: unknown order`);
            break;
          }
          if (o.done) v.push(`${at}: after a terminal update`);
          if (e.account !== o.account || e.market !== o.market || e.side !== o.side) v.push(`${at}: account/market/side changed`);
          if (e.price_units !== o.price) v.push(`${at}: price ${e.price_units}, expected ${o.price}`);
          if (e.quantity_units !== o.quantity) v.push(`${at}: quantity ${e.quantity_units}, expected ${o.quantity}`);
          if (e.filled_units !== o.filled) v.push(`${at}: filled ${e.filled_units}, fills sum to ${o.filled}`);
          const terminal = e.status === OrderStatus.FILLED || e.status === OrderStatus.CANCELLED;
          if (terminal && e.remaining_units !== 0) v.push(`${at}: terminal with remaining ${e.remaining_units}`);
          switch (e.status) {
            case OrderStatus.OPEN:
              if (e.filled_units !== 0) v.push(`${at}: open with fills`);
              break;
            case OrderStatus.PARTIALLY_FILLED:
              if (!(e.filled_units > 0)) v.push(`${at}: partially filled without fills`);
              break;
            case OrderStatus.FILLED:
              if (e.filled_units !== e.quantity_units) v.push(`${at}: filled ${e.filled_units} != quantity ${e.quantity_units}`);
              break;
            case OrderStatus.CANCELLED:
              if (!(e.filled_units < e.quantity_units)) v.push(`${at}: cancelled with nothing left to cancel`);
              break;
            default:
              v.push(`${at}: unexpected status`);
          }
          if (!terminal) {
            if (!(e.remaining_units > 0)) v.push(`${at}: live with remaining ${e.remaining_units}`);
            if (e.filled_units + e.remaining_units !== e.quantity_units) v.push(`${at}: filled + remaining != quantity`);
            if (o.order_type === OrderType.MARKET || o.tif === Tif.IOC || o.tif === Tif.FOK) {
              v.push(`${at}: ${o.order_type === OrderType.MARKET ? 'market' : 'ioc/fok'} order left live`);
            }
          }
          if (e.order_id === takerId && e.reason !== UpdateReason.CREDIT_AUTO_CANCEL) {
            takerUpdates++;
            if (terminal && o.tif === Tif.FOK && e.filled_units !== 0 && e.filled_units !== e.quantity_units) {
              v.push(`${at}: FOK partially filled`);
            }
          }
          if (terminal && (e.locked_units !== 0 || e.priority_seq !== 0)) v.push(`${at}: closed with lock ${e.locked_units}, priority ${e.priority_seq}`);
          if (!terminal && !(e.priority_seq >= 1)) v.push(`${at}: live without a time priority`);
          o.remaining = e.remaining_units;
          o.locked = e.locked_units;
          o.priority_seq = e.priority_seq;
          o.last_fill_price = e.last_fill_price_units;
          if (e.priority_seq >= this.next_priority_seq) this.next_priority_seq = e.priority_seq + 1;
          if (terminal) o.done = true;
          break;
        }
        case 'referral':
          if (request.kind !== RequestKind.REFER || i !== 1) v.push(`event ${i}: referral outside an accepted REFER`);
          else if (e.referred !== request.account || e.referrer !== request.referrer_account) v.push('referral event names other accounts than the request');
          break;
        case 'referralShare': {
          if (sawBalance) v.push(`event ${i}: referral share after balance events`);
          const f = events[i - 1];
          if (f.type !== 'fill' || f.fill_id !== e.fill_id) {
            v.push(`event ${i}: referral share does not follow its fill ${e.fill_id}`);
          } else {
            if (f.taker_account !== e.referred) v.push(`referral share of fill ${e.fill_id} credited for a non-taker`);
            const cap = Math.floor((f.taker_fee_units * REFERRAL_SHARE_PERCENT) / 100);
            if (!(e.amount_units > 0 && e.amount_units <= cap)) v.push(`referral share ${e.amount_units} of fill ${e.fill_id} outside (0, ${cap}]`);
          }
          break;
        }
        case 'inboxQueued':
          if (request.kind !== RequestKind.FORCE_INCLUDE || i !== 1) v.push(`event ${i}: inbox entry outside an accepted FORCE_INCLUDE`);
          else if (e.entry_id !== first.order_id || e.kind !== request.inner_kind || e.nonce !== request.inner_nonce ||
            e.referrer_account !== request.referrer_account || e.reject !== request.inner_reject) v.push('inbox entry differs from its request');
          break;
        case 'inboxIncluded':
          v.push(`event ${i}: an inclusion inside a request's events`);
          break;
        case 'balance': {
          sawBalance = true;
          const key = e.account * nAssets + e.asset;
          if (!(e.asset >= 0 && e.asset < nAssets)) v.push(`balance event for asset ${e.asset}`);
          if (key <= lastBalanceKey) v.push(`balance events not ascending / duplicated at (${e.account}, ${e.asset})`);
          lastBalanceKey = key;
          if (!isSafeNat(e.available_units) || !isSafeNat(e.locked_units)) v.push(`balance (${e.account}, ${e.asset}) negative or unsafe`);
          const prev = this.balances.get(key) ?? [0, 0];
          if (prev[0] === e.available_units && prev[1] === e.locked_units) v.push(`balance event (${e.account}, ${e.asset}) without a change`);
          this.balances.set(key, [e.available_units, e.locked_units]);
          break;
        }
      }
    }
    if ((request.kind === RequestKind.PLACE || request.kind === RequestKind.AMEND) && takerUpdates !== 1) {
      v.push(`the request's order ${takerId} got ${takerUpdates} updates of its own, expected 1`);
    }
    if (request.kind === RequestKind.CANCEL) {
      const o = this.orders.get(first.order_id);
      if (o !== undefined && !o.done) v.push(`CANCEL of ${first.order_id} left it live`);
    }
    if (request.kind === RequestKind.CANCEL_ALL || request.kind === RequestKind.DEAD_MAN_CANCEL || request.kind === RequestKind.DISCONNECT_CANCEL) {
      const market = request.kind === RequestKind.CANCEL_ALL ? request.market : NO_MARKET;
      for (const o of this.orders.values()) {
        if (!o.done && o.account === request.account && (market === NO_MARKET || o.market === market)) {
          v.push(`cancel-all of kind ${request.kind} left order ${o.order_id} live`);
        }
      }
    }
    if (request.kind === RequestKind.PAUSE_MARKET) {
      for (const o of this.orders.values()) {
        if (!o.done && o.market === request.market) v.push(`PAUSE_MARKET left order ${o.order_id} live`);
      }
    }
    return v;
  }

  /** Compares what the events said with the state: balances and the set of open orders. */
  checkAgainstState(state: CanonicalState): string[] {
    const v: string[] = [];
    const nAssets = this.config.assets.length;
    const fromState = new Map<number, [number, number]>();
    for (const a of state.accounts) {
      a.balances.forEach((b, asset) => {
        if (b[0] !== 0 || b[1] !== 0) fromState.set(a.account * nAssets + asset, b);
      });
    }
    const keys = new Set<number>([...fromState.keys(), ...this.balances.keys()]);
    for (const key of [...keys].sort((a, b) => a - b)) {
      const s = fromState.get(key) ?? [0, 0];
      const e = this.balances.get(key) ?? [0, 0];
      if (s[0] !== e[0] || s[1] !== e[1]) {
        v.push(`balance (${Math.floor(key / nAssets)}, ${key % nAssets}): state ${JSON.stringify(s)}, events say ${JSON.stringify(e)}`);
      }
    }
    const resting = new Map<number, CanonicalOrder>();
    state.markets.forEach((m) => [...m.bids, ...m.asks].forEach((o) => resting.set(o.order_id, o)));
    for (const o of this.orders.values()) {
      if (o.done) continue;
      const s = resting.get(o.order_id);
      if (s === undefined) {
        v.push(`order ${o.order_id} live by its events, not in the book`);
        continue;
      }
      if (s.remaining_units !== o.remaining || s.filled_units !== o.filled || s.price_units !== o.price ||
        s.quantity_units !== o.quantity || s.account !== o.account || s.side !== o.side ||
        s.locked_units !== o.locked || s.priority_seq !== o.priority_seq || s.last_fill_price_units !== o.last_fill_price) {
        v.push(`order ${o.order_id}: book ${JSON.stringify(s)} disagrees with its events ${JSON.stringify(o)}`);
      }
      resting.delete(o.order_id);
    }
    for (const id of resting.keys()) v.push(`order ${id} rests without an open/partially_filled update`);
    if (state.next_priority_seq !== this.next_priority_seq) {
      v.push(`next_priority_seq ${state.next_priority_seq}, order updates say ${this.next_priority_seq}`);
    }
    return v;
  }

  /** Forgets terminal orders (keeps memory flat over long runs). */
  compact(): void {
    for (const [id, o] of this.orders) if (o.done) this.orders.delete(id);
  }
}
