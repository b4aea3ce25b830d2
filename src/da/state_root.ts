// The state root (docs/verifiability.md, "State root"): a commitment to the engine state as the
// committed event stream describes it, computed off the matcher by whoever reads the events (the
// front's DA publisher, the verifier re-executing published batches, the recovery bench).
//
// Leaves: kind byte || key || value, fixed-width big-endian integers (see LeafKind and the
// encoders below). leaf_hash = keccak256(kind || key || value). A leaf's bucket is the first 12
// bits of sort_key = keccak256(kind || key) (4,096 buckets); a bucket's hash is keccak256 of its
// leaf hashes sorted by sort_key ascending (32 zero bytes for an empty bucket); the root is the
// binary Merkle root (keccak256(left || right), unsorted pairs) over the 4,096 bucket hashes in
// bucket order.
//
// Incremental: `apply` only records the latest value of each leaf the batch touched (so the
// order of touches within a batch does not matter, and a leaf touched ten times is hashed once);
// `endBatch` hashes the changed leaves, rehashes only the buckets they live in, and only those
// buckets' 12-node paths to the root.
import type { EventFields } from '../gateway/read_model.js';
import { EventType } from '../ring/records.js';
import { FillsTree, EMPTY_FILLS_ROOT, type FillLeaf } from './fills_tree.js';
import { bytesToHex0x, compareBytes, hexToBytes } from './hex.js';
import { keccak256 as keccak_256, keccak256Into } from './keccak.js';

export const LeafKind = {
  BALANCE: 0x01,
  NONCE: 0x02,
  ACCOUNT: 0x03,
  OPEN_ORDER: 0x04,
  MARKET: 0x05,
  GLOBAL_FEES: 0x06,
  CREDIT: 0x07,
  PENDING_WITHDRAWAL: 0x08,
} as const;

export const LEAF_KIND_NAMES: Readonly<Record<number, string>> = {
  1: 'balance', 2: 'nonce', 3: 'account', 4: 'open_order', 5: 'market', 6: 'global_fees', 7: 'credit',
  8: 'pending_withdrawal',
};

export const BUCKET_BITS = 12;
export const BUCKETS = 1 << BUCKET_BITS;
const HASH = 32;
/** Heap layout: node i has children 2i+1, 2i+2; bucket b is node BUCKETS - 1 + b. */
const NODES = 2 * BUCKETS - 1;
const FIRST_LEAF_NODE = BUCKETS - 1;

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** Request kinds (src/engine/types.ts RequestKind) whose ACCEPTED event sets the nonce high-water. */
const SIGNED_KINDS = new Set([2, 3, 4, 5, 6]);
const KIND_WITHDRAW = 2;
/** OrderStatus FILLED, CANCELLED, REJECTED: the order is no longer open. */
const STATUS_CLOSED_MIN = 2;

// ---------------------------------------------------------------------------------------------
// Fixed-width big-endian encoders

const TWO_32 = 4294967296;

function need(ok: boolean, what: string): void {
  if (!ok) throw new RangeError(`state root: ${what}`);
}

/**
 * uint64 big-endian. Values are safe integers; a negative one (never produced by a consistent
 * engine) is written as its int64 two's complement so that it still encodes to distinct bytes.
 */
