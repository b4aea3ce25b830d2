// A small driver for rule tests: builds requests, applies them, returns the events, and checks the
// state and event invariants after every step (conservation first among them).
import { expect } from 'vitest';
import type { CanonicalState, EngineConfig, MatchingEngine } from '../../src/engine/api.js';
import { createFastEngine } from '../../src/engine/engine.js';
import { createReferenceEngine } from '../../src/engine/reference/reference_engine.js';
import { EventLog } from '../../src/engine/event_log.js';
import type {
  AcceptedEvent, BalanceEvent, EngineEvent, FillEvent, OrderUpdateEvent, RejectedEvent,
} from '../../src/engine/event_log.js';
import { OrderTracker, checkInvariants } from '../../src/engine/invariants.js';
import { payloadRequest } from '../../src/engine/programmes.js';
import { NO_MARKET, OrderStatus, OrderType, RequestKind, Tif, emptyRequest } from '../../src/engine/types.js';
import { Reject, REJECT_CODES } from '../../src/engine/codes.js';
import type { Request } from '../../src/engine/types.js';

export type EngineFactory = (config: EngineConfig) => MatchingEngine;

/**
 * The engines every rule test runs on (`describe.each(ENGINES)`): a rule holds in the reference
 * and the fast engine alike, so each is pinned on both.
 */
export const ENGINES: ReadonlyArray<[name: string, factory: EngineFactory]> = [
  ['reference', createReferenceEngine],
  ['fast', createFastEngine],
];

/** 1 ETH (or 1 USDC): the assets' units have 6 decimals in the standard config. */
export const ONE = 1_000_000;
/** 2000.00 USDC per ETH. */
export const P2000 = 2_000_000_000;
/** `x` whole USDC in units. */
export const usdc = (x: number): number => x * ONE;

export interface PlaceOptions {
  market?: number;
  tif?: number;
  client_order_id?: string;
  nonce?: number;
  /** Self-trade prevention mode (Stp); default expire_maker. */
  stp?: number;
  expires_after_ms?: number;
}

export class Harness {
  readonly engine: MatchingEngine;
  readonly log = new EventLog();
  readonly tracker: OrderTracker;
  private readonly nonces = new Map<number, number>();
  /** Force-include envelope nonces: their own sequence per account. */
  private readonly envelope_nonces = new Map<number, number>();
  /** Forced-inclusion payloads by entry id, to check their events when included. */
  private readonly payloads = new Map<number, Request>();

  constructor(factory: EngineFactory, readonly config: EngineConfig) {
    this.engine = factory(config);
    this.tracker = new OrderTracker(config);
  }

  /** Applies one request; asserts every invariant afterwards; returns its events. */
  apply(r: Request): EngineEvent[] {
    this.engine.apply(r, this.log);
    const events = this.log.take();
    expect(this.tracker.observe(r, events), 'event invariants').toEqual([]);
    const state = this.engine.canonicalState();
    expect(checkInvariants(state, this.config), 'state invariants').toEqual([]);
    expect(this.tracker.checkAgainstState(state), 'events account for the state').toEqual([]);
    return events;
  }

  /**
   * Starts a batch; checks each fired dead-man switch's and each inclusion's events like a
   * request's; returns all events.
   */
  beginBatch(time_ms: number): EngineEvent[] {
    this.engine.beginBatch(time_ms, this.log);
    const events = this.log.take();
    const opens = (e: EngineEvent): boolean => e.type === 'inboxIncluded' || (e.type === 'accepted' && e.kind === RequestKind.DEAD_MAN_CANCEL);
    let at = 0;
    while (at < events.length) {
      const head = events[at];
      expect(opens(head), 'batch start events begin with a dead-man cancel or an inclusion').toBe(true);
      let end = at + 1;
      while (end < events.length && !opens(events[end])) end++;
      if (head.type === 'accepted') {
        const r = emptyRequest();
        r.kind = RequestKind.DEAD_MAN_CANCEL;
        r.account = head.account;
        expect(this.tracker.observe(r, events.slice(at, end)), 'event invariants').toEqual([]);
      } else {
        const entry_id = head.type === 'inboxIncluded' ? head.entry_id : -1;
        const payload = this.payloads.get(entry_id);
        expect(payload, `payload of entry ${entry_id}`).toBeDefined();
        expect(this.tracker.observe(payload!, events.slice(at + 1, end)), 'event invariants').toEqual([]);
      }
      at = end;
    }
    const state = this.engine.canonicalState();
    expect(checkInvariants(state, this.config), 'state invariants').toEqual([]);
    expect(this.tracker.checkAgainstState(state), 'events account for the state').toEqual([]);
    return events;
  }

