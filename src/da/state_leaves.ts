// State leaves (docs/verifiability.md, "State root"): kinds, fixed-width big-endian key and
// value encodings, and decoding a leaf for fraud proofs (hashing and the trie: state_tree.ts).
import { FORCED_PAYLOAD_FIELDS } from '../engine/api.js';
import { OrderStatus, RequestKind } from '../engine/types.js';
import { AGENT_NAME_BYTES_MAX } from '../engine/agents.js';
import { hexToBytes } from './hex.js';
import { toHex0x } from '../util/hex.js';

export const LeafKind = {
  BALANCE: 0x01,
  NONCE: 0x02,
  ACCOUNT: 0x03,
  OPEN_ORDER: 0x04,
  MARKET: 0x05,
  GLOBAL_FEES: 0x06,
  CREDIT: 0x07,
  PENDING_WITHDRAWAL: 0x08,
  /** A referred user's referral (programme_leaves.ts). */
  REFERRAL: 0x09,
  /** What a referred user's taker fees paid its referrer so far, per asset (programme_leaves.ts). */
  REFERRAL_EARNED: 0x0a,
  /** A forced-inclusion entry waiting in the inbox (programme_leaves.ts). */
  INBOX_ENTRY: 0x0b,
  /** An account's last force-include envelope nonce, its own sequence (programme_leaves.ts). */
  ENVELOPE_NONCE: 0x0c,
  /** The counters: next order id, fill id, inbox entry id, time priority (engine_leaves.ts). */
  COUNTERS: 0x0d,
  /** Per asset, lifetime deposits and withdrawals (engine_leaves.ts). */
  SUPPLY: 0x0e,
  /** An open order's terms the open-order leaf lacks: order type, time in force, client id. */
  ORDER_TERMS: 0x0f,
  /** An armed dead-man switch: its deadline (programme_leaves.ts). */
  DEAD_MAN: 0x10,
  /** The last on-chain deposit id the engine credited (engine_leaves.ts, docs/settlement.md). */
  CHAIN_DEPOSIT: 0x11,
  /** A user's agent key: its validity, nonce mark and name (agent_leaves.ts). */
  AGENT: 0x12,
  /** The nonce mark a user's new agent starts at (agent_leaves.ts). */
  AGENT_NONCE_FLOOR: 0x13,
} as const;

export const LEAF_KIND_NAMES: Readonly<Record<number, string>> = {
  1: 'balance', 2: 'nonce', 3: 'account', 4: 'open_order', 5: 'market', 6: 'global_fees', 7: 'credit',
  8: 'pending_withdrawal', 9: 'referral', 10: 'referral_earned', 11: 'inbox_entry', 12: 'envelope_nonce',
  13: 'counters', 14: 'supply', 15: 'order_terms', 16: 'dead_man', 17: 'chain_deposit', 18: 'agent',
  19: 'agent_nonce_floor',
};

export const HASH = 32;

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/**
 * Request kinds (src/engine/types.ts RequestKind) whose ACCEPTED event sets a nonce mark:
 * withdraw, place, cancel, amend, cancel-all, refer, cancel-after set the trading high-water mark, force-include
 * the envelope mark (its own sequence). An included inbox entry's ACCEPTED is of the payload's
 * kind and carries the payload's nonce, so it sets the trading mark.
 */
export const SIGNED_KINDS: ReadonlySet<number> = new Set<number>([
  RequestKind.WITHDRAW, RequestKind.PLACE, RequestKind.CANCEL, RequestKind.AMEND, RequestKind.CANCEL_ALL,
  RequestKind.REFER, RequestKind.FORCE_INCLUDE, RequestKind.CANCEL_AFTER, RequestKind.APPROVE_AGENT,
  RequestKind.REVOKE_AGENT,
]);
/** OrderStatus FILLED, CANCELLED, REJECTED: the order is no longer open. */
export const STATUS_CLOSED_MIN = OrderStatus.FILLED;

// ---------------------------------------------------------------------------------------------
// Fixed-width big-endian encoders

