// Leaves for engine state that changes later answers but that the balance, order and market leaves
// do not hold (docs/verifiability.md, "Engine counters and order terms"): the counters, the
// per-asset deposit and withdrawal totals, an open order's type, time in force and client id, and
// the last on-chain deposit id credited.
// All of them come from events the engine already writes (ACCEPTED, FILL, ORDER_UPDATE), so the event-side
// builder (state_root.ts) and the canonical side (canonical_leaves.ts) make the same leaves.
import type { CanonicalState } from '../engine/api.js';
import { EMPTY_KEY, LeafKind, getU64, need, orderKey, putU16, putU64, putU8, type PendingLeaf } from './state_leaves.js';
import { orderTermsLeafId, type LeafId } from './leaf_ids.js';

/** Counters as they start: ids are handed out from 1. No leaf while all are at their start. */
export const COUNTERS_START = 1;

export interface Counters {
  next_order_id: number;
  next_fill_id: number;
  next_inbox_entry_id: number;
  /** The time priority the next order entering a book gets. */
  next_priority_seq: number;
}

export const COUNTERS_LEAF_ID = '13';

export function countersLeaf(c: Counters): [string, PendingLeaf] {
  const v = new Uint8Array(32);
  putU64(v, 0, c.next_order_id); putU64(v, 8, c.next_fill_id); putU64(v, 16, c.next_inbox_entry_id);
  putU64(v, 24, c.next_priority_seq);
  return [COUNTERS_LEAF_ID, { kind: LeafKind.COUNTERS, key: EMPTY_KEY, value: v }];
}

/** The counters a counters leaf holds (all at their start without one). */
export function countersOfLeaf(value: Uint8Array | undefined): Counters {
  return value === undefined
    ? { next_order_id: COUNTERS_START, next_fill_id: COUNTERS_START, next_inbox_entry_id: COUNTERS_START, next_priority_seq: COUNTERS_START }
    : { next_order_id: getU64(value, 0), next_fill_id: getU64(value, 8), next_inbox_entry_id: getU64(value, 16), next_priority_seq: getU64(value, 24) };
}

export function supplyLeafId(asset: number): string {
  return `14:${asset}`;
}

export function supplyLeaf(asset: number, deposits_units: number, withdrawals_units: number): [string, PendingLeaf] {
  const k = new Uint8Array(2);
  putU16(k, 0, asset);
  const v = new Uint8Array(16);
  putU64(v, 0, deposits_units); putU64(v, 8, withdrawals_units);
  return [supplyLeafId(asset), { kind: LeafKind.SUPPLY, key: k, value: v }];
}

/** The chain deposit leaf (`0x11`, empty key): the last on-chain deposit id credited, u64 (docs/settlement.md). */
export function chainDepositLeaf(deposit_id: number): [string, PendingLeaf] {
  const v = new Uint8Array(8);
  putU64(v, 0, deposit_id);
  return ['16', { kind: LeafKind.CHAIN_DEPOSIT, key: EMPTY_KEY, value: v }];
}

/** Client order ids are at most 36 ASCII characters (records.ts CLIENT_ORDER_ID_BYTES_MAX). */
const TERMS_CLIENT_ID_BYTES = 36;

export interface OrderTerms {
  order_type: number;
  tif: number;
  client_order_id: string;
}

/** order type u8, tif u8, client id length u8, client id bytes zero-padded to 36. Null removes. */
export function orderTermsLeaf(order_id: number, t: OrderTerms | null): [LeafId, PendingLeaf] {
  let v: Uint8Array | null = null;
  if (t !== null) {
    v = new Uint8Array(TERMS_VALUE_BYTES);
    writeTermsValue(v, 0, t);
  }
  return [orderTermsLeafId(order_id), { kind: LeafKind.ORDER_TERMS, key: orderKey(order_id), value: v }];
}

/** Bytes of an order-terms value. */
export const TERMS_VALUE_BYTES = 3 + TERMS_CLIENT_ID_BYTES;

/** orderTermsLeaf's value written at `v[at..]` (TERMS_VALUE_BYTES, the client id zero-padded). */
export function writeTermsValue(v: Uint8Array, at: number, t: OrderTerms): void {
  putU8(v, at, t.order_type); putU8(v, at + 1, t.tif);
  need(t.client_order_id.length <= TERMS_CLIENT_ID_BYTES, 'client order id longer than 36');
  putU8(v, at + 2, t.client_order_id.length);
  for (let i = 0; i < t.client_order_id.length; i++) putU8(v, at + 3 + i, t.client_order_id.charCodeAt(i));
  v.fill(0, at + 3 + t.client_order_id.length, at + TERMS_VALUE_BYTES);
}

/** These leaves of a canonical state (resting orders are limit orders: type 0). */
export function engineLeavesOfCanonical(s: CanonicalState): [LeafId, PendingLeaf][] {
  const out: [LeafId, PendingLeaf][] = [];
  if (s.next_order_id !== COUNTERS_START || s.next_fill_id !== COUNTERS_START || s.next_inbox_entry_id !== COUNTERS_START ||
    s.next_priority_seq !== COUNTERS_START) {
    out.push(countersLeaf(s));
  }
  s.deposits_units.forEach((d, asset) => {
    const w = s.withdrawals_units[asset];
    if (d !== 0 || w !== 0) out.push(supplyLeaf(asset, d, w));
  });
  if (s.chain_deposit_high_water > 0) out.push(chainDepositLeaf(s.chain_deposit_high_water));
  for (const m of s.markets) {
    for (const o of [...m.bids, ...m.asks]) out.push(orderTermsLeaf(o.order_id, { order_type: 0, tif: o.tif, client_order_id: o.client_order_id }));
  }
  return out;
}
