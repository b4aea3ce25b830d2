// The state tree (docs/verifiability.md, "State root"): a compact sparse Merkle trie of arity 4
// over the leaves' paths, path = keccak256(kind || key) read as 128 base-4 digits.
//
//   H(S, d) = 32 zero bytes                                   if S is empty
//           = leaf_hash of its leaf                           if S holds one leaf
//           = keccak256(0x00 || H(S0,d+1) || .. || H(S3,d+1))  otherwise (Si: digit d of the path is i)
//   state_root = H(all leaves, 0)
//
// A function of the leaf set only (no history, no insertion order). Arity 4 because a node's
// preimage, 1 + 4 x 32 = 129 bytes, is one keccak block (rate 136): half the depth of a binary
// tree for ~10% more per hash (0.85 against 0.77 µs, bench/state_root.ts), so about half the
// hashing per touched leaf. The 0x00 prefix keeps node and leaf preimages apart (leaf kinds
// start at 0x01). Depth ~ log4(leaves) + 1: ~8 at 10,000 leaves, ~11 at 1,000,000.
//
// Storage: typed arrays, no object per node. Internal node n (n >= 1) has 4 child refs in `kids`
// (0 empty, > 0 internal node, < 0 leaf slot -(slot+1)), its 129-byte preimage in `pre` (132
// bytes apart) and in `dirty` which of its children lie on a changed path; a child's hash is
// written into its parent's preimage, so hashing a node is one in-place call. Leaves live in
// slots (path, leaf hash, kind and key in typed arrays, values in src/da/slot_values.ts). A
// batch's changes (a LeafBatch, src/da/leaf_batch.ts) walk their paths (marking them, splitting
// or collapsing single-leaf subtrees), then `finish` hashes each marked node once, children
// first: upper levels are shared by the batch's leaves. Hashing and the from-scratch root:
// state_tree_hash.ts.
import { bytesToHex0x, compareBytes, hexToBytes } from './hex.js';
import { keccak256Into, keccak256OfWords } from './keccak.js';
import { HASH, type LeafChange, type PendingLeaf, type RawChange } from './state_leaves.js';
import type { LeafId } from './leaf_ids.js';
import { grown, LeafBatch, REMOVED_LEAF } from './leaf_batch.js';
import { encodeLeafBatch } from './state_diff.js';
import { LeafIndex } from './leaf_index.js';
import { SlotValues } from './slot_values.js';
import { ARITY, DIGITS, NODE_BYTES, digitOf, hashSorted, kindHashInto, leafHashInto, pathInto } from './state_tree_hash.js';

const INITIAL_NODES = 1024;
/**
 * Bytes per node in `pre`: the 129-byte preimage padded to a whole number of 32-bit words, so a
 * node is copied into keccak's input as 33 words (keccak256OfWords) instead of through a fresh
 * `subarray` view per hash.
 */
const NODE_STRIDE = 132;
const NODE_WORDS = NODE_STRIDE / 4;
const INITIAL_LEAVES = 1024;
/**
 * Key bytes kept in the slot itself (the longest key, a pending withdrawal's, is 12). A key or
 * value as its own Uint8Array cost ~180 bytes of heap (the typed array and its buffer object),
 * two per leaf: with ~2 leaves per account (ACCOUNT and NONCE) that was ~700 bytes of the DA
 * thread's ~1 KB per account (issue 20's wallet flood); in slots it is 12 + 32 bytes a leaf.
 */
const KEY_INLINE_BYTES = 12;

/** See StateTree.proofOfLeaf. */
export interface LeafProof {
  value: Uint8Array;
  /** 3 per level, lowest level first. */
  siblings: Uint8Array[];
}

/** A leaf as stored (copies). */
export interface LeafView {
  kind: number;
  key: Uint8Array;
  value: Uint8Array;
  /** keccak256(kind || key): the leaf's path. */
  sort_key: Uint8Array;
  hash: Uint8Array;
}

/** What `update` changed: how many leaves, in the binary diff form (state_diff.ts). */
export interface TreeDiff {
  count: number;
  bytes: Uint8Array;
}

/** Copies 32 bytes (a hash) without a `subarray` view (see keccak256OfWords for why). */
function copyHash(src: Uint8Array, at: number, dst: Uint8Array, off: number): void {
  for (let i = 0; i < HASH; i++) dst[off + i] = src[at + i];
}

