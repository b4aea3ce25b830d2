// The engine's events: the sink an engine writes a request's events to, in order, the reasons
// its order and balance updates carry (with their wire names, checked complete by tsc), and a
// market's parameters as its MARKET event announces them. Both engines write exactly these, so the
// differential tests can compare them event by event (the requests are in types.ts).
import type { Request } from './types.js';

/** Why an order update happened. */
export const enum UpdateReason {
  PLACED = 0,
  FILL = 1,
  USER_CANCEL = 2,
  CANCEL_ALL = 3,
  MARKET_PAUSED = 4,
  CREDIT_AUTO_CANCEL = 5,
  /** IOC or market remainder with no more liquidity; FOK that could not fill completely. */
  UNFILLED_REMAINDER = 6,
  /** A market bid stopped because the next fill would exceed the available quote balance. */
  INSUFFICIENT_BALANCE = 7,
  AMENDED = 8,
  /** The account's dead-man switch fell due (POST /orders/cancel-after). */
  DEAD_MAN_SWITCH = 9,
  /** The account's opted-in WebSocket connection closed (cancel_on_disconnect). */
  DISCONNECT = 10,
  /** Self-trade prevention cancelled the order (a maker, the taker's remainder, or both). */
  SELF_TRADE_PREVENTED = 11,
}
export const UPDATE_REASON_NAMES = [
  'placed', 'fill', 'user_cancel', 'cancel_all', 'market_paused', 'credit_auto_cancel',
  'unfilled_remainder', 'insufficient_balance', 'amended', 'dead_man_switch', 'disconnect', 'self_trade_prevented',
] as const;

/** Why a balance changed (the spec's balance_update reasons). */
export const enum BalanceReason {
  FILL = 0,
  ORDER_PLACED = 1,
  ORDER_CANCELLED = 2,
  DEPOSIT = 3,
  WITHDRAWAL = 4,
}
export const BALANCE_REASON_NAMES = ['fill', 'order_placed', 'order_cancelled', 'deposit', 'withdrawal'] as const;

/** A tuple's indexes, as strings ("0" | "1" | ...). */
type TupleIndexes<T extends readonly unknown[]> = Exclude<keyof T, keyof readonly unknown[]>;
/** true when a names tuple has one name at each value of the enum E, and no name at any other index. */
type NamedEachValue<T extends readonly unknown[], E extends number> =
  [TupleIndexes<T>] extends [`${E}`] ? ([`${E}`] extends [TupleIndexes<T>] ? true : false) : false;
type MustHold<T extends true> = T;
// The wire names are looked up by the value (ws/messages.ts; the const enums have no object to
// list at run time): a reason added without its name, or a name without its reason, fails tsc here.
export type UpdateReasonsNamed = MustHold<NamedEachValue<typeof UPDATE_REASON_NAMES, UpdateReason>>;
export type BalanceReasonsNamed = MustHold<NamedEachValue<typeof BALANCE_REASON_NAMES, BalanceReason>>;

/** A market's parameters as the MARKET event announces them (EngineState.marketInfo). */
export interface MarketInfo {
  /** 0 active, 1 paused. */
  status: number;
  base_asset: number;
  quote_asset: number;
  tick_units: number;
  lot_units: number;
  /** 1 when the market has its own fees. */
  fee_override: number;
  /** The market's effective fees (its own or the global ones). */
  maker_fee_bps: number;
  taker_fee_bps: number;
}

/**
 * Where an engine writes the events of a request, in order. Implementations are allocation-free
 * writers into preallocated buffers (EventBuffer) or collectors used by tests.
 */
export interface EventSink {
  /** First event of an accepted request. order_id is the new or target order (0 when none). */
  accepted(kind: number, account: number, order_id: number): void;
  /** The only event of a rejected request. */
  rejected(kind: number, account: number, code: number, reason: number): void;
  fill(
    fill_id: number, market: number, taker_order_id: number, maker_order_id: number,
    taker_account: number, maker_account: number, taker_side: number, price_units: number,
    quantity_units: number, taker_fee_units: number, maker_fee_units: number,
  ): void;
  /**
   * An order's new state. `last_fill_price_units` is its latest fill's price (0 before any);
   * `locked_units` what it holds locked now and `priority_seq` its time priority, both 0 once the
   * update closes it (filled, cancelled): the state root's open-order leaf commits to all three.
   */
  orderUpdate(
    order_id: number, account: number, market: number, side: number, status: number,
    price_units: number, quantity_units: number, filled_units: number, remaining_units: number,
    last_fill_price_units: number, reason: number, locked_units: number, priority_seq: number,
  ): void;
  balance(account: number, asset: number, available_units: number, locked_units: number, reason: number): void;
  /** After an accepted REFER: the relationship and the end of its fee sharing. */
  referral(referred: number, referrer: number, active_until_ms: number): void;
  /** After a fill whose taker has an active referral: the share moved from the fee account. */
  referralShare(fill_id: number, referred: number, referrer: number, asset: number, amount_units: number): void;
  /**
   * After an accepted FORCE_INCLUDE: the new inbox entry. `referrer_account` (the payload's
   * resolved referrer, 0 unless a REFER) and `reject` (the front's verdict) are the two payload
   * facts its ACCEPTED event does not carry; the state root commits to them (docs/verifiability.md).
   */
  inboxQueued(entry_id: number, account: number, kind: number, nonce: number, deadline_ms: number,
    referrer_account: number, reject: number): void;
  /**
   * An inbox entry leaves the inbox for execution; the events of its request follow (its own
   * accepted or rejected first). `request` is the payload's request, as the engine applies it.
   */
  inboxIncluded(entry_id: number, request: Request): void;
  /**
   * An agent entry of `account` changed (src/engine/agents.ts): after an accepted APPROVE_AGENT
   * (one per entry it pruned, then the approved one), REVOKE_AGENT, and every accepted request an
   * agent signed (its new nonce mark). `valid_until_ms` 0 = the entry is gone; `nonce_floor` is the
   * user's floor for new agents' nonce marks after the change.
   */
  agent(account: number, agent: number, valid_until_ms: number, nonce_high_water: number, nonce_floor: number, name: string): void;
}
