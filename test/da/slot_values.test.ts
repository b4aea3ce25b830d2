// The state tree's leaf values (src/da/slot_values.ts) against a Map of copies: random sets,
// replaces and clears over values of every storage class (inline up to 32 bytes, pooled up to 64,
// mapped above), with most replaces keeping the slot's length (the one-pass path) and a share of
// them equal to the stored value or differing in a single byte (first, middle or last).
import { describe, expect, it } from 'vitest';
import { SlotValues } from '../../src/da/slot_values.js';
import { mulberry32 } from '../../src/util/prng.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('slot values', () => {
  it('replace says whether the value changed and stores it, as equals then set would', () => {
    const r = mulberry32(17);
    const SLOTS = 300;
    const values = new SlotValues(SLOTS);
    const model = new Map<number, Uint8Array>();
    const lengthOf = (): number => [0, 1, 8, 31, 32, 33, 48, 64, 65, 100][Math.floor(r() * 10)];
    const random = (n: number): Uint8Array => Uint8Array.from({ length: n }, () => Math.floor(r() * 256));
    let same_length_changed = 0;
    let same_length_equal = 0;
    for (let op = 0; op < 60_000; op++) {
      const slot = Math.floor(r() * SLOTS);
      const was = model.get(slot);
      const roll = r();
      if (roll < 0.1 || was === undefined) {
        const v = random(lengthOf());
        values.set(slot, v, 0, v.length);
        model.set(slot, v);
      } else if (roll < 0.15) {
        values.clear(slot);
        model.delete(slot);
      } else {
        // The new value, at an offset inside a larger buffer (as in a LeafBatch).
        let v: Uint8Array;
        const kind = r();
        if (kind < 0.25) v = was.slice();
        else if (kind < 0.7 && was.length > 0) {
          v = was.slice();
          const at = [0, was.length >> 1, was.length - 1][Math.floor(r() * 3)];
          v[at] ^= 1 + Math.floor(r() * 255);
        } else v = random(r() < 0.5 ? was.length : lengthOf());
        const buf = random(v.length + 20);
        buf.set(v, 7);
        const changed = hex(v) !== hex(was);
        if (v.length === was.length) {
          if (changed) same_length_changed++;
          else same_length_equal++;
        }
        expect(values.replace(slot, buf, 7, v.length), `op ${op}`).toBe(changed);
        model.set(slot, v);
      }
      const probe = Math.floor(r() * SLOTS);
      const want = model.get(probe);
      if (want !== undefined) {
        expect(hex(values.get(probe)), `op ${op} slot ${probe}`).toBe(hex(want));
        expect(values.equals(probe, want, 0, want.length)).toBe(true);
      }
    }
    for (const [slot, v] of model) expect(hex(values.get(slot))).toBe(hex(v));
    expect(same_length_changed).toBeGreaterThan(5_000);
    expect(same_length_equal).toBeGreaterThan(5_000);
  });
});
