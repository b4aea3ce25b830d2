// The fast book's id -> slot and (account, client id) -> slot tables against a Map, on random
// insert/delete/lookup sequences.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Link, OI, OrderStore } from '../../src/engine/book.js';
import { OrderIndex } from '../../src/engine/order_index.js';
import { CLIENT_ID_WORDS, clientIdFromString } from '../../src/engine/client_id.js';

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
            expect(index.get(id)).toBe(model.get(id) ?? Link.NIL);
            expect(index.size).toBe(model.size);
          }
          for (const [id, slot] of model) expect(index.get(id)).toBe(slot);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('answers Link.NIL for hostile ids without looping', () => {
    const index = new OrderIndex(4);
    index.set(1, 7);
    for (const id of [0, -1, -17, Number.NaN, 1.5, 2 ** 60, Number.MAX_SAFE_INTEGER]) expect(index.get(id)).toBe(Link.NIL);
    expect(index.get(1)).toBe(7);
  });

  it('keeps ids that collide modulo the table size apart (sequential ids far apart)', () => {
    const index = new OrderIndex(8);
    const ids = [16, 32, 48, 64, 17, 33];
    ids.forEach((id, i) => index.set(id, i));
    index.delete(32);
    expect(index.get(16)).toBe(0);
    expect(index.get(32)).toBe(Link.NIL);
    expect(index.get(48)).toBe(2);
    expect(index.get(64)).toBe(3);
    expect(index.get(33)).toBe(5);
  });
});

describe('ClientIdIndex', () => {
  const idWords = (coid: string): Int32Array => {
    const w = new Int32Array(CLIENT_ID_WORDS);
    clientIdFromString(coid, w, 0);
    return w;
  };

  it('agrees with a Map keyed by (account, client id) on random sequences (growth, shared hashes, deletes)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('add', 'remove', 'find'), fc.integer({ min: 1, max: 6 }), fc.constantFrom('a', 'b', 'c1', 'c2', 'c10', 'x-_9', 'A', 'abcd', 'abcde', 'z'.repeat(36))), { maxLength: 300 }),
        (ops) => {
          const store = new OrderStore(4, 1000);
          const index = store.slot_by_client_id;
          const model = new Map<string, number>();
          for (const [op, account, coid] of ops) {
            const key = `${account}:${coid}`;
            if (op === 'add' && !model.has(key)) {
              const s = store.alloc(store.size + 1 + model.size * 7 + account);
              store.i[s * OI.STRIDE + OI.ACCOUNT] = account;
              index.add(s, account, idWords(coid), 0);
              model.set(key, s);
            } else if (op === 'remove' && model.has(key)) {
              const s = model.get(key) as number;
              store.release(s);
              expect(index.has(s)).toBe(false);
              model.delete(key);
            }
            expect(index.find(account, idWords(coid), 0)).toBe(model.get(key) ?? Link.NIL);
            expect(index.size).toBe(model.size);
          }
          for (const [key, s] of model) {
            const [account, coid] = key.split(':');
            expect(index.find(Number(account), idWords(coid), 0)).toBe(s);
            expect(index.matches(s, idWords(coid), 0)).toBe(true);
            expect(index.matches(s, idWords(coid + 'x'), 0)).toBe(false);
            expect(index.text(s)).toBe(coid);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('separates accounts and ids whose text would collide in a joined key', () => {
    const store = new OrderStore(8, 100);
    const put = (id: number, account: number, coid: string): number => {
      const s = store.alloc(id);
      store.i[s * OI.STRIDE + OI.ACCOUNT] = account;
      store.slot_by_client_id.add(s, account, idWords(coid), 0);
      return s;
    };
    const a = put(1, 1, '23');
    const b = put(2, 12, '3');
    expect(store.slot_by_client_id.find(1, idWords('23'), 0)).toBe(a);
    expect(store.slot_by_client_id.find(12, idWords('3'), 0)).toBe(b);
    expect(store.slot_by_client_id.find(1, idWords('3'), 0)).toBe(Link.NIL);
  });

  it('keeps orders without a client id out, and grows its entries and slots past their first sizes', () => {
    const store = new OrderStore(2, 5000);
    const index = store.slot_by_client_id;
    const slots: number[] = [];
    for (let i = 1; i <= 3000; i++) {
      const s = store.alloc(i);
      store.i[s * OI.STRIDE + OI.ACCOUNT] = 1 + (i % 3);
      if (i % 2 === 0) index.add(s, 1 + (i % 3), idWords(`c${i}`), 0);
      slots.push(s);
    }
    expect(index.size).toBe(1500);
    for (let i = 1; i <= 3000; i++) {
      const s = slots[i - 1];
      expect(index.has(s)).toBe(i % 2 === 0);
      expect(index.text(s)).toBe(i % 2 === 0 ? `c${i}` : '');
      expect(index.find(1 + (i % 3), idWords(`c${i}`), 0)).toBe(i % 2 === 0 ? s : Link.NIL);
    }
    for (let i = 2; i <= 3000; i += 4) store.release(slots[i - 1]);
    expect(index.size).toBe(750);
    // Freed entries are reused: a new id in a freed slot reads back as itself.
    const s = store.alloc(9999);
    index.add(s, 2, idWords('fresh'), 0);
    expect(index.text(s)).toBe('fresh');
    expect(index.find(2, idWords('fresh'), 0)).toBe(s);
  });
});
