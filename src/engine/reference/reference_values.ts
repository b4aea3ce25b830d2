// The reference engine's values (see reference_engine.ts for why): bigint money arithmetic that
// shares nothing with src/money/ or the fast engine, num() where a value leaves the engine, the
// plain objects of orders, markets, accounts and credit settings, and the Rejection a handler
// throws before its first mutation. reference_state.ts holds the state built of them.
import type { RejectValue } from '../codes.js';
import type { OrderFixedTerms } from '../types.js';

export const UNITS = 1_000_000n;
const BPS = 10_000n;
export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
export const CLIENT_ORDER_ID_RE = /^[A-Za-z0-9_-]{1,36}$/;

/** A bigint leaving the engine: must be a safe integer. */
export function num(x: bigint): number {
  if (x > MAX_SAFE || x < -MAX_SAFE) throw new Error(`reference engine: ${x} is not a safe integer`);
  return Number(x);
}

function ceilDiv(a: bigint, b: bigint): bigint {
  if (a < 0n || b <= 0n) throw new Error(`reference engine: ceilDiv(${a}, ${b})`);
  return (a + b - 1n) / b;
}

export function refNotionalCeil(price: bigint, quantity: bigint): bigint {
  return ceilDiv(price * quantity, UNITS);
}
export function refNotionalFloor(price: bigint, quantity: bigint): bigint {
  return (price * quantity) / UNITS;
}
/** ceil(n x bps / 1e4) for bps >= 0. */
export function refFeeCeil(n: bigint, bps: bigint): bigint {
  return ceilDiv(n * bps, BPS);
}
/** floor(n x bps / 1e4) for bps >= 0. */
export function refFeeFloor(n: bigint, bps: bigint): bigint {
  if (bps < 0n || n < 0n) throw new Error('reference engine: feeFloor of a negative');
  return (n * bps) / BPS;
}
/** What a limit bid locks: notionalCeil(price, quantity) + feeCeil(that, taker_bps). */
export function bidLock(price: bigint, quantity: bigint, taker_bps: bigint): bigint {
  const n = refNotionalCeil(price, quantity);
  return n + refFeeCeil(n, taker_bps);
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export function isIndex(x: number, length: number): boolean {
  return Number.isInteger(x) && x >= 0 && x < length;
}

export interface RefOrder extends OrderFixedTerms {
  /** Limit price; 0 for market orders. */
  price: bigint;
  quantity: bigint;
  filled: bigint;
  remaining: bigint;
  locked: bigint;
  priority_seq: number;
  client_order_id: string;
  /** Price of the order's latest fill, 0 before its first. */
  last_fill_price: bigint;
}

export interface RefMarket {
  id: string;
  base: number;
  quote: number;
  tick: bigint;
  lot: bigint;
  status: 'active' | 'paused';
  fees: { maker: bigint; taker: bigint } | null;
  mark: bigint;
  bids: RefOrder[];
  asks: RefOrder[];
}

export interface RefAccount {
  nonce: number;
  available: bigint[];
  locked: bigint[];
}

export interface CreditSetting {
  limit: bigint;
  ratio_ppm: bigint;
}

export class Rejection {
  constructor(readonly reason: RejectValue) {}
}
