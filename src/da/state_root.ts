// The state root (docs/verifiability.md, "State root"): a commitment to the engine state as the
// committed event stream describes it, computed off the matcher by whoever reads the events (the
// front's DA publisher, the verifier re-executing published batches, the recovery bench).
//
// Leaves: kind byte || key || value, fixed-width big-endian integers (see LeafKind and the
// encoders below). leaf_hash = keccak256(kind || key || value); the leaves sit in a compact
// sparse Merkle trie of arity 4 at path keccak256(kind || key) (src/da/state_tree.ts).
//
// Incremental: `apply` only records the latest value of each leaf the batch touched (so the
// order of touches within a batch does not matter, and a leaf touched ten times is hashed once;
// the events' reading: src/da/state_events.ts); `endBatch` hashes the changed leaves and each
// trie node on their paths once.
import { FillsTree, EMPTY_FILLS_ROOT, type FillLeaf } from './fills_tree.js';
import { hexToBytes } from './hex.js';
import { toHex0x } from '../util/hex.js';
import { LEAF_KIND_NAMES, LeafKind as Kind, balanceKey as balanceKeyOf, changesToHex, getU16, getU32, describeLeaf, hex, type LeafChange, type LeafRecord, type RawLeaf } from './state_leaves.js';
import { StateTree, type LeafProof, type LeafView } from './state_tree.js';
import { StateEventReader } from './state_events.js';
import { encodePending } from './pending_leaves.js';
import { decodeChanges, describeChange, firstDifferingChange } from './state_diff.js';
import { LeafBatch } from './leaf_batch.js';
import type { CanonicalLeaves } from './canonical_leaves.js';
import type { EventFields } from '../ring/event_records.js';

// ---------------------------------------------------------------------------------------------
// The builder: events -> leaves (state_events.ts) -> the tree (state_tree.ts) -> roots

export interface BatchRoots {
  batch_id: number;
  state_root: string;
  fills: FillLeaf[];
  fills_root: string;
  /** The leaves this batch changed, in sort-key order (value null = removed); hex made on first read. */
  readonly state_diff: LeafChange[];
  /** How many leaves the batch changed (the diff's length). */
  leaves_changed: number;
  /** The same changes in binary form (state_diff.ts encodeLeafBatch): what the DA store keeps. */
  readonly state_diff_bytes: Uint8Array;
}

/**
 * A closed batch's roots, its diff decoded on first read. A class, not an object literal with a
 * getter: each literal's getter is a fresh closure, which V8 adds to the object as an accessor
 * through a map transition of its own (MigrateToMap, a slow load of the field) in every batch
 * (docs/benchmarks.md h23d, with JournalReader.get's like change; publisher.ts's SubmittedBatch,
 * same cause).
 */
class EndedBatch implements BatchRoots {
  private diff: LeafChange[] | null = null;

  constructor(
    readonly batch_id: number, readonly state_root: string, readonly fills: FillLeaf[], readonly fills_root: string,
    readonly leaves_changed: number, readonly state_diff_bytes: Uint8Array,
  ) {}

  get state_diff(): LeafChange[] {
    return (this.diff ??= decodeChanges(this.state_diff_bytes));
  }
}

/**
 * One tree lookup (keccak of the path, then the path's nodes) costs about as much as walking this
 * many leaves in `tree.all()`: ~2.0 and ~0.9 CPU us (bench/matcher_snapshot.ts, docs/benchmarks.md h28m).
 */
const LOOKUP_COST_IN_LEAVES_WALKED = 2;

export class StateRootBuilder {
  private readonly tree: StateTree;
  /** The events -> the batch's pending leaf changes and fills. */
  private readonly events: StateEventReader;
  /** The batch's leaves as encoded at endBatch (one arena, reused). */
  private readonly leaf_batch = new LeafBatch();
  private root_hex: string;
  /** Batches ended so far. */
  batches = 0;

  /**
   * `assets`: the asset symbols in index order (config), for market ids in fill leaves.
   * `keep_revert` false: the last batch's previous values are not kept (`rootIfLastBatchMade`
   * and `previousValue` then throw); the DA publisher, which never asks, saves their copies.
   */
  constructor(assets: readonly string[], opts: { keep_revert?: boolean } = {}) {
    this.tree = new StateTree({ keep_revert: opts.keep_revert ?? true });
    this.events = new StateEventReader(assets, this.tree);
    this.root_hex = this.tree.rootHex();
  }

  /** The root after the last `endBatch` (the empty tree's root before any). */
  stateRoot(): string {
    return this.root_hex;
  }

  /** Batch id of the batch being read (from its BATCH_BEGIN). */
  currentBatchId(): number {
    return this.events.batch_id;
  }

  /** Number of leaves. */
  leafCount(): number {
    return this.tree.size;
  }

  /** Hash operations done so far (cost accounting). */
  hashCount(): number {
    return this.tree.hashes;
  }

  /** Consumes one committed event (any type; markers and rejections change nothing). */
  apply(e: EventFields): void {
    this.events.apply(e);
  }

  /**
   * Closes a batch without hashing: its changes stay pending and merge with the next batches'
   * (last value wins), so a run of batches whose roots are already known (a restart replaying
   * published batches) costs one rehash of what they changed, at the next `endBatch`.
   */
  skipBatch(): void {
    this.events.takeFills();
    this.batches++;
  }

