// BookSide.find (a scan of the levels nearest the best, four per step, then a binary search)
// against a plain linear search, on random sides of both kinds: every level's own price, and
// prices between, above and below them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BookSide } from '../../src/engine/book.js';

/** What find must answer: the index of `price` in the side's ascending keys, or ~(insertion index). */
function expected(keys: number[], price: number, is_bid: boolean): number {
  const k = is_bid ? price : -price;
  let i = 0;
  while (i < keys.length && keys[i] < k) i++;
  return i < keys.length && keys[i] === k ? i : ~i;
}

describe('BookSide.find', () => {
  it('agrees with a linear search on random sides of 0-60 levels (bids and asks, hits and misses)', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        // Distinct tick indexes: a side's level prices.
        fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { maxLength: 60 }),
        fc.array(fc.integer({ min: 0, max: 401 }), { minLength: 1, maxLength: 40 }),
        (is_bid, ticks, probes) => {
          const tick = 10_000;
          const side = new BookSide(is_bid, 4);
          // Levels enter in a random order through find + insertAt, as linkLevel adds them.
          let lvl = 0;
          for (const t of ticks) {
            const i = side.find(t * tick);
            expect(i).toBeLessThan(0);
            side.insertAt(~i, lvl++, t * tick);
          }
          const keys = Array.from(side.key.subarray(0, side.count));
          for (let j = 1; j < keys.length; j++) expect(keys[j]).toBeGreaterThan(keys[j - 1]);
          for (const t of [...ticks, ...probes]) {
            expect(side.find(t * tick)).toBe(expected(keys, t * tick, is_bid));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('finds the level at every depth of a 40-level side, the best and the worst included', () => {
    for (const is_bid of [true, false]) {
      const side = new BookSide(is_bid, 8);
      for (let t = 1; t <= 40; t++) {
        const price = t * 100;
        side.insertAt(~side.find(price), t, price);
      }
      const keys = Array.from(side.key.subarray(0, side.count));
      for (let t = 0; t <= 41; t++) {
        expect(side.find(t * 100)).toBe(expected(keys, t * 100, is_bid));
        expect(side.find(t * 100 + 50)).toBe(expected(keys, t * 100 + 50, is_bid));
      }
    }
  });
});
