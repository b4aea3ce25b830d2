// Applying a batch of leaf changes to the state tree (src/da/state_tree.ts, docs/verifiability.md
// "Per batch"). A batch (a LeafBatch, src/da/leaf_batch.ts) is applied in two passes: the first
// finds each changed leaf's slot and stores its value (a leaf changed twice counts once); the
// second takes the changed leaves in path order and walks the trie once, depth first: each leaf
// descends from the deepest node it shares with the previous one, and a node is finished
// (emptied, collapsed onto a single leaf, or hashed) as soon as the walk leaves its subtree,
// children first. So each node on a changed path is visited and hashed once, while its row is
// still in cache, and upper levels are shared by the batch's leaves.
import { compareBytes } from './hex.js';
import { keccak256OfWords } from './keccak.js';
import { HASH, type PendingLeaf, type RawChange } from './state_leaves.js';
import type { LeafId } from './leaf_ids.js';
import { LeafBatch, REMOVED_LEAF } from './leaf_batch.js';
import { encodeLeafBatch } from './state_diff.js';
import type { LeafIndex } from './leaf_index.js';
import type { LeafSlots } from './leaf_slots.js';
import { ARITY, DIGITS, NODE_BYTES, batchHashInto, digitOf } from './state_tree_hash.js';
import { KIDS_WORD, NODE_WORDS, copyHash, type TrieNodes } from './trie_nodes.js';

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

/** What `update` changed: how many leaves, in the binary diff form (state_diff.ts). */
export interface TreeDiff {
  count: number;
  bytes: Uint8Array;
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

/** Applies batches to a tree's nodes, leaf slots and leaf index (the ones its StateTree reads). */
export class TreeBatchApplier {
  /** keccak calls (leaf, path, node) made applying batches: cost accounting for benches. */
  hashes = 0;
  /** Whether the batch being applied marks its slots (`slots.touch`): not for a batch of distinct ids (LeafBatch.distinct). */
  private marked = false;
  // The batch being applied: per change (a slot it changed), its slot, op, id and the batch
  // entry that set its final value.
  private ch_slot = new Int32Array(INITIAL_CHANGES);
  private ch_op = new Uint8Array(INITIAL_CHANGES);
  private ch_entry = new Int32Array(INITIAL_CHANGES);
  private ch_ids: LeafId[] = [];
  private ch_keys = new Float64Array(INITIAL_CHANGES);
  // The changes to apply in path order (sortChanges), and the batch entry of each in that order
  // (the diff's): reused, not a pair of typed arrays per batch (each an ArrayBuffer above 64
  // bytes, i.e. from ~16 changes on).
  private ch_order = new Int32Array(INITIAL_CHANGES);
  private ch_order_entries = new Int32Array(INITIAL_CHANGES);
  // The second pass's path from the root: node and the digit taken, per depth.
  private readonly stack_nodes = new Int32Array(DIGITS + 1);
  private readonly stack_digits = new Uint8Array(DIGITS + 1);
  private sp = 0;
  /** A leaf's hash while its position becomes a node (an insert pushing it down). */
  private readonly moved_hash = new Uint8Array(HASH);
  /** Changes that undo the last `update` (kept only with keep_revert). */
  last_revert_changes: RawChange[] = [];

  /**
   * `keep_revert`: whether `update` keeps each changed leaf's previous value (StateTree.last_revert).
   */
  constructor(
    private readonly nodes: TrieNodes,
    private readonly slots: LeafSlots,
    private readonly index: LeafIndex,
    readonly keep_revert: boolean,
  ) {}

  /** See StateTree.update. */
  update(changes: LeafBatch | readonly (readonly [LeafId, PendingLeaf])[], diff: boolean): TreeDiff {
    const batch = changes instanceof LeafBatch ? changes : LeafBatch.of(changes);
    this.reserveChanges(batch.count);
    let m = 0;
    try {
      m = this.collect(batch, this.keep_revert && diff);
      const n = this.sortChanges(m);
      this.walkChanges(batch, n);
      if (!diff) return { count: 0, bytes: new Uint8Array(0) };
      const order = this.ch_order;
      const entries = this.ch_order_entries;
      for (let q = 0; q < n; q++) entries[q] = this.ch_entry[order[q]];
      return { count: n, bytes: encodeLeafBatch(batch, entries, n) };
    } finally {
      this.release(m);
    }
  }

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
        slot = this.slots.add(batch, i);
        this.hashes++;
        this.index.set(id, slot);
        j = this.touched(m++, slot, id);
        this.ch_op[j] = OP_INSERT;
      } else if (j < 0) {
        if (keep) {
          if (values.equals(slot, bytes, value_at, value_len)) continue;
          revert.push({ kind: batch.kinds[i], key: bytes.slice(key_at, value_at), value: values.get(slot) });
          values.set(slot, bytes, value_at, value_len);
        } else if (!values.replace(slot, bytes, value_at, value_len)) {
          continue;
        }
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
    this.ch_order = new Int32Array(size);
    this.ch_order_entries = new Int32Array(size);
  }

