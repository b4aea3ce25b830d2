// What the single-thread SpscRing tests (spsc_ring.test.ts, spsc_ring_wait.test.ts) do as
// producer and consumer: one record per value (word 0) in, everything available out.
import type { SpscRing } from '../../src/ring/spsc_ring.js';

/** Produce `values` one record each (word 0), returning how many fit. */
export function produce(ring: SpscRing, values: number[]): number {
  let written = 0;
  for (const v of values) {
    const off = ring.tryClaim();
    if (off < 0) break;
    ring.i32[off] = v;
    ring.publish();
    written++;
  }
  return written;
}

/** Drain everything available, returning word 0 of each record. */
export function drain(ring: SpscRing): number[] {
  const n = ring.available();
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(ring.i32[ring.slotOffset(i)]);
  if (n > 0) ring.release(n);
  return out;
}
