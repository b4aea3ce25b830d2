// The fast book's id -> slot table against a Map, on random insert/delete/lookup sequences.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NIL, OrderIndex } from '../../src/engine/book.js';

describe('OrderIndex', () => {
  it('agrees with a Map on random operation sequences (growth, backward-shift deletes, wrap-around)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('set', 'delete', 'get'), fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 1000 })), { maxLength: 400 }),
        fc.integer({ min: 1, max: 64 }),
        (ops, capacity) => {
          const index = new OrderIndex(capacity);
          const model = new Map<number, number>();
          for (const [op, id, slot] of ops) {
            if (op === 'set') {
              index.set(id, slot);
              model.set(id, slot);
            } else if (op === 'delete') {
              index.delete(id);
              model.delete(id);
            }
            expect(index.get(id)).toBe(model.get(id) ?? NIL);
            expect(index.size).toBe(model.size);
          }
          for (const [id, slot] of model) expect(index.get(id)).toBe(slot);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('answers NIL for hostile ids without looping', () => {
    const index = new OrderIndex(4);
    index.set(1, 7);
    for (const id of [0, -1, -17, Number.NaN, 1.5, 2 ** 60, Number.MAX_SAFE_INTEGER]) expect(index.get(id)).toBe(NIL);
    expect(index.get(1)).toBe(7);
  });

  it('keeps ids that collide modulo the table size apart (sequential ids far apart)', () => {
    const index = new OrderIndex(8);
    const ids = [16, 32, 48, 64, 17, 33];
    ids.forEach((id, i) => index.set(id, i));
    index.delete(32);
    expect(index.get(16)).toBe(0);
    expect(index.get(32)).toBe(NIL);
    expect(index.get(48)).toBe(2);
    expect(index.get(64)).toBe(3);
    expect(index.get(33)).toBe(5);
  });
});