  /**
   * The changes to apply (not dropped) in path order, as change indices. Paths are sorted by one
   * number per change, the path's first 32 bits x 2^21 + the change's index (exact in a double),
   * with a native numeric sort; changes whose first 32 bits are equal are then ordered by their
   * whole paths. Equal paths of two changes (two ids for one kind and key) throw. The order is
   * left in `ch_order[0 .. n)`; returns n.
   */
  private sortChanges(m: number): number {
    const paths = this.slots.paths;
    let n = 0;
    for (let j = 0; j < m; j++) if (this.ch_op[j] !== OP_DROP) n++;
    const order = this.ch_order;
    if (m <= FAST_SORT_MAX) {
      const keys = this.ch_keys;
      let k = 0;
      for (let j = 0; j < m; j++) if (this.ch_op[j] !== OP_DROP) keys[k++] = prefix32(paths, this.ch_slot[j] * HASH) * FAST_SORT_MAX + j;
      const sorted = keys.subarray(0, n).sort();
      for (let q = 0; q < n; q++) order[q] = sorted[q] % FAST_SORT_MAX;
    } else {
      let k = 0;
      for (let j = 0; j < m; j++) if (this.ch_op[j] !== OP_DROP) order[k++] = j;
      order.subarray(0, n).sort((a, b) => compareBytes(paths, this.ch_slot[a] * HASH, paths, this.ch_slot[b] * HASH, HASH));
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
    return n;
  }

  /**
   * Second pass: the changes in path order, each from the deepest node it shares with the one
   * before; nodes the walk leaves behind are finished on the way (children before parents).
   */
  private walkChanges(batch: LeafBatch, n: number): void {
    const paths = this.slots.paths;
    const order = this.ch_order;
    this.sp = 0;
    for (let q = 0; q < n; q++) {
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
      let ref = this.nodes.root_ref;
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
        ref = this.nodes.rows32[ref * NODE_WORDS + KIDS_WORD + digit];
        depth++;
      }
      this.sp = depth;
      const op = this.ch_op[j];
      if (op !== OP_INSERT && ref !== -slot - 1) throw new Error('state root: a leaf is not where its path leads');
      if (op === OP_REMOVE) {
        this.nodes.setChild(parent, digit, 0);
        this.nodes.zeroHash(parent, digit);
        continue;
      }
      const i = this.ch_entry[j];
      if (op === OP_UPDATE || ref === 0) {
        this.nodes.setChild(parent, digit, -slot - 1);
        this.leafHash(batch, i, parent, digit);
        continue;
      }
      // An insert where another leaf is: both go down a chain of new nodes until their digits differ.
      const other_at = (-ref - 1) * HASH;
      if (compareBytes(paths, other_at, paths, at, HASH) === 0) {
        throw new Error('state root: two leaves with the same path (the same kind and key)');
      }
      copyHash(parent === 0 ? this.nodes.root_hash : this.nodes.rows, parent === 0 ? 0 : this.nodes.hashAt(parent, digit), this.moved_hash, 0);
      let node = this.nodes.newNode();
      this.nodes.setChild(parent, digit, node);
      for (;;) {
        this.stack_nodes[depth] = node;
        this.sp = depth + 1;
        const a = digitOf(paths, other_at, depth);
        const b = digitOf(paths, at, depth);
        if (a !== b) {
          this.stack_digits[depth] = b;
          this.nodes.setChild(node, a, ref);
          copyHash(this.moved_hash, 0, this.nodes.rows, this.nodes.hashAt(node, a));
          this.nodes.setChild(node, b, -slot - 1);
          this.leafHash(batch, i, node, b);
          break;
        }
        this.stack_digits[depth] = a;
        const next = this.nodes.newNode();
        this.nodes.setChild(node, a, next);
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
      const c = this.nodes.rows32[kids + i];
      if (c !== 0) {
        count++;
        only = c;
        only_digit = i;
      }
    }
    if (count === 0 || (count === 1 && only < 0)) {
      this.nodes.setChild(parent, digit, only);
      if (count === 0) this.nodes.zeroHash(parent, digit);
      else if (parent === 0) copyHash(this.nodes.rows, this.nodes.hashAt(node, only_digit), this.nodes.root_hash, 0);
      else copyHash(this.nodes.rows, this.nodes.hashAt(node, only_digit), this.nodes.rows, this.nodes.hashAt(parent, digit));
      this.nodes.freeNode(node);
      return;
    }
    if (parent === 0) keccak256OfWords(this.nodes.rows32, node * NODE_WORDS, NODE_BYTES, this.nodes.root_hash, 0);
    else keccak256OfWords(this.nodes.rows32, node * NODE_WORDS, NODE_BYTES, this.nodes.rows, this.nodes.hashAt(parent, digit));
    this.hashes++;
  }

  /** The leaf hash of batch entry i (kind || key || value, contiguous in the batch) into child `digit` of `parent`. */
  private leafHash(batch: LeafBatch, i: number, parent: number, digit: number): void {
    const length = batch.key_len[i] + batch.value_len[i];
    if (parent === 0) batchHashInto(batch, i, length, this.nodes.root_hash, 0);
    else batchHashInto(batch, i, length, this.nodes.rows, this.nodes.hashAt(parent, digit));
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
      this.ch_order = new Int32Array(INITIAL_CHANGES);
      this.ch_order_entries = new Int32Array(INITIAL_CHANGES);
    }
  }
}