export const TWO_32 = 4294967296;

export function need(ok: boolean, what: string): void {
  if (!ok) throw new RangeError(`state root: ${what}`);
}

/**
 * The put* encoders check their value with `if (!ok) outOfRange(...)`, not need(ok, `${v} ...`):
 * an argument is built before the call, so each put built its message (a number to string and a
 * concatenation) whether the value fit or not: a putU64 + putU32 pair took ~190 ns, ~8 ns without
 * (micro-bench, 2026-11-26); the DA worker makes ~15 puts per request.
 */
function outOfRange(v: number, what: string): never {
  throw new RangeError(`state root: ${v} ${what}`);
}

/**
 * uint64 big-endian. Values are safe integers; a negative one (never produced by a consistent
 * engine) is written as its int64 two's complement so that it still encodes to distinct bytes.
 */
export function putU64(b: Uint8Array, o: number, v: number): void {
  if (!Number.isSafeInteger(v)) outOfRange(v, 'is not a safe integer');
  let hi: number;
  let lo: number;
  if (v >= 0) {
    hi = Math.floor(v / TWO_32);
    lo = v - hi * TWO_32;
  } else {
    const u = -v;
    const uh = Math.floor(u / TWO_32);
    const ul = u - uh * TWO_32;
    hi = (~uh + (ul === 0 ? 1 : 0)) >>> 0;
    lo = ul === 0 ? 0 : TWO_32 - ul;
  }
  b[o] = hi >>> 24; b[o + 1] = (hi >>> 16) & 255; b[o + 2] = (hi >>> 8) & 255; b[o + 3] = hi & 255;
  b[o + 4] = lo >>> 24; b[o + 5] = (lo >>> 16) & 255; b[o + 6] = (lo >>> 8) & 255; b[o + 7] = lo & 255;
}

export function putU32(b: Uint8Array, o: number, v: number): void {
  if (!(Number.isInteger(v) && v >= 0 && v < TWO_32)) outOfRange(v, 'does not fit uint32');
  b[o] = v >>> 24; b[o + 1] = (v >>> 16) & 255; b[o + 2] = (v >>> 8) & 255; b[o + 3] = v & 255;
}

export function putI32(b: Uint8Array, o: number, v: number): void {
  if (!(Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff)) outOfRange(v, 'does not fit int32');
  const u = v >>> 0;
  b[o] = u >>> 24; b[o + 1] = (u >>> 16) & 255; b[o + 2] = (u >>> 8) & 255; b[o + 3] = u & 255;
}

export function putU16(b: Uint8Array, o: number, v: number): void {
  if (!(Number.isInteger(v) && v >= 0 && v < 65536)) outOfRange(v, 'does not fit uint16');
  b[o] = v >>> 8; b[o + 1] = v & 255;
}

export function putU8(b: Uint8Array, o: number, v: number): void {
  if (!(Number.isInteger(v) && v >= 0 && v < 256)) outOfRange(v, 'does not fit uint8');
  b[o] = v;
}

export function getU64(b: Uint8Array, o: number): number {
  const hi = ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
  const lo = ((b[o + 4] << 24) | (b[o + 5] << 16) | (b[o + 6] << 8) | b[o + 7]) >>> 0;
  return hi >= 0x80000000 ? -((~hi >>> 0) * TWO_32 + (TWO_32 - lo)) : hi * TWO_32 + lo;
}
export function getU32(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}
export function getI32(b: Uint8Array, o: number): number {
  return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3];
}
export function getU16(b: Uint8Array, o: number): number {
  return (b[o] << 8) | b[o + 1];
}

export function addressBytes20(hex: string): Uint8Array {
  return hexToBytes(hex, 20, 'address');
}

