// src/util/quantile.ts: the nearest-rank percentile of the stage timings, `ringbook bench` and
// the load bench's tail and stall reports.
import { describe, expect, it } from 'vitest';
import { percentileNearestRankOfSorted } from '../../src/util/quantile.js';

describe('percentileNearestRankOfSorted', () => {
  const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it('takes the sample at 1-based rank ceil(n * p / 100)', () => {
    expect(percentileNearestRankOfSorted(hundred, 50)).toBe(50);
    expect(percentileNearestRankOfSorted(hundred, 99)).toBe(99);
    expect(percentileNearestRankOfSorted(hundred, 99.9)).toBe(100);
    expect(percentileNearestRankOfSorted([3, 7, 9], 50)).toBe(7);
    expect(percentileNearestRankOfSorted([3, 7, 9, 11], 50)).toBe(7);
  });

  it('gives the first sample at 0, the last at 100, the only one of a single sample', () => {
    expect(percentileNearestRankOfSorted(hundred, 0)).toBe(1);
    expect(percentileNearestRankOfSorted(hundred, 100)).toBe(100);
    expect(percentileNearestRankOfSorted([42], 99.9)).toBe(42);
  });

  it('refuses no samples and a percentile outside [0, 100]', () => {
    expect(() => percentileNearestRankOfSorted([], 50)).toThrow(RangeError);
    expect(() => percentileNearestRankOfSorted(hundred, 101)).toThrow(RangeError);
    expect(() => percentileNearestRankOfSorted(hundred, -1)).toThrow(RangeError);
    expect(() => percentileNearestRankOfSorted(hundred, Number.NaN)).toThrow(RangeError);
  });
});
