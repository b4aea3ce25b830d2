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
// Storage: the internal nodes are rows of typed arrays (src/da/trie_nodes.ts); leaves live in
// slots (path, kind and key in typed arrays, values in src/da/slot_values.ts). A batch is applied
// in two passes, each trie node on a changed path hashed once (src/da/state_tree_apply.ts).
// Hashing and the from-scratch root: state_tree_hash.ts; the root after some changes without
// applying them: state_tree_after.ts. This file: the tree's reads (values, lookups, proofs, the
// leaves in order) and its one write, `update`.
import { compareBytes } from './hex.js';
import { toHex0x } from '../util/hex.js';
import { HASH, type LeafChange, type PendingLeaf, type RawChange } from './state_leaves.js';
import type { LeafId } from './leaf_ids.js';
import type { LeafBatch } from './leaf_batch.js';
import { LeafIndex } from './leaf_index.js';
import { LeafSlots, type LeafView } from './leaf_slots.js';
import { ARITY, DIGITS, digitOf, pathInto } from './state_tree_hash.js';
import { rootAfterChanges } from './state_tree_after.js';
import { TreeBatchApplier, type TreeDiff } from './state_tree_apply.js';
import { TrieNodes } from './trie_nodes.js';

const INITIAL_LEAVES = 1024;

/** See StateTree.proofOfLeaf. */
export interface LeafProof {
  value: Uint8Array;
  /** 3 per level, lowest level first. */
  siblings: Uint8Array[];
}

export type { LeafView };

export type { TreeDiff };

/** The leaf set and its trie, updated a batch at a time. */
export class StateTree {
  private readonly nodes = new TrieNodes();
  /** The leaves (src/da/leaf_slots.ts). */
  private readonly slots = new LeafSlots(INITIAL_LEAVES);
  /** Builder leaf id -> slot. */
  private readonly index = new LeafIndex();
  /** Applies `update`'s batches (src/da/state_tree_apply.ts). */
  private readonly applier: TreeBatchApplier;
  // The path walked by `walk` (find, proofOfLeaf): node and digit per depth.
  private readonly walk_nodes = new Int32Array(DIGITS + 1);
  private readonly walk_digits = new Uint8Array(DIGITS + 1);
  private walk_depth = 0;
  private readonly probe = new Uint8Array(HASH);
  /** keccak calls of lookups (`find`: the probe's path). */
  private lookup_hashes = 0;

  /**
   * `keep_revert`: whether `update` keeps each changed leaf's previous value (`last_revert`: fraud
   * proofs, the verifier). The DA publisher never asks, and the copies were ~5% of the DA thread's
   * allocated bytes (sampling heap profile, 2026-11-26).
   */
  constructor(opts: { keep_revert?: boolean } = {}) {
    this.applier = new TreeBatchApplier(this.nodes, this.slots, this.index, opts.keep_revert ?? true);
  }

  /** keccak calls (leaf, path, node): cost accounting for benches. */
  get hashes(): number {
    return this.lookup_hashes + this.applier.hashes;
  }

  /** Changes that undo the last `update` (previous values; null = the leaf did not exist). */
  get last_revert(): RawChange[] {
    if (!this.applier.keep_revert) throw new Error('state tree: built without keep_revert, the last batch cannot be reverted');
    return this.applier.last_revert_changes;
  }

  get size(): number {
    return this.index.size;
  }

  root(): Uint8Array {
    return this.nodes.root_hash.slice();
  }

  /** The root as 0x-hex (no copy of its bytes first: the DA worker asks once per batch). */
  rootHex(): string {
    return toHex0x(this.nodes.root_hash);
  }

  /** Current value of the leaf with builder id `id`. */
  value(id: LeafId): Uint8Array | undefined {
    const slot = this.index.get(id);
    return slot < 0 ? undefined : this.slots.values.get(slot);
  }

  /** The leaf of (kind, key), found by its path. */
  find(kind: number, key: Uint8Array): LeafView | undefined {
    pathInto(kind, key, this.probe, 0);
    this.lookup_hashes++;
    const ref = this.walk(this.probe, 0);
    if (ref >= 0) return undefined;
    const slot = -ref - 1;
    if (compareBytes(this.slots.paths, slot * HASH, this.probe, 0, HASH) !== 0) return undefined;
    const d = this.walk_depth;
    const nodes = this.nodes;
    return d === 0 ? this.slots.view(slot, nodes.root_hash, 0) : this.slots.view(slot, nodes.rows, nodes.hashAt(this.walk_nodes[d - 1], this.walk_digits[d - 1]));
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
        const at = this.nodes.hashAt(this.walk_nodes[d], digit);
        if (digit !== this.walk_digits[d]) siblings.push(this.nodes.rows.slice(at, at + HASH));
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
    return this.applier.update(changes, diff);
  }

  /** Every leaf in canonical order (by path). */
  *all(): Generator<LeafView> {
    const nodes = this.nodes;
    if (nodes.root_ref === 0) return;
    // Refs with where their hash is (-1: the root's).
    const stack: [number, number][] = [[nodes.root_ref, -1]];
    while (stack.length > 0) {
      const [ref, at] = stack.pop()!;
      if (ref < 0) {
        yield at < 0 ? this.slots.view(-ref - 1, nodes.root_hash, 0) : this.slots.view(-ref - 1, nodes.rows, at);
        continue;
      }
      for (let digit = ARITY - 1; digit >= 0; digit--) {
        const c = nodes.kid(ref, digit);
        if (c !== 0) stack.push([c, nodes.hashAt(ref, digit)]);
      }
    }
  }

  /**
   * Root the tree would have after `changes` (value null = remove; for one key the last change
   * wins), without changing it: the untouched subtrees' hashes are reused. Between batches only.
   */
  rootAfter(changes: readonly LeafChange[]): Uint8Array {
    const nodes = this.nodes;
    return rootAfterChanges({
      root_ref: nodes.root_ref, root_hash: nodes.root_hash, rows: nodes.rows, paths: this.slots.paths,
      kid: (node: number, digit: number) => nodes.kid(node, digit), hashAt: (node: number, digit: number) => nodes.hashAt(node, digit),
    }, changes);
  }

  /**
   * Walks from the root along the path at `paths[at..]` through internal nodes, recording them in
   * walk_nodes/walk_digits; returns the ref it stopped at (0 or a leaf).
   */
  private walk(paths: Uint8Array, at: number): number {
    let ref = this.nodes.root_ref;
    let d = 0;
    while (ref > 0) {
      const digit = digitOf(paths, at, d);
      this.walk_nodes[d] = ref;
      this.walk_digits[d] = digit;
      ref = this.nodes.kid(ref, digit);
      d++;
    }
    this.walk_depth = d;
    return ref;
  }

}
