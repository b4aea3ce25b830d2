// bench/quantile.ts: the nearest-rank quantile every p50/p99 of doorbell, front_wake and journal is.
import { describe, expect, it } from 'vitest';
import { quantileOfSorted } from '../../bench/quantile.js';

describe('quantileOfSorted', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it('takes the sample at rank floor(n * p)', () => {
    expect(quantileOfSorted(hundred, 0)).toBe(1);
    expect(quantileOfSorted(hundred, 0.5)).toBe(51);
    expect(quantileOfSorted(hundred, 0.99)).toBe(100);
    expect(quantileOfSorted([3, 7, 9], 0.5)).toBe(7);
  });

  it('gives the last sample at p = 1 and the only one of a single sample', () => {
    expect(quantileOfSorted(hundred, 1)).toBe(100);
    expect(quantileOfSorted([42], 0.99)).toBe(42);
  });

  it('refuses no samples and a p outside [0, 1]', () => {
    expect(() => quantileOfSorted([], 0.5)).toThrow(RangeError);
    expect(() => quantileOfSorted(hundred, 1.5)).toThrow(RangeError);
    expect(() => quantileOfSorted(hundred, Number.NaN)).toThrow(RangeError);
  });
});
