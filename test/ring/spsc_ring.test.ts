// Single-thread unit tests of SpscRing: one object plays producer and consumer in turn
// (the two roles keep separate private state, so this exercises the same paths). Layout, claims,
// publishes and releases here; the waits and wake-ups in spsc_ring_wait.test.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  RING_CAPACITY_SLOTS_MAX,
  RING_FULL,
  RING_HEADER_WORDS,
  RING_MAGIC,
  RING_WAIT_TIMEOUT_MS_MAX,
  RingError,
  SpscRing,
} from '../../src/ring/spsc_ring.js';
import { drain, produce } from './spsc_ring_helpers.js';

describe('SpscRing create/attach', () => {
  it('rejects bad layouts at create', () => {
    expect(() => SpscRing.create({ capacity_slots: 1000, slot_words: 4 })).toThrow(RingError);
    expect(() => SpscRing.create({ capacity_slots: 0, slot_words: 4 })).toThrow(/power of two/);
    expect(() => SpscRing.create({ capacity_slots: 1, slot_words: 4 })).toThrow(/power of two/);
    expect(() =>
      SpscRing.create({ capacity_slots: RING_CAPACITY_SLOTS_MAX * 2, slot_words: 2 }),
    ).toThrow(/power of two/);
    expect(() => SpscRing.create({ capacity_slots: 16, slot_words: 3 })).toThrow(/even/);
    expect(() => SpscRing.create({ capacity_slots: 16, slot_words: 0 })).toThrow(/even/);
    expect(() => SpscRing.create({ capacity_slots: 16, slot_words: 1024 })).toThrow(/even/);
    expect(() => SpscRing.create({ capacity_slots: 1 << 20, slot_words: 256 })).toThrow(
      /RING_BYTES_MAX/,
    );
    expect(() =>
      SpscRing.create({ capacity_slots: 16, slot_words: 4, initial_sequence: 2 ** 31 }),
    ).toThrow(/int32/);
  });

  it('attach reads the layout back and shares the records', () => {
    const a = SpscRing.create({ capacity_slots: 8, slot_words: 6 });
    const b = SpscRing.attach(a.sab);
    expect(b.capacity_slots).toBe(8);
    expect(b.slot_words).toBe(6);
    expect(a.sab.byteLength).toBe((RING_HEADER_WORDS + 8 * 6) * 4);
    const off = a.tryClaim();
    a.i32[off] = 42;
    a.f64[(off >> 1) + 1] = 2 ** 53;
    a.publish();
    expect(b.available()).toBe(1);
    const r = b.slotOffset(0);
    expect(r).toBe(off);
    expect(b.i32[r]).toBe(42);
    expect(b.f64[(r >> 1) + 1]).toBe(2 ** 53);
    b.release(1);
    expect(a.freeSlots()).toBe(8);
  });

  it('attach rejects a bad layout', () => {
    const good = SpscRing.create({ capacity_slots: 16, slot_words: 4 });
    const corrupt = (word: number, value: number): SharedArrayBuffer => {
      const sab = new SharedArrayBuffer(good.sab.byteLength);
      new Int32Array(sab).set(good.i32);
      new Int32Array(sab)[word] = value;
      return sab;
    };
    expect(() => SpscRing.attach(corrupt(0, 0x12345678))).toThrow(/magic/);
    expect(() => SpscRing.attach(corrupt(1, 99))).toThrow(/version/);
    expect(() => SpscRing.attach(corrupt(2, 15))).toThrow(/power of two/);
    expect(() => SpscRing.attach(corrupt(2, 32))).toThrow(/length mismatch/);
    expect(() => SpscRing.attach(corrupt(3, 5))).toThrow(/even/);
    expect(() => SpscRing.attach(corrupt(4, 32))).toThrow(/header_words/);
    expect(() => SpscRing.attach(corrupt(5, 1))).toThrow(/length mismatch/);
    expect(() => SpscRing.attach(corrupt(16, 17))).toThrow(/sequences inconsistent/); // depth 17 > 16
    expect(() => SpscRing.attach(corrupt(32, 1))).toThrow(/sequences inconsistent/); // depth -1
    expect(() => SpscRing.attach(new SharedArrayBuffer(64))).toThrow(/too short/);
    const longer = new SharedArrayBuffer(good.sab.byteLength + 8);
    new Int32Array(longer).set(good.i32);
    expect(() => SpscRing.attach(longer)).toThrow(/length mismatch/);
    expect(() => SpscRing.attach(new ArrayBuffer(1024) as unknown as SharedArrayBuffer)).toThrow(
      /SharedArrayBuffer/,
    );
    expect(() => SpscRing.attach(corrupt(0, RING_MAGIC))).not.toThrow();
  });
});

