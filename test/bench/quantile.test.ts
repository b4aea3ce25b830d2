// bench/quantile.ts: the ranks the benches quote their figures by, each pinned on odd and even
// samples, since the three medians agree on an odd sample and differ only on an even one.
import { describe, expect, it } from 'vitest';
import {
  medianLowerMiddle, medianMeanOfMiddleTwo, medianUpperMiddle, percentileNearestRankOfSorted, quantileFloorRankOfSorted,
} from '../../bench/quantile.js';

describe('quantileFloorRankOfSorted', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it('takes the sample at rank floor(n * p)', () => {
    expect(quantileFloorRankOfSorted(hundred, 0)).toBe(1);
    expect(quantileFloorRankOfSorted(hundred, 0.5)).toBe(51);
    expect(quantileFloorRankOfSorted(hundred, 0.99)).toBe(100);
    expect(quantileFloorRankOfSorted([3, 7, 9], 0.5)).toBe(7);
  });

  it('gives the last sample at p = 1 and the only one of a single sample', () => {
    expect(quantileFloorRankOfSorted(hundred, 1)).toBe(100);
    expect(quantileFloorRankOfSorted([42], 0.99)).toBe(42);
  });

  it('is one sample above the nearest rank where n * p is whole, the same elsewhere', () => {
    expect(percentileNearestRankOfSorted(hundred, 50)).toBe(50);
    expect(percentileNearestRankOfSorted(hundred, 99)).toBe(99);
    expect(quantileFloorRankOfSorted([3, 7, 9], 0.5)).toBe(percentileNearestRankOfSorted([3, 7, 9], 50));
  });

  it('refuses no samples and a p outside [0, 1]', () => {
    expect(() => quantileFloorRankOfSorted([], 0.5)).toThrow(RangeError);
    expect(() => quantileFloorRankOfSorted(hundred, 1.5)).toThrow(RangeError);
    expect(() => quantileFloorRankOfSorted(hundred, Number.NaN)).toThrow(RangeError);
  });
});

describe('the three medians', () => {
  // Unsorted on purpose: each sorts a copy and leaves its argument as it was.
  const odd = [9, 1, 5, 3, 7]; // sorted 1 3 5 7 9
  const even = [10, 4, 1, 3]; // sorted 1 3 4 10

  it('agree on an odd sample: the middle one', () => {
    expect(medianMeanOfMiddleTwo(odd)).toBe(5);
    expect(medianUpperMiddle(odd)).toBe(5);
    expect(medianLowerMiddle(odd)).toBe(5);
    expect(odd).toEqual([9, 1, 5, 3, 7]);
  });

  it('differ on an even sample: the mean of the middle two, the upper one, the lower one', () => {
    expect(medianMeanOfMiddleTwo(even)).toBe(3.5);
    expect(medianUpperMiddle(even)).toBe(4);
    expect(medianLowerMiddle(even)).toBe(3);
    expect(medianMeanOfMiddleTwo([2, 1])).toBe(1.5);
    expect(medianUpperMiddle([2, 1])).toBe(2);
    expect(medianLowerMiddle([2, 1])).toBe(1);
    expect(even).toEqual([10, 4, 1, 3]);
  });

  it('sort by value, not as text, and take typed arrays', () => {
    const xs = [100, 9, 20, 3]; // as text: 100 20 3 9
    expect(medianMeanOfMiddleTwo(xs)).toBe(14.5);
    expect(medianUpperMiddle(Float64Array.from(xs))).toBe(20);
    expect(medianLowerMiddle(Float64Array.from(xs))).toBe(9);
  });

  it('give the only sample of one', () => {
    for (const f of [medianMeanOfMiddleTwo, medianUpperMiddle, medianLowerMiddle]) expect(f([42])).toBe(42);
  });

  it('refuse an empty sample', () => {
    for (const f of [medianMeanOfMiddleTwo, medianUpperMiddle, medianLowerMiddle]) {
      expect(() => f([])).toThrow(RangeError);
      expect(() => f(new Float64Array(0))).toThrow(RangeError);
    }
  });
});
