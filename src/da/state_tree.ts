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
// Storage: typed arrays, no object per node. Internal node n (n >= 1) is one row of `rows`:
// its 129-byte preimage (0x00, then the 4 child hashes) and its 4 child refs (0 empty, > 0
// internal node, < 0 leaf slot -(slot+1)); a child's hash is written into its parent's preimage,
// so hashing a node is one call on its row, and a leaf's hash is kept only there (or in the root).
// Leaves live in slots (path, kind and key in typed arrays, values in src/da/slot_values.ts).
//
// A batch (a LeafBatch, src/da/leaf_batch.ts) is applied in two passes: the first finds each
// changed leaf's slot and stores its value (a leaf changed twice counts once); the second takes
// the changed leaves in path order and walks the trie once, depth first: each leaf descends from
// the deepest node it shares with the previous one, and a node is finished (emptied, collapsed
// onto a single leaf, or hashed) as soon as the walk leaves its subtree, children first. So each
// node on a changed path is visited and hashed once, while its row is still in cache, and upper
// levels are shared by the batch's leaves. Hashing and the from-scratch root: state_tree_hash.ts.
import { compareBytes } from './hex.js';
import { keccak256OfWords } from './keccak.js';
import { HASH, type LeafChange, type PendingLeaf, type RawChange } from './state_leaves.js';
import type { LeafId } from './leaf_ids.js';
import { grown, LeafBatch, REMOVED_LEAF } from './leaf_batch.js';
import { encodeLeafBatch } from './state_diff.js';
import { LeafIndex } from './leaf_index.js';
import { LeafSlots, type LeafView } from './leaf_slots.js';
import { ARITY, DIGITS, NODE_BYTES, digitOf, kindHashInto, pathInto } from './state_tree_hash.js';
import { rootAfterChanges } from './state_tree_after.js';

const INITIAL_NODES = 1024;
/**
 * Bytes per node row: the 129-byte preimage padded to 132 (a whole number of 32-bit words, so a
 * node goes into keccak's input as 33 words: keccak256OfWords), then the 4 child refs (words
 * 33-36), then padding to 160. One row instead of a preimage array and a child array: at
 * 1,000,000 leaves the lower levels' nodes are cache misses, and a node in one place is fewer of
 * them (bench/state_root.ts, the 1M / 10k ratio).
 */
const NODE_STRIDE = 160;
const NODE_WORDS = NODE_STRIDE / 4;
/** Word of child 0's ref in a row. */
const KIDS_WORD = 33;
const INITIAL_LEAVES = 1024;
const INITIAL_CHANGES = 256;
/** A batch's scratch arrays are let go after a batch larger than this (a restore's million). */
const CHANGES_KEPT = 1 << 16;
/** Batches up to this many changes sort by one Float64Array key per change (path prefix, index). */
const FAST_SORT_MAX = 1 << 21;

// What the first pass decided for a changed leaf (its slot's `op`).
/** Touched, nothing to apply (a leaf inserted and removed in the same batch). */
const OP_DROP = 0;
const OP_UPDATE = 1;
const OP_INSERT = 2;
const OP_REMOVE = 3;

/** See StateTree.proofOfLeaf. */
export interface LeafProof {
  value: Uint8Array;
  /** 3 per level, lowest level first. */
  siblings: Uint8Array[];
}

export type { LeafView };

/** What `update` changed: how many leaves, in the binary diff form (state_diff.ts). */
export interface TreeDiff {
  count: number;
  bytes: Uint8Array;
}

/** Copies 32 bytes (a hash) without a `subarray` view (see keccak256OfWords for why). */
function copyHash(src: Uint8Array, at: number, dst: Uint8Array, off: number): void {
  for (let i = 0; i < HASH; i++) dst[off + i] = src[at + i];
}

/** The first 4 bytes of the path at `paths[at..]` as an unsigned integer. */
function prefix32(paths: Uint8Array, at: number): number {
  return ((paths[at] << 24) | (paths[at + 1] << 16) | (paths[at + 2] << 8) | paths[at + 3]) >>> 0;
}

/** How many leading base-4 digits the paths at `paths[a..]` and `paths[b..]` share (128: equal). */
function commonDigits(paths: Uint8Array, a: number, b: number): number {
  for (let i = 0; i < HASH; i++) {
    const x = paths[a + i] ^ paths[b + i];
    if (x !== 0) return 4 * i + ((Math.clz32(x) - 24) >> 1);
  }
  return DIGITS;
}

