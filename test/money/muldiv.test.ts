import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  BPS_PER_WHOLE,
  MONEY_OVERFLOW,
  UNITS_PER_WHOLE,
  addChecked,
  feeCeil,
  feeCeilUnchecked,
  feeFloor,
  feeFloorUnchecked,
  isMultiple,
  mulDivCeil,
  mulDivFloor,
  notionalCeil,
  notionalCeilUnchecked,
  notionalFloor,
  notionalFloorUnchecked,
} from '../../src/money/index.js';
import {
  EDGE_VALUES,
  MAX,
  OVERFLOW,
  RUNS,
  divisor,
  nearIntegerQuotient,
  productNear2p53,
  quotientNearMax,
  refAdd,
  refMulDiv,
  safeNat,
} from './reference.js';

const TWO_53 = 2 ** 53;

// Compares first and calls expect only on a mismatch: the edge-value grid alone is ~60k checks.
function expectBoth(a: number, b: number, d: number): void {
  const floor = mulDivFloor(a, b, d);
  const floorRef = refMulDiv(a, b, d, false);
  if (floor !== floorRef) expect(floor, `floor(${a}*${b}/${d})`).toBe(floorRef);
  const ceil = mulDivCeil(a, b, d);
  const ceilRef = refMulDiv(a, b, d, true);
  if (ceil !== ceilRef) expect(ceil, `ceil(${a}*${b}/${d})`).toBe(ceilRef);
}

