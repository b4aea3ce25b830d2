// The nearest-rank quantile the benches quote their p50 and p99 by, written once (doorbell.ts,
// front_wake.ts and journal.ts each wrote their own).

/** The `p` (0..1) quantile of `sorted` (ascending): the sample at rank floor(n * p), the last one for p near 1. */
export function quantileOfSorted(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new RangeError('a quantile of no samples');
  if (!(p >= 0 && p <= 1)) throw new RangeError(`quantile p must be in [0, 1], got ${p}`);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}