/** The leaf set and its trie, updated a batch at a time. */
export class StateTree {
  // Internal nodes (row 0 unused: ref 0 means empty).
  private rows = new Uint8Array(INITIAL_NODES * NODE_STRIDE);
  private rows32 = new Int32Array(this.rows.buffer);
  private node_count = 1;
  private readonly free_nodes: number[] = [];
  /** The leaves (src/da/leaf_slots.ts). */
  private readonly slots = new LeafSlots(INITIAL_LEAVES);
  /** Whether the batch being applied marks its slots (`slots.touch`): not for a batch of distinct ids (LeafBatch.distinct). */
  private marked = false;
  /** Builder leaf id -> slot. */
  private readonly index = new LeafIndex();
  private root_ref = 0;
  private readonly root_hash = new Uint8Array(HASH);
  // The batch being applied: per change (a slot it changed), its slot, op, id and the batch
  // entry that set its final value.
  private ch_slot = new Int32Array(INITIAL_CHANGES);
  private ch_op = new Uint8Array(INITIAL_CHANGES);
  private ch_entry = new Int32Array(INITIAL_CHANGES);
  private ch_ids: LeafId[] = [];
  private ch_keys = new Float64Array(INITIAL_CHANGES);
  // The second pass's path from the root: node and the digit taken, per depth.
  private readonly stack_nodes = new Int32Array(DIGITS + 1);
  private readonly stack_digits = new Uint8Array(DIGITS + 1);
  private sp = 0;
  // The path walked by `walk` (find, proofOfLeaf): node and digit per depth.
  private readonly walk_nodes = new Int32Array(DIGITS + 1);
  private readonly walk_digits = new Uint8Array(DIGITS + 1);
  private walk_depth = 0;
  private readonly probe = new Uint8Array(HASH);
  /** A leaf's hash while its position becomes a node (an insert pushing it down). */
  private readonly moved_hash = new Uint8Array(HASH);
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
    return slot < 0 ? undefined : this.slots.values.get(slot);
  }

  /** The leaf of (kind, key), found by its path. */
  find(kind: number, key: Uint8Array): LeafView | undefined {
    pathInto(kind, key, this.probe, 0);
    this.hashes++;
    const ref = this.walk(this.probe, 0);
    if (ref >= 0) return undefined;
    const slot = -ref - 1;
    if (compareBytes(this.slots.paths, slot * HASH, this.probe, 0, HASH) !== 0) return undefined;
    const d = this.walk_depth;
    return d === 0 ? this.slots.view(slot, this.root_hash, 0) : this.slots.view(slot, this.rows, this.hashAt(this.walk_nodes[d - 1], this.walk_digits[d - 1]));
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
      for (let digit = 0; digit < ARITY; digit++) {
        const at = this.hashAt(this.walk_nodes[d], digit);
        if (digit !== this.walk_digits[d]) siblings.push(this.rows.slice(at, at + HASH));
      }
    }
    return { value: leaf.value, siblings };
  }

  /**
   * Applies a batch of changes (REMOVED_LEAF or value null = remove; ids are the builder's leaf
   * ids, one per kind and key; an array is copied into a LeafBatch first; a leaf changed twice
   * keeps its last change) and hashes what they changed; returns the changes that really changed
   * a leaf, by path, in the binary diff form (state_diff.ts). `diff` false (a restore loading a
   * snapshot's leaves): returns no diff and keeps no revert.
   */
  update(changes: LeafBatch | readonly (readonly [LeafId, PendingLeaf])[], diff = true): TreeDiff {
    const batch = changes instanceof LeafBatch ? changes : LeafBatch.of(changes);
    this.reserveChanges(batch.count);
    let m = 0;
    try {
      m = this.collect(batch, this.keep_revert && diff);
      const order = this.sortChanges(m);
      this.walkChanges(batch, order);
      if (!diff) return { count: 0, bytes: new Uint8Array(0) };
      const entries = new Int32Array(order.length);
      for (let q = 0; q < order.length; q++) entries[q] = this.ch_entry[order[q]];
      return { count: order.length, bytes: encodeLeafBatch(batch, entries, order.length) };
    } finally {
      this.release(m);
    }
  }

  /** Every leaf in canonical order (by path). */
  *all(): Generator<LeafView> {
    if (this.root_ref === 0) return;
    // Refs with where their hash is (-1: the root's).
    const stack: [number, number][] = [[this.root_ref, -1]];
    while (stack.length > 0) {
      const [ref, at] = stack.pop()!;
      if (ref < 0) {
        yield at < 0 ? this.slots.view(-ref - 1, this.root_hash, 0) : this.slots.view(-ref - 1, this.rows, at);
        continue;
      }
      for (let digit = ARITY - 1; digit >= 0; digit--) {
        const c = this.kid(ref, digit);
        if (c !== 0) stack.push([c, this.hashAt(ref, digit)]);
      }
    }
  }

  /**
   * Root the tree would have after `changes` (value null = remove; for one key the last change
   * wins), without changing it: the untouched subtrees' hashes are reused. Between batches only.
   */
  rootAfter(changes: readonly LeafChange[]): Uint8Array {
    return rootAfterChanges({
      root_ref: this.root_ref, root_hash: this.root_hash, rows: this.rows, paths: this.slots.paths,
      kid: (node: number, digit: number) => this.kid(node, digit), hashAt: (node: number, digit: number) => this.hashAt(node, digit),
    }, changes);
  }

  // -------------------------------------------------------------------------------------------
  // Applying a batch

  /**
   * First pass: each change's slot (a new slot, with its path, for a new leaf) and value; a
   * change that changes nothing is dropped. Returns how many slots the batch changed (`ch_*`).
   */
  private collect(batch: LeafBatch, keep: boolean): number {
    const revert: RawChange[] = [];
    const bytes = batch.bytes;
    const values = this.slots.values;
    const marked = !batch.distinct;
    this.marked = marked;
    let m = 0;
    for (let i = 0; i < batch.count; i++) {
      const id = batch.ids[i];
      const key_at = batch.at[i];
      const value_at = key_at + batch.key_len[i];
      const value_len = batch.value_len[i];
      let slot = this.index.get(id);
      let j = slot < 0 || !marked ? -1 : this.slots.touch[slot] - 1;
      if (value_len === REMOVED_LEAF) {
        if (slot < 0) continue;
        if (j < 0) {
          if (keep) revert.push({ kind: batch.kinds[i], key: bytes.slice(key_at, value_at), value: values.get(slot) });
          j = this.touched(m++, slot, id);
          this.ch_op[j] = OP_REMOVE;
        } else if (this.ch_op[j] === OP_INSERT) {
          // Inserted earlier in this batch, never in the trie: nothing to do but forget it.
          this.ch_op[j] = OP_DROP;
          this.index.delete(id);
        } else {
          this.ch_op[j] = OP_REMOVE;
        }
        this.ch_entry[j] = i;
        continue;
      }
      if (slot < 0) {
        if (keep) revert.push({ kind: batch.kinds[i], key: bytes.slice(key_at, value_at), value: null });
        slot = this.slots.add(batch.kinds[i], bytes, key_at, batch.key_len[i], value_len);
        this.hashes++;
        this.index.set(id, slot);
        j = this.touched(m++, slot, id);
        this.ch_op[j] = OP_INSERT;
      } else if (j < 0) {
        if (values.equals(slot, bytes, value_at, value_len)) continue;
        if (keep) revert.push({ kind: batch.kinds[i], key: bytes.slice(key_at, value_at), value: values.get(slot) });
        values.set(slot, bytes, value_at, value_len);
        j = this.touched(m++, slot, id);
        this.ch_op[j] = OP_UPDATE;
      } else {
        // Changed earlier in this batch: the last change wins (a removal is undone).
        if (this.ch_op[j] === OP_REMOVE) this.ch_op[j] = OP_UPDATE;
        values.set(slot, bytes, value_at, value_len);
      }
      this.ch_entry[j] = i;
    }
    if (keep) this.last_revert_changes = revert;
    else if (this.keep_revert) this.last_revert_changes = [];
    return m;
  }

  /** Records slot `slot` (leaf `id`) as the batch's change j. */
  private touched(j: number, slot: number, id: LeafId): number {
    this.ch_slot[j] = slot;
    this.ch_ids[j] = id;
    if (this.marked) this.slots.touch[slot] = j + 1;
    return j;
  }

  /** Room for `n` changes in the batch's scratch arrays. */
  private reserveChanges(n: number): void {
    if (n <= this.ch_slot.length) return;
    let size = this.ch_slot.length;
    while (size < n) size *= 2;
    this.ch_slot = new Int32Array(size);
    this.ch_op = new Uint8Array(size);
    this.ch_entry = new Int32Array(size);
    this.ch_keys = new Float64Array(size);
  }

  /**
   * The changes to apply (not dropped) in path order, as change indices. Paths are sorted by one
   * number per change, the path's first 32 bits x 2^21 + the change's index (exact in a double),
   * with a native numeric sort; changes whose first 32 bits are equal are then ordered by their
   * whole paths. Equal paths of two changes (two ids for one kind and key) throw.
   */
  private sortChanges(m: number): Int32Array {
    const paths = this.slots.paths;
    let n = 0;
    for (let j = 0; j < m; j++) if (this.ch_op[j] !== OP_DROP) n++;
    const order = new Int32Array(n);
    if (m <= FAST_SORT_MAX) {
      const keys = this.ch_keys;
      let k = 0;
      for (let j = 0; j < m; j++) if (this.ch_op[j] !== OP_DROP) keys[k++] = prefix32(paths, this.ch_slot[j] * HASH) * FAST_SORT_MAX + j;
      const sorted = keys.subarray(0, n).sort();
      for (let q = 0; q < n; q++) order[q] = sorted[q] % FAST_SORT_MAX;
    } else {
      let k = 0;
      for (let j = 0; j < m; j++) if (this.ch_op[j] !== OP_DROP) order[k++] = j;
      order.sort((a, b) => compareBytes(paths, this.ch_slot[a] * HASH, paths, this.ch_slot[b] * HASH, HASH));
    }
    // Runs of equal first 32 bits (rare: ~n^2 / 2^33 pairs): insertion sort by the whole path.
    for (let q = 1; q < n; q++) {
      const j = order[q];
      const at = this.ch_slot[j] * HASH;
      let p = q - 1;
      for (; p >= 0; p--) {
        const c = compareBytes(paths, this.ch_slot[order[p]] * HASH, paths, at, HASH);
        if (c === 0) throw new Error('state root: two leaves with the same path (the same kind and key)');
        if (c < 0) break;
        order[p + 1] = order[p];
      }
      order[p + 1] = j;
    }
    return order;
  }

  /**
   * Second pass: the changes in path order, each from the deepest node it shares with the one
   * before; nodes the walk leaves behind are finished on the way (children before parents).
   */
  private walkChanges(batch: LeafBatch, order: Int32Array): void {
    const paths = this.slots.paths;
    this.sp = 0;
    for (let q = 0; q < order.length; q++) {
      const j = order[q];
      const slot = this.ch_slot[j];
      const at = slot * HASH;
      if (q > 0) {
        const shared = commonDigits(paths, this.ch_slot[order[q - 1]] * HASH, at);
        while (this.sp > shared + 1) this.finishNode(--this.sp);
      }
      // Down to the position the path leads to: child `digit` of `parent` (0: the root).
      let parent = 0;
      let digit = 0;
      let ref = this.root_ref;
      let depth = 0;
      if (this.sp > 0) {
        depth = this.sp - 1;
        ref = this.stack_nodes[depth];
      }
      while (ref > 0) {
        digit = digitOf(paths, at, depth);
        this.stack_nodes[depth] = ref;
        this.stack_digits[depth] = digit;
        parent = ref;
        ref = this.rows32[ref * NODE_WORDS + KIDS_WORD + digit];
        depth++;
      }
      this.sp = depth;
      const op = this.ch_op[j];
      if (op !== OP_INSERT && ref !== -slot - 1) throw new Error('state root: a leaf is not where its path leads');
      if (op === OP_REMOVE) {
        this.setChild(parent, digit, 0);
        this.zeroHash(parent, digit);
        continue;
      }
      const i = this.ch_entry[j];
      if (op === OP_UPDATE || ref === 0) {
        this.setChild(parent, digit, -slot - 1);
        this.leafHash(batch, i, parent, digit);
        continue;
      }
      // An insert where another leaf is: both go down a chain of new nodes until their digits differ.
      const other_at = (-ref - 1) * HASH;
      if (compareBytes(paths, other_at, paths, at, HASH) === 0) {
        throw new Error('state root: two leaves with the same path (the same kind and key)');
      }
      copyHash(parent === 0 ? this.root_hash : this.rows, parent === 0 ? 0 : this.hashAt(parent, digit), this.moved_hash, 0);
      let node = this.newNode();
      this.setChild(parent, digit, node);
      for (;;) {
        this.stack_nodes[depth] = node;
        this.sp = depth + 1;
        const a = digitOf(paths, other_at, depth);
        const b = digitOf(paths, at, depth);
        if (a !== b) {
          this.stack_digits[depth] = b;
          this.setChild(node, a, ref);
          copyHash(this.moved_hash, 0, this.rows, this.hashAt(node, a));
          this.setChild(node, b, -slot - 1);
          this.leafHash(batch, i, node, b);
          break;
        }
        this.stack_digits[depth] = a;
        const next = this.newNode();
        this.setChild(node, a, next);
        node = next;
        depth++;
      }
    }
    while (this.sp > 0) this.finishNode(--this.sp);
  }

  /**
   * Finishes the node at stack depth `d` (the walk has left its subtree): with no child it
   * becomes empty, with a single leaf (and nothing else) it becomes that leaf, otherwise its
   * hash goes into its parent's row.
   */
  private finishNode(d: number): void {
    const node = this.stack_nodes[d];
    const parent = d === 0 ? 0 : this.stack_nodes[d - 1];
    const digit = d === 0 ? 0 : this.stack_digits[d - 1];
    const kids = node * NODE_WORDS + KIDS_WORD;
    let count = 0;
    let only = 0;
    let only_digit = 0;
    for (let i = 0; i < ARITY; i++) {
      const c = this.rows32[kids + i];
      if (c !== 0) {
        count++;
        only = c;
        only_digit = i;
      }
    }
    if (count === 0 || (count === 1 && only < 0)) {
      this.setChild(parent, digit, only);
      if (count === 0) this.zeroHash(parent, digit);
      else if (parent === 0) copyHash(this.rows, this.hashAt(node, only_digit), this.root_hash, 0);
      else copyHash(this.rows, this.hashAt(node, only_digit), this.rows, this.hashAt(parent, digit));
      this.free_nodes.push(node);
      return;
    }
    if (parent === 0) keccak256OfWords(this.rows32, node * NODE_WORDS, NODE_BYTES, this.root_hash, 0);
    else keccak256OfWords(this.rows32, node * NODE_WORDS, NODE_BYTES, this.rows, this.hashAt(parent, digit));
    this.hashes++;
  }

  /** The leaf hash of batch entry i (kind || key || value, contiguous in the batch) into child `digit` of `parent`. */
  private leafHash(batch: LeafBatch, i: number, parent: number, digit: number): void {
    const length = batch.key_len[i] + batch.value_len[i];
    if (parent === 0) kindHashInto(batch.kinds[i], batch.bytes, batch.at[i], length, this.root_hash, 0);
    else kindHashInto(batch.kinds[i], batch.bytes, batch.at[i], length, this.rows, this.hashAt(parent, digit));
    this.hashes++;
  }

  /** After a batch: its slots' marks cleared, removed leaves' slots freed, large scratch let go. */
  private release(m: number): void {
    for (let j = 0; j < m; j++) {
      const slot = this.ch_slot[j];
      if (this.marked) this.slots.touch[slot] = 0;
      const op = this.ch_op[j];
      if (op === OP_REMOVE || op === OP_DROP) {
        if (op === OP_REMOVE) this.index.delete(this.ch_ids[j]);
        this.slots.free(slot);
      }
    }
    this.ch_ids.length = 0;
    if (this.ch_slot.length > CHANGES_KEPT) {
      this.ch_slot = new Int32Array(INITIAL_CHANGES);
      this.ch_op = new Uint8Array(INITIAL_CHANGES);
      this.ch_entry = new Int32Array(INITIAL_CHANGES);
      this.ch_keys = new Float64Array(INITIAL_CHANGES);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Storage

  /** Byte offset of child `digit`'s hash in node `node`'s row. */
  private hashAt(node: number, digit: number): number {
    return node * NODE_STRIDE + 1 + HASH * digit;
  }

  private kid(node: number, digit: number): number {
    return this.rows32[node * NODE_WORDS + KIDS_WORD + digit];
  }

  /** Sets child `digit` of `parent` (0: the root) to `ref` (its hash is written separately). */
  private setChild(parent: number, digit: number, ref: number): void {
    if (parent === 0) this.root_ref = ref;
    else this.rows32[parent * NODE_WORDS + KIDS_WORD + digit] = ref;
  }

  private zeroHash(parent: number, digit: number): void {
    if (parent === 0) this.root_hash.fill(0);
    else this.rows.fill(0, this.hashAt(parent, digit), this.hashAt(parent, digit) + HASH);
  }

  private newNode(): number {
    let n = this.free_nodes.pop();
    if (n === undefined) {
      n = this.node_count++;
      if ((n + 1) * NODE_STRIDE > this.rows.length) {
        this.rows = grown(this.rows, 2 * n * NODE_STRIDE);
        this.rows32 = new Int32Array(this.rows.buffer);
      }
    }
    this.rows.fill(0, n * NODE_STRIDE, (n + 1) * NODE_STRIDE);
    return n;
  }

  /**
   * Walks from the root along the path at `paths[at..]` through internal nodes, recording them in
   * walk_nodes/walk_digits; returns the ref it stopped at (0 or a leaf).
   */
  private walk(paths: Uint8Array, at: number): number {
    let ref = this.root_ref;
    let d = 0;
    while (ref > 0) {
      const digit = digitOf(paths, at, d);
      this.walk_nodes[d] = ref;
      this.walk_digits[d] = digit;
      ref = this.kid(ref, digit);
      d++;
    }
    this.walk_depth = d;
    return ref;
  }

}