describe('SpscRing producer/consumer', () => {
  it('starts empty, fills to capacity, then tryClaim returns -1 until a release', () => {
    const ring = SpscRing.create({ capacity_slots: 4, slot_words: 2 });
    expect(ring.available()).toBe(0);
    expect(ring.depth()).toBe(0);
    expect(ring.freeSlots()).toBe(4);
    expect(produce(ring, [1, 2, 3, 4, 5])).toBe(4);
    expect(ring.producer_full_count).toBe(1);
    expect(ring.tryClaim()).toBe(RING_FULL);
    expect(ring.claimBatch(3)).toBe(0);
    expect(ring.producer_full_count).toBe(3);
    expect(ring.depth()).toBe(4);
    expect(ring.available()).toBe(4);
    // Release one: exactly one claim succeeds, into the slot just freed.
    const first = ring.slotOffset(0);
    expect(ring.i32[first]).toBe(1);
    ring.release(1);
    const off = ring.tryClaim();
    expect(off).toBe(first);
    ring.i32[off] = 5;
    ring.publish();
    expect(ring.tryClaim()).toBe(-1);
    expect(drain(ring)).toEqual([2, 3, 4, 5]);
    expect(ring.available()).toBe(0);
    expect(drain(ring)).toEqual([]);
  });

  it('wraps the slot index many times and keeps order', () => {
    const ring = SpscRing.create({ capacity_slots: 8, slot_words: 4 });
    const seen: number[] = [];
    let next = 0;
    for (let round = 0; round < 100; round++) {
      const k = (round % 7) + 1; // 1..7 records, so the boundary moves every round
      const values = Array.from({ length: k }, () => next++);
      expect(produce(ring, values)).toBe(k);
      seen.push(...drain(ring));
    }
    expect(seen).toEqual(Array.from({ length: next }, (_, i) => i));
  });

  it('slotsBeforeEnd cuts the available records into runs of plain strides, as slotOffset places them', () => {
    const ring = SpscRing.create({ capacity_slots: 8, slot_words: 6 });
    for (let round = 0; round < 12; round++) {
      const k = (round % 8) + 1; // 1..8 records, so the walk starts and wraps at every slot
      produce(ring, Array.from({ length: k }, (_, i) => i));
      const n = ring.available();
      const walked: number[] = [];
      let runs = 0;
      for (let i = 0; i < n;) {
        let o = ring.slotOffset(i);
        const before_end = ring.slotsBeforeEnd(o);
        expect(Number.isInteger(before_end) && before_end >= 1 && before_end <= 8).toBe(true);
        const run = Math.min(n - i, before_end);
        for (const end = o + run * ring.slot_words; o < end; o += ring.slot_words) walked.push(o);
        i += run;
        runs++;
      }
      expect(walked).toEqual(Array.from({ length: n }, (_, i) => ring.slotOffset(i)));
      // Two runs exactly when the records wrap past the ring's end.
      expect(runs).toBe(ring.slotOffset(n - 1) < ring.slotOffset(0) ? 2 : 1);
      ring.release(n);
    }
  });

  it('slot offsets cover every slot, aligned for float64', () => {
    const ring = SpscRing.create({ capacity_slots: 8, slot_words: 6 });
    const offsets = new Set<number>();
    for (let i = 0; i < 8; i++) {
      const off = ring.tryClaim();
      expect(off % 2).toBe(0);
      expect(off).toBeGreaterThanOrEqual(RING_HEADER_WORDS);
      expect(off + 6).toBeLessThanOrEqual(ring.i32.length);
      offsets.add(off);
    }
    expect(offsets.size).toBe(8);
  });

  for (const initial of [2 ** 31 - 5, -5, -(2 ** 31), 2 ** 31 - 1, -1]) {
    it(`wraps the 32-bit sequence (initial ${initial})`, () => {
      const ring = SpscRing.create({ capacity_slots: 8, slot_words: 2, initial_sequence: initial });
      expect(ring.producerSequence()).toBe(initial);
      let next = 0;
      const seen: number[] = [];
      for (let round = 0; round < 20; round++) {
        produce(ring, Array.from({ length: 8 }, () => next++));
        expect(ring.depth()).toBe(8);
        expect(ring.tryClaim()).toBe(-1);
        seen.push(...drain(ring).slice());
      }
      expect(seen).toEqual(Array.from({ length: 160 }, (_, i) => i));
      expect(ring.producerSequence()).toBe((initial + 160) | 0);
      expect(ring.consumerSequence()).toBe((initial + 160) | 0);
      // A ring attached mid-wrap reads the same state.
      produce(ring, [7, 8, 9]);
      const other = SpscRing.attach(ring.sab);
      expect(other.available()).toBe(3);
      expect(drain(other)).toEqual([7, 8, 9]);
    });
  }

  it('claimBatch claims what fits, publishBatch publishes with one store', () => {
    const ring = SpscRing.create({ capacity_slots: 8, slot_words: 2, initial_sequence: -3 });
    expect(ring.claimBatch(5)).toBe(5);
    expect(ring.claimed()).toBe(5);
    for (let i = 0; i < 5; i++) ring.i32[ring.claimedSlotOffset(i)] = 100 + i;
    expect(ring.available()).toBe(0); // nothing visible before publish
    ring.publishBatch(5);
    expect(ring.claimBatch(5)).toBe(3); // only 3 free: a partial claim
    for (let i = 0; i < 3; i++) ring.i32[ring.claimedSlotOffset(i)] = 105 + i;
    ring.publishBatch(2);
    expect(ring.available()).toBe(7);
    ring.publish();
    expect(drain(ring)).toEqual([100, 101, 102, 103, 104, 105, 106, 107]);
  });

  it('asserts misuse', () => {
    const ring = SpscRing.create({ capacity_slots: 4, slot_words: 2 });
    expect(() => ring.publish()).toThrow(/claimed/);
    expect(() => ring.claimBatch(0)).toThrow(/positive/);
    expect(() => ring.claimedSlotOffset(0)).toThrow(/claimed/);
    expect(() => ring.release(1)).toThrow(/available/);
    ring.tryClaim();
    ring.publish();
    expect(ring.available()).toBe(1);
    expect(() => ring.slotOffset(1)).toThrow(/available/);
    expect(() => ring.release(2)).toThrow(/available/);
    expect(() => ring.waitForData(-1)).toThrow(/timeout/);
    expect(() => ring.waitForData(RING_WAIT_TIMEOUT_MS_MAX + 1)).toThrow(/timeout/);
    expect(() => ring.waitForSpace(0, 5)).toThrow(/min_slots/);
    expect(() => SpscRing.attach(ring.sab, { spin_iterations: -1 })).toThrow(/spin/);
  });

  it('matches a queue model under random claims, publishes and releases', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('claim' as const), n: fc.integer({ min: 1, max: 20 }) }),
      fc.record({ kind: fc.constant('publish' as const), n: fc.integer({ min: 1, max: 20 }) }),
      fc.record({ kind: fc.constant('consume' as const), n: fc.integer({ min: 1, max: 20 }) }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(2, 4, 16),
        fc.oneof(fc.integer(), fc.constantFrom(2 ** 31 - 3, -(2 ** 31), -2)),
        fc.array(op, { maxLength: 200 }),
        (capacity, initial, ops) => {
          const ring = SpscRing.create({
            capacity_slots: capacity,
            slot_words: 4,
            initial_sequence: initial,
          });
          const model: number[] = []; // published, unreleased
          let claimed = 0;
          let next = 0;
          for (const o of ops) {
            if (o.kind === 'claim') {
              const free = capacity - model.length - claimed;
              const got = ring.claimBatch(o.n);
              expect(got).toBe(Math.min(o.n, free));
              for (let i = claimed; i < claimed + got; i++) {
                ring.f64[(ring.claimedSlotOffset(i) >> 1) + 1] = 2 ** 53 - next - i;
              }
              claimed += got;
            } else if (o.kind === 'publish') {
              const k = Math.min(o.n, claimed);
              if (k === 0) continue;
              for (let i = 0; i < k; i++) model.push(2 ** 53 - next - i);
              next += k;
              ring.publishBatch(k);
              claimed -= k;
            } else {
              expect(ring.available()).toBe(model.length);
              const k = Math.min(o.n, model.length);
              if (k === 0) continue;
              for (let i = 0; i < k; i++) {
                expect(ring.f64[(ring.slotOffset(i) >> 1) + 1]).toBe(model[i]);
              }
              ring.release(k);
              model.splice(0, k);
            }
            expect(ring.depth()).toBe(model.length);
            expect(ring.claimed()).toBe(claimed);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