/** The leaf set and its trie, updated a batch at a time. */
export class StateTree {
  // Internal nodes (index 0 unused: ref 0 means empty).
  private kids = new Int32Array(INITIAL_NODES * ARITY);
  private pre = new Uint8Array(INITIAL_NODES * NODE_STRIDE);
  private pre32 = new Int32Array(this.pre.buffer);
  /**
   * Per node, which children (bit = digit) lie on a changed path; 0xf for a new node, 0 when
   * clean. `rehash` follows only these, instead of reading every internal child's own flag: at
   * 1,000,000 leaves those reads of clean siblings were cache misses, a good part of the tree's
   * cost per changed leaf that grows with the state (bench/state_root.ts, 1M / 10k ratio).
   */
  private dirty = new Uint8Array(INITIAL_NODES);
  private node_count = 1;
  private readonly free_nodes: number[] = [];
  // Leaf slots.
  private paths = new Uint8Array(INITIAL_LEAVES * HASH);
  private lhash = new Uint8Array(INITIAL_LEAVES * HASH);
  private kinds = new Uint8Array(INITIAL_LEAVES);
  private key_bytes = new Uint8Array(INITIAL_LEAVES * KEY_INLINE_BYTES);
  private key_len = new Uint8Array(INITIAL_LEAVES);
  /** Each slot's value (src/da/slot_values.ts). */
  private readonly values = new SlotValues(INITIAL_LEAVES);
  private slot_count = 0;
  private readonly free_slots: number[] = [];
  /** Builder leaf id -> slot. */
  private readonly index = new LeafIndex();
  private root_ref = 0;
  private readonly root_hash = new Uint8Array(HASH);
  // The path walked by `descend`: node and digit per depth.
  private readonly walk_nodes = new Int32Array(DIGITS + 1);
  private readonly walk_digits = new Uint8Array(DIGITS + 1);
  private walk_depth = 0;
  private readonly probe = new Uint8Array(HASH);
  /** keccak calls (leaf, path, node): cost accounting for benches. */
  hashes = 0;
  /** Changes that undo the last `update` (kept only with keep_revert). */
  private last_revert_changes: RawChange[] = [];
  /**
   * Whether `update` keeps each changed leaf's previous value (`last_revert`: fraud proofs, the
   * verifier). The DA publisher never asks, and the copies were ~5% of the DA thread's allocated
   * bytes (sampling heap profile, 2026-11-26).
   */
  private readonly keep_revert: boolean;

  constructor(opts: { keep_revert?: boolean } = {}) {
    this.keep_revert = opts.keep_revert ?? true;
  }

  /** Changes that undo the last `update` (previous values; null = the leaf did not exist). */
  get last_revert(): RawChange[] {
    if (!this.keep_revert) throw new Error('state tree: built without keep_revert, the last batch cannot be reverted');
    return this.last_revert_changes;
  }

  get size(): number {
    return this.index.size;
  }

  root(): Uint8Array {
    return this.root_hash.slice();
  }

  /** Current value of the leaf with builder id `id`. */
  value(id: LeafId): Uint8Array | undefined {
    const slot = this.index.get(id);
    return slot < 0 ? undefined : this.values.get(slot);
  }

  /** The leaf of (kind, key), found by its path. */
  find(kind: number, key: Uint8Array): LeafView | undefined {
    pathInto(kind, key, this.probe, 0);
    this.hashes++;
    const ref = this.descend(this.probe, 0, false);
    if (ref >= 0) return undefined;
    const slot = -ref - 1;
    return compareBytes(this.paths, slot * HASH, this.probe, 0, HASH) === 0 ? this.view(slot) : undefined;
  }

  /**
   * The membership proof of leaf (kind, key), or null when absent: its value and, per level from
   * the leaf's depth up to the root, the hashes of its three siblings in digit order (the leaf's
   * own digit left out). contracts/StateProof.sol recomputes the root from exactly this.
   */
  proofOfLeaf(kind: number, key: Uint8Array): LeafProof | null {
    const leaf = this.find(kind, key);
    if (leaf === undefined) return null;
    // find() walked the leaf's path: walk_nodes/walk_digits hold its internal nodes.
    const siblings: Uint8Array[] = [];
    for (let d = this.walk_depth - 1; d >= 0; d--) {
      const at = this.walk_nodes[d] * NODE_STRIDE + 1;
      for (let digit = 0; digit < ARITY; digit++) {
        if (digit !== this.walk_digits[d]) siblings.push(this.pre.slice(at + HASH * digit, at + HASH * (digit + 1)));
      }
    }
    return { value: leaf.value, siblings };
  }

