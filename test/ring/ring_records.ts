// Test records for the cross-thread ring tests: both sides regenerate the same stream from
// a seed, so the consumer checks every word of every record (no loss, no duplication, no
// corruption), plus a checksum word written by the producer.
//
// Record layout (RECORD_WORDS = 8 int32 words):
//   w0 index (int32)   w1 a (random int32)   w2 b (random int32)   w3 checksum
//   f64 at w4..w5: u, an exact integer in [0, 2^53]
//   f64 at w6..w7: -u
import type { SpscRing } from '../../src/ring/spsc_ring.js';
import { Rng } from '../../src/util/prng.js';

export { Rng };

export const RECORD_WORDS = 8;
const TWO_32 = 2 ** 32;
const TWO_53 = 2 ** 53;

/** Field values of record `index` (draws three int32 from `rng`). */
function fields(index: number, rng: Rng): { a: number; b: number; u: number } {
  const a = rng.int32();
  const b = rng.int32();
  const hi = rng.int32() & 0x1fffff;
  let u = hi * TWO_32 + (b >>> 0);
  if (index % 997 === 0) u = TWO_53; // the edge values, regularly
  else if (index % 997 === 1) u = TWO_53 - 1;
  else if (index % 997 === 2) u = 0;
  return { a, b, u };
}

function checksum(i32: Int32Array, off: number): number {
  let h = 0x811c9dc5 | 0;
  for (const k of [0, 1, 2, 4, 5, 6, 7]) h = Math.imul(h ^ i32[off + k], 0x01000193);
  return h;
}

export function writeRecord(ring: SpscRing, off: number, index: number, rng: Rng): void {
  const { a, b, u } = fields(index, rng);
  const i32 = ring.i32;
  const f = off >> 1;
  i32[off] = index;
  i32[off + 1] = a;
  i32[off + 2] = b;
  ring.f64[f + 2] = u;
  ring.f64[f + 3] = -u;
  i32[off + 3] = checksum(i32, off);
}

/** Returns null when the record at `off` is record `index`, else what is wrong. */
export function checkRecord(ring: SpscRing, off: number, index: number, rng: Rng): string | null {
  const { a, b, u } = fields(index, rng);
  const i32 = ring.i32;
  const f = off >> 1;
  if (i32[off] !== index) return `record ${index}: index word is ${i32[off]}`;
  if (i32[off + 3] !== checksum(i32, off)) return `record ${index}: checksum mismatch`;
  if (i32[off + 1] !== a || i32[off + 2] !== b) return `record ${index}: int32 fields differ`;
  if (ring.f64[f + 2] !== u || ring.f64[f + 3] !== -u) {
    return `record ${index}: float64 ${ring.f64[f + 2]} expected ${u}`;
  }
  return null;
}
