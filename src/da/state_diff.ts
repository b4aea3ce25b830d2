// State diffs: their compact binary form (what the DA store keeps), and for fraud proofs a change
// decoded into named fields and the first leaf on which two diffs (re-executed and published)
// disagree.
import { hexToBytes } from './hex.js';
import { LeafBatch, REMOVED_LEAF } from './leaf_batch.js';
import { LEAF_KIND_NAMES, describeLeaf, hex, type LeafChange, type RawChange } from './state_leaves.js';

/** Value length marking a removed leaf in the binary form. */
const REMOVED = 0xffff;

/**
 * A batch's changes in one buffer: per change kind (u8), key length (u8), key, value length
 * (u16 big-endian, 0xffff = removed), value. The DA worker stores this instead of the hex objects
 * of `changesToHex`: hex-encoding every changed leaf and msgpack-packing the strings was ~8% of
 * its CPU at max rate (profile of bench/load.ts, 2026-11-26); the hex is made when a batch is read.
 */
export function encodeChanges(changes: readonly RawChange[]): Uint8Array {
  const batch = new LeafBatch();
  for (const c of changes) batch.push(0, c);
  return encodeLeafBatch(batch, Array.from({ length: batch.count }, (_, i) => i), batch.count);
}

/** The binary form of leaves `order[0..n)` of `batch`, in that order (the state tree's diff). */
export function encodeLeafBatch(batch: LeafBatch, order: ArrayLike<number>, n: number): Uint8Array {
  let size = 0;
  for (let j = 0; j < n; j++) {
    const i = order[j];
    size += 4 + batch.key_len[i] + Math.max(batch.value_len[i], 0);
  }
  const out = new Uint8Array(size);
  const src = batch.bytes;
  let at = 0;
  for (let j = 0; j < n; j++) {
    const i = order[j];
    const key_len = batch.key_len[i];
    const value_len = batch.value_len[i];
    if (value_len >= REMOVED) throw new RangeError('state diff: value too long to encode');
    out[at] = batch.kinds[i];
    out[at + 1] = key_len;
    const from = batch.at[i];
    at += 2;
    // Byte loops, not set(subarray(..)): no view per change (keys <= 12 bytes, values ~8-64).
    for (let k = 0; k < key_len; k++) out[at + k] = src[from + k];
    at += key_len;
    const len = value_len === REMOVED_LEAF ? REMOVED : value_len;
    out[at] = len >> 8;
    out[at + 1] = len & 0xff;
    at += 2;
    if (value_len !== REMOVED_LEAF) {
      const v = from + key_len;
      for (let k = 0; k < value_len; k++) out[at + k] = src[v + k];
      at += value_len;
    }
  }
  return out;
}

/** The published (hex) form of {@link encodeChanges}' bytes. Throws on truncated or trailing bytes. */
export function decodeChanges(b: Uint8Array): LeafChange[] {
  const out: LeafChange[] = [];
  let at = 0;
  const need = (n: number): void => {
    if (at + n > b.length) throw new RangeError(`state diff: truncated at byte ${at}`);
  };
  while (at < b.length) {
    need(2);
    const kind = b[at];
    const key_len = b[at + 1];
    at += 2;
    need(key_len + 2);
    const key = hex(b.subarray(at, at + key_len));
    at += key_len;
    const len = (b[at] << 8) | b[at + 1];
    at += 2;
    let value: string | null = null;
    if (len !== REMOVED) {
      need(len);
      value = hex(b.subarray(at, at + len));
      at += len;
    }
    out.push({ kind, key, value });
  }
  return out;
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