  /**
   * Applies a batch of changes (REMOVED_LEAF or value null = remove; ids are the builder's leaf
   * ids, one per kind and key; an array is copied into a LeafBatch first) and hashes what they changed; returns the changes that really changed a leaf,
   * by path, in the binary diff form (state_diff.ts). `diff` false (a restore loading a
   * snapshot's leaves): returns no diff and keeps no revert.
   */
  update(changes: LeafBatch | readonly (readonly [LeafId, PendingLeaf])[], diff = true): TreeDiff {
    const batch = changes instanceof LeafBatch ? changes : LeafBatch.of(changes);
    const n = batch.count;
    // Which batch entries changed a leaf, and their paths (sort keys) side by side in one
    // buffer: no object or view per change (allocations were ~20% of the state root's CPU).
    const changed = new Int32Array(n);
    const sort_keys = diff ? new Uint8Array(n * HASH) : null;
    let m = 0;
    const keep = this.keep_revert && diff;
    const revert: RawChange[] = [];
    const bytes = batch.bytes;
    for (let i = 0; i < n; i++) {
      const id = batch.ids[i];
      const kind = batch.kinds[i];
      const key_at = batch.at[i];
      const key_len = batch.key_len[i];
      const value_len = batch.value_len[i];
      const value_at = key_at + key_len;
      let slot = this.index.get(id);
      if (value_len === REMOVED_LEAF) {
        if (slot < 0) continue;
        if (keep) revert.push({ kind, key: bytes.slice(key_at, value_at), value: this.values.get(slot) });
        if (sort_keys !== null) copyHash(this.paths, slot * HASH, sort_keys, m * HASH);
        changed[m++] = i;
        this.remove(slot);
        this.index.delete(id);
        continue;
      }
      if (slot >= 0) {
        if (this.values.equals(slot, bytes, value_at, value_len)) continue;
        if (keep) revert.push({ kind, key: bytes.slice(key_at, value_at), value: this.values.get(slot) });
        this.values.set(slot, bytes, value_at, value_len);
        kindHashInto(kind, bytes, key_at, key_len + value_len, this.lhash, slot * HASH);
        this.hashes++;
        this.rewriteLeafHash(slot);
      } else {
        if (keep) revert.push({ kind, key: bytes.slice(key_at, value_at), value: null });
        slot = this.newSlot(kind, bytes, key_at, key_len, value_len);
        this.insert(slot);
        this.index.set(id, slot);
      }
      if (sort_keys !== null) copyHash(this.paths, slot * HASH, sort_keys, m * HASH);
      changed[m++] = i;
    }
    this.last_revert_changes = revert;
    this.finish();
    if (sort_keys === null) return { count: 0, bytes: new Uint8Array(0) };
    // Sorting a million changes nobody reads was ~60% of a 1M-leaf restore's CPU: diff only.
    const order = Array.from({ length: m }, (_, j) => j);
    order.sort((a, b) => compareBytes(sort_keys, a * HASH, sort_keys, b * HASH, HASH));
    for (let j = 0; j < m; j++) order[j] = changed[order[j]];
    return { count: m, bytes: encodeLeafBatch(batch, order, m) };
  }

  /** Every leaf in canonical order (by path). */
  *all(): Generator<LeafView> {
    if (this.root_ref === 0) return;
    const stack: number[] = [this.root_ref];
    while (stack.length > 0) {
      const ref = stack.pop()!;
      if (ref < 0) {
        yield this.view(-ref - 1);
        continue;
      }
      for (let digit = ARITY - 1; digit >= 0; digit--) {
        const c = this.kids[ref * ARITY + digit];
        if (c !== 0) stack.push(c);
      }
    }
  }

  /**
   * Root the tree would have after `changes` (value null = remove; for one key the last change
   * wins), without changing it: the untouched subtrees' hashes are reused. Between batches only.
   */
  rootAfter(changes: readonly LeafChange[]): Uint8Array {
    const by_path = new Map<string, { path: Uint8Array; hash: Uint8Array | null }>();
    for (const ch of changes) {
      const key = hexToBytes(ch.key, undefined, 'leaf key');
      const path = new Uint8Array(HASH);
      pathInto(ch.kind, key, path, 0);
      let hash: Uint8Array | null = null;
      if (ch.value !== null) {
        hash = new Uint8Array(HASH);
        leafHashInto(ch.kind, key, hexToBytes(ch.value, undefined, 'leaf value'), hash, 0);
      }
      by_path.set(bytesToHex0x(path), { path, hash });
    }
    const items = [...by_path.values()].sort((a, b) => compareBytes(a.path, 0, b.path, 0, HASH));
    const out = new Uint8Array(HASH);
    this.merge(this.root_ref, 0, items, 0, items.length, out, 0, this.root_hash, 0);
    return out;
  }

