// PendingTable (src/da/pending_table.ts) holds a batch's balances, nonces, orders, terms and
// markets in place of Maps, reused from batch to batch. Checked here against a Map on random
// batches: the same keys in the same (first-touch) order, the same entries, nothing left over
// after clear(), through growth and through the let-go of a table a huge batch grew.
import { describe, expect, it } from 'vitest';
import { PendingTable } from '../../src/da/pending_table.js';
import { mulberry32 } from '../../src/util/prng.js';

interface Entry { v: number }

function contents(t: PendingTable<Entry>): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < t.count; i++) out.push([t.keyAt(i), t.entryAt(i).v]);
  return out;
}

describe('PendingTable', () => {
  it('agrees with a Map (first-touch order, last write wins) over random batches, cleared between them', () => {
    const rand = mulberry32(11);
    const t = new PendingTable<Entry>(() => ({ v: -1 }));
    // Keys of every shape the pending set uses: 0 (the fee account), small ids, balance keys
    // (account x 2^16 + asset), ids above 2^32 and near 2^53; repeats within a batch.
    const pools = [
      () => Math.floor(rand() * 50),
      () => Math.floor(rand() * 4000) * 65536 + Math.floor(rand() * 3),
      () => 2 ** 32 + Math.floor(rand() * 1000),
      () => Number.MAX_SAFE_INTEGER - Math.floor(rand() * 100),
    ];
    let previous = new Map<number, number>();
    for (let batch = 0; batch < 300; batch++) {
      const model = new Map<number, number>();
      // Sizes from 0 to past several growths (initial 128 keys).
      const n = batch % 50 === 49 ? 3000 : Math.floor(rand() * 400);
      for (let j = 0; j < n; j++) {
        const key = pools[Math.floor(rand() * pools.length)]();
        const v = batch * 1e6 + j;
        model.set(key, v);
        t.entry(key).v = v;
      }
      expect(contents(t)).toEqual([...model]);
      for (const [k, v] of model) expect(t.get(k)?.v).toBe(v);
      // A key of the batch before that this batch did not touch is absent, not stale.
      for (const k of previous.keys()) if (!model.has(k)) expect(t.get(k), `key ${k} left over`).toBeUndefined();
      previous = model;
      t.clear();
      expect(t.count).toBe(0);
      for (const k of model.keys()) expect(t.get(k)).toBeUndefined();
    }
  });

  it('a table grown by a huge batch (a restart merging skipped batches) is let go at clear() and works after', () => {
    const t = new PendingTable<Entry>(() => ({ v: 0 }));
    for (let k = 0; k < 100_000; k++) t.entry(k * 7).v = k;
    expect(t.count).toBe(100_000);
    expect(t.get(7 * 99_999)?.v).toBe(99_999);
    t.clear();
    expect(t.get(7 * 99_999)).toBeUndefined();
    for (let k = 0; k < 500; k++) t.entry(k).v = k + 1;
    expect(contents(t)).toEqual(Array.from({ length: 500 }, (_, k) => [k, k + 1]));
  });

  it('touch() adds a key once, keeping its first position', () => {
    const t = new PendingTable<null>(() => null);
    for (const m of [3, 1, 3, 0, 1]) t.touch(m);
    expect([...Array(t.count).keys()].map((i) => t.keyAt(i))).toEqual([3, 1, 0]);
  });
});
