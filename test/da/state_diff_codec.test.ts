// The state diff's binary form (what the DA store keeps): round trip to the published hex form,
// malformed bytes refused, and the LMDB store serving both the binary form and the older hex
// objects.
import { describe, expect, it } from 'vitest';
import { LmdbDaStore } from '../../src/da/da_store.js';
import { EMPTY_FILLS_ROOT } from '../../src/da/fills_tree.js';
import type { PublishedBatch } from '../../src/da/published.js';
import { decodeChanges, encodeChanges } from '../../src/da/state_diff.js';
import { changesToHex, type RawChange } from '../../src/da/state_leaves.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tempDir = tempDirsPerFile('ringbook-diff-');

const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);
const raw = (kind: number, key: Uint8Array, value: Uint8Array | null): RawChange => ({ kind, key, value });

const CHANGES: RawChange[] = [
  raw(1, bytes(0, 0, 0, 7, 0, 1), new Uint8Array(16).fill(0xab)),
  raw(4, bytes(0, 0, 0, 0, 0, 0, 1, 2), null),
  raw(6, new Uint8Array(0), bytes(0, 5, 0, 1)),
  raw(18, new Uint8Array(8).fill(3), new Uint8Array(300).fill(9)),
  raw(2, bytes(0, 0, 0, 9), new Uint8Array(0)),
];

describe('state diff binary form', () => {
  it('decodes to exactly the hex form of the same changes (removed, empty key, empty and long values)', () => {
    expect(decodeChanges(encodeChanges(CHANGES))).toEqual(changesToHex(CHANGES));
    expect(decodeChanges(encodeChanges([]))).toEqual([]);
  });

  it('refuses truncated bytes and values it cannot encode', () => {
    const b = encodeChanges(CHANGES);
    for (const cut of [1, 3, 9, b.length - 1]) expect(() => decodeChanges(b.subarray(0, cut))).toThrow(/truncated/);
    expect(() => encodeChanges([raw(1, new Uint8Array(256), null)])).toThrow(/too long/);
    expect(() => encodeChanges([raw(1, bytes(1), new Uint8Array(0xffff))])).toThrow(/too long/);
  });

  it('the LMDB store keeps the bytes and serves the hex; batches stored as hex objects still read', async () => {
    const dir = tempDir();
    const H = (n: number): string => '0x' + n.toString(16).padStart(64, '0');
    const base = (id: number): PublishedBatch => ({
      header: { batch_id: id, prev_state_root: H(id - 1), state_root: H(id), fills_root: EMPTY_FILLS_ROOT, input_hash: H(id), timestamp: id },
      inputs_hex: 'ab'.repeat(RECORD_WORDS * 4), fills: [],
    });
    const store = LmdbDaStore.open(dir);
    let hex_made = 0;
    // The publisher's form: the bytes for the store, the hex only if someone reads this handle.
    await store.submit({
      ...base(1),
      get state_diff() {
        hex_made++;
        return changesToHex(CHANGES);
      },
      state_diff_bytes: encodeChanges(CHANGES),
    });
    expect(hex_made).toBe(0);
    await store.submit({ ...base(2), state_diff: changesToHex(CHANGES.slice(0, 2)) });
    await store.close();
    const again = LmdbDaStore.open(dir);
    expect(again.get(1)?.state_diff).toEqual(changesToHex(CHANGES));
    expect(again.get(2)?.state_diff).toEqual(changesToHex(CHANGES.slice(0, 2)));
    await again.close();
  });
});
