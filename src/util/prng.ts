// The project's one seeded PRNG (mulberry32) and the one class over it: generated order flow,
// fuzzing, ring tests and benches must be reproducible from a seed, never Math.random. Not for
// anything secret.

/** Uniform floats in [0, 1) from a 32-bit seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A key of the table, picked with probability proportional to its weight (Rng.weighted). */
export interface WeightTable<K extends string> {
  keys: K[];
  weights: number[];
  sum: number;
}

const TWO_32 = 4294967296;

/** mulberry32 with the draws the tests and benches need. */
export class Rng {
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = mulberry32(seed ^ 0x9e3779b9);
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.next();
  }

  /** Uniform unsigned 32-bit integer. */
  u32(): number {
    return this.next() * TWO_32;
  }

  /** Uniform signed 32-bit integer. */
  int32(): number {
    return this.u32() | 0;
  }

  /** Integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }

  /** Exponentially distributed with the given mean. */
  expo(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  weighted<K extends string>(table: WeightTable<K>): K {
    let x = this.next() * table.sum;
    for (let i = 0; i < table.keys.length; i++) {
      x -= table.weights[i];
      if (x < 0) return table.keys[i];
    }
    return table.keys[table.keys.length - 1];
  }
}
