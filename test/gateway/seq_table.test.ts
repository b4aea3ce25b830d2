// SeqTable (src/gateway/seq_table.ts) answers get, set, delete and size as a Map does, whatever
// the seqs: in their slots, colliding with a live seq far behind (the overflow Map), or more of them
// live than the array has slots. PendingAnswers delivers every outcome through a tiny one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeqTable } from '../../src/gateway/seq_table.js';
import { PendingAnswers, type Outcome } from '../../src/gateway/outcomes.js';
import { RequestKind } from '../../src/engine/types.js';

describe('SeqTable', () => {
  it('agrees with a Map for any sequence of sets, gets and deletes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 4, 8),
        fc.array(fc.record({ op: fc.constantFrom('set', 'set', 'get', 'delete'), seq: fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constantFrom(2 ** 32 + 3, 2 ** 53 - 1)), v: fc.integer() }), { minLength: 20, maxLength: 200, size: 'max' }),
        (slots, ops) => {
          const table = new SeqTable<number>(slots);
          const map = new Map<number, number>();
          for (const { op, seq, v } of ops) {
            if (op === 'set') {
              table.set(seq, v);
              map.set(seq, v);
            } else if (op === 'delete') {
              expect(table.delete(seq)).toBe(map.delete(seq));
            }
            expect(table.get(seq)).toBe(map.get(seq));
            expect(table.size).toBe(map.size);
          }
          for (let s = 0; s <= 12; s++) expect(table.get(s)).toBe(map.get(s));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('refuses a size that is not a power of two', () => {
    expect(() => new SeqTable(3)).toThrow(RangeError);
    expect(() => new SeqTable(0)).toThrow(RangeError);
  });
});

describe('PendingAnswers on a small seq table', () => {
  it('answers each request once with its own outcome while one waits unanswered far behind', () => {
    const got = new Map<number, string>();
    const answers = new PendingAnswers((e) => { throw e; }, () => {}, 4);
    const stages = { started_ms: 0, applied_ms: 0, durable_ms: 0 };
    const read = (seq: number) => (o: Outcome): void => {
      if (got.has(seq)) throw new Error(`seq ${seq} answered twice`);
      got.set(seq, `${o.accepted}:${o.order_id}:${o.code}:${o.batch_id}`);
    };
    answers.add(1, read(1), null, 0, true); // never answered: its slot's later seqs overflow
    let seq = 2;
    for (let batch = 1; batch <= 30; batch++) {
      const first = seq;
      const n = 1 + (batch % 7); // up to 7 in flight: more than the 4 slots
      for (let k = 0; k < n; k++) answers.add(seq++, read(seq - 1), null, 0, batch % 2 === 0);
      answers.observer.batchBegin(batch, 1000 + batch);
      for (let s = first; s < seq; s++) {
        if (s % 3 === 0) answers.observer.rejected(s, 7, 1);
        else answers.observer.accepted(s, RequestKind.PLACE, 1, 100 + s);
      }
      answers.observer.batchCommitted(batch, 1000 + batch, new Set(), stages);
      expect(answers.release(batch, 1000 + batch, stages)).toBe(seq - first);
      expect(answers.size).toBe(1);
      for (let s = first; s < seq; s++) {
        expect(got.get(s)).toBe(s % 3 === 0 ? `false:0:7:${batch}` : `true:${100 + s}:0:${batch}`);
      }
    }
    expect(got.has(1)).toBe(false);
    expect(answers.writtenMsOf(1)).toBe(0);
  });
});
