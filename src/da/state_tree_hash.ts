// The state trie's hashing (docs/verifiability.md, "State root"): a leaf's hash and path, a
// node's preimage, and the root of a leaf set computed from scratch by the definition
//
//   H(S, d) = 32 zero bytes                                   if S is empty
//           = leaf_hash of its leaf                           if S holds one leaf
//           = keccak256(0x00 || H(S0,d+1) || .. || H(S3,d+1))  otherwise (Si: digit d of the path is i)
//   state_root = H(all leaves, 0), path = keccak256(kind || key) as 128 base-4 digits.
//
// `stateRootOfLeaves` is the verifier's and the tests' reference; src/da/state_tree.ts keeps the
// same root incrementally.
import { compareBytes } from './hex.js';
import { toHex0x } from '../util/hex.js';
import { KECCAK_INPUT, keccak256Into, keccak256OfInput, keccak256OfWords } from './keccak.js';
import type { LeafBatch } from './leaf_batch.js';
import { HASH, type RawLeaf } from './state_leaves.js';

export const ARITY = 4;
/** Base-4 digits in a 256-bit path. */
export const DIGITS = 128;
/** Node preimage: the 0x00 prefix and 4 child hashes. */
export const NODE_BYTES = 1 + ARITY * HASH;

/** Digit d (0 = most significant) of the 32-byte path at `paths[at..]`. */
export function digitOf(paths: Uint8Array, at: number, d: number): number {
  return (paths[at + (d >> 2)] >> (6 - 2 * (d & 3))) & 3;
}

/**
 * Writes kind || key || value into keccak's own input buffer (KECCAK_INPUT: no scratch copy, no
 * allocation; leaves are far below its 16 KiB); returns the preimage's length.
 */
function encodeLeaf(kind: number, key: Uint8Array, value: Uint8Array | null): number {
  if (!Number.isInteger(kind) || kind < 1 || kind > 255) throw new RangeError(`state root: leaf kind ${kind} is not 1..255 (0x00 prefixes nodes)`);
  const n = 1 + key.length + (value === null ? 0 : value.length);
  if (n > KECCAK_INPUT.length) throw new RangeError(`state root: leaf of ${n} bytes exceeds ${KECCAK_INPUT.length}`);
  KECCAK_INPUT[0] = kind;
  KECCAK_INPUT.set(key, 1);
  if (value !== null) KECCAK_INPUT.set(value, 1 + key.length);
  return n;
}

/**
 * keccak256 of the first `length` bytes of batch entry i's kind || key || value (1 + its key's
 * length: its path; 1 + key + value: its leaf hash) into `out[at..]`, straight from the batch's
 * aligned words (LeafBatch keeps the kind before the key at a multiple of 4): no byte loop into
 * keccak's input (the byte loop and the input's copy before this were ~4.4 k instructions per
 * request of the DA core at the load bench's max-rate batch (callgrind, h22d)).
 */
export function batchHashInto(batch: LeafBatch, i: number, length: number, out: Uint8Array, at: number): void {
  // The kind (1..255) was checked by LeafBatch.add, the only writer of an entry.
  if (1 + length > KECCAK_INPUT.length) throw new RangeError(`state root: leaf of ${1 + length} bytes exceeds ${KECCAK_INPUT.length}`);
  keccak256OfWords(batch.words, (batch.at[i] - 1) >> 2, 1 + length, out, at);
}

/** leaf_hash = keccak256(kind || key || value) into `out[at..]`. */
export function leafHashInto(kind: number, key: Uint8Array, value: Uint8Array, out: Uint8Array, at: number): void {
  keccak256OfInput(encodeLeaf(kind, key, value), out, at);
}

/** path = keccak256(kind || key) into `out[at..]`. */
export function pathInto(kind: number, key: Uint8Array, out: Uint8Array, at: number): void {
  keccak256OfInput(encodeLeaf(kind, key, null), out, at);
}

/**
 * H(S, d) of leaves `order[lo..hi)` (indices into `paths`/`hashes`, sorted by path, distinct
 * paths sharing digits 0..d-1), written to `out[off..]`: the definition above, from scratch.
 */
export function hashSorted(paths: Uint8Array, hashes: Uint8Array, order: ArrayLike<number>, lo: number, hi: number, d: number, out: Uint8Array, off: number): void {
  if (hi === lo) {
    out.fill(0, off, off + HASH);
    return;
  }
  if (hi - lo === 1) {
    out.set(hashes.subarray(order[lo] * HASH, order[lo] * HASH + HASH), off);
    return;
  }
  if (d === DIGITS) throw new Error('state root: two leaves with the same path (the same kind and key)');
  const node = new Uint8Array(NODE_BYTES);
  let s = lo;
  for (let digit = 0; digit < ARITY; digit++) {
    let e = s;
    while (e < hi && digitOf(paths, order[e] * HASH, d) === digit) e++;
    hashSorted(paths, hashes, order, s, e, d + 1, node, 1 + HASH * digit);
    s = e;
  }
  keccak256Into(node, 0, NODE_BYTES, out, off);
}

/** Indices 0..n-1 sorted by their 32-byte paths. */
export function sortByPath(paths: Uint8Array, n: number): Int32Array {
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((x, y) => compareBytes(paths, x * HASH, paths, y * HASH, HASH));
  return Int32Array.from(order);
}

/** The state root of a leaf set, from scratch (the verifier's and the tests' reference). */
export function stateRootOfLeaves(leaves: readonly RawLeaf[]): string {
  const n = leaves.length;
  const paths = new Uint8Array(n * HASH);
  const hashes = new Uint8Array(n * HASH);
  leaves.forEach((l, i) => {
    pathInto(l.kind, l.key, paths, i * HASH);
    leafHashInto(l.kind, l.key, l.value, hashes, i * HASH);
  });
  const root = new Uint8Array(HASH);
  hashSorted(paths, hashes, sortByPath(paths, n), 0, n, 0, root, 0);
  return toHex0x(root);
}
