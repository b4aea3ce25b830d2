// The state trie (src/da/state_tree.ts, state_tree_hash.ts) under random batches of inserts, updates, removals and
// reinserts: the incremental root always equals the from-scratch root of the leaf set
// (stateRootOfLeaves) and an independent model of the doc's definition; two different histories
// that end with the same leaves give the same root; rootAfter predicts the next root without
// changing the tree.
import { describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { StateTree } from '../../src/da/state_tree.js';
import { stateRootOfLeaves } from '../../src/da/state_tree_hash.js';
import { changesToHex, type PendingLeaf, type RawLeaf } from '../../src/da/state_leaves.js';
import { mulberry32 } from '../../src/util/prng.js';

const hex = (b: Uint8Array): string => '0x' + Buffer.from(b).toString('hex');

/**
 * A leaf of kind 1..11 with a 4-byte key from `k`, and a value of 1..100 bytes from `v`: the
 * tree keeps values of up to 32 bytes in the slot, 33..64 in its pool and longer ones in a map,
 * so updates move leaves between the three.
 */
function leaf(k: number, v: number | null): [string, PendingLeaf] {
  const kind = 1 + (k % 11);
  const key = new Uint8Array(4);
  new DataView(key.buffer).setUint32(0, k);
  if (v === null) return [`${kind}:${k}`, { kind, key, value: null }];
  const value = new Uint8Array(1 + (v % 100)).map((_, i) => (v * 31 + i) & 255);
  return [`${kind}:${k}`, { kind, key, value }];
}

/** The doc's definition with noble keccak, over hex digits (independent of the tree's code). */
function modelRoot(leaves: RawLeaf[]): string {
  const cat = (...a: Uint8Array[]): Uint8Array => Uint8Array.from(a.flatMap((x) => [...x]));
  const all = leaves.map((l) => ({
    path: Buffer.from(keccak_256(cat(Uint8Array.of(l.kind), l.key))).toString('hex'),
    h: keccak_256(cat(Uint8Array.of(l.kind), l.key, l.value)),
  }));
  const digit = (p: string, d: number): number => (parseInt(p[d >> 1], 16) >> (d % 2 === 0 ? 2 : 0)) & 3;
  const H = (s: typeof all, d: number): Uint8Array =>
    s.length === 0 ? new Uint8Array(32) : s.length === 1 ? s[0].h
      : keccak_256(cat(Uint8Array.of(0), ...[0, 1, 2, 3].map((i) => H(s.filter((x) => digit(x.path, d) === i), d + 1))));
  return hex(H(all, 0));
}

describe('StateTree', () => {
  it('incremental root = from-scratch root = model, through inserts, updates, removals and reinserts', () => {
    const r = mulberry32(11);
    const t = new StateTree();
    const live = new Map<number, number>();
    let removed = 0;
    let reinserted = 0;
    const gone = new Set<number>();
    for (let batch = 0; batch < 120; batch++) {
      const changes: [string, PendingLeaf][] = [];
      const n = 1 + Math.floor(r() * (batch < 5 ? 300 : 40));
      for (let i = 0; i < n; i++) {
        const k = Math.floor(r() * 600);
        if (live.has(k) && r() < 0.4) {
          changes.push(leaf(k, null));
          live.delete(k);
          gone.add(k);
          removed++;
        } else {
          const v = Math.floor(r() * 1000);
          if (gone.delete(k)) reinserted++;
          changes.push(leaf(k, v));
          live.set(k, v);
        }
      }
      // A removal of an absent leaf changes nothing.
      changes.push(leaf(100_000 + batch, null));
      t.update(changes);
      expect(t.size).toBe(live.size);
      const root = hex(t.root());
      const leaves = [...live].map(([k, v]) => {
        const [, l] = leaf(k, v);
        return { kind: l.kind, key: l.key, value: l.value! };
      });
      expect(stateRootOfLeaves(leaves), `batch ${batch}`).toBe(root);
      if (batch % 30 === 0) expect(modelRoot(leaves), `batch ${batch}`).toBe(root);
      // Canonical order is by path.
      const paths = [...t.all()].map((l) => hex(l.sort_key));
      expect(paths).toEqual([...paths].sort());
      // The stored values (slot, pool or map) are the last ones written.
      if (batch % 10 === 0) {
        const stored = new Map([...t.all()].map((l) => [`${l.kind}:${hex(l.key)}`, hex(l.value)]));
        for (const [k, v] of live) {
          const [, l] = leaf(k, v);
          expect(stored.get(`${l.kind}:${hex(l.key)}`), `batch ${batch} leaf ${k}`).toBe(hex(l.value!));
        }
      }
    }
    expect(removed).toBeGreaterThan(500);
    expect(reinserted).toBeGreaterThan(50);
  });

  it('two histories that end with the same leaves give the same root; removing everything gives zeros', () => {
    const r = mulberry32(5);
    const a = new StateTree();
    const b = new StateTree();
    // a: 400 leaves in one batch. b: 700 leaves in 7 batches, then the 300 extra removed, and
    // the 400 updated through other values first.
    const keys = Array.from({ length: 400 }, (_, i) => i * 7 + 3);
    a.update(keys.map((k) => leaf(k, k)));
    for (let i = 0; i < 7; i++) b.update(Array.from({ length: 100 }, (_, j) => leaf(i * 100 + j + 5_000, j)));
    const shuffled = [...keys].sort(() => r() - 0.5);
    b.update(shuffled.map((k) => leaf(k, k + 1)));
    b.update(Array.from({ length: 700 }, (_, j) => leaf(5_000 + j, null)));
    expect(hex(b.root())).not.toBe(hex(a.root()));
    b.update(shuffled.map((k) => leaf(k, k)));
    expect(hex(b.root())).toBe(hex(a.root()));
    a.update(keys.map((k) => leaf(k, null)));
    expect(hex(a.root())).toBe('0x' + '00'.repeat(32));
    expect(a.size).toBe(0);
    // One leaf: the root is its leaf hash.
    a.update([leaf(9, 9)]);
    const [, one] = leaf(9, 9);
    expect(hex(a.root())).toBe(hex(keccak_256(Uint8Array.from([one.kind, ...one.key, ...one.value!]))));
  });

  it('rootAfter predicts the root of the next update and changes nothing; last_revert undoes it', () => {
    const r = mulberry32(8);
    const t = new StateTree();
    t.update(Array.from({ length: 2_000 }, (_, k) => leaf(k, k)));
    for (let round = 0; round < 30; round++) {
      const changes: [string, PendingLeaf][] = [];
      for (let i = 0; i < 1 + Math.floor(r() * 30); i++) {
        const k = Math.floor(r() * 2_500);
        changes.push(leaf(k, r() < 0.3 ? null : Math.floor(r() * 1000)));
      }
      const before = hex(t.root());
      const hexed = changesToHex(changes.map(([, c]) => ({ sort_key: new Uint8Array(32), ...c })));
      const predicted = hex(t.rootAfter(hexed));
      expect(hex(t.root())).toBe(before);
      t.update(changes);
      expect(hex(t.root())).toBe(predicted);
      // Undoing through rootAfter (as fraud proofs do) gives the previous root back.
      expect(hex(t.rootAfter(changesToHex(t.last_revert)))).toBe(before);
    }
  });

  it('finds leaves by kind and key, refuses kind 0 and equal paths under two ids', () => {
    const t = new StateTree();
    t.update([leaf(1, 1), leaf(2, 2)]);
    const [, l] = leaf(2, 2);
    expect(hex(t.find(l.kind, l.key)!.value)).toBe(hex(l.value!));
    expect(t.find(l.kind, new Uint8Array(4))).toBeUndefined();
    expect(() => t.update([['zero', { kind: 0, key: new Uint8Array(1), value: new Uint8Array(1) }]])).toThrow(/kind 0/);
    const [, dup] = leaf(1, 5);
    expect(() => t.update([['other-id', dup]])).toThrow(/same path/);
  });
});
