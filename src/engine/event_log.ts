// An EventSink that keeps every event as a plain object, for tests and tools. Field names are
// exactly the EventSink parameter names; `type` is the EventSink method name. Not for the hot
// path: it allocates one object per event.
import type { Request } from './types.js';
import type { EventSink } from './events.js';

export interface AcceptedEvent {
  type: 'accepted';
  kind: number;
  account: number;
  order_id: number;
}

export interface RejectedEvent {
  type: 'rejected';
  kind: number;
  account: number;
  code: number;
  reason: number;
}

export interface FillEvent {
  type: 'fill';
  fill_id: number;
  market: number;
  taker_order_id: number;
  maker_order_id: number;
  taker_account: number;
  maker_account: number;
  taker_side: number;
  price_units: number;
  quantity_units: number;
  taker_fee_units: number;
  maker_fee_units: number;
}

export interface OrderUpdateEvent {
  type: 'orderUpdate';
  order_id: number;
  account: number;
  market: number;
  side: number;
  status: number;
  price_units: number;
  quantity_units: number;
  filled_units: number;
  remaining_units: number;
  last_fill_price_units: number;
  reason: number;
  locked_units: number;
  priority_seq: number;
}

export interface BalanceEvent {
  type: 'balance';
  account: number;
  asset: number;
  available_units: number;
  locked_units: number;
  reason: number;
}

export interface ReferralEvent {
  type: 'referral';
  referred: number;
  referrer: number;
  active_until_ms: number;
}

export interface ReferralShareEvent {
  type: 'referralShare';
  fill_id: number;
  referred: number;
  referrer: number;
  asset: number;
  amount_units: number;
}

export interface InboxQueuedEvent {
  type: 'inboxQueued';
  entry_id: number;
  account: number;
  kind: number;
  nonce: number;
  deadline_ms: number;
  referrer_account: number;
  reject: number;
}

/** `request` is reduced to the fields that identify the payload (the rest follow in its events). */
export interface InboxIncludedEvent {
  type: 'inboxIncluded';
  entry_id: number;
  account: number;
  kind: number;
  nonce: number;
  client_order_id: string;
}

export interface AgentEvent {
  type: 'agent';
  account: number;
  agent: number;
  valid_until_ms: number;
  nonce_high_water: number;
  nonce_floor: number;
  name: string;
}

export type EngineEvent = AcceptedEvent | RejectedEvent | FillEvent | OrderUpdateEvent | BalanceEvent |
  ReferralEvent | ReferralShareEvent | InboxQueuedEvent | InboxIncludedEvent | AgentEvent;

export class EventLog implements EventSink {
  private events: EngineEvent[] = [];

  accepted(kind: number, account: number, order_id: number): void {
    this.events.push({ type: 'accepted', kind, account, order_id });
  }

  rejected(kind: number, account: number, code: number, reason: number): void {
    this.events.push({ type: 'rejected', kind, account, code, reason });
  }

  fill(
    fill_id: number, market: number, taker_order_id: number, maker_order_id: number,
    taker_account: number, maker_account: number, taker_side: number, price_units: number,
    quantity_units: number, taker_fee_units: number, maker_fee_units: number,
  ): void {
    this.events.push({
      type: 'fill', fill_id, market, taker_order_id, maker_order_id, taker_account, maker_account,
      taker_side, price_units, quantity_units, taker_fee_units, maker_fee_units,
    });
  }

  orderUpdate(
    order_id: number, account: number, market: number, side: number, status: number,
    price_units: number, quantity_units: number, filled_units: number, remaining_units: number,
    last_fill_price_units: number, reason: number, locked_units: number, priority_seq: number,
  ): void {
    this.events.push({
      type: 'orderUpdate', order_id, account, market, side, status, price_units, quantity_units,
      filled_units, remaining_units, last_fill_price_units, reason, locked_units, priority_seq,
    });
  }

  balance(account: number, asset: number, available_units: number, locked_units: number, reason: number): void {
    this.events.push({ type: 'balance', account, asset, available_units, locked_units, reason });
  }

  referral(referred: number, referrer: number, active_until_ms: number): void {
    this.events.push({ type: 'referral', referred, referrer, active_until_ms });
  }

  referralShare(fill_id: number, referred: number, referrer: number, asset: number, amount_units: number): void {
    this.events.push({ type: 'referralShare', fill_id, referred, referrer, asset, amount_units });
  }

  inboxQueued(entry_id: number, account: number, kind: number, nonce: number, deadline_ms: number,
    referrer_account: number, reject: number): void {
    this.events.push({ type: 'inboxQueued', entry_id, account, kind, nonce, deadline_ms, referrer_account, reject });
  }

  inboxIncluded(entry_id: number, request: Request): void {
    this.events.push({
      type: 'inboxIncluded', entry_id, account: request.account, kind: request.kind, nonce: request.nonce,
      client_order_id: request.client_order_id,
    });
  }

  agent(account: number, agent: number, valid_until_ms: number, nonce_high_water: number, nonce_floor: number, name: string): void {
    this.events.push({ type: 'agent', account, agent, valid_until_ms, nonce_high_water, nonce_floor, name });
  }

  /** The events collected since the last take, in order; clears the log. */
  take(): EngineEvent[] {
    const e = this.events;
    this.events = [];
    return e;
  }

  /** The events collected so far, without clearing. */
  peek(): readonly EngineEvent[] {
    return this.events;
  }
}

/** One line per event, for failure messages. */
export function formatEvent(e: EngineEvent): string {
  const { type, ...rest } = e;
  // JSON would print -0 as 0; show it, since -0 and 0 are different event values.
  return `${type} ${JSON.stringify(rest, (_k, v: unknown) => (Object.is(v, -0) ? '-0' : v))}`;
}