  /** Closes the batch: hashes what it changed and returns its roots and fills. */
  endBatch(): BatchRoots {
    const leaves = this.leaf_batch;
    // encodePending adds each leaf once (one pending entry per leaf id).
    leaves.clear(true);
    try {
      encodePending(this.events.pending, this.events.markets, leaves);
    } finally {
      // The set and its entries are reused by the next batch (its bytes are in `leaves` now).
      this.events.pending.clear();
    }
    const changes = this.tree.update(leaves);
    this.root_hex = this.tree.rootHex();
    const fills = this.events.takeFills();
    const fills_root = fills.length === 0 ? EMPTY_FILLS_ROOT : FillsTree.build(fills).root();
    this.batches++;
    return new EndedBatch(this.events.batch_id, this.root_hex, fills, fills_root, changes.count, changes.bytes);
  }

  /**
   * Starts an empty builder from a snapshot's leaves (src/da/canonical_leaves.ts) as if it had
   * read every event up to batch `batch_id`: one hash per leaf and per path, every trie node
   * once. Returns the root.
   */
  restore(snapshot: CanonicalLeaves, batch_id: number): string {
    if (this.tree.size !== 0 || this.batches !== 0) throw new Error('state root: restore needs an empty builder');
    this.tree.update(LeafBatch.of(snapshot.entries), false);
    this.events.restore(snapshot, batch_id);
    this.root_hex = this.tree.rootHex();
    return this.root_hex;
  }

  /** Root the state would have after applying `changes` to it now (between batches). */
  rootAfter(changes: readonly LeafChange[]): string {
    return toHex0x(this.tree.rootAfter(changes));
  }

  /**
   * Root the state would have had if the last batch had made `changes` instead of what it made
   * (fraud proofs: does the operator's published state diff reproduce its claimed root?).
   */
  rootIfLastBatchMade(changes: readonly LeafChange[]): string {
    return toHex0x(this.tree.rootAfter([...changesToHex(this.tree.last_revert), ...changes]));
  }

  /** The value a leaf had before the last batch (hex; null = absent), when that batch changed it. */
  previousValue(kind: number, key_hex: string): string | null | undefined {
    const k = key_hex.toLowerCase();
    const r = this.tree.last_revert.find((c) => c.kind === kind && hex(c.key) === k);
    return r === undefined ? undefined : r.value === null ? null : hex(r.value);
  }

  /** The current leaf of a change's key (for fraud proofs), or null when absent. */
  leafOf(kind: number, key_hex: string): LeafRecord | null {
    const leaf = this.tree.find(kind, hexToBytes(key_hex, undefined, 'leaf key'));
    return leaf === undefined ? null : recordOf(leaf);
  }

  /** The membership proof of one leaf against stateRoot() (null: no such leaf). */
  proofOfLeaf(kind: number, key: Uint8Array): LeafProof | null {
    return this.tree.proofOfLeaf(kind, key);
  }

  /** Every leaf, canonical order (by sort key = path), decoded: for debugging fraud proofs. */
  leaves(): LeafRecord[] {
    const out: LeafRecord[] = [];
    for (const e of this.tree.all()) out.push(recordOf(e));
    return out;
  }

  /**
   * [account, asset] of every balance leaf whose value is zero: a snapshot's
   * `zero_balance_leaves` (src/da/canonical_leaves.ts says why) where no read model keeps them
   * (the cluster matcher, src/cluster/matcher_snapshots.ts). `candidates`: the pairs whose
   * balance is zero now (no other pair can be a zero leaf). Each is looked up (a keccak and one
   * path), unless looking them all up would cost more than one walk of every leaf
   * (`lookup_cost`: a lookup's cost in leaves walked; tests and the bench force either way).
   */
  zeroBalanceLeaves(candidates: readonly (readonly [number, number])[], lookup_cost = LOOKUP_COST_IN_LEAVES_WALKED): [number, number][] {
    const out: [number, number][] = [];
    if (candidates.length * lookup_cost < this.tree.size) {
      for (const [account, asset] of candidates) {
        if (this.tree.find(Kind.BALANCE, balanceKeyOf(account, asset)) !== undefined) out.push([account, asset]);
      }
      return out;
    }
    for (const e of this.tree.all()) {
      if (e.kind !== Kind.BALANCE || !e.value.every((b) => b === 0)) continue;
      // balanceKey's layout: u32 account, u16 asset.
      out.push([getU32(e.key, 0), getU16(e.key, 4)]);
    }
    return out;
  }

  /** Every leaf in raw form (tests: recompute the root from scratch). */
  rawLeaves(): RawLeaf[] {
    const out: RawLeaf[] = [];
    for (const e of this.tree.all()) out.push({ kind: e.kind, key: e.key, value: e.value });
    return out;
  }
}

function recordOf(e: LeafView): LeafRecord {
  const d = describeLeaf(e.kind, e.key, e.value);
  return {
    id: d.id, kind: LEAF_KIND_NAMES[e.kind] ?? String(e.kind), key: hex(e.key), value: hex(e.value),
    leaf_hash: hex(e.hash), sort_key: hex(e.sort_key), fields: d.fields,
  };
}

export { describeChange, firstDifferingChange };

// Leaf encodings and the tree are part of this module's public surface.
export {
  LeafKind, LEAF_KIND_NAMES, ZERO_ADDRESS, balanceKey, accountKey, orderKey,
  marketKey, withdrawalKey, balanceValue, nonceValue, accountValue, orderValue, marketValue,
  feesValue, creditValue, withdrawalValue, changesToHex, describeLeaf,
  type OrderLeafValue, type MarketLeafValue, type RawLeaf, type PendingLeaf, type RawChange,
  type LeafChange, type LeafRecord,
} from './state_leaves.js';
export { StateTree } from './state_tree.js';
export { stateRootOfLeaves } from './state_tree_hash.js';
