// The ledger's touched record against a model: per request, one balance event per pair whose
// balances changed, ascending by (account, asset), with the touch reason of highest rank; on
// random request sequences of few pairs (insertion sort) and of many (the typed array's sort,
// the record's growth past 64 pairs, account growth in the middle of a run).
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { Ledger } from '../../src/engine/ledger.js';
import { BalanceReason } from '../../src/engine/events.js';
import { EventLog, type BalanceEvent } from '../../src/engine/event_log.js';

const ASSETS = 3;
/** The engine's own sort, called through by the spy (Int32Array.prototype inherits it). */
const TypedArraySort = (Object.getPrototypeOf(Int32Array.prototype) as { sort: (this: Int32Array, compare?: (a: number, b: number) => number) => Int32Array }).sort;
const RANK = [4, 2, 3, 1, 1]; // FILL > ORDER_CANCELLED > ORDER_PLACED > DEPOSIT = WITHDRAWAL

interface Touch { account: number; asset: number; reason: number; change: number }

const touchArb = (accounts: number): fc.Arbitrary<Touch> => fc.record({
  account: fc.integer({ min: 0, max: accounts - 1 }),
  asset: fc.integer({ min: 0, max: ASSETS - 1 }),
  reason: fc.constantFrom(BalanceReason.FILL, BalanceReason.ORDER_PLACED, BalanceReason.ORDER_CANCELLED, BalanceReason.DEPOSIT, BalanceReason.WITHDRAWAL),
  // 0: touched, left unchanged (no event unless another touch changes it).
  change: fc.constantFrom(0, 0, 1, -2, 5),
});

/**
 * Applies the requests to a ledger and a model; the balance events must agree request by request.
 * A request whose index is in `abandoned` ends without a flush (as one cut short by a thrown
 * engine assertion would): its changes stay, its touches must not leak into the next request.
 */
function agrees(requests: Touch[][], capacity: number, abandoned: ReadonlySet<number> = new Set()): void {
  const ledger = new Ledger(ASSETS, 100_000, capacity);
  const available = new Map<number, number>();
  const locked = new Map<number, number>();
  for (const [index, touches] of requests.entries()) {
    ledger.beginRequest();
    const before = new Map<number, [number, number, number]>(); // key -> [available, locked, reason]
    for (const t of touches) {
      ledger.ensure(t.account);
      const key = t.account * ASSETS + t.asset;
      ledger.touch(t.account, t.asset, t.reason);
      const seen = before.get(key);
      if (seen === undefined) before.set(key, [available.get(key) ?? 0, locked.get(key) ?? 0, t.reason]);
      else if (RANK[t.reason] > RANK[seen[2]]) seen[2] = t.reason;
      // Alternate which balance moves, so some pairs change only their lock.
      const target = t.change % 2 === 0 ? available : locked;
      const field = target === available ? ledger.available : ledger.locked;
      target.set(key, (target.get(key) ?? 0) + t.change);
      field[key] += t.change;
    }
    if (abandoned.has(index)) continue;
    const log = new EventLog();
    ledger.flush(log);
    const expected: BalanceEvent[] = [...before.entries()]
      .sort((x, y) => x[0] - y[0])
      .filter(([key, [av, lk]]) => (available.get(key) ?? 0) !== av || (locked.get(key) ?? 0) !== lk)
      .map(([key, [, , reason]]) => ({
        type: 'balance', account: Math.floor(key / ASSETS), asset: key % ASSETS,
        available_units: available.get(key) ?? 0, locked_units: locked.get(key) ?? 0, reason,
      }));
    expect(log.take()).toEqual(expected);
  }
}

describe('Ledger touched record', () => {
  it('emits one event per changed pair, ascending, highest-ranked reason (few pairs a request)', () => {
    fc.assert(fc.property(fc.array(fc.array(touchArb(40), { maxLength: 12 }), { maxLength: 30 }), (requests) => agrees(requests, 4)), { numRuns: 300 });
  });

  it('the same with hundreds of pairs a request (typed-array sort, record growth, account growth)', () => {
    fc.assert(fc.property(fc.array(fc.array(touchArb(3000), { minLength: 30, maxLength: 700 }), { minLength: 1, maxLength: 4 }), (requests) => agrees(requests, 2)), { numRuns: 40 });
  });

  it('the same after requests that ended without a flush (their pairs are new to the next request)', () => {
    fc.assert(fc.property(fc.array(fc.array(touchArb(5), { maxLength: 8 }), { minLength: 2, maxLength: 8 }),
      fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 4 }),
      (requests, abandoned) => agrees(requests, 4, new Set(abandoned))), { numRuns: 300 });
  });

  // The speed of this flush is a benchmark's business, not a unit test's (a timing bound flakes on
  // a shared 2-core machine); what keeps it fast is that many pairs go through the typed array's
  // own sort (n log n) and never the insertion sort (quadratic: ~5e9 steps for 100,000 pairs in
  // descending order, ~4.3 s for 30,000 here, start build, h16r). The spy counts the calls of
  // the engine's sort on Int32Arrays: one, over exactly the touched keys.
  function flushCountingSorts(accounts: number): { events: BalanceEvent[]; sorted_lengths: number[] } {
    const ledger = new Ledger(ASSETS, accounts + 1, 1024);
    ledger.ensure(accounts);
    ledger.beginRequest();
    // Descending account order: the worst case of the insertion sort.
    for (let a = accounts; a >= 1; a--) {
      ledger.touch(a, 1, BalanceReason.ORDER_CANCELLED);
      ledger.available[a * ASSETS + 1] += a;
    }
    const log = new EventLog();
    const sort = vi.spyOn(Int32Array.prototype, 'sort');
    const sorted_lengths: number[] = [];
    sort.mockImplementation(function (this: Int32Array, compare?: (a: number, b: number) => number) {
      sorted_lengths.push(this.length);
      return TypedArraySort.call(this, compare) as Int32Array;
    });
    try {
      ledger.flush(log);
    } finally {
      sort.mockRestore();
    }
    return { events: log.take() as BalanceEvent[], sorted_lengths };
  }

  it('a market pause that touches 100,000 pairs flushes them in order through one typed-array sort', () => {
    const accounts = 100_000;
    const { events, sorted_lengths } = flushCountingSorts(accounts);
    expect(events.map((e) => e.account)).toEqual(Array.from({ length: accounts }, (_, i) => i + 1));
    expect(sorted_lengths).toEqual([accounts]);
  });

  it('a request of few pairs (a fill) is sorted without the typed array\'s sort (no subarray, no call)', () => {
    const { events, sorted_lengths } = flushCountingSorts(6);
    expect(events.map((e) => e.account)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(sorted_lengths).toEqual([]);
  });
});
