// The DA store's record of one batch (database `batches`, msgpack; docs/verifiability.md "DA store"):
// how a published batch is stored and read back. Two forms, told apart per record:
//   - compact (written since 2026-11-29): a msgpack array [COMPACT_FORM, batch_id, prev_state_root,
//     state_root, fills_root, input_hash (32 bytes each), timestamp, inputs (bytes), fills (each
//     [batch_id, fill_id, taker_order_id, maker_order_id, taker, maker (20 bytes each), market_id,
//     taker_side, price, quantity, taker_fee, maker_fee]), state_diff];
//   - object (before): {header, inputs, fills, state_diff} with the header's and fills' hex strings
//     as published. Still written for a batch whose shape the compact form cannot hold exactly.
// Why: the store's commits share the disk with the journal's durable appends and lengthen their
// tail by the bytes they write (docs/benchmarks.md "h26j"). lmdb-js writes the object form's key
// names into every record (its uint32-keyed database has no shared msgpack structures): ~110 bytes,
// and each 32-byte root as 0x + 64 hex digits: 68 bytes instead of 34. A lone order's batch was
// 1,212 bytes, 3 to a 4 KB leaf page; compact ~970, 4 to a page (docs/benchmarks.md "h26b").
import { hexToBytes } from './hex.js';
import { toHex0x } from '../util/hex.js';
import type { FillLeaf } from './fills_tree.js';
import { inputsHex, type BatchHeader, type PublishedBatch } from './published.js';
import type { LeafChange } from './state_root.js';
import { decodeChanges } from './state_diff.js';

/** A batch's state diff as stored: its binary form (state_diff.ts encodeChanges), or the hex objects. */
export type StoredDiff = Uint8Array | LeafChange[];

/** The object form (every record before 2026-11-29; since, a batch of another shape: compactable()). */
export interface ObjectRecord {
  header: BatchHeader;
  inputs: Uint8Array;
  fills: FillLeaf[];
  state_diff: StoredDiff;
}

type CompactFill = [number, number, number, number, Uint8Array, Uint8Array, string, string, number, number, number, number];
type CompactRecord = [typeof COMPACT_FORM, number, Uint8Array, Uint8Array, Uint8Array, Uint8Array, number, Uint8Array, CompactFill[], StoredDiff];

/** A record of database `batches`, in either form. */
export type StoredRecord = ObjectRecord | CompactRecord;

/** The compact form's first element: its version (an array record of another version is refused, never misread). */
const COMPACT_FORM = 1;

/** The published key orders the compact form rebuilds (the JSON served must be byte-identical). */
const HEADER_KEYS = ['batch_id', 'prev_state_root', 'state_root', 'fills_root', 'input_hash', 'timestamp'] as const;
const FILL_KEYS = ['batch_id', 'fill_id', 'taker_order_id', 'maker_order_id', 'taker', 'maker', 'market_id', 'taker_side',
  'price', 'quantity', 'taker_fee', 'maker_fee'] as const;
const HASH32_HEX = /^0x[0-9a-f]{64}$/;
const ADDRESS_HEX = /^0x[0-9a-f]{40}$/;

function sameKeys(o: object, keys: readonly string[]): boolean {
  const own = Object.keys(o);
  if (own.length !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) if (own[i] !== keys[i]) return false;
  return true;
}

/**
 * Whether the compact form holds the batch exactly: the published key orders, lowercase 0x hex of
 * the right lengths (what the publisher makes; any other case or length would not come back the
 * same from bytes), numbers where numbers are. Anything else is stored in the object form.
 */
function compactable(header: BatchHeader, fills: readonly FillLeaf[]): boolean {
  if (!sameKeys(header, HEADER_KEYS) || typeof header.batch_id !== 'number' || typeof header.timestamp !== 'number') return false;
  for (const h of [header.prev_state_root, header.state_root, header.fills_root, header.input_hash]) {
    if (typeof h !== 'string' || !HASH32_HEX.test(h)) return false;
  }
  for (const f of fills) {
    if (typeof f !== 'object' || f === null || !sameKeys(f, FILL_KEYS)) return false;
    if (typeof f.taker !== 'string' || !ADDRESS_HEX.test(f.taker) || typeof f.maker !== 'string' || !ADDRESS_HEX.test(f.maker)) return false;
    if (typeof f.market_id !== 'string' || typeof f.taker_side !== 'string') return false;
    for (const n of [f.batch_id, f.fill_id, f.taker_order_id, f.maker_order_id, f.price, f.quantity, f.taker_fee, f.maker_fee]) {
      if (typeof n !== 'number') return false;
    }
  }
  return true;
}

/** The record to store for `batch` (`inputs`: its input bytes, which the record keeps as a view). */
export function recordOf(batch: PublishedBatch, inputs: Uint8Array, state_diff: StoredDiff): StoredRecord {
  const h = batch.header;
  if (!compactable(h, batch.fills)) return { header: h, inputs, fills: batch.fills, state_diff };
  const fills: CompactFill[] = batch.fills.map((f) => [
    f.batch_id, f.fill_id, f.taker_order_id, f.maker_order_id, hexToBytes(f.taker, 20), hexToBytes(f.maker, 20), f.market_id,
    f.taker_side, f.price, f.quantity, f.taker_fee, f.maker_fee,
  ]);
  return [COMPACT_FORM, h.batch_id, hexToBytes(h.prev_state_root, 32), hexToBytes(h.state_root, 32), hexToBytes(h.fills_root, 32),
    hexToBytes(h.input_hash, 32), h.timestamp, inputs, fills, state_diff];
}

/**
 * A stored record in its published form (the hex of its bytes made now: a record read from LMDB
 * views lmdb-js's reused read buffer, so nothing of it is kept).
 */
export function publishedOf(s: StoredRecord): PublishedBatch {
  if (!Array.isArray(s)) {
    return { header: s.header, inputs_hex: inputsHex(s.inputs), fills: s.fills, state_diff: diffOf(s.state_diff) };
  }
  if (s[0] !== COMPACT_FORM) throw new Error(`DA store: a batch record of form ${String(s[0])}, this server reads form ${COMPACT_FORM}`);
  const header: BatchHeader = {
    batch_id: s[1], prev_state_root: toHex0x(s[2]), state_root: toHex0x(s[3]), fills_root: toHex0x(s[4]),
    input_hash: toHex0x(s[5]), timestamp: s[6],
  };
  const fills: FillLeaf[] = s[8].map((f) => ({
    batch_id: f[0], fill_id: f[1], taker_order_id: f[2], maker_order_id: f[3], taker: toHex0x(f[4]), maker: toHex0x(f[5]),
    market_id: f[6], taker_side: f[7] as FillLeaf['taker_side'], price: f[8], quantity: f[9], taker_fee: f[10], maker_fee: f[11],
  }));
  return { header, inputs_hex: inputsHex(s[7]), fills, state_diff: diffOf(s[9]) };
}

function diffOf(d: StoredDiff): LeafChange[] {
  return d instanceof Uint8Array ? decodeChanges(d) : d;
}