// Key encoders: the bytes after the kind byte.
export function balanceKey(account: number, asset: number): Uint8Array {
  const k = new Uint8Array(6); putU32(k, 0, account); putU16(k, 4, asset); return k;
}
export function accountKey(account: number): Uint8Array {
  const k = new Uint8Array(4); putU32(k, 0, account); return k;
}
export function orderKey(order_id: number): Uint8Array {
  const k = new Uint8Array(8); putU64(k, 0, order_id); return k;
}
export function marketKey(market: number): Uint8Array {
  const k = new Uint8Array(2); putU16(k, 0, market); return k;
}
export function withdrawalKey(account: number, nonce: number): Uint8Array {
  const k = new Uint8Array(12); putU32(k, 0, account); putU64(k, 4, nonce); return k;
}
export const EMPTY_KEY = new Uint8Array(0);

// Value encoders.
export function balanceValue(available: number, locked: number): Uint8Array {
  const v = new Uint8Array(16); putU64(v, 0, available); putU64(v, 8, locked); return v;
}
export function nonceValue(nonce: number): Uint8Array {
  const v = new Uint8Array(8); putU64(v, 0, nonce); return v;
}
export function accountValue(address: string): Uint8Array {
  return addressBytes20(address);
}
export interface OrderLeafValue {
  account: number; market: number; side: number; price: number; quantity: number; filled: number;
  remaining: number; status: number;
  /** What the order holds locked, its time priority and its latest fill price (0 before any). */
  locked: number; priority_seq: number; last_fill_price: number;
}
/** account u32, market u16, side u8, price, quantity, filled, remaining u64, status u8, locked, priority_seq, last_fill_price u64. */
export const ORDER_VALUE_BYTES = 4 + 2 + 1 + 8 * 4 + 1 + 8 * 3;
export function orderValue(o: OrderLeafValue): Uint8Array {
  const v = new Uint8Array(ORDER_VALUE_BYTES);
  writeOrderValue(v, 0, o);
  return v;
}
/** orderValue's bytes written at `v[at..]`. */
export function writeOrderValue(v: Uint8Array, at: number, o: OrderLeafValue): void {
  putU32(v, at, o.account); putU16(v, at + 4, o.market); putU8(v, at + 6, o.side); putU64(v, at + 7, o.price);
  putU64(v, at + 15, o.quantity); putU64(v, at + 23, o.filled); putU64(v, at + 31, o.remaining); putU8(v, at + 39, o.status);
  putU64(v, at + 40, o.locked); putU64(v, at + 48, o.priority_seq); putU64(v, at + 56, o.last_fill_price);
}
export interface MarketLeafValue {
  status: number; base: number; quote: number; tick: number; lot: number; fee_override: number;
  maker_bps: number; taker_bps: number; mark_price: number;
}
export function marketValue(m: MarketLeafValue): Uint8Array {
  const v = new Uint8Array(1 + 2 + 2 + 8 + 8 + 1 + 4 + 4 + 8);
  putU8(v, 0, m.status); putU16(v, 1, m.base); putU16(v, 3, m.quote); putU64(v, 5, m.tick);
  putU64(v, 13, m.lot); putU8(v, 21, m.fee_override); putI32(v, 22, m.maker_bps); putI32(v, 26, m.taker_bps);
  putU64(v, 30, m.mark_price);
  return v;
}
export function feesValue(maker_bps: number, taker_bps: number): Uint8Array {
  const v = new Uint8Array(8); putI32(v, 0, maker_bps); putI32(v, 4, taker_bps); return v;
}
export function creditValue(limit: number, ratio_ppm: number): Uint8Array {
  const v = new Uint8Array(12); putU64(v, 0, limit); putU32(v, 8, ratio_ppm); return v;
}
export function withdrawalValue(asset: number, amount: number): Uint8Array {
  const v = new Uint8Array(10); putU16(v, 0, asset); putU64(v, 2, amount); return v;
}

/** A leaf in raw form (what `leaves()` dumps, what `stateRootOfLeaves` takes). */
export interface RawLeaf {
  kind: number;
  key: Uint8Array;
  value: Uint8Array;
}

/** A leaf's new value as a batch left it (value null = removed). */
export interface PendingLeaf {
  kind: number;
  key: Uint8Array;
  value: Uint8Array | null;
}

