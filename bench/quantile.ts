// The ranks the benches quote their figures by, each written once under a name that says which
// sample it takes (benches had written them again a dozen times, three different medians under
// the one name `median`). Each refuses an empty sample: a bench that reports something for no
// samples says so where it calls. The textbook nearest-rank percentile (rank ceil(n * p), which
// src/ uses too) is src/util/quantile.ts, re-exported here.

export { percentileNearestRankOfSorted } from '../src/util/quantile.js';

/**
 * The `p` (0..1) quantile of `sorted` (ascending): the sample at 0-based index floor(n * p), the
 * last one for p near 1. Where n * p is whole this is one sample above the nearest rank.
 */
export function quantileFloorRankOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) throw new RangeError('a quantile of no samples');
  if (!(p >= 0 && p <= 1)) throw new RangeError(`quantile p must be in [0, 1], got ${p}`);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

/** An ascending copy of `samples` (numeric order, whatever their container). */
function sortedCopy(samples: ArrayLike<number>): Float64Array {
  if (samples.length === 0) throw new RangeError('a median of no samples');
  return Float64Array.from(samples).sort();
}

/** The median that, of an even sample, takes the mean of the two middle samples (of 1, 2, 3, 4: 2.5). */
export function medianMeanOfMiddleTwo(samples: ArrayLike<number>): number {
  const s = sortedCopy(samples);
  const n = s.length;
  return n % 2 === 1 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/**
 * The median that, of an even sample, takes the upper middle sample (of 1, 2, 3, 4: 3): the
 * sample at index floor(n / 2), i.e. quantileFloorRankOfSorted at 0.5. Always one of the samples.
 */
export function medianUpperMiddle(samples: ArrayLike<number>): number {
  return quantileFloorRankOfSorted(sortedCopy(samples), 0.5);
}

/** The median that, of an even sample, takes the lower middle sample (of 1, 2, 3, 4: 2): index floor((n - 1) / 2). */
export function medianLowerMiddle(samples: ArrayLike<number>): number {
  const s = sortedCopy(samples);
  return s[(s.length - 1) >> 1];
}