function putU64(b: Uint8Array, o: number, v: number): void {
  need(Number.isSafeInteger(v), `${v} is not a safe integer`);
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

function putU32(b: Uint8Array, o: number, v: number): void {
  need(Number.isInteger(v) && v >= 0 && v < TWO_32, `${v} does not fit uint32`);
  b[o] = v >>> 24; b[o + 1] = (v >>> 16) & 255; b[o + 2] = (v >>> 8) & 255; b[o + 3] = v & 255;
}

function putI32(b: Uint8Array, o: number, v: number): void {
  need(Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff, `${v} does not fit int32`);
  const u = v >>> 0;
  b[o] = u >>> 24; b[o + 1] = (u >>> 16) & 255; b[o + 2] = (u >>> 8) & 255; b[o + 3] = u & 255;
}

function putU16(b: Uint8Array, o: number, v: number): void {
  need(Number.isInteger(v) && v >= 0 && v < 65536, `${v} does not fit uint16`);
  b[o] = v >>> 8; b[o + 1] = v & 255;
}

function putU8(b: Uint8Array, o: number, v: number): void {
  need(Number.isInteger(v) && v >= 0 && v < 256, `${v} does not fit uint8`);
  b[o] = v;
}

function getU64(b: Uint8Array, o: number): number {
  const hi = ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
  const lo = ((b[o + 4] << 24) | (b[o + 5] << 16) | (b[o + 6] << 8) | b[o + 7]) >>> 0;
  return hi >= 0x80000000 ? -((~hi >>> 0) * TWO_32 + (TWO_32 - lo)) : hi * TWO_32 + lo;
}
function getU32(b: Uint8Array, o: number): number {
  return ((b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]) >>> 0;
}
function getI32(b: Uint8Array, o: number): number {
  return (b[o] << 24) | (b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3];
}
function getU16(b: Uint8Array, o: number): number {
  return (b[o] << 8) | b[o + 1];
}

function addressBytes20(hex: string): Uint8Array {
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
const EMPTY_KEY = new Uint8Array(0);

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
}
export function orderValue(o: OrderLeafValue): Uint8Array {
  const v = new Uint8Array(4 + 2 + 1 + 8 * 4 + 1);
  putU32(v, 0, o.account); putU16(v, 4, o.market); putU8(v, 6, o.side); putU64(v, 7, o.price);
  putU64(v, 15, o.quantity); putU64(v, 23, o.filled); putU64(v, 31, o.remaining); putU8(v, 39, o.status);
  return v;
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

/** kind || key (the input of the sort key). */
function kindKey(kind: number, key: Uint8Array): Uint8Array {
  const b = new Uint8Array(1 + key.length);
  b[0] = kind;
  b.set(key, 1);
  return b;
}

function leafHashOf(kind: number, key: Uint8Array, value: Uint8Array): Uint8Array {
  const b = new Uint8Array(1 + key.length + value.length);
  b[0] = kind;
  b.set(key, 1);
  b.set(value, 1 + key.length);
  return keccak_256(b);
}

function bucketOf(sort_key: Uint8Array): number {
  return (sort_key[0] << 4) | (sort_key[1] >> 4);
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
  sort_key: Uint8Array;
  kind: number;
  key: Uint8Array;
  value: Uint8Array | null;
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
  bucket: number;
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
      if (value) f.address = bytesToHex0x(value);
      break;
    case LeafKind.OPEN_ORDER:
      id = `open_order/order_id=${getU64(key, 0)}`;
      if (value) {
        f.account = getU32(value, 0); f.market = getU16(value, 4); f.side = value[6]; f.price = getU64(value, 7);
        f.quantity = getU64(value, 15); f.filled = getU64(value, 23); f.remaining = getU64(value, 31); f.status = value[39];
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
    default:
      id = `kind${kind}/${bytesToHex0x(key)}`;
  }
  return { id, fields: f };
}

// ---------------------------------------------------------------------------------------------
// The bucketed Merkle tree

interface Entry {
  kind: number;
  key: Uint8Array;
  value: Uint8Array;
  sort_key: Uint8Array;
  bucket: number;
  hash: Uint8Array;
}

/** Hash of each level's node when every bucket is empty: ZERO_LEVEL[0] = bucket level (zeros). */
const ZERO_LEVEL: Uint8Array[] = (() => {
  const out: Uint8Array[] = [new Uint8Array(HASH)];
  const pair = new Uint8Array(2 * HASH);
  for (let l = 1; l <= BUCKET_BITS; l++) {
    pair.set(out[l - 1], 0);
    pair.set(out[l - 1], HASH);
    out.push(keccak_256(pair));
  }
  return out;
})();

function findIndex(bucket: Entry[], sort_key: Uint8Array): { index: number; found: boolean } {
  let lo = 0;
  let hi = bucket.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = compareBytes(bucket[mid].sort_key, 0, sort_key, 0, HASH);
    if (c === 0) return { index: mid, found: true };
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return { index: lo, found: false };
}

let bucket_scratch = new Uint8Array(64 * HASH);

/** A bucket's hash written to `out[at .. at+32)`. */
function hashBucketInto(bucket: Entry[], out: Uint8Array, at: number): void {
  const n = bucket.length;
  if (n === 0) {
    out.fill(0, at, at + HASH);
    return;
  }
  if (bucket_scratch.length < n * HASH) bucket_scratch = new Uint8Array(2 * n * HASH);
  const buf = bucket_scratch;
  for (let i = 0; i < n; i++) buf.set(bucket[i].hash, i * HASH);
  keccak256Into(buf, 0, n * HASH, out, at);
}

function hashBucket(bucket: Entry[]): Uint8Array {
  const out = new Uint8Array(HASH);
  hashBucketInto(bucket, out, 0);
  return out;
}

/** The key -> leaf map plus its bucket tree, with incremental updates. */
export class BucketTree {
  private readonly entries = new Map<string, Entry>();
  private readonly buckets: Entry[][] = [];
  private readonly nodes = new Uint8Array(NODES * HASH);
  /** Hashes computed (leaf, sort key, bucket, node): cost accounting for benches. */
  hashes = 0;
  /** Changes that undo the last `update` (previous values; null = the leaf did not exist). */
  last_revert: RawChange[] = [];

  constructor() {
    for (let b = 0; b < BUCKETS; b++) this.buckets.push([]);
    // Level l (0 = buckets) holds nodes [2^(12-l) - 1, 2^(13-l) - 1).
    for (let l = 0; l <= BUCKET_BITS; l++) {
      const first = (1 << (BUCKET_BITS - l)) - 1;
      const count = 1 << (BUCKET_BITS - l);
      for (let i = 0; i < count; i++) this.nodes.set(ZERO_LEVEL[l], (first + i) * HASH);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  root(): Uint8Array {
    return this.nodes.slice(0, HASH);
  }

  get(id: string): Entry | undefined {
    return this.entries.get(id);
  }

  /**
   * Applies changes (value null = remove); returns the changes that really changed a leaf, in
   * sort-key order. Rehashes touched buckets and their paths only.
   */
  update(changes: Iterable<[string, PendingLeaf]>): RawChange[] {
    const dirty = new Set<number>();
    const applied: RawChange[] = [];
    const revert: RawChange[] = [];
    for (const [id, c] of changes) {
      const e = this.entries.get(id);
      if (c.value === null) {
        if (e === undefined) continue;
        const bucket = this.buckets[e.bucket];
        const at = findIndex(bucket, e.sort_key);
        if (!at.found) throw new Error(`state root: leaf ${id} missing from its bucket`);
        bucket.splice(at.index, 1);
        this.entries.delete(id);
        dirty.add(e.bucket);
        applied.push({ sort_key: e.sort_key, kind: c.kind, key: c.key, value: null });
        revert.push({ sort_key: e.sort_key, kind: c.kind, key: c.key, value: e.value });
        continue;
      }
      const hash = leafHashOf(c.kind, c.key, c.value);
      this.hashes++;
      if (e !== undefined) {
        if (compareBytes(e.hash, 0, hash, 0, HASH) === 0) continue;
        revert.push({ sort_key: e.sort_key, kind: c.kind, key: c.key, value: e.value });
        e.value = c.value;
        e.hash = hash;
        dirty.add(e.bucket);
        applied.push({ sort_key: e.sort_key, kind: c.kind, key: c.key, value: c.value });
        continue;
      }
      const sort_key = keccak_256(kindKey(c.kind, c.key));
      this.hashes++;
      const entry: Entry = { kind: c.kind, key: c.key, value: c.value, sort_key, bucket: bucketOf(sort_key), hash };
      const bucket = this.buckets[entry.bucket];
      const at = findIndex(bucket, sort_key);
      if (at.found) throw new Error(`state root: sort key collision for ${id}`);
      bucket.splice(at.index, 0, entry);
      this.entries.set(id, entry);
      dirty.add(entry.bucket);
      applied.push({ sort_key, kind: c.kind, key: c.key, value: c.value });
      revert.push({ sort_key, kind: c.kind, key: c.key, value: null });
    }
    this.last_revert = revert;
    this.rehash(dirty);
    applied.sort((a, b) => compareBytes(a.sort_key, 0, b.sort_key, 0, HASH));
    return applied;
  }

  private rehash(dirty: Set<number>): void {
    if (dirty.size === 0) return;
    let level: number[] = [];
    for (const b of dirty) {
      hashBucketInto(this.buckets[b], this.nodes, (FIRST_LEAF_NODE + b) * HASH);
      if (this.buckets[b].length > 0) this.hashes++;
      level.push(FIRST_LEAF_NODE + b);
    }
    for (let l = 0; l < BUCKET_BITS; l++) {
      const parents: number[] = [];
      let last = -1;
      level.sort((x, y) => x - y);
      for (const n of level) {
        const p = (n - 1) >> 1;
        if (p === last) continue;
        last = p;
        parents.push(p);
      }
      // Children 2p+1 and 2p+2 are adjacent: left || right is one 64-byte run of `nodes`.
      for (const p of parents) {
        keccak256Into(this.nodes, (2 * p + 1) * HASH, 2 * HASH, this.nodes, p * HASH);
        this.hashes++;
      }
      level = parents;
    }
  }

  /** Root the tree would have after `changes`, without changing it (fraud proofs). */
  rootAfter(changes: readonly LeafChange[]): Uint8Array {
    const copies = new Map<number, Entry[]>();
    const bucketCopy = (b: number): Entry[] => {
      let c = copies.get(b);
      if (c === undefined) {
        c = this.buckets[b].slice();
        copies.set(b, c);
      }
      return c;
    };
    for (const ch of changes) {
      const key = hexToBytes(ch.key, undefined, 'leaf key');
      const sort_key = keccak_256(kindKey(ch.kind, key));
      const b = bucketOf(sort_key);
      const bucket = bucketCopy(b);
      const at = findIndex(bucket, sort_key);
      if (ch.value === null) {
        if (at.found) bucket.splice(at.index, 1);
        continue;
      }
      const value = hexToBytes(ch.value, undefined, 'leaf value');
      const entry: Entry = { kind: ch.kind, key, value, sort_key, bucket: b, hash: leafHashOf(ch.kind, key, value) };
      if (at.found) bucket[at.index] = entry;
      else bucket.splice(at.index, 0, entry);
    }
    const overlay = new Map<number, Uint8Array>();
    const node = (i: number): Uint8Array => overlay.get(i) ?? this.nodes.subarray(i * HASH, (i + 1) * HASH);
    let level: number[] = [];
    for (const [b, bucket] of copies) {
      overlay.set(FIRST_LEAF_NODE + b, hashBucket(bucket));
      level.push(FIRST_LEAF_NODE + b);
    }
    const pair = new Uint8Array(2 * HASH);
    for (let l = 0; l < BUCKET_BITS; l++) {
      const parents = [...new Set(level.map((n) => (n - 1) >> 1))];
      for (const p of parents) {
        pair.set(node(2 * p + 1), 0);
        pair.set(node(2 * p + 2), HASH);
        overlay.set(p, keccak_256(pair));
      }
      level = parents;
    }
    return level.length === 0 ? this.root() : node(0).slice();
  }

  /** Every leaf in canonical order (bucket, then sort key). */
  *all(): Generator<Entry> {
    for (const bucket of this.buckets) yield* bucket;
  }
}

function hex(b: Uint8Array): string {
  return '0x' + Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
}

/**
 * The state root of a set of leaves computed from scratch, independently of BucketTree's
 * incremental bookkeeping (tests; a check of the incremental path).
 */
export function stateRootOfLeaves(leaves: readonly RawLeaf[]): string {
  const buckets: { sort_key: Uint8Array; hash: Uint8Array }[][] = Array.from({ length: BUCKETS }, () => []);
  for (const l of leaves) {
    const sort_key = keccak_256(kindKey(l.kind, l.key));
    buckets[bucketOf(sort_key)].push({ sort_key, hash: leafHashOf(l.kind, l.key, l.value) });
  }
  let level: Uint8Array[] = buckets.map((b) => {
    if (b.length === 0) return new Uint8Array(HASH);
    b.sort((x, y) => compareBytes(x.sort_key, 0, y.sort_key, 0, HASH));
    const buf = new Uint8Array(b.length * HASH);
    b.forEach((e, i) => buf.set(e.hash, i * HASH));
    return keccak_256(buf);
  });
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const pair = new Uint8Array(2 * HASH);
      pair.set(level[i], 0);
      pair.set(level[i + 1], HASH);
      next.push(keccak_256(pair));
    }
    level = next;
  }
  return bytesToHex0x(level[0]);
}

// ---------------------------------------------------------------------------------------------
// The builder: events -> leaves

export interface BatchRoots {
  batch_id: number;
  state_root: string;
  fills: FillLeaf[];
  fills_root: string;
  /** The leaves this batch changed, in sort-key order (value null = removed); hex made on first read. */
  readonly state_diff: LeafChange[];
}


interface MarketState extends MarketLeafValue {
  id: string;
}

/** Balance pending-map key: account (< 2^32) and asset (< 2^16) in one safe integer. */
const BALANCE_KEY_SPAN = 65536;

interface PendingOrder extends OrderLeafValue {
  open: boolean;
}

/**
 * What a batch changed, per leaf kind, as plain numbers: events only overwrite these (numeric
 * keys, one small object per leaf at first touch); bytes are encoded once per changed leaf, at
 * `endBatch`.
 */
class PendingSet {
  balance = new Map<number, { available: number; locked: number }>();
  nonce = new Map<number, number>();
  account = new Map<number, string>();
  order = new Map<number, PendingOrder>();
  market = new Set<number>();
  fees: { maker: number; taker: number } | null = null;
  /** account -> [limit, ratio]; limit 0 removes. */
  credit = new Map<number, { limit: number; ratio_ppm: number }>();
  withdrawal = new Map<string, { account: number; nonce: number; asset: number; amount: number }>();
}

export class StateRootBuilder {
  private readonly assets: readonly string[];
  private readonly tree = new BucketTree();
  private pending = new PendingSet();
  private readonly markets: MarketState[] = [];
  private readonly addresses = new Map<number, string>([[0, ZERO_ADDRESS]]);
  private fills: FillLeaf[] = [];
  private batch_id = 0;
  private root_hex: string;
  /** Batches ended so far. */
  batches = 0;

  /** `assets`: the asset symbols in index order (config), for market ids in fill leaves. */
  constructor(assets: readonly string[]) {
    this.assets = assets;
    this.root_hex = bytesToHex0x(this.tree.root());
  }

  /** The root after the last `endBatch` (the empty tree's root before any). */
  stateRoot(): string {
    return this.root_hex;
  }

  /** Batch id of the batch being read (from its BATCH_BEGIN). */
  currentBatchId(): number {
    return this.batch_id;
  }

  /** Number of leaves. */
  leafCount(): number {
    return this.tree.size;
  }

  /** Hash operations done so far (cost accounting). */
  hashCount(): number {
    return this.tree.hashes;
  }

  private address(account: number): string {
    const a = this.addresses.get(account);
    if (a === undefined) throw new Error(`state root: fill of account ${account} before its ACCOUNT event`);
    return a;
  }

  /** Consumes one committed event (any type; markers and rejections change nothing). */
  apply(e: EventFields): void {
    const p = this.pending;
    switch (e.type()) {
      case EventType.BATCH_BEGIN:
        this.batch_id = e.field(0);
        return;
      case EventType.BALANCE: {
        const key = e.field(0) * BALANCE_KEY_SPAN + e.field(1);
        const b = p.balance.get(key);
        if (b === undefined) p.balance.set(key, { available: e.field(2), locked: e.field(3) });
        else {
          b.available = e.field(2);
          b.locked = e.field(3);
        }
        return;
      }
      case EventType.ACCEPTED: {
        const kind = e.field(0);
        if (!SIGNED_KINDS.has(kind)) return;
        const account = e.field(1);
        const nonce = e.field(3);
        p.nonce.set(account, nonce);
        if (kind === KIND_WITHDRAW) {
          p.withdrawal.set(`${account}:${nonce}`, { account, nonce, asset: e.field(10), amount: e.field(11) });
        }
        return;
      }
      case EventType.ACCOUNT: {
        const account = e.field(0);
        const address = e.addressHex();
        this.addresses.set(account, address);
        p.account.set(account, address);
        return;
      }
      case EventType.ORDER_UPDATE: {
        const order_id = e.field(0);
        const status = e.field(4);
        let o = p.order.get(order_id);
        if (o === undefined) {
          o = { open: false, account: 0, market: 0, side: 0, status: 0, price: 0, quantity: 0, filled: 0, remaining: 0 };
          p.order.set(order_id, o);
        }
        o.open = status < STATUS_CLOSED_MIN;
        o.account = e.field(1);
        o.market = e.field(2);
        o.side = e.field(3);
        o.status = status;
        o.price = e.field(5);
        o.quantity = e.field(6);
        o.filled = e.field(7);
        o.remaining = e.field(8);
        return;
      }
      case EventType.MARKET: {
        const m = e.field(0);
        const base = e.field(2);
        const quote = e.field(3);
        const prev = this.markets[m];
        this.markets[m] = {
          id: `${this.assets[base] ?? `#${base}`}-${this.assets[quote] ?? `#${quote}`}`,
          status: e.field(1), base, quote, tick: e.field(4), lot: e.field(5), fee_override: e.field(6),
          maker_bps: e.field(7), taker_bps: e.field(8), mark_price: prev === undefined ? 0 : prev.mark_price,
        };
        p.market.add(m);
        return;
      }
      case EventType.FEES:
        p.fees = { maker: e.field(0), taker: e.field(1) };
        return;
      case EventType.CREDIT:
        p.credit.set(e.field(0), { limit: e.field(1), ratio_ppm: e.field(2) });
        return;
      case EventType.FILL: {
        const m = e.field(1);
        const price = e.field(7);
        const mv = this.markets[m];
        if (mv === undefined) throw new Error(`state root: fill in market ${m} before its MARKET event`);
        mv.mark_price = price;
        p.market.add(m);
        this.fills.push({
          batch_id: this.batch_id,
          fill_id: e.field(0),
          taker_order_id: e.field(2),
          maker_order_id: e.field(3),
          taker: this.address(e.field(4)),
          maker: this.address(e.field(5)),
          market_id: mv.id,
          taker_side: e.field(6) === 0 ? 'bid' : 'ask',
          price,
          quantity: e.field(8),
          taker_fee: e.field(9),
          maker_fee: e.field(10),
        });
        return;
      }
      default:
        return;
    }
  }

  /** The pending changes as encoded leaves (id, kind, key, value or null = remove). */
  private encodePending(p: PendingSet): [string, PendingLeaf][] {
    const out: [string, PendingLeaf][] = [];
    for (const [k, b] of p.balance) {
      const account = Math.floor(k / BALANCE_KEY_SPAN);
      const asset = k - account * BALANCE_KEY_SPAN;
      out.push([`1:${account}:${asset}`, { kind: LeafKind.BALANCE, key: balanceKey(account, asset), value: balanceValue(b.available, b.locked) }]);
    }
    for (const [account, nonce] of p.nonce) {
      out.push([`2:${account}`, { kind: LeafKind.NONCE, key: accountKey(account), value: nonceValue(nonce) }]);
    }
    for (const [account, address] of p.account) {
      out.push([`3:${account}`, { kind: LeafKind.ACCOUNT, key: accountKey(account), value: accountValue(address) }]);
    }
    for (const [order_id, o] of p.order) {
      out.push([`4:${order_id}`, { kind: LeafKind.OPEN_ORDER, key: orderKey(order_id), value: o.open ? orderValue(o) : null }]);
    }
    for (const m of p.market) {
      out.push([`5:${m}`, { kind: LeafKind.MARKET, key: marketKey(m), value: marketValue(this.markets[m]) }]);
    }
    if (p.fees !== null) out.push(['6', { kind: LeafKind.GLOBAL_FEES, key: EMPTY_KEY, value: feesValue(p.fees.maker, p.fees.taker) }]);
    for (const [account, c] of p.credit) {
      out.push([`7:${account}`, { kind: LeafKind.CREDIT, key: accountKey(account), value: c.limit === 0 ? null : creditValue(c.limit, c.ratio_ppm) }]);
    }
    for (const [id, w] of p.withdrawal) {
      out.push([`8:${id}`, { kind: LeafKind.PENDING_WITHDRAWAL, key: withdrawalKey(w.account, w.nonce), value: withdrawalValue(w.asset, w.amount) }]);
    }
    return out;
  }

  /**
   * Closes a batch without hashing: its changes stay pending and merge with the next batches'
   * (last value wins), so a run of batches whose roots are already known (a restart replaying
   * published batches) costs one rehash of what they changed, at the next `endBatch`.
   */
  skipBatch(): void {
    this.fills = [];
    this.batches++;
  }

  /** Closes the batch: hashes what it changed and returns its roots and fills. */
  endBatch(): BatchRoots {
    const pending = this.pending;
    this.pending = new PendingSet();
    const changes = this.tree.update(this.encodePending(pending));
    this.root_hex = bytesToHex0x(this.tree.root());
    const fills = this.fills;
    this.fills = [];
    const fills_root = fills.length === 0 ? EMPTY_FILLS_ROOT : FillsTree.build(fills).root();
    this.batches++;
    let diff: LeafChange[] | null = null;
    return {
      batch_id: this.batch_id, state_root: this.root_hex, fills, fills_root,
      get state_diff(): LeafChange[] {
        if (diff === null) diff = changesToHex(changes);
        return diff;
      },
    };
  }

  /** Root the state would have after applying `changes` to it now (between batches). */
  rootAfter(changes: readonly LeafChange[]): string {
    return bytesToHex0x(this.tree.rootAfter(changes));
  }

  /**
   * Root the state would have had if the last batch had made `changes` instead of what it made
   * (fraud proofs: does the operator's published state diff reproduce its claimed root?).
   */
  rootIfLastBatchMade(changes: readonly LeafChange[]): string {
    return bytesToHex0x(this.tree.rootAfter([...changesToHex(this.tree.last_revert), ...changes]));
  }

  /** The value a leaf had before the last batch (hex; null = absent), when that batch changed it. */
  previousValue(kind: number, key_hex: string): string | null | undefined {
    const k = key_hex.toLowerCase();
    const r = this.tree.last_revert.find((c) => c.kind === kind && hex(c.key) === k);
    return r === undefined ? undefined : r.value === null ? null : hex(r.value);
  }

  /** The current leaf of a change's key (for fraud proofs), or null when absent. */
  leafOf(kind: number, key_hex: string): LeafRecord | null {
    for (const e of this.tree.all()) {
      if (e.kind === kind && hex(e.key) === key_hex.toLowerCase()) return recordOf(e);
    }
    return null;
  }

  /** Every leaf, canonical order (bucket, then sort key), decoded: for debugging fraud proofs. */
  leaves(): LeafRecord[] {
    const out: LeafRecord[] = [];
    for (const e of this.tree.all()) out.push(recordOf(e));
    return out;
  }

  /** Every leaf in raw form (tests: recompute the root from scratch). */
  rawLeaves(): RawLeaf[] {
    const out: RawLeaf[] = [];
    for (const e of this.tree.all()) out.push({ kind: e.kind, key: e.key, value: e.value });
    return out;
  }
}

function recordOf(e: Entry): LeafRecord {
  const d = describeLeaf(e.kind, e.key, e.value);
  return {
    id: d.id, kind: LEAF_KIND_NAMES[e.kind] ?? String(e.kind), key: hex(e.key), value: hex(e.value),
    leaf_hash: hex(e.hash), sort_key: hex(e.sort_key), bucket: e.bucket, fields: d.fields,
  };
}

/** Readable form of a published or recomputed change (fraud proofs). */
export function describeChange(c: LeafChange | null): Record<string, unknown> | null {
  if (c === null) return null;
  const key = hexToBytes(c.key, undefined, 'leaf key');
  const value = c.value === null ? null : hexToBytes(c.value, undefined, 'leaf value');
  const d = describeLeaf(c.kind, key, value);
  return { id: d.id, kind: LEAF_KIND_NAMES[c.kind] ?? String(c.kind), key: c.key, value: c.value, fields: value === null ? 'removed' : d.fields };
}

/** First leaf on which two state diffs disagree (canonical order = by leaf id string). */
export function firstDifferingChange(ours: readonly LeafChange[], theirs: readonly LeafChange[]):
  { id: string; expected: Record<string, unknown> | null; found: Record<string, unknown> | null } | null {
  const idOf = (c: LeafChange): string => `${c.kind}:${c.key}`;
  const a = new Map(ours.map((c) => [idOf(c), c]));
  const b = new Map(theirs.map((c) => [idOf(c), c]));
  // Walk in our order (sort-key order), then theirs for leaves only they changed.
  for (const c of ours) {
    const t = b.get(idOf(c));
    if (t === undefined || t.value !== c.value) {
      return { id: String(describeChange(c)?.id), expected: describeChange(c), found: t === undefined ? null : describeChange(t) };
    }
  }
  for (const t of theirs) {
    if (!a.has(idOf(t))) return { id: String(describeChange(t)?.id), expected: null, found: describeChange(t) };
  }
  return null;
}
