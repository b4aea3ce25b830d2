// The state trie's batch application (src/da/state_tree.ts: changes taken in path order, one
// depth-first walk per batch, nodes finished as the walk leaves them) against references that
// share none of its storage: random leaf sets of thousands of leaves, in batches of 1 to 2,000
// changes (updates, equal values, inserts, removals, removals of absent leaves, and the same leaf
// changed several times in one batch). After every batch the root equals the root of the model's
// leaf set computed here from scratch (the doc's definition over sorted paths; now and then also
// stateRootOfLeaves and a noble-keccak implementation), the binary diff equals one written here
// from the model (changed leaves by path), and now and then a tree loaded with the whole set in
// one batch (the restore path) has the same root. A node-storage change that moved a hash or a
// child gives another root here.
import { describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { StateTree } from '../../src/da/state_tree.js';
import { stateRootOfLeaves } from '../../src/da/state_tree_hash.js';
import type { LeafId } from '../../src/da/leaf_ids.js';
import { LeafBatch } from '../../src/da/leaf_batch.js';
import type { PendingLeaf, RawLeaf } from '../../src/da/state_leaves.js';
import { mulberry32 } from '../../src/util/prng.js';
import { keccak256Wasm } from '../../src/util/keccak_wasm.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const cat = (...a: Uint8Array[]): Uint8Array => Uint8Array.from(a.flatMap((x) => [...x]));

/**
 * Leaf number k: kind 1..20, a key of 4..12 bytes (leaf 5 is kind 6 with no key, as the global
 * fees leaf), numeric ids for kinds 1-4 as the builder's.
 */
function leafOf(k: number): { id: LeafId; kind: number; key: Uint8Array } {
  const kind = k % 19 === 5 && k !== 5 ? 20 : 1 + (k % 19);
  const key_len = kind === 6 ? 0 : 4 + (k % 9);
  const key = new Uint8Array(key_len).map((_, i) => (Math.floor(k / 19) >> (8 * (i % 4))) & 255);
  if (key_len > 0) key[key_len - 1] ^= k & 255;
  const id: LeafId = kind <= 4 ? kind * 2 ** 48 + k : `${kind}:${k}`;
  return { id, kind, key };
}

/** A value of 0..100 bytes (in the slot, the pool, or the long map) from `v`. */
function valueOf(v: number): Uint8Array {
  return new Uint8Array(v % 101).map((_, i) => (v * 131 + i * 7) & 255);
}

/** The doc's definition with noble keccak (independent of src/da's hashing code). */
function nobleRoot(leaves: RawLeaf[]): string {
  const all = leaves.map((l) => ({ path: keccak_256(cat(Uint8Array.of(l.kind), l.key)), h: keccak_256(cat(Uint8Array.of(l.kind), l.key, l.value)) }));
  const digit = (p: Uint8Array, d: number): number => (p[d >> 2] >> (6 - 2 * (d & 3))) & 3;
  const H = (s: typeof all, d: number): Uint8Array =>
    s.length === 0 ? new Uint8Array(32) : s.length === 1 ? s[0].h
      : keccak_256(cat(Uint8Array.of(0), ...[0, 1, 2, 3].map((i) => H(s.filter((x) => digit(x.path, d) === i), d + 1))));
  return '0x' + hex(H(all, 0));
}

/** A leaf's path (hex, sorts as bytes) and leaf hash, computed once per value. */
interface Hashed { path: string; path_bytes: Uint8Array; hash: Uint8Array }

function hashed(kind: number, key: Uint8Array, value: Uint8Array): Hashed {
  const path_bytes = keccak256Wasm(Uint8Array.of(kind), key);
  return { path: hex(path_bytes), path_bytes, hash: keccak256Wasm(Uint8Array.of(kind), key, value) };
}

const ZERO = new Uint8Array(32);

/** H(S, d) over leaves sorted by path (docs/verifiability.md), recursively, from scratch. */
function sortedRoot(s: Hashed[], lo: number, hi: number, d: number): Uint8Array {
  if (hi === lo) return ZERO;
  if (hi - lo === 1) return s[lo].hash;
  const node = new Uint8Array(129);
  let a = lo;
  for (let digit = 0; digit < 4; digit++) {
    let b = a;
    while (b < hi && ((s[b].path_bytes[d >> 2] >> (6 - 2 * (d & 3))) & 3) === digit) b++;
    node.set(sortedRoot(s, a, b, d + 1), 1 + 32 * digit);
    a = b;
  }
  return keccak256Wasm(node);
}

/** The binary diff (docs/verifiability.md, "State diff"), written from the model: changed leaves by path. */
function expectedDiff(changes: { kind: number; key: Uint8Array; value: Uint8Array | null }[]): string {
  const sorted = changes
    .map((c) => ({ ...c, path: hex(keccak256Wasm(Uint8Array.of(c.kind), c.key)) }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  let out = '';
  for (const c of sorted) {
    const len = c.value === null ? 0xffff : c.value.length;
    out += hex(Uint8Array.of(c.kind, c.key.length)) + hex(c.key) + hex(Uint8Array.of(len >> 8, len & 255)) + (c.value === null ? '' : hex(c.value));
  }
  return out;
}

describe('StateTree batches', () => {
  // keep_revert false is the DA publisher's tree: an update compares and copies its value in one
  // pass (SlotValues.replace); true keeps the previous values (equals, then set).
  it.each([true, false])('roots, diffs and restores agree with references over random batches on a deep trie (keep_revert %s)', (keep_revert) => {
    const r = mulberry32(2026);
    const tree = new StateTree({ keep_revert });
    const live = new Map<number, number>();
    const hashes = new Map<number, Hashed>();
    let next_new = 0;
    let dup_batches = 0;
    let checked_noble = 0;
    for (let batch = 0; batch < 90; batch++) {
      // A few large batches (the restore-sized growth), many small and medium ones.
      const n = batch < 4 ? 2_000 : [1, 2, 7, 40, 300, 1_500][Math.floor(r() * 6)];
      const with_dups = batch >= 4 && r() < 0.3;
      const entries: [LeafId, PendingLeaf][] = [];
      const final = new Map<number, number | null>();
      const keys = [...live.keys()];
      for (let i = 0; i < n; i++) {
        const roll = r();
        let k: number;
        if (roll < 0.35 || keys.length === 0) k = next_new++;
        else if (roll < 0.4) k = 10_000_000 + Math.floor(r() * 1e6); // absent: removing it changes nothing
        else k = keys[Math.floor(r() * keys.length)];
        if (!with_dups && final.has(k)) continue;
        const { id, kind, key } = leafOf(k);
        let v: number | null;
        if (k >= 10_000_000 || (live.has(k) && r() < 0.3)) v = null;
        else if (live.has(k) && r() < 0.1) v = live.get(k)!; // an equal value changes nothing
        else v = Math.floor(r() * 1e6);
        entries.push([id, { kind, key, value: v === null ? null : valueOf(v) }]);
        final.set(k, v);
        // The same leaf again in this batch: back and forth, the last change counts.
        if (with_dups && r() < 0.1) {
          const again = r() < 0.5 ? null : Math.floor(r() * 1e6);
          entries.push([id, { kind, key, value: again === null ? null : valueOf(again) }]);
          final.set(k, again);
          dup_batches++;
        }
      }
      const diff_changes: { kind: number; key: Uint8Array; value: Uint8Array | null }[] = [];
      for (const [k, v] of final) {
        const was = live.get(k);
        if (v === null) {
          if (was !== undefined) diff_changes.push({ ...leafOf(k), value: null });
          live.delete(k);
          hashes.delete(k);
        } else {
          if (was === undefined || hex(valueOf(was)) !== hex(valueOf(v))) diff_changes.push({ ...leafOf(k), value: valueOf(v) });
          live.set(k, v);
          hashes.set(k, hashed(leafOf(k).kind, leafOf(k).key, valueOf(v)));
        }
      }
      // Batches without a repeated id go in as the builder's do (distinct: no per-slot marks).
      const leaf_batch = LeafBatch.of(entries);
      leaf_batch.distinct = !with_dups;
      const diff = tree.update(leaf_batch);
      const root = '0x' + hex(tree.root());
      expect(tree.size, `batch ${batch}`).toBe(live.size);
      const sorted = [...hashes.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
      expect(root, `batch ${batch} (${n} changes)`).toBe('0x' + hex(sortedRoot(sorted, 0, sorted.length, 0)));
      // Diffs are exact when every leaf changes once (the builder's batches); a leaf set twice
      // to values that end where they started may be listed, so only those batches skip this.
      if (!with_dups) {
        expect(diff.count, `batch ${batch}`).toBe(diff_changes.length);
        expect(hex(diff.bytes), `batch ${batch}`).toBe(expectedDiff(diff_changes));
      }
      const leaves = (): RawLeaf[] => [...live].map(([k, v]) => ({ kind: leafOf(k).kind, key: leafOf(k).key, value: valueOf(v) }));
      if (batch % 15 === 14) {
        expect(stateRootOfLeaves(leaves()), `batch ${batch}`).toBe(root);
        const restored = new StateTree();
        restored.update([...live].map(([k, v]): [LeafId, PendingLeaf] => [leafOf(k).id, { ...leafOf(k), value: valueOf(v) }]), false);
        expect('0x' + hex(restored.root()), `batch ${batch} restored`).toBe(root);
      }
      if (batch % 30 === 29 || batch === 0) {
        expect(nobleRoot(leaves()), `batch ${batch}`).toBe(root);
        checked_noble++;
      }
      // Values, by id, and a membership proof of one leaf per batch.
      const probe = keys[Math.floor(r() * keys.length)];
      if (probe !== undefined && live.has(probe)) {
        const { id, kind, key } = leafOf(probe);
        expect(hex(tree.value(id)!)).toBe(hex(valueOf(live.get(probe)!)));
        expect(tree.proofOfLeaf(kind, key)).not.toBeNull();
      }
    }
    expect(live.size).toBeGreaterThan(3_000);
    expect(dup_batches).toBeGreaterThan(50);
    expect(checked_noble).toBe(4);
  });

  it('shrinking to a handful of leaves and growing again: collapses and splits near the root', () => {
    const r = mulberry32(7);
    const tree = new StateTree();
    const live = new Map<number, Hashed>();
    const check = (what: string): void => {
      const sorted = [...live.values()].sort((a, b) => (a.path < b.path ? -1 : 1));
      expect('0x' + hex(tree.root()), what).toBe('0x' + hex(sortedRoot(sorted, 0, sorted.length, 0)));
    };
    for (let round = 0; round < 6; round++) {
      // Grow to ~300 leaves in a few batches, then remove down to 0 in batches of 1-40 (the
      // last ones one at a time), some batches also inserting a leaf or two.
      while (live.size < 300) {
        const add: [LeafId, PendingLeaf][] = [];
        for (let i = 0; i < 1 + Math.floor(r() * 120); i++) {
          const k = round * 1_000 + Math.floor(r() * 1_000);
          const { id, kind, key } = leafOf(k);
          if (live.has(k) || add.some(([a]) => a === id)) continue;
          add.push([id, { kind, key, value: valueOf(k) }]);
          live.set(k, hashed(kind, key, valueOf(k)));
        }
        tree.update(add);
        check(`round ${round} growing to ${live.size}`);
      }
      while (live.size > 0) {
        const keys = [...live.keys()];
        const n = live.size <= 8 ? 1 : 1 + Math.floor(r() * 40);
        const batch: [LeafId, PendingLeaf][] = [];
        for (const k of keys.sort(() => r() - 0.5).slice(0, n)) {
          batch.push([leafOf(k).id, { ...leafOf(k), value: null }]);
          live.delete(k);
        }
        if (live.size > 0 && r() < 0.2) {
          const k = 100_000 + round * 1_000 + Math.floor(r() * 1_000);
          if (!live.has(k)) {
            batch.push([leafOf(k).id, { ...leafOf(k), value: valueOf(k) }]);
            live.set(k, hashed(leafOf(k).kind, leafOf(k).key, valueOf(k)));
          }
        }
        tree.update(batch);
        check(`round ${round} shrinking to ${live.size}`);
      }
      expect(tree.size).toBe(0);
    }
  });

  it('a batch that promised distinct ids and repeats one fails loudly', () => {
    const tree = new StateTree();
    const b = LeafBatch.of([[leafOf(1).id, { ...leafOf(1), value: valueOf(1) }], [leafOf(1).id, { ...leafOf(1), value: valueOf(2) }]]);
    b.distinct = true;
    expect(() => tree.update(b)).toThrow(/same path/);
  });

  it('removing every leaf in one batch empties the tree; the leaves back in another give the same root', () => {
    const tree = new StateTree();
    const all: [LeafId, PendingLeaf][] = Array.from({ length: 5_000 }, (_, k) => [leafOf(k).id, { ...leafOf(k), value: valueOf(k) }]);
    tree.update(all);
    const full = hex(tree.root());
    const diff = tree.update(all.map(([id, l]) => [id, { ...l, value: null }]));
    expect(diff.count).toBe(5_000);
    expect(tree.size).toBe(0);
    expect(hex(tree.root())).toBe('00'.repeat(32));
    tree.update([...all].reverse());
    expect(hex(tree.root())).toBe(full);
  });
});