  // -------------------------------------------------------------------------------------------

  private view(slot: number): LeafView {
    const k = slot * KEY_INLINE_BYTES;
    return {
      kind: this.kinds[slot], key: this.key_bytes.slice(k, k + this.key_len[slot]), value: this.values.get(slot),
      sort_key: this.paths.slice(slot * HASH, slot * HASH + HASH), hash: this.lhash.slice(slot * HASH, slot * HASH + HASH),
    };
  }

  /** A slot for a new leaf: kind, key `src[at..at+key_len)`, its value right after. */
  private newSlot(kind: number, src: Uint8Array, at: number, key_len: number, value_len: number): number {
    let s = this.free_slots.pop();
    if (s === undefined) {
      s = this.slot_count++;
      if (s === this.kinds.length) {
        this.paths = grown(this.paths, 2 * s * HASH);
        this.lhash = grown(this.lhash, 2 * s * HASH);
        this.kinds = grown(this.kinds, 2 * s);
        this.key_bytes = grown(this.key_bytes, 2 * s * KEY_INLINE_BYTES);
        this.key_len = grown(this.key_len, 2 * s);
        this.values.grow(2 * s);
      }
    }
    if (key_len > KEY_INLINE_BYTES) throw new Error(`state root: a leaf key of ${key_len} bytes (at most ${KEY_INLINE_BYTES})`);
    this.kinds[s] = kind;
    const k = s * KEY_INLINE_BYTES;
    for (let i = 0; i < key_len; i++) this.key_bytes[k + i] = src[at + i];
    this.key_len[s] = key_len;
    this.values.set(s, src, at + key_len, value_len);
    kindHashInto(kind, src, at, key_len, this.paths, s * HASH);
    kindHashInto(kind, src, at, key_len + value_len, this.lhash, s * HASH);
    this.hashes += 2;
    return s;
  }

  private newNode(): number {
    let n = this.free_nodes.pop();
    if (n === undefined) {
      n = this.node_count++;
      if (n === this.dirty.length) {
        this.kids = grown(this.kids, 2 * n * ARITY);
        this.pre = grown(this.pre, 2 * n * NODE_STRIDE);
        this.pre32 = new Int32Array(this.pre.buffer);
        this.dirty = grown(this.dirty, 2 * n);
      }
    }
    this.kids.fill(0, n * ARITY, n * ARITY + ARITY);
    this.pre.fill(0, n * NODE_STRIDE, n * NODE_STRIDE + NODE_BYTES);
    this.dirty[n] = 0xf;
    return n;
  }

  /**
   * Walks from the root along the path at `paths[at..]` through internal nodes (marking them
   * dirty when `mark`), recording them in walk_nodes/walk_digits; returns the ref it stopped at
   * (0 or a leaf).
   */
  private descend(paths: Uint8Array, at: number, mark: boolean): number {
    let ref = this.root_ref;
    let d = 0;
    while (ref > 0) {
      const digit = digitOf(paths, at, d);
      if (mark) this.dirty[ref] |= 1 << digit;
      this.walk_nodes[d] = ref;
      this.walk_digits[d] = digit;
      ref = this.kids[ref * ARITY + digit];
      d++;
    }
    this.walk_depth = d;
    return ref;
  }

  /** Sets child `digit` of `parent` (0 = the root) to `ref`, with its hash from `src[at..]` (null: zeros). */
  private setChild(parent: number, digit: number, ref: number, src: Uint8Array | null, at: number): void {
    const dst = parent === 0 ? this.root_hash : this.pre;
    const off = parent === 0 ? 0 : parent * NODE_STRIDE + 1 + HASH * digit;
    if (parent === 0) this.root_ref = ref;
    else this.kids[parent * ARITY + digit] = ref;
    if (src === null) dst.fill(0, off, off + HASH);
    else copyHash(src, at, dst, off);
  }

  private parentAt(depth: number): number {
    return depth === 0 ? 0 : this.walk_nodes[depth - 1];
  }

  private digitAt(depth: number): number {
    return depth === 0 ? 0 : this.walk_digits[depth - 1];
  }

  private rewriteLeafHash(slot: number): void {
    const ref = this.descend(this.paths, slot * HASH, true);
    if (ref !== -slot - 1) throw new Error('state root: a leaf is not where its path leads');
    const d = this.walk_depth;
    this.setChild(this.parentAt(d), this.digitAt(d), ref, this.lhash, slot * HASH);
  }

