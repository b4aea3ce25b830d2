// The front packs the DA worker's events into a ring shared with it (src/da/event_packing.ts
// PackedRing), reusing a run once the worker has read the message in it. Checked with a small
// ring and a reader that holds up to a few messages unread: every message reads back exactly what
// was packed even after later messages were packed (a run is never reused while unread), runs
// wrap to the ring's start, and a message with no room goes transferred and still reads right.
import { describe, expect, it } from 'vitest';
import { EventPacker, PACKED_STRIDE, PackedFields, PackedRing, type PackedEvents } from '../../src/da/event_packing.js';
import { EventType, type EventFields } from '../../src/ring/event_records.js';
import { mulberry32 } from '../../src/util/prng.js';

/** An ORDER_UPDATE (every field copied) with made-up field values. */
function event(values: number[]): EventFields {
  return {
    type: () => EventType.ORDER_UPDATE,
    field: (k) => values[k] ?? 0,
    clientOrderId: () => '',
    addressHex: () => '',
  };
}

describe('the DA events ring', () => {
  it('reads back every message while later ones are packed, wraps, and transfers what does not fit', () => {
    const rand = mulberry32(5);
    const ring = new PackedRing(undefined, 64 * PACKED_STRIDE);
    const packer = new EventPacker(ring);
    const reader = new PackedFields(ring);
    const held: { msg: PackedEvents; values: number[][] }[] = [];
    let wrapped = 0;
    let last_at = -1;
    let next = 1;
    const readBack = (h: { msg: PackedEvents; values: number[][] }): void => {
      reader.load(h.msg);
      const got: number[][] = [];
      for (let i = 0; i < h.msg.count; i++) {
        reader.i = i;
        expect(reader.type()).toBe(EventType.ORDER_UPDATE);
        got.push(h.values[i].map((_, k) => reader.field(k)));
      }
      expect(got).toEqual(h.values);
      reader.done(h.msg);
    };
    for (let round = 0; round < 2000; round++) {
      // 1 to 40 events per message (the ring holds 64).
      const n = 1 + Math.floor(rand() * 40);
      const values: number[][] = [];
      for (let i = 0; i < n; i++) {
        const v = Array.from({ length: 13 }, () => next++);
        values.push(v);
        packer.pack(event(v));
      }
      const msg = packer.take() as PackedEvents;
      if (msg.events === null) {
        if (msg.ring_at_double < last_at) wrapped++;
        last_at = msg.ring_at_double;
      }
      held.push({ msg, values });
      // The reader is 0 to 3 messages behind, in order.
      const behind = Math.floor(rand() * 4);
      while (held.length > behind) readBack(held.shift()!);
    }
    while (held.length > 0) readBack(held.shift()!);
    expect(wrapped, 'runs wrapped to the start').toBeGreaterThan(50);
    expect(packer.transferred, 'messages with no room went transferred').toBeGreaterThan(50);
    expect(packer.transferred, 'most messages went through the ring').toBeLessThan(1500);
  });

  it('a packer without a ring transfers every message', () => {
    const packer = new EventPacker();
    packer.pack(event([1, 2, 3]));
    const msg = packer.take() as PackedEvents;
    expect(msg.events?.length).toBe(PACKED_STRIDE);
    const reader = new PackedFields();
    reader.load(msg);
    expect(reader.field(1)).toBe(2);
  });
});
