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

/** The level a plain search of the sorted arrays finds at `price`, or -1: what levelAt must answer. */
function levelBySearch(side: BookSide, price: number): number {
  const k = side.is_bid ? price : -price;
  for (let i = 0; i < side.count; i++) if (side.key[i] === k) return side.levels[i];
  return -1;
}

describe('BookSide.levelAt (the price -> level index)', () => {
  it('agrees with a search of the sorted levels through random inserts and removals (growth, collisions)', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        // Operations: insert the level at a tick index (when absent) or remove it (when present).
        // Tick indexes t and t + 2^32 / tick share their low 32 bits: the same hash, one probe run.
        fc.array(fc.tuple(fc.integer({ min: 1, max: 120 }), fc.boolean()), { minLength: 1, maxLength: 300 }),
        (is_bid, ops) => {
          const tick = 10_000;
          const side = new BookSide(is_bid, 4);
          const price = (t: number): number => (t > 60 ? (t - 60) * tick + 2 ** 32 : t * tick);
          let lvl = 0;
          for (const [t, far] of ops) {
            const p = price(t) + (far ? 2 ** 33 : 0);
            const i = side.find(p);
            if (i < 0) side.insertAt(~i, lvl++, p);
            else side.removeAt(i);
            for (let u = 1; u <= 120; u++) {
              for (const q of [price(u), price(u) + 2 ** 33]) expect(side.levelAt(q)).toBe(levelBySearch(side, q));
            }
          }
          expect(side.levelAt(0)).toBe(-1);
          expect(side.levelAt(Number.NaN)).toBe(-1);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keeps every level of a side grown to 5,000 levels, then loses each as it is removed', () => {
    const side = new BookSide(false, 8);
    const prices: number[] = [];
    for (let t = 1; t <= 5000; t++) prices.push(((t * 7919) % 5003) * 100_000 + 100_000);
    prices.forEach((p, lvl) => side.insertAt(~side.find(p), lvl, p));
    prices.forEach((p, lvl) => expect(side.levelAt(p)).toBe(lvl));
    for (let j = 0; j < prices.length; j += 2) side.removeAt(side.find(prices[j]));
    prices.forEach((p, lvl) => expect(side.levelAt(p)).toBe(lvl % 2 === 0 ? -1 : lvl));
  });
});
