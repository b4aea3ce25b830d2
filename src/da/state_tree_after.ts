// The root the state tree would have after some changes, without changing it (fraud proofs:
// `StateRootBuilder.rootAfter`, `rootIfLastBatchMade`): untouched subtrees' hashes are read from
// the tree, the touched ones recomputed from scratch (state_tree_hash.ts).
import { compareBytes, hexToBytes } from './hex.js';
import { toHex0x } from '../util/hex.js';
import { keccak256Into } from './keccak.js';
import { HASH, type LeafChange } from './state_leaves.js';
import { ARITY, NODE_BYTES, digitOf, hashSorted, leafHashInto, pathInto } from './state_tree_hash.js';

/** What the computation reads of a StateTree (src/da/state_tree.ts: refs, rows, leaf paths). */
export interface TrieReader {
  /** 0 empty, > 0 internal node, < 0 leaf slot -(slot+1). */
  root_ref: number;
  root_hash: Uint8Array;
  /** Node rows; `hashAt(node, digit)` is where child digit's hash is. */
  rows: Uint8Array;
  /** Slot s's path at s x 32. */
  paths: Uint8Array;
  kid(node: number, digit: number): number;
  hashAt(node: number, digit: number): number;
}

interface Item { path: Uint8Array; hash: Uint8Array | null }

/** Root after `changes` (value null = remove; for one key the last change wins). */
export function rootAfterChanges(t: TrieReader, changes: readonly LeafChange[]): Uint8Array {
  const by_path = new Map<string, Item>();
  for (const ch of changes) {
    const key = hexToBytes(ch.key, undefined, 'leaf key');
    const path = new Uint8Array(HASH);
    pathInto(ch.kind, key, path, 0);
    let hash: Uint8Array | null = null;
    if (ch.value !== null) {
      hash = new Uint8Array(HASH);
      leafHashInto(ch.kind, key, hexToBytes(ch.value, undefined, 'leaf value'), hash, 0);
    }
    by_path.set(toHex0x(path), { path, hash });
  }
  const items = [...by_path.values()].sort((a, b) => compareBytes(a.path, 0, b.path, 0, HASH));
  const out = new Uint8Array(HASH);
  merge(t, t.root_ref, 0, items, 0, items.length, out, 0, t.root_hash, 0);
  return out;
}

/**
 * H of the subtree `ref` at depth d with `items[lo..hi)` (sorted, routed here) applied, into
 * `out[off..]`; its unchanged hash is at `ex[ex_off..]`. Returns its leaf count, capped at 2.
 */
function merge(
  t: TrieReader, ref: number, d: number, items: readonly Item[], lo: number, hi: number,
  out: Uint8Array, off: number, ex: Uint8Array, ex_off: number,
): number {
  if (lo === hi) {
    out.set(ex.subarray(ex_off, ex_off + HASH), off);
    return ref === 0 ? 0 : ref < 0 ? 1 : 2;
  }
  if (ref <= 0) {
    // An empty position or a single leaf (its hash is the position's): the few leaves there, from scratch.
    const set: { path: Uint8Array; hash: Uint8Array }[] = [];
    if (ref < 0) {
      const slot = -ref - 1;
      const path = t.paths.subarray(slot * HASH, slot * HASH + HASH);
      if (!items.slice(lo, hi).some((it) => compareBytes(it.path, 0, path, 0, HASH) === 0)) {
        set.push({ path, hash: ex.subarray(ex_off, ex_off + HASH) });
      }
    }
    for (let i = lo; i < hi; i++) {
      const h = items[i].hash;
      if (h !== null) set.push({ path: items[i].path, hash: h });
    }
    set.sort((a, b) => compareBytes(a.path, 0, b.path, 0, HASH));
    const paths = new Uint8Array(set.length * HASH);
    const hashes = new Uint8Array(set.length * HASH);
    set.forEach((l, i) => {
      paths.set(l.path, i * HASH);
      hashes.set(l.hash, i * HASH);
    });
    hashSorted(paths, hashes, Int32Array.from(set.keys()), 0, set.length, d, out, off);
    return Math.min(set.length, 2);
  }
  const node = new Uint8Array(NODE_BYTES);
  let total = 0;
  let single = 0;
  let s = lo;
  for (let digit = 0; digit < ARITY; digit++) {
    let e = s;
    while (e < hi && digitOf(items[e].path, 0, d) === digit) e++;
    const at = 1 + HASH * digit;
    const n = merge(t, t.kid(ref, digit), d + 1, items, s, e, node, at, t.rows, t.hashAt(ref, digit));
    if (n === 1) single = at;
    total += n;
    s = e;
  }
  if (total === 1) out.set(node.subarray(single, single + HASH), off);
  else if (total === 0) out.fill(0, off, off + HASH);
  else keccak256Into(node, 0, NODE_BYTES, out, off);
  return Math.min(total, 2);
}