  /** Arms (timeout_ms > 0) or disarms (0) the account's dead-man switch. */
  cancelAfter(account: number, timeout_ms: number, nonce?: number): EngineEvent[] {
    const r = this.signed(RequestKind.CANCEL_AFTER, account, nonce);
    r.amount_units = timeout_ms;
    return this.apply(r);
  }

  refer(account: number, referrer: number, nonce?: number): EngineEvent[] {
    const r = this.signed(RequestKind.REFER, account, nonce);
    r.referrer_account = referrer;
    return this.apply(r);
  }

  /**
   * Queues `payload` (a signed request built with this harness) for forced inclusion by its own
   * account: the envelope takes the payload's nonce and the payload the next one, as a client
   * signing both at once would do. `verdict` is the front's finding on the payload.
   */
  force(payload: Request, verdict: number = Reject.NONE, envelope_nonce?: number): EngineEvent[] {
    const r: Request = { ...payload };
    r.kind = RequestKind.FORCE_INCLUDE;
    r.inner_kind = payload.kind;
    // The envelope's nonce comes from its own sequence; the payload keeps the nonce it was signed with.
    if (envelope_nonce === undefined) {
      envelope_nonce = (this.envelope_nonces.get(payload.account) ?? 0) + 1;
      this.envelope_nonces.set(payload.account, envelope_nonce);
    }
    r.nonce = envelope_nonce;
    r.inner_nonce = payload.nonce;
    r.inner_reject = verdict;
    const events = this.apply(r);
    const first = events[0];
    if (first.type === 'accepted') this.payloads.set(first.order_id, payloadRequest(r));
    return events;
  }

  /** A signed request of `kind` by `account` with the next nonce (fields to be filled in). */
  request(kind: number, account: number, fields: Partial<Request> = {}): Request {
    return Object.assign(this.signed(kind, account), fields);
  }

  state(): CanonicalState {
    return this.engine.canonicalState();
  }

  /** [available, locked] of (account, asset); [0, 0] for an unlisted account. */
  balance(account: number, asset: number): [number, number] {
    const a = this.state().accounts.find((x) => x.account === account);
    return a === undefined ? [0, 0] : a.balances[asset];
  }

  nextNonce(account: number): number {
    const n = (this.nonces.get(account) ?? 0) + 1;
    this.nonces.set(account, n);
    return n;
  }

  private signed(kind: number, account: number, nonce?: number): Request {
    const r = emptyRequest();
    r.kind = kind;
    r.account = account;
    r.nonce = nonce ?? this.nextNonce(account);
    return r;
  }

  deposit(account: number, asset: number, amount: number): EngineEvent[] {
    const r = emptyRequest();
    r.kind = RequestKind.DEPOSIT;
    r.account = account;
    r.asset = asset;
    r.amount_units = amount;
    return this.apply(r);
  }

  withdraw(account: number, asset: number, amount: number, nonce?: number): EngineEvent[] {
    const r = this.signed(RequestKind.WITHDRAW, account, nonce);
    r.asset = asset;
    r.amount_units = amount;
    return this.apply(r);
  }

  placeRequest(account: number, side: number, order_type: number, price: number, quantity: number, o: PlaceOptions = {}): Request {
    const r = this.signed(RequestKind.PLACE, account, o.nonce);
    r.market = o.market ?? 0;
    r.side = side;
    r.order_type = order_type;
    r.tif = o.tif ?? (order_type === OrderType.MARKET ? Tif.IOC : Tif.GTC);
    r.price_units = price;
    r.quantity_units = quantity;
    r.client_order_id = o.client_order_id ?? '';
    r.stp = o.stp ?? 0;
    r.expires_after_ms = o.expires_after_ms ?? 0;
    return r;
  }