/** A change in raw form (value null = removed). */
export interface RawChange {
  kind: number;
  key: Uint8Array;
  value: Uint8Array | null;
}

/** 0x hex of bytes. */
export function hex(b: Uint8Array): string {
  return '0x' + Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
}

/** Hex form of raw changes (what is published). */
export function changesToHex(changes: readonly RawChange[]): LeafChange[] {
  return changes.map((c) => ({ kind: c.kind, key: hex(c.key), value: c.value === null ? null : hex(c.value) }));
}

/** One leaf a batch changed: value null = removed. Hex without the kind byte. */
export interface LeafChange {
  kind: number;
  key: string;
  value: string | null;
}

/** A readable leaf (debugging, fraud proofs). */
export interface LeafRecord {
  /** e.g. `balance/account=3/asset=1`. */
  id: string;
  kind: string;
  key: string;
  value: string;
  leaf_hash: string;
  sort_key: string;
  fields: Record<string, number | string>;
}

/** Decodes a leaf's key and value into named fields (for dumps and fraud proofs). */
export function describeLeaf(kind: number, key: Uint8Array, value: Uint8Array | null): { id: string; fields: Record<string, number | string> } {
  const f: Record<string, number | string> = {};
  let id: string;
  switch (kind) {
    case LeafKind.BALANCE:
      id = `balance/account=${getU32(key, 0)}/asset=${getU16(key, 4)}`;
      if (value) { f.available = getU64(value, 0); f.locked = getU64(value, 8); }
      break;
    case LeafKind.NONCE:
      id = `nonce/account=${getU32(key, 0)}`;
      if (value) f.nonce = getU64(value, 0);
      break;
    case LeafKind.ACCOUNT:
      id = `account/account=${getU32(key, 0)}`;
      if (value) f.address = toHex0x(value);
      break;
    case LeafKind.OPEN_ORDER:
      id = `open_order/order_id=${getU64(key, 0)}`;
      if (value) {
        f.account = getU32(value, 0); f.market = getU16(value, 4); f.side = value[6]; f.price = getU64(value, 7);
        f.quantity = getU64(value, 15); f.filled = getU64(value, 23); f.remaining = getU64(value, 31); f.status = value[39];
        f.locked = getU64(value, 40); f.priority_seq = getU64(value, 48); f.last_fill_price = getU64(value, 56);
      }
      break;
    case LeafKind.MARKET:
      id = `market/market=${getU16(key, 0)}`;
      if (value) {
        f.status = value[0]; f.base = getU16(value, 1); f.quote = getU16(value, 3); f.tick = getU64(value, 5);
        f.lot = getU64(value, 13); f.fee_override = value[21]; f.maker_bps = getI32(value, 22);
        f.taker_bps = getI32(value, 26); f.mark_price = getU64(value, 30);
      }
      break;
    case LeafKind.GLOBAL_FEES:
      id = 'global_fees';
      if (value) { f.maker_bps = getI32(value, 0); f.taker_bps = getI32(value, 4); }
      break;
    case LeafKind.CREDIT:
      id = `credit/account=${getU32(key, 0)}`;
      if (value) { f.limit = getU64(value, 0); f.ratio_ppm = getU32(value, 8); }
      break;
    case LeafKind.PENDING_WITHDRAWAL:
      id = `pending_withdrawal/account=${getU32(key, 0)}/nonce=${getU64(key, 4)}`;
      if (value) { f.asset = getU16(value, 0); f.amount = getU64(value, 2); }
      break;
    case LeafKind.REFERRAL:
      id = `referral/account=${getU32(key, 0)}`;
      if (value) { f.referrer = getU32(value, 0); f.active_until_ms = getU64(value, 4); }
      break;
    case LeafKind.REFERRAL_EARNED:
      id = `referral_earned/account=${getU32(key, 0)}/asset=${getU16(key, 4)}`;
      if (value) f.earned = getU64(value, 0);
      break;
    case LeafKind.INBOX_ENTRY:
      id = `inbox_entry/entry_id=${getU64(key, 0)}`;
      if (value) describeInboxValue(value, f);
      break;
    case LeafKind.CHAIN_DEPOSIT:
      id = 'chain_deposit';
      if (value) f.deposit_id = getU64(value, 0);
      break;
    case LeafKind.COUNTERS:
      id = 'counters';
      if (value) {
        f.next_order_id = getU64(value, 0); f.next_fill_id = getU64(value, 8); f.next_inbox_entry_id = getU64(value, 16);
        f.next_priority_seq = getU64(value, 24);
      }
      break;
    case LeafKind.SUPPLY:
      id = `supply/asset=${getU16(key, 0)}`;
      if (value) { f.deposits = getU64(value, 0); f.withdrawals = getU64(value, 8); }
      break;
    case LeafKind.ORDER_TERMS:
      id = `order_terms/order_id=${getU64(key, 0)}`;
      if (value) {
        f.order_type = value[0]; f.tif = value[1];
        let c = '';
        for (let i = 0; i < Math.min(value[2], 36); i++) c += String.fromCharCode(value[3 + i]);
        f.client_order_id = c;
      }
      break;
    case LeafKind.ENVELOPE_NONCE:
      id = `envelope_nonce/account=${getU32(key, 0)}`;
      if (value) f.envelope_nonce = getU64(value, 0);
      break;
    case LeafKind.DEAD_MAN:
      id = `dead_man/account=${getU32(key, 0)}`;
      if (value) f.deadline_ms = getU64(value, 0);
      break;
    case LeafKind.AGENT:
      id = `agent/account=${getU32(key, 0)}/agent=${getU32(key, 4)}`;
      // valid_until u64, nonce u64, name length u8, name (agent_leaves.ts, which imports this module).
      if (value && value.length === 8 + 8 + 1 + AGENT_NAME_BYTES_MAX) {
        f.valid_until_ms = getU64(value, 0); f.nonce_high_water = getU64(value, 8);
        let s = '';
        for (let i = 0; i < Math.min(value[16], AGENT_NAME_BYTES_MAX); i++) s += String.fromCharCode(value[17 + i]);
        f.name = s;
      }
      break;
    case LeafKind.AGENT_NONCE_FLOOR:
      id = `agent_nonce_floor/account=${getU32(key, 0)}`;
      if (value) f.nonce_floor = getU64(value, 0);
      break;
    default:
      id = `kind${kind}/${toHex0x(key)}`;
  }
  return { id, fields: f };
}