  private insert(slot: number): void {
    const paths = this.paths;
    const at = slot * HASH;
    const ref = this.descend(paths, at, true);
    let d = this.walk_depth;
    const parent = this.parentAt(d);
    const digit = this.digitAt(d);
    if (ref === 0) {
      this.setChild(parent, digit, -slot - 1, this.lhash, at);
      return;
    }
    // A leaf holds the position: both go down a chain of nodes until their digits differ.
    const other = -ref - 1;
    const other_at = other * HASH;
    if (compareBytes(paths, other_at, paths, at, HASH) === 0) {
      throw new Error('state root: two leaves with the same path (the same kind and key)');
    }
    let node = this.newNode();
    this.setChild(parent, digit, node, null, 0);
    for (;;) {
      const a = digitOf(paths, other_at, d);
      const b = digitOf(paths, at, d);
      if (a !== b) {
        this.setChild(node, a, ref, this.lhash, other_at);
        this.setChild(node, b, -slot - 1, this.lhash, at);
        return;
      }
      const next = this.newNode();
      this.kids[node * ARITY + a] = next;
      node = next;
      d++;
    }
  }

  private remove(slot: number): void {
    const ref = this.descend(this.paths, slot * HASH, true);
    if (ref !== -slot - 1) throw new Error('state root: a leaf is not where its path leads');
    let d = this.walk_depth;
    this.setChild(this.parentAt(d), this.digitAt(d), 0, null, 0);
    this.values.clear(slot);
    this.free_slots.push(slot);
    // A node left with a single leaf (and nothing else) becomes that leaf, up the path.
    while (d > 0) {
      const node = this.walk_nodes[d - 1];
      let count = 0;
      let only = 0;
      for (let i = 0; i < ARITY; i++) {
        const c = this.kids[node * ARITY + i];
        if (c !== 0) {
          count++;
          only = c;
        }
      }
      if (count !== 1 || only > 0) return;
      d--;
      this.setChild(this.parentAt(d), this.digitAt(d), only, this.lhash, (-only - 1) * HASH);
      this.dirty[node] = 0;
      this.free_nodes.push(node);
    }
  }

  /** Hashes every dirty node once, children first, and the root. */
  private finish(): void {
    const r = this.root_ref;
    if (r > 0 && this.dirty[r] !== 0) this.rehash(r, this.root_hash, 0);
  }

  private rehash(node: number, out: Uint8Array, off: number): void {
    const marked = this.dirty[node];
    for (let digit = 0; digit < ARITY; digit++) {
      if ((marked & (1 << digit)) === 0) continue;
      const c = this.kids[node * ARITY + digit];
      if (c > 0) this.rehash(c, this.pre, node * NODE_STRIDE + 1 + HASH * digit);
    }
    this.dirty[node] = 0;
    keccak256OfWords(this.pre32, node * NODE_WORDS, NODE_BYTES, out, off);
    this.hashes++;
  }

  /**
   * H of the subtree `ref` at depth d with `items[lo..hi)` (sorted, routed here) applied, into
   * `out[off..]`; its unchanged hash is at `ex[ex_off..]`. Returns its leaf count, capped at 2.
   */
  private merge(
    ref: number, d: number, items: readonly { path: Uint8Array; hash: Uint8Array | null }[], lo: number, hi: number,
    out: Uint8Array, off: number, ex: Uint8Array, ex_off: number,
  ): number {
    if (lo === hi) {
      out.set(ex.subarray(ex_off, ex_off + HASH), off);
      return ref === 0 ? 0 : ref < 0 ? 1 : 2;
    }
    if (ref <= 0) {
      // An empty position or a single leaf: the few leaves there, from scratch.
      const set: { path: Uint8Array; hash: Uint8Array }[] = [];
      if (ref < 0) {
        const slot = -ref - 1;
        const path = this.paths.subarray(slot * HASH, slot * HASH + HASH);
        if (!items.slice(lo, hi).some((it) => compareBytes(it.path, 0, path, 0, HASH) === 0)) {
          set.push({ path, hash: this.lhash.subarray(slot * HASH, slot * HASH + HASH) });
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
      const n = this.merge(this.kids[ref * ARITY + digit], d + 1, items, s, e, node, at, this.pre, ref * NODE_STRIDE + at);
      if (n === 1) single = at;
      total += n;
      s = e;
    }
    if (total === 1) out.set(node.subarray(single, single + HASH), off);
    else if (total === 0) out.fill(0, off, off + HASH);
    else keccak256Into(node, 0, NODE_BYTES, out, off);
    return Math.min(total, 2);
  }
}