  limit(account: number, side: number, price: number, quantity: number, o: PlaceOptions = {}): EngineEvent[] {
    return this.apply(this.placeRequest(account, side, OrderType.LIMIT, price, quantity, o));
  }

  market(account: number, side: number, quantity: number, o: PlaceOptions = {}): EngineEvent[] {
    return this.apply(this.placeRequest(account, side, OrderType.MARKET, 0, quantity, o));
  }

  cancel(account: number, order_id: number, client_order_id = '', nonce?: number): EngineEvent[] {
    const r = this.signed(RequestKind.CANCEL, account, nonce);
    r.order_id = order_id;
    r.client_order_id = client_order_id;
    return this.apply(r);
  }

  amend(account: number, order_id: number, price: number, quantity: number, nonce?: number): EngineEvent[] {
    const r = this.signed(RequestKind.AMEND, account, nonce);
    r.order_id = order_id;
    r.price_units = price;
    r.quantity_units = quantity;
    return this.apply(r);
  }

  cancelAll(account: number, market = NO_MARKET, nonce?: number): EngineEvent[] {
    const r = this.signed(RequestKind.CANCEL_ALL, account, nonce);
    r.market = market;
    return this.apply(r);
  }

  admin(kind: number, fields: Partial<Request>): EngineEvent[] {
    const r = emptyRequest();
    r.kind = kind;
    Object.assign(r, fields);
    return this.apply(r);
  }

  pause(market: number): EngineEvent[] {
    return this.admin(RequestKind.PAUSE_MARKET, { market });
  }

  resume(market: number): EngineEvent[] {
    return this.admin(RequestKind.RESUME_MARKET, { market });
  }

  setFees(market: number, maker_fee_bps: number, taker_fee_bps: number): EngineEvent[] {
    return this.admin(RequestKind.SET_FEES, { market, maker_fee_bps, taker_fee_bps });
  }

  setCredit(account: number, credit_limit_units: number, auto_cancel_ratio_ppm: number): EngineEvent[] {
    return this.admin(RequestKind.SET_CREDIT, { account, credit_limit_units, auto_cancel_ratio_ppm });
  }

  addMarket(base: number, quote: number, tick: number, lot: number): EngineEvent[] {
    return this.admin(RequestKind.ADD_MARKET, { asset: base, asset_quote: quote, tick_size_units: tick, lot_size_units: lot });
  }
}

// Expected-event builders, argument order as in EventSink.
export function acc(kind: number, account: number, order_id: number): AcceptedEvent {
  return { type: 'accepted', kind, account, order_id };
}

export function rej(kind: number, account: number, reason: number): RejectedEvent {
  return { type: 'rejected', kind, account, code: REJECT_CODES[reason], reason };
}

export function fil(
  fill_id: number, market: number, taker_order_id: number, maker_order_id: number, taker_account: number,
  maker_account: number, taker_side: number, price_units: number, quantity_units: number,
  taker_fee_units: number, maker_fee_units: number,
): FillEvent {
  return {
    type: 'fill', fill_id, market, taker_order_id, maker_order_id, taker_account, maker_account,
    taker_side, price_units, quantity_units, taker_fee_units, maker_fee_units,
  };
}

/**
 * An order update. A closing one (filled, cancelled) carries lock and priority 0. For an open one,
 * `locked_units` and `priority_seq` may be left out: then any number matches, and the harness's
 * OrderTracker still checks them against the state after every request ("events account for the
 * state"); pass them to pin them.
 */
export function upd(
  order_id: number, account: number, market: number, side: number, status: number, price_units: number,
  quantity_units: number, filled_units: number, remaining_units: number, last_fill_price_units: number,
  reason: number, locked_units?: number, priority_seq?: number,
): OrderUpdateEvent {
  const open = status === OrderStatus.OPEN || status === OrderStatus.PARTIALLY_FILLED;
  const unpinned: number = open ? expect.any(Number) : 0;
  return {
    type: 'orderUpdate', order_id, account, market, side, status, price_units, quantity_units,
    filled_units, remaining_units, last_fill_price_units, reason,
    locked_units: locked_units ?? unpinned, priority_seq: priority_seq ?? unpinned,
  };
}

export function bal(account: number, asset: number, available_units: number, locked_units: number, reason: number): BalanceEvent {
  return { type: 'balance', account, asset, available_units, locked_units, reason };
}