/** Payload integers of an inbox entry leaf, in value order after the 28-byte envelope part. */
export const INBOX_PAYLOAD_FIELDS = FORCED_PAYLOAD_FIELDS;
/** account u32, envelope nonce u64, queued u64, deadline u64. */
export const INBOX_ENVELOPE_BYTES = 4 + 8 + 8 + 8;
export const INBOX_CLIENT_ID_BYTES = 36;
export const INBOX_VALUE_BYTES = INBOX_ENVELOPE_BYTES + 8 * INBOX_PAYLOAD_FIELDS.length + 1 + INBOX_CLIENT_ID_BYTES;

function describeInboxValue(v: Uint8Array, f: Record<string, number | string>): void {
  if (v.length !== INBOX_VALUE_BYTES) {
    f.malformed = toHex0x(v);
    return;
  }
  f.account = getU32(v, 0); f.envelope_nonce = getU64(v, 4); f.queued_ms = getU64(v, 12); f.deadline_ms = getU64(v, 20);
  INBOX_PAYLOAD_FIELDS.forEach((name, i) => { f[name] = getU64(v, INBOX_ENVELOPE_BYTES + 8 * i); });
  const at = INBOX_ENVELOPE_BYTES + 8 * INBOX_PAYLOAD_FIELDS.length;
  const len = Math.min(v[at], INBOX_CLIENT_ID_BYTES);
  let s = '';
  for (let i = 0; i < len; i++) s += String.fromCharCode(v[at + 1 + i]);
  f.client_order_id = s;
}
