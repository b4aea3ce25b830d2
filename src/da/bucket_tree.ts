// The bucketed Merkle tree over state leaves: 4,096 buckets, each the keccak of its sorted leaf
// hashes, under a binary tree; only touched buckets and their 12-node paths are rehashed.
import { bytesToHex0x, compareBytes, hexToBytes } from './hex.js';
import { keccak256 as keccak_256, keccak256Into } from './keccak.js';
import {
  BUCKETS, BUCKET_BITS, FIRST_LEAF_NODE, HASH, NODES, bucketOf, kindKey, leafHashOf,
  type LeafChange, type PendingLeaf, type RawChange, type RawLeaf,
} from './state_leaves.js';
// ---------------------------------------------------------------------------------------------
// The bucketed Merkle tree

export interface Entry {
  kind: number;
  key: Uint8Array;
  value: Uint8Array;
  sort_key: Uint8Array;
  bucket: number;
  hash: Uint8Array;
}

/** Hash of each level's node when every bucket is empty: ZERO_LEVEL[0] = bucket level (zeros). */
export const ZERO_LEVEL: Uint8Array[] = (() => {
  const out: Uint8Array[] = [new Uint8Array(HASH)];
  const pair = new Uint8Array(2 * HASH);
  for (let l = 1; l <= BUCKET_BITS; l++) {
    pair.set(out[l - 1], 0);
    pair.set(out[l - 1], HASH);
    out.push(keccak_256(pair));
  }
  return out;
})();

export function findIndex(bucket: Entry[], sort_key: Uint8Array): { index: number; found: boolean } {
  let lo = 0;
  let hi = bucket.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const c = compareBytes(bucket[mid].sort_key, 0, sort_key, 0, HASH);
    if (c === 0) return { index: mid, found: true };
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return { index: lo, found: false };
}

export let bucket_scratch = new Uint8Array(64 * HASH);

/** A bucket's hash written to `out[at .. at+32)`. */
export function hashBucketInto(bucket: Entry[], out: Uint8Array, at: number): void {
  const n = bucket.length;
  if (n === 0) {
    out.fill(0, at, at + HASH);
    return;
  }
  if (bucket_scratch.length < n * HASH) bucket_scratch = new Uint8Array(2 * n * HASH);
  const buf = bucket_scratch;
  for (let i = 0; i < n; i++) buf.set(bucket[i].hash, i * HASH);
  keccak256Into(buf, 0, n * HASH, out, at);
}

export function hashBucket(bucket: Entry[]): Uint8Array {
  const out = new Uint8Array(HASH);
  hashBucketInto(bucket, out, 0);
  return out;
}

/** The key -> leaf map plus its bucket tree, with incremental updates. */
export class BucketTree {
  private readonly entries = new Map<string, Entry>();
  private readonly buckets: Entry[][] = [];
  private readonly nodes = new Uint8Array(NODES * HASH);
  /** Hashes computed (leaf, sort key, bucket, node): cost accounting for benches. */
  hashes = 0;
  /** Changes that undo the last `update` (previous values; null = the leaf did not exist). */
  last_revert: RawChange[] = [];