describe('mulDivFloor / mulDivCeil against a BigInt reference', () => {
  it('constants', () => {
    expect(MONEY_OVERFLOW).toBe(OVERFLOW);
    expect(UNITS_PER_WHOLE).toBe(1_000_000);
    expect(BPS_PER_WHOLE).toBe(10_000);
  });

  it('random safe a, b and positive d', () => {
    fc.assert(
      fc.property(safeNat, safeNat, divisor, (a, b, d) => {
        expectBoth(a, b, d);
      }),
      { numRuns: RUNS },
    );
  });

  it('products just below, at and just above 2^53 (direct/limb path switch)', () => {
    fc.assert(
      fc.property(productNear2p53, ([a, b, d]) => {
        expectBoth(a, b, d);
        expectBoth(b, a, d);
      }),
      { numRuns: RUNS },
    );
  });

  it('quotients within a few units of MAX_SAFE_INTEGER (overflow boundary)', () => {
    fc.assert(
      fc.property(quotientNearMax, ([a, b, d]) => {
        expectBoth(a, b, d);
      }),
      { numRuns: RUNS },
    );
  });

  it('direct path with p near 2^53 and large d, where a rounded quotient would be most fragile', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: MAX }), fc.integer({ min: 0, max: 3 }), (d, back) => {
        // p = m*d + (d - 1): the largest remainder, the quotient closest to the next integer.
        const m = Math.floor((MAX - (d - 1)) / d) - back;
        if (m < 0) return;
        const p = m * d + (d - 1);
        expectBoth(p, 1, d);
        expectBoth(1, p, d);
      }),
      { numRuns: RUNS },
    );
  });

  it('quotients within 2/d of an integer (remainder 0, 1, 2, d-1, d-2)', () => {
    fc.assert(
      fc.property(nearIntegerQuotient, ([a, b, d]) => {
        expectBoth(a, b, d);
        expectBoth(b, a, d);
      }),
      { numRuns: RUNS },
    );
  });

  it('(d-1)^2 / d around the small-divisor threshold: remainder 1 must not be rounded away', () => {
    // (d-1)^2 = d*(d-2) + 1. Just above d = 94_906_266 the square exceeds 2^53, so a residue
    // product computed in doubles would drop that 1 and ceil would come out one short.
    expect(mulDivCeil(94_906_266, 94_906_266, 94_906_267)).toBe(94_906_266);
    expect(mulDivFloor(94_906_266, 94_906_266, 94_906_267)).toBe(94_906_265);
    for (let d = 94_906_200; d <= 94_906_330; d++) {
      const kMax = Math.floor((MAX - (d - 1)) / d); // largest k keeping k*d + d - 1 safe
      for (const k of [0, 1, 7, 1_000, kMax]) {
        expectBoth(k * d + d - 1, d - 1, d);
        expectBoth(k * d + d - 1, k * d + d - 1, d);
        expectBoth(k * d + d - 2, d - 2, d);
      }
    }
  });

  it('every pair of edge values with the edge divisors', () => {
    const divisors = [1, 2, 3, 10_000, 1_000_000, 2 ** 26, 2 ** 52, MAX - 1, MAX, 94_906_266, 94_906_267, 441_650_591];
    for (const a of EDGE_VALUES) {
      for (const b of EDGE_VALUES) {
        for (const d of divisors) expectBoth(a, b, d);
      }
    }
  });

  it('d = 1, 1e4, 1e6 and d near 2^53 on random inputs', () => {
    fc.assert(
      fc.property(
        safeNat,
        safeNat,
        fc.constantFrom(1, 10_000, 1_000_000, MAX, MAX - 1, 2 ** 52 + 1),
        (a, b, d) => {
          expectBoth(a, b, d);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('exact results at MAX_SAFE_INTEGER and one above', () => {
    // a * b = MAX exactly, direct path.
    expect(mulDivFloor(441_650_591, 20_394_401, 1)).toBe(MAX);
    expect(mulDivCeil(441_650_591, 20_394_401, 1)).toBe(MAX);
    // MAX * d / d through the limb path.
    for (const d of [2, 3, 10_000, 1_000_000, MAX - 1, MAX]) {
      expect(mulDivFloor(MAX, d, d)).toBe(MAX);
      expect(mulDivCeil(MAX, d, d)).toBe(MAX);
      expect(mulDivFloor(d, MAX, d)).toBe(MAX);
    }
    // One above: 2^53 itself is representable but not safe.
    expect(mulDivFloor(2 ** 27, 2 ** 26, 1)).toBe(MONEY_OVERFLOW);
    expect(mulDivFloor(2 ** 27, 2 ** 26, 2)).toBe(2 ** 52);
    expect(mulDivFloor(MAX, 3, 2)).toBe(MONEY_OVERFLOW);
    // MAX * MAX / (MAX - 1) = MAX + 1 + 1/(MAX - 1).
    expect(mulDivFloor(MAX, MAX, MAX - 1)).toBe(MONEY_OVERFLOW);
    expect(mulDivFloor(MAX - 1, MAX, MAX)).toBe(MAX - 1);
    // 786429 * 22906579627 = 2^54 - 1 = 2 * MAX + 1: floor fits exactly, ceil is one above.
    expect(mulDivFloor(786_429, 22_906_579_627, 2)).toBe(MAX);
    expect(mulDivCeil(786_429, 22_906_579_627, 2)).toBe(MONEY_OVERFLOW);
    // Ceil landing exactly on MAX from below: 36217 * 497401731493 = 2*MAX - 1, so the
    // quotient is MAX - 0.5; and 4 * 6755399441055743 = 3*MAX - 1, quotient MAX - 1/3.
    expect(mulDivFloor(36_217, 497_401_731_493, 2)).toBe(MAX - 1);
    expect(mulDivCeil(36_217, 497_401_731_493, 2)).toBe(MAX);
    expect(mulDivFloor(4, 6_755_399_441_055_743, 3)).toBe(MAX - 1);
    expect(mulDivCeil(4, 6_755_399_441_055_743, 3)).toBe(MAX);
    // Exact quotient 2^53 whose double estimate is 2^53 + 2: correcting it by stepping the
    // estimate itself would round (2^53 + 1 is not a double) and wrongly land on MAX.
    expect(mulDivFloor(7_234_318_055_854_087, 8_484_076_164_155_294, 6_814_160_944_567_096)).toBe(MONEY_OVERFLOW);
    expect(mulDivCeil(7_234_318_055_854_087, 8_484_076_164_155_294, 6_814_160_944_567_096)).toBe(MONEY_OVERFLOW);
    // Huge quotients are refused up front, not wrapped.
    expect(mulDivFloor(MAX, MAX, 1)).toBe(MONEY_OVERFLOW);
    expect(mulDivCeil(MAX, MAX, 1)).toBe(MONEY_OVERFLOW);
  });

  it('zero operands and a result of zero', () => {
    expect(mulDivFloor(0, MAX, 1)).toBe(0);
    expect(mulDivCeil(MAX, 0, 7)).toBe(0);
    expect(mulDivFloor(1, 1, MAX)).toBe(0);
    expect(mulDivCeil(1, 1, MAX)).toBe(1);
    expect(Object.is(mulDivFloor(0, 5, 3), 0)).toBe(true);
  });

  it('ceil - floor is 0 for exact divisions and 1 otherwise', () => {
    fc.assert(
      fc.property(safeNat, safeNat, divisor, (a, b, d) => {
        const lo = mulDivFloor(a, b, d);
        const hi = mulDivCeil(a, b, d);
        if (lo === MONEY_OVERFLOW) {
          expect(hi).toBe(MONEY_OVERFLOW);
          return;
        }
        const exact = (BigInt(a) * BigInt(b)) % BigInt(d) === 0n;
        if (hi === MONEY_OVERFLOW) expect(lo).toBe(MAX);
        else expect(hi - lo).toBe(exact ? 0 : 1);
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses invalid operands instead of rounding them', () => {
    const bad: [number, number, number][] = [
      [-1, 1, 1],
      [1, -1, 1],
      [1, 1, 0],
      [1, 1, -1],
      [1.5, 2, 1],
      [2, 1, 0.5],
      [NaN, 1, 1],
      [1, 1, NaN],
      [Infinity, 1, 1],
      [TWO_53, 1, 1],
      [1, TWO_53, 1],
      [1, 1, TWO_53],
    ];
    for (const [a, b, d] of bad) {
      expect(() => mulDivFloor(a, b, d), `floor(${a},${b},${d})`).toThrow(RangeError);
      expect(() => mulDivCeil(a, b, d), `ceil(${a},${b},${d})`).toThrow(RangeError);
    }
  });
});

describe('notional and fees', () => {
  it('notionalFloor / notionalCeil = price * quantity / 1e6 rounded down / up', () => {
    fc.assert(
      fc.property(safeNat, safeNat, (price, quantity) => {
        expect(notionalFloor(price, quantity)).toBe(refMulDiv(price, quantity, 1_000_000, false));
        expect(notionalCeil(price, quantity)).toBe(refMulDiv(price, quantity, 1_000_000, true));
      }),
      { numRuns: RUNS },
    );
  });

  it('notional on realistic ticks and lots (BTC-USDC: tick 0.1, lot 0.00001)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 1, max: 100_000_000 }),
        (ticks, lots) => {
          const price = ticks * 100_000; // up to 1,000,000 USDC
          const quantity = lots * 10; // up to 1,000 BTC
          const lo = notionalFloor(price, quantity);
          const hi = notionalCeil(price, quantity);
          expect(lo).toBe(refMulDiv(price, quantity, 1_000_000, false));
          expect(hi).toBe(refMulDiv(price, quantity, 1_000_000, true));
          // A 0.1 tick times a 0.00001 lot is 1 unit: BTC-USDC notionals are always exact.
          expect(hi).toBe(lo);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('worked examples', () => {
    // 1.5 x 2.000001 = 3.0000015 -> floor 3.000001, ceil 3.000002.
    expect(notionalFloor(1_500_000, 2_000_001)).toBe(3_000_001);
    expect(notionalCeil(1_500_000, 2_000_001)).toBe(3_000_002);
    // 60,000 USDC x 200 BTC = 12,000,000 USDC: the product 1.2e19 units^2 needs the limb path.
    expect(notionalFloor(60_000_000_000, 200_000_000)).toBe(12_000_000_000_000);
    // 0.000001 x 0.000001 rounds to nothing for the seller and one unit for the buyer.
    expect(notionalFloor(1, 1)).toBe(0);
    expect(notionalCeil(1, 1)).toBe(1);
    // 10 bps of 1.000001: 0.0010000010 -> ceil 0.001001 paid, floor 0.001 as a rebate.
    expect(feeCeil(1_000_001, 10)).toBe(1_001);
    expect(feeFloor(1_000_001, 10)).toBe(1_000);
    expect(feeCeil(0, 30)).toBe(0);
    expect(feeCeil(123_456_789, 0)).toBe(0);
    expect(feeCeil(MAX, BPS_PER_WHOLE)).toBe(MAX);
    expect(feeCeil(MAX, BPS_PER_WHOLE + 1)).toBe(MONEY_OVERFLOW);
  });

  it('feeCeil / feeFloor = notional * bps / 1e4 rounded up / down', () => {
    const bps = fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.constantFrom(0, 1, 10_000, 10_001), safeNat);
    fc.assert(
      fc.property(safeNat, bps, (notional, feeBps) => {
        expect(feeCeil(notional, feeBps)).toBe(refMulDiv(notional, feeBps, 10_000, true));
        expect(feeFloor(notional, feeBps)).toBe(refMulDiv(notional, feeBps, 10_000, false));
      }),
      { numRuns: RUNS },
    );
  });
});

describe('addChecked', () => {
  it('matches BigInt addition with overflow to MONEY_OVERFLOW', () => {
    fc.assert(
      fc.property(safeNat, safeNat, (a, b) => {
        expect(addChecked(a, b)).toBe(refAdd(a, b));
      }),
      { numRuns: RUNS },
    );
  });

  it('boundary sums', () => {
    expect(addChecked(MAX, 0)).toBe(MAX);
    expect(addChecked(0, MAX)).toBe(MAX);
    expect(addChecked(MAX, 1)).toBe(MONEY_OVERFLOW);
    expect(addChecked(2 ** 52, 2 ** 52 - 1)).toBe(MAX);
    expect(addChecked(2 ** 52, 2 ** 52)).toBe(MONEY_OVERFLOW);
    expect(addChecked(MAX, MAX)).toBe(MONEY_OVERFLOW);
    expect(addChecked(0, 0)).toBe(0);
  });

  it('refuses negative, fractional and unsafe operands', () => {
    for (const [a, b] of [
      [-1, 0],
      [0, -1],
      [0.5, 1],
      [NaN, 1],
      [TWO_53, 0],
      [Infinity, 0],
    ] as [number, number][]) {
      expect(() => addChecked(a, b), `addChecked(${a}, ${b})`).toThrow(RangeError);
    }
  });
});

describe('unchecked notional and fees (the engine\'s hot paths)', () => {
  it('equal the checked forms on non-negative safe integers, edge values included', () => {
    const check = (a: number, b: number): void => {
      const pairs: [number, number][] = [
        [notionalFloorUnchecked(a, b), notionalFloor(a, b)], [notionalCeilUnchecked(a, b), notionalCeil(a, b)],
        [feeCeilUnchecked(a, b), feeCeil(a, b)], [feeFloorUnchecked(a, b), feeFloor(a, b)],
      ];
      for (const [u, c] of pairs) if (u !== c) expect(u, `${a}, ${b}`).toBe(c);
    };
    for (const a of EDGE_VALUES) for (const b of EDGE_VALUES) check(a, b);
    fc.assert(fc.property(safeNat, safeNat, (a, b) => check(a, b)), { numRuns: RUNS });
  });
});

describe('isMultiple', () => {
  it('agrees with BigInt remainder for 0 <= x < 2^53 and steps >= 1, near 2^53 included', () => {
    const check = (x: number, step: number): void => {
      const want = BigInt(x) % BigInt(step) === 0n;
      if (isMultiple(x, step) !== want) expect(isMultiple(x, step), `${x} / ${step}`).toBe(want);
    };
    for (const x of EDGE_VALUES) for (const step of [1, 2, 3, 7, 10, 100, 10_000, 999_999, 2 ** 26 + 1, MAX]) check(x, step);
    fc.assert(fc.property(safeNat, fc.integer({ min: 1, max: 1_000_000 }), (x, step) => {
      check(x, step);
      // A multiple near the top of the safe range, and its neighbours.
      const top = Math.floor(MAX / step) * step;
      check(top, step);
      if (top > 0) check(top - 1, step);
      if (top < MAX) check(top + 1, step);
    }), { numRuns: RUNS });
  });
});
