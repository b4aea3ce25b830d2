// The nearest-rank percentile (the textbook one: the smallest sample at or above p% of the
// samples), written once for the gateway's stage timings, `ringbook bench` and the benches' tail
// and stall reports, which each wrote it again. bench/quantile.ts holds the benches' other ranks
// (the sample at floor(n * p), which is one higher where n * p is whole, and the medians).

/**
 * The `p_pct` (0..100) percentile of `sorted` (ascending) by nearest rank: the sample at 1-based
 * rank ceil(n * p_pct / 100), the first one for p_pct 0. Refuses no samples: a caller that
 * reports something for an empty window says so itself.
 */
export function percentileNearestRankOfSorted(sorted: ArrayLike<number>, p_pct: number): number {
  if (sorted.length === 0) throw new RangeError('a percentile of no samples');
  if (!(p_pct >= 0 && p_pct <= 100)) throw new RangeError(`percentile must be in [0, 100], got ${p_pct}`);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p_pct / 100) * sorted.length) - 1))];
}