  constructor() {
    for (let b = 0; b < BUCKETS; b++) this.buckets.push([]);
    // Level l (0 = buckets) holds nodes [2^(12-l) - 1, 2^(13-l) - 1).
    for (let l = 0; l <= BUCKET_BITS; l++) {
      const first = (1 << (BUCKET_BITS - l)) - 1;
      const count = 1 << (BUCKET_BITS - l);
      for (let i = 0; i < count; i++) this.nodes.set(ZERO_LEVEL[l], (first + i) * HASH);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  root(): Uint8Array {
    return this.nodes.slice(0, HASH);
  }

  get(id: string): Entry | undefined {
    return this.entries.get(id);
  }

  /**
   * Applies changes (value null = remove); returns the changes that really changed a leaf, in
   * sort-key order. Rehashes touched buckets and their paths only.
   */
  update(changes: Iterable<[string, PendingLeaf]>): RawChange[] {
    const dirty = new Set<number>();
    const applied: RawChange[] = [];
    const revert: RawChange[] = [];
    for (const [id, c] of changes) {
      const e = this.entries.get(id);
      if (c.value === null) {
        if (e === undefined) continue;
        const bucket = this.buckets[e.bucket];
        const at = findIndex(bucket, e.sort_key);
        if (!at.found) throw new Error(`state root: leaf ${id} missing from its bucket`);
        bucket.splice(at.index, 1);
        this.entries.delete(id);
        dirty.add(e.bucket);
        applied.push({ sort_key: e.sort_key, kind: c.kind, key: c.key, value: null });
        revert.push({ sort_key: e.sort_key, kind: c.kind, key: c.key, value: e.value });
        continue;
      }
      const hash = leafHashOf(c.kind, c.key, c.value);
      this.hashes++;
      if (e !== undefined) {
        if (compareBytes(e.hash, 0, hash, 0, HASH) === 0) continue;
        revert.push({ sort_key: e.sort_key, kind: c.kind, key: c.key, value: e.value });
        e.value = c.value;
        e.hash = hash;
        dirty.add(e.bucket);
        applied.push({ sort_key: e.sort_key, kind: c.kind, key: c.key, value: c.value });
        continue;
      }
      const sort_key = keccak_256(kindKey(c.kind, c.key));
      this.hashes++;
      const entry: Entry = { kind: c.kind, key: c.key, value: c.value, sort_key, bucket: bucketOf(sort_key), hash };
      const bucket = this.buckets[entry.bucket];
      const at = findIndex(bucket, sort_key);
      if (at.found) throw new Error(`state root: sort key collision for ${id}`);
      bucket.splice(at.index, 0, entry);
      this.entries.set(id, entry);
      dirty.add(entry.bucket);
      applied.push({ sort_key, kind: c.kind, key: c.key, value: c.value });
      revert.push({ sort_key, kind: c.kind, key: c.key, value: null });
    }
    this.last_revert = revert;
    this.rehash(dirty);
    applied.sort((a, b) => compareBytes(a.sort_key, 0, b.sort_key, 0, HASH));
    return applied;
  }

  private rehash(dirty: Set<number>): void {
    if (dirty.size === 0) return;
    let level: number[] = [];
    for (const b of dirty) {
      hashBucketInto(this.buckets[b], this.nodes, (FIRST_LEAF_NODE + b) * HASH);
      if (this.buckets[b].length > 0) this.hashes++;
      level.push(FIRST_LEAF_NODE + b);
    }
    for (let l = 0; l < BUCKET_BITS; l++) {
      const parents: number[] = [];
      let last = -1;
      level.sort((x, y) => x - y);
      for (const n of level) {
        const p = (n - 1) >> 1;
        if (p === last) continue;
        last = p;
        parents.push(p);
      }
      // Children 2p+1 and 2p+2 are adjacent: left || right is one 64-byte run of `nodes`.
      for (const p of parents) {
        keccak256Into(this.nodes, (2 * p + 1) * HASH, 2 * HASH, this.nodes, p * HASH);
        this.hashes++;
      }
      level = parents;
    }
  }

  /** Root the tree would have after `changes`, without changing it (fraud proofs). */
  rootAfter(changes: readonly LeafChange[]): Uint8Array {
    const copies = new Map<number, Entry[]>();
    const bucketCopy = (b: number): Entry[] => {
      let c = copies.get(b);
      if (c === undefined) {
        c = this.buckets[b].slice();
        copies.set(b, c);
      }
      return c;
    };
    for (const ch of changes) {
      const key = hexToBytes(ch.key, undefined, 'leaf key');
      const sort_key = keccak_256(kindKey(ch.kind, key));
      const b = bucketOf(sort_key);
      const bucket = bucketCopy(b);
      const at = findIndex(bucket, sort_key);
      if (ch.value === null) {
        if (at.found) bucket.splice(at.index, 1);
        continue;
      }
      const value = hexToBytes(ch.value, undefined, 'leaf value');
      const entry: Entry = { kind: ch.kind, key, value, sort_key, bucket: b, hash: leafHashOf(ch.kind, key, value) };
      if (at.found) bucket[at.index] = entry;
      else bucket.splice(at.index, 0, entry);
    }
    const overlay = new Map<number, Uint8Array>();
    const node = (i: number): Uint8Array => overlay.get(i) ?? this.nodes.subarray(i * HASH, (i + 1) * HASH);
    let level: number[] = [];
    for (const [b, bucket] of copies) {
      overlay.set(FIRST_LEAF_NODE + b, hashBucket(bucket));
      level.push(FIRST_LEAF_NODE + b);
    }
    const pair = new Uint8Array(2 * HASH);
    for (let l = 0; l < BUCKET_BITS; l++) {
      const parents = [...new Set(level.map((n) => (n - 1) >> 1))];
      for (const p of parents) {
        pair.set(node(2 * p + 1), 0);
        pair.set(node(2 * p + 2), HASH);
        overlay.set(p, keccak_256(pair));
      }
      level = parents;
    }
    return level.length === 0 ? this.root() : node(0).slice();
  }

  /** Every leaf in canonical order (bucket, then sort key). */
  *all(): Generator<Entry> {
    for (const bucket of this.buckets) yield* bucket;
  }
}

/**
 * The state root of a set of leaves computed from scratch, independently of BucketTree's
 * incremental bookkeeping (tests; a check of the incremental path).
 */
export function stateRootOfLeaves(leaves: readonly RawLeaf[]): string {
  const buckets: { sort_key: Uint8Array; hash: Uint8Array }[][] = Array.from({ length: BUCKETS }, () => []);
  for (const l of leaves) {
    const sort_key = keccak_256(kindKey(l.kind, l.key));
    buckets[bucketOf(sort_key)].push({ sort_key, hash: leafHashOf(l.kind, l.key, l.value) });
  }
  let level: Uint8Array[] = buckets.map((b) => {
    if (b.length === 0) return new Uint8Array(HASH);
    b.sort((x, y) => compareBytes(x.sort_key, 0, y.sort_key, 0, HASH));
    const buf = new Uint8Array(b.length * HASH);
    b.forEach((e, i) => buf.set(e.hash, i * HASH));
    return keccak_256(buf);
  });
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const pair = new Uint8Array(2 * HASH);
      pair.set(level[i], 0);
      pair.set(level[i + 1], HASH);
      next.push(keccak_256(pair));
    }
    level = next;
  }
  return bytesToHex0x(level[0]);
}
