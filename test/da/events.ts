// Event records as plain arrays (EventFields over arrays), for the state root tests.
import type { EventFields } from '../../src/ring/event_records.js';
import { EventType } from '../../src/ring/event_records.js';

export class ArrayEvent implements EventFields {
  constructor(readonly t: number, readonly f: number[], readonly address = '', readonly coid = '') {}
  type(): number { return this.t; }
  field(k: number): number { return this.f[k] ?? 0; }
  clientOrderId(): string { return this.coid; }
  addressHex(): string { return this.address; }
}

export const ev = {
  begin: (id: number, time = 1000 + id) => new ArrayEvent(EventType.BATCH_BEGIN, [id, time]),
  committed: (id: number, time = 1000 + id, count = 0) => new ArrayEvent(EventType.BATCH_COMMITTED, [id, time, count]),
  /** [m, status, base, quote, tick, lot, fee_override, maker_bps, taker_bps] */
  market: (m: number, base: number, quote: number, o: Partial<{ status: number; tick: number; lot: number; fee_override: number; maker: number; taker: number }> = {}) =>
    new ArrayEvent(EventType.MARKET, [m, o.status ?? 0, base, quote, o.tick ?? 10_000, o.lot ?? 100, o.fee_override ?? 0, o.maker ?? -1, o.taker ?? 5]),
  fees: (maker: number, taker: number) => new ArrayEvent(EventType.FEES, [maker, taker]),
  account: (id: number, address: string) => new ArrayEvent(EventType.ACCOUNT, [id], address),
  balance: (account: number, asset: number, available: number, locked: number, reason = 3) =>
    new ArrayEvent(EventType.BALANCE, [account, asset, available, locked, reason]),
  /** [kind, account, order_id, nonce, market, side, type, tif, price, quantity, asset, amount, target] */
  accepted: (kind: number, account: number, order_id: number, nonce: number, o: Partial<{ asset: number; amount: number }> = {}) =>
    new ArrayEvent(EventType.ACCEPTED, [kind, account, order_id, nonce, 0, 0, 0, 0, 0, 0, o.asset ?? 0, o.amount ?? 0, 0]),
  rejected: (kind: number, account: number) => new ArrayEvent(EventType.REJECTED, [kind, account, 5, 9]),
  /** [order_id, account, market, side, status, price, quantity, filled, remaining, last_fill_price, reason, locked, priority_seq] */
  order: (order_id: number, account: number, market: number, side: number, status: number, price: number, quantity: number, filled: number, remaining: number,
    o: Partial<{ last_fill: number; locked: number; priority: number }> = {}) =>
    new ArrayEvent(EventType.ORDER_UPDATE, [order_id, account, market, side, status, price, quantity, filled, remaining, o.last_fill ?? 0, 0,
      o.locked ?? 0, o.priority ?? 0]),
  /** [fill_id, market, taker_order, maker_order, taker_account, maker_account, taker_side, price, qty, taker_fee, maker_fee] */
  fill: (fill_id: number, market: number, taker_order: number, maker_order: number, taker: number, maker: number, side: number, price: number, qty: number, taker_fee: number, maker_fee: number) =>
    new ArrayEvent(EventType.FILL, [fill_id, market, taker_order, maker_order, taker, maker, side, price, qty, taker_fee, maker_fee]),
  /** [account, agent, valid_until_ms, nonce_high_water, nonce_floor], the name as the client id */
  agent: (account: number, agent: number, until_ms: number, nonce: number, floor: number, name: string) =>
    new ArrayEvent(EventType.AGENT, [account, agent, until_ms, nonce, floor], '', name),
  credit: (account: number, limit: number, ratio_ppm: number) => new ArrayEvent(EventType.CREDIT, [account, limit, ratio_ppm]),
  /** [referred, referrer, active_until_ms] */
  referral: (referred: number, referrer: number, until_ms: number) => new ArrayEvent(EventType.REFERRAL, [referred, referrer, until_ms]),
  /** [fill_id, referred, referrer, asset, amount] */
  share: (fill_id: number, referred: number, referrer: number, asset: number, amount: number) =>
    new ArrayEvent(EventType.REFERRAL_SHARE, [fill_id, referred, referrer, asset, amount]),
  /**
   * A FORCE_INCLUDE's ACCEPTED: order_id = the entry id, nonce = the envelope's, the other fields
   * and the client order id the payload's.
   */
  forceAccepted: (account: number, entry_id: number, envelope_nonce: number, p: Partial<ForcedPayload> = {}) =>
    new ArrayEvent(EventType.ACCEPTED, [13, account, entry_id, envelope_nonce, p.market ?? 0, p.side ?? 0, p.order_type ?? 0,
      p.tif ?? 0, p.price ?? 2_000_000_000, p.quantity ?? 100, p.asset ?? 0, p.amount ?? 0, p.order_id ?? 0], '', p.coid ?? ''),
  /** [entry_id, account, kind, nonce, deadline_ms, referrer_account, reject] */
  queued: (entry_id: number, account: number, kind: number, nonce: number, deadline_ms: number, referrer = 0, reject = 0) =>
    new ArrayEvent(EventType.INBOX_QUEUED, [entry_id, account, kind, nonce, deadline_ms, referrer, reject]),
  /** [entry_id, account, kind, nonce] */
  included: (entry_id: number, account: number, kind: number, nonce: number) =>
    new ArrayEvent(EventType.INBOX_INCLUDED, [entry_id, account, kind, nonce]),
};

export interface ForcedPayload {
  market: number; side: number; order_type: number; tif: number; price: number; quantity: number;
  asset: number; amount: number; order_id: number; coid: string;
}
