// What the DA layer stores and serves for each committed batch (docs/verifiability.md, "Batch
// header" and "DA store"), and its JSON wire form (`GET /da/batches/...`).
import { RECORD_WORDS } from '../ring/records.js';
import { encodeFillLeaf, type FillLeaf } from './fills_tree.js';
import { tryHexToBytes } from './hex.js';
import type { LeafChange } from './state_root.js';

export interface BatchHeader {
  batch_id: number;
  /** State root after the previous batch (batch 0 = genesis: markets and fees of the config). */
  prev_state_root: string;
  state_root: string;
  /** OpenZeppelin-compatible root over `fills` (32 zero bytes when there are none). */
  fills_root: string;
  /** keccak256 of the batch's input records (the journal's bytes). */
  input_hash: string;
  /** The batch time (ms since epoch) the sequencer stamped. */
  timestamp: number;
}

export interface PublishedBatch {
  header: BatchHeader;
  /** The batch's request records, exactly as journaled (count x RECORD_WORDS words, little-endian). */
  inputs_hex: string;
  fills: FillLeaf[];
  /**
   * The state leaves the batch changed, in sort-key order (value null = removed). Not part of the
   * header: lets a verifier name the first leaf on which it and the operator disagree.
   */
  state_diff?: LeafChange[];
  /**
   * The same diff in binary form (src/da/state_diff.ts encodeChanges), when the producer has it
   * (the DA publisher): the DA store keeps these bytes instead of hex. Not part of the JSON form.
   */
  readonly state_diff_bytes?: Uint8Array;
}

export const RECORD_BYTES = RECORD_WORDS * 4;

/** A batch's input bytes as its `inputs_hex` (lowercase, no prefix). */
export function inputsHex(inputs: Uint8Array): string {
  return Buffer.from(inputs.buffer, inputs.byteOffset, inputs.byteLength).toString('hex');
}

/**
 * `batch` made a published batch whose `inputs_hex` is made from `inputs` on its first read, once:
 * hex-encoding every batch's inputs was ~4% of the DA worker (profile), and most batches' hex is
 * never read. `inputs` must still hold the batch's bytes when the hex is first read. The getter is
 * defined on `batch` itself (its other fields, getters included, are left as they are).
 */
export function withLazyInputsHex(batch: Omit<PublishedBatch, 'inputs_hex'>, inputs: Uint8Array): PublishedBatch {
  let hex: string | null = null;
  return Object.defineProperty(batch, 'inputs_hex', {
    get: (): string => (hex ??= inputsHex(inputs)),
    enumerable: true,
  }) as PublishedBatch;
}

/** JSON form: ids as decimal strings (like every batch id of the API), the rest as stored. */
export function batchToJson(b: PublishedBatch): Record<string, unknown> {
  return {
    header: { ...b.header, batch_id: String(b.header.batch_id) },
    inputs_hex: b.inputs_hex,
    fills: b.fills,
    state_diff: b.state_diff ?? [],
  };
}

export class MalformedBatch extends Error {
  override name = 'MalformedBatch';
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

const HASH_HEX = /^0x[0-9a-f]{64}$/;

function hash32(x: unknown, what: string): string {
  if (typeof x !== 'string' || !HASH_HEX.test(x.toLowerCase())) throw new MalformedBatch(`${what} must be 0x + 64 hex digits`);
  return x.toLowerCase();
}

function intField(x: unknown, what: string): number {
  const n = typeof x === 'string' && /^(0|[1-9][0-9]{0,15})$/.test(x) ? Number(x) : x;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new MalformedBatch(`${what} must be an integer`);
  return n;
}

/** Parses (and checks the shape of) a batch in JSON form; throws MalformedBatch. */
export function batchFromJson(x: unknown): PublishedBatch {
  if (!isObject(x) || !isObject(x.header)) throw new MalformedBatch('batch must be an object with a header');
  const h = x.header;
  const header: BatchHeader = {
    batch_id: intField(h.batch_id, 'header.batch_id'),
    prev_state_root: hash32(h.prev_state_root, 'header.prev_state_root'),
    state_root: hash32(h.state_root, 'header.state_root'),
    fills_root: hash32(h.fills_root, 'header.fills_root'),
    input_hash: hash32(h.input_hash, 'header.input_hash'),
    timestamp: intField(h.timestamp, 'header.timestamp'),
  };
  if (typeof x.inputs_hex !== 'string' || tryHexToBytes(x.inputs_hex) === null) throw new MalformedBatch('inputs_hex must be hex');
  if (!Array.isArray(x.fills)) throw new MalformedBatch('fills must be an array');
  const fills: FillLeaf[] = x.fills.map((f: unknown, i: number) => {
    if (!isObject(f)) throw new MalformedBatch(`fills[${i}] must be an object`);
    const leaf = {
      batch_id: f.batch_id, fill_id: f.fill_id, taker_order_id: f.taker_order_id, maker_order_id: f.maker_order_id,
      taker: f.taker, maker: f.maker, market_id: f.market_id, taker_side: f.taker_side, price: f.price,
      quantity: f.quantity, taker_fee: f.taker_fee, maker_fee: f.maker_fee,
    } as FillLeaf;
    try {
      encodeFillLeaf(leaf);
    } catch (e) {
      throw new MalformedBatch(`fills[${i}]: ${(e as Error).message}`);
    }
    return leaf;
  });
  let state_diff: LeafChange[] | undefined;
  if (x.state_diff !== undefined) {
    if (!Array.isArray(x.state_diff)) throw new MalformedBatch('state_diff must be an array');
    state_diff = x.state_diff.map((c: unknown, i: number) => {
      if (!isObject(c) || typeof c.kind !== 'number' || typeof c.key !== 'string' || tryHexToBytes(c.key) === null ||
        !(c.value === null || (typeof c.value === 'string' && tryHexToBytes(c.value) !== null))) {
        throw new MalformedBatch(`state_diff[${i}] must be {kind, key (hex), value (hex or null)}`);
      }
      return { kind: c.kind, key: c.key.toLowerCase(), value: c.value === null ? null : (c.value as string).toLowerCase() };
    });
  }
  return { header, inputs_hex: x.inputs_hex.toLowerCase().replace(/^0x/, ''), fills, state_diff };
}
