// LeafBatch's layout (each entry's kind right before its key, at a 4-byte aligned offset) and the
// tree's hashes straight from it (batchHashInto): the same digests as keccak256 of kind || key ||
// value made by noble, at every length around keccak's block, across the batch's growth.
import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { LeafBatch } from '../../src/da/leaf_batch.js';
import { batchHashInto } from '../../src/da/state_tree_hash.js';
import { mulberry32 } from '../../src/util/prng.js';

describe('LeafBatch: kind || key || value contiguous and aligned', () => {
  it('hashes each entry like keccak256 of its bytes (paths and leaf hashes), across growth', () => {
    const rand = mulberry32(11);
    const batch = new LeafBatch();
    const want: { kind: number; key: Uint8Array; value: Uint8Array | null }[] = [];
    // 3,000 entries of 0..300 bytes of value (the buffer grows from 16 KiB several times).
    for (let i = 0; i < 3_000; i++) {
      const kind = 1 + Math.floor(rand() * 255);
      const key = Uint8Array.from({ length: Math.floor(rand() * 13) }, () => Math.floor(rand() * 256));
      const removed = rand() < 0.05;
      const value = removed ? null : Uint8Array.from({ length: i < 300 ? i : Math.floor(rand() * 300) }, () => Math.floor(rand() * 256));
      batch.push(i, { kind, key, value });
      want.push({ kind, key, value });
    }
    const out = new Uint8Array(64);
    for (let i = 0; i < batch.count; i++) {
      const { kind, key, value } = want[i];
      expect((batch.at[i] - 1) % 4, String(i)).toBe(0);
      expect(batch.bytes[batch.at[i] - 1]).toBe(kind);
      // Into an odd offset (a node row's child) and an aligned one.
      batchHashInto(batch, i, key.length, out, 1);
      expect(Buffer.from(out.subarray(1, 33)).toString('hex'), `path ${i}`).toBe(Buffer.from(keccak_256(Uint8Array.from([kind, ...key]))).toString('hex'));
      if (value === null) continue;
      batchHashInto(batch, i, key.length + value.length, out, 32);
      expect(Buffer.from(out.subarray(32, 64)).toString('hex'), `leaf ${i}`).toBe(Buffer.from(keccak_256(Uint8Array.from([kind, ...key, ...value]))).toString('hex'));
    }
  });

  it('refuses a kind outside 1..255 when it is added (0 is the node prefix; 256 would wrap to it in the byte arrays)', () => {
    const batch = new LeafBatch();
    for (const kind of [0, 256, -1, 1.5, Number.NaN]) {
      expect(() => batch.push(1, { kind, key: new Uint8Array(4), value: new Uint8Array(8) }), String(kind)).toThrow(/leaf kind .* is not 1\.\.255/);
      expect(() => batch.add(1, kind, 4, 8), String(kind)).toThrow(/not 1\.\.255/);
    }
    expect(batch.count).toBe(0);
    batch.push(1, { kind: 255, key: new Uint8Array(4), value: new Uint8Array(8) });
    batch.push(2, { kind: 1, key: new Uint8Array(4), value: null });
    expect([...batch.kinds.subarray(0, 2)]).toEqual([255, 1]);
  });
});
