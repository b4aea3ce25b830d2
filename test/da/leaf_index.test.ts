// The state tree's leaf index against a Map: random inserts, overwrites and deletes (backward-shift
// deletion in long probe runs, growth), numeric and string ids side by side.
import { describe, expect, it } from 'vitest';
import { LeafIndex } from '../../src/da/leaf_index.js';
import { balanceLeafId, orderLeafId } from '../../src/da/leaf_ids.js';
import type { LeafId } from '../../src/da/leaf_ids.js';
import { mulberry32 } from '../../src/util/prng.js';

describe('leaf index', () => {
  it('agrees with a Map over 200,000 random operations', () => {
    const rnd = mulberry32(5);
    const index = new LeafIndex();
    const model = new Map<LeafId, number>();
    // Few distinct ids relative to the operations, so ids come back after deletion; a narrow
    // numeric range makes neighbouring homes and long runs likely.
    const idOf = (): LeafId => {
      const r = rnd();
      const n = Math.floor(rnd() * 3000);
      return r < 0.45 ? balanceLeafId(n, n & 1) : r < 0.9 ? orderLeafId(n) : `8:${n}:${n * 7}`;
    };
    for (let op = 0; op < 200_000; op++) {
      const id = idOf();
      const r = rnd();
      if (r < 0.5) {
        const slot = Math.floor(rnd() * 1e6);
        index.set(id, slot);
        model.set(id, slot);
      } else if (r < 0.75) {
        index.delete(id);
        model.delete(id);
      } else {
        expect(index.get(id)).toBe(model.get(id) ?? -1);
      }
      if (op % 20_000 === 0) expect(index.size).toBe(model.size);
    }
    expect(index.size).toBe(model.size);
    for (const [id, slot] of model) expect(index.get(id)).toBe(slot);
  });

  it('finds every id after growing past a million entries, and none it never held', () => {
    const index = new LeafIndex();
    for (let i = 0; i < 1_100_000; i++) index.set(orderLeafId(i), i);
    expect(index.size).toBe(1_100_000);
    for (let i = 0; i < 1_100_000; i += 997) expect(index.get(orderLeafId(i))).toBe(i);
    expect(index.get(orderLeafId(1_100_000))).toBe(-1);
    expect(index.get(balanceLeafId(5, 1))).toBe(-1);
    expect(() => index.set(0, 1)).toThrow(/not positive/);
  });
});
