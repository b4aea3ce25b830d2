import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  MoneyFormatError,
  formatUnits,
  formatUnitsFixed6,
  isSafeUnits,
  parseDecimalUnits,
} from '../../src/money/index.js';
import { MAX, RUNS, refFormat, refParse, safeNat } from './reference.js';

const POSITIVE = { allow_negative: false };
const SIGNED = { allow_negative: true };

/** Any value formatUnits accepts: a safe integer of either sign. */
const signedUnits = fc.tuple(safeNat, fc.boolean()).map(([u, negative]) => (negative && u !== 0 ? -u : u));

function refusal(text: string, allowNegative: boolean): MoneyFormatError {
  try {
    parseDecimalUnits(text, { allow_negative: allowNegative });
  } catch (error) {
    expect(error).toBeInstanceOf(MoneyFormatError);
    return error as MoneyFormatError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

describe('parseDecimalUnits', () => {
  it.each([
    ['1.5', 1_500_000],
    ['0.000001', 1],
    ['42', 42_000_000],
    ['007.5', 7_500_000],
    ['0', 0],
    ['0.0', 0],
    ['000', 0],
    ['0.1', 100_000],
    ['1.000000', 1_000_000],
    ['0.01', 10_000],
    ['0.00001', 10],
    ['123456.654321', 123_456_654_321],
    ['9007199254.740991', MAX],
    ['9007199254', 9_007_199_254_000_000],
    ['0000000000000000000000000000009007199254', 9_007_199_254_000_000], // exactly 40 chars
  ])('accepts %j as %d units', (text, units) => {
    expect(parseDecimalUnits(text, POSITIVE)).toBe(units);
    expect(parseDecimalUnits(text, SIGNED)).toBe(units);
  });

  it.each([
    ['-2.5', -2_500_000],
    ['-0.000001', -1],
    ['-9007199254.740991', -MAX],
    ['-007', -7_000_000],
  ])('accepts %j as %d units when negatives are allowed', (text, units) => {
    expect(parseDecimalUnits(text, SIGNED)).toBe(units);
  });

  it('"-0" is plain zero, never the float -0', () => {
    for (const text of ['-0', '-0.0', '-000.000000']) {
      expect(Object.is(parseDecimalUnits(text, SIGNED), 0), text).toBe(true);
    }
  });

  // [input, allow_negative, what the message must say]
  const refused: [string, boolean, RegExp][] = [
    ['', true, /empty string/],
    ['.', true, /missing digits before '\.'/],
    ['1.', true, /missing digits after '\.'/],
    ['.5', true, /missing digits before '\.'/],
    ['1e3', true, /unexpected character "e" at position 1/],
    ['1E3', true, /unexpected character "E" at position 1/],
    ['+1', true, /'\+' sign is not allowed at position 0/],
    [' 1', true, /unexpected character " " at position 0/],
    ['1 ', true, /unexpected character " " at position 1/],
    ['\t1', true, /unexpected character "\\t" at position 0/],
    ['1\n', true, /unexpected character "\\n" at position 1/],
    ['1.0000001', true, /7 fractional digits, at most 6/],
    ['0.0000000', true, /7 fractional digits, at most 6/],
    ['-1', false, /negative amounts are not allowed/],
    ['-0', false, /negative amounts are not allowed/],
    ['0x10', true, /unexpected character "x" at position 1/],
    ['0b1', true, /unexpected character "b" at position 1/],
    ['1,5', true, /unexpected character "," at position 1/],
    ['1_000', true, /unexpected character "_" at position 1/],
    ['NaN', true, /unexpected character "N" at position 0/],
    ['Infinity', true, /unexpected character "I" at position 0/],
    ['-Infinity', true, /unexpected character "I" at position 1/],
    ['9007199254.740992', true, /exceeds the largest amount 9007199254\.740991/],
    ['-9007199254.740992', true, /exceeds the largest amount/],
    ['9007199255', true, /exceeds the largest amount/],
    ['99999999999999999999999999999999999999', true, /exceeds the largest amount/],
    ['0'.repeat(40) + '1', true, /41 characters, at most 40/],
    ['1'.repeat(41), true, /41 characters, at most 40/],
    ['9'.repeat(100_000), true, /100000 characters, at most 40/],
    ['-', true, /no digits after '-'/],
    ['--1', true, /unexpected character "-" at position 1/],
    ['-.5', true, /missing digits before '\.'/],
    ['1..5', true, /unexpected character "\." at position 2/],
    ['1.2.3', true, /unexpected character "\." at position 3/],
    ['1.-5', true, /unexpected character "-" at position 2/],
    ['1-', true, /unexpected character "-" at position 1/],
    ['\u0661', true, /unexpected character "\u0661" at position 0/], // Arabic-Indic one
    ['\uff11', true, /unexpected character "\uff11" at position 0/], // fullwidth one
    ['1\u0000', true, /unexpected character "\\u0000" at position 1/],
    ['１.5', true, /unexpected character/],
    ['99999999999x', true, /unexpected character "x"/], // syntax is reported before size
  ];

  it.each(refused)('refuses %j (allow_negative=%s)', (text, allowNegative, why) => {
    const error = refusal(text, allowNegative);
    expect(error.name).toBe('MoneyFormatError');
    expect(error.message).toMatch(why);
  });

  it('does not echo over-long input back in the message', () => {
    const error = refusal('7'.repeat(5_000), true);
    expect(error.message.length).toBeLessThan(100);
  });

  it('refuses non-strings that arrive from JSON at run time', () => {
    for (const value of [15, null, undefined, 1.5, {}, ['1']]) {
      expect(() => parseDecimalUnits(value as unknown as string, SIGNED)).toThrow(MoneyFormatError);
    }
  });

  it('agrees with the reference grammar on strings built from digits, dots, signs and junk', () => {
    const unit = fc.constantFrom('0', '1', '5', '9', '0', '7', '.', '-', '+', 'e', ' ', 'x');
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 45 }), fc.boolean(), (text, allowNegative) => {
        const expected = refParse(text, allowNegative);
        if (expected === null) {
          expect(() => parseDecimalUnits(text, { allow_negative: allowNegative })).toThrow(MoneyFormatError);
        } else {
          expect(parseDecimalUnits(text, { allow_negative: allowNegative })).toBe(expected);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('agrees with the reference on well-formed decimals of every size (leading zeros, 0-6 decimals)', () => {
    const decimal = fc
      .tuple(
        fc.boolean(),
        fc.integer({ min: 0, max: 5 }), // leading zeros
        fc.oneof(fc.maxSafeNat(), fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 9_007_199_250, max: 9_007_199_260 })),
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 999_999 }),
      )
      .map(([negative, zeros, whole, digits, fraction]) => {
        const fractionText = digits === 0 ? '' : '.' + String(fraction).padStart(6, '0').slice(0, digits);
        return (negative ? '-' : '') + '0'.repeat(zeros) + String(whole) + fractionText;
      });
    fc.assert(
      fc.property(decimal, (text) => {
        const expected = refParse(text, true);
        if (expected === null) {
          expect(() => parseDecimalUnits(text, SIGNED)).toThrow(MoneyFormatError);
        } else {
          expect(parseDecimalUnits(text, SIGNED)).toBe(expected);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe('formatUnits / formatUnitsFixed6', () => {
  it.each([
    [1_500_000, '1.5', '1.500000'],
    [1, '0.000001', '0.000001'],
    [42_000_000, '42', '42.000000'],
    [-2_500_000, '-2.5', '-2.500000'],
    [0, '0', '0.000000'],
    [-0, '0', '0.000000'],
    [10_000, '0.01', '0.010000'],
    [100_000, '0.1', '0.100000'],
    [-1, '-0.000001', '-0.000001'],
    [123_456_654_321, '123456.654321', '123456.654321'],
    [MAX, '9007199254.740991', '9007199254.740991'],
    [-MAX, '-9007199254.740991', '-9007199254.740991'],
    [9_007_199_254_000_000, '9007199254', '9007199254.000000'],
  ])('%d units -> %j / %j', (units, trimmed, fixed) => {
    expect(formatUnits(units)).toBe(trimmed);
    expect(formatUnitsFixed6(units)).toBe(fixed);
  });

  it('matches the BigInt reference formatter', () => {
    fc.assert(
      fc.property(signedUnits, (units) => {
        expect(formatUnits(units)).toBe(refFormat(units, false));
        expect(formatUnitsFixed6(units)).toBe(refFormat(units, true));
      }),
      { numRuns: RUNS },
    );
  });

  it('round-trips: parse(format(u)) === u for every safe integer, both formats', () => {
    fc.assert(
      fc.property(signedUnits, (units) => {
        expect(parseDecimalUnits(formatUnits(units), SIGNED)).toBe(units);
        expect(parseDecimalUnits(formatUnitsFixed6(units), SIGNED)).toBe(units);
        if (units >= 0) expect(parseDecimalUnits(formatUnits(units), POSITIVE)).toBe(units);
      }),
      { numRuns: RUNS },
    );
  });

  it('round-trips: format(parse(s)) is the canonical form of s', () => {
    const decimal = fc
      .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 9_007_199_253 }), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 999_999 }))
      .map(([zeros, whole, digits, fraction]) => {
        const fractionText = digits === 0 ? '' : '.' + String(fraction).padStart(6, '0').slice(0, digits);
        return '0'.repeat(zeros) + String(whole) + fractionText;
      });
    fc.assert(
      fc.property(decimal, (text) => {
        const canonical = text.replace(/^0+(?=\d)/, '').replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
        expect(formatUnits(parseDecimalUnits(text, POSITIVE))).toBe(canonical);
      }),
      { numRuns: RUNS },
    );
  });

  it('formatted output always satisfies the wire grammar', () => {
    fc.assert(
      fc.property(signedUnits, (units) => {
        expect(formatUnits(units)).toMatch(/^-?(0|[1-9][0-9]*)(\.[0-9]{0,5}[1-9])?$/);
        expect(formatUnitsFixed6(units)).toMatch(/^-?(0|[1-9][0-9]*)\.[0-9]{6}$/);
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses values that are not exact safe integers', () => {
    for (const bad of [1.5, 0.000001, NaN, Infinity, -Infinity, MAX + 1, -(MAX + 1), 2 ** 60]) {
      expect(() => formatUnits(bad), String(bad)).toThrow(RangeError);
      expect(() => formatUnitsFixed6(bad), String(bad)).toThrow(RangeError);
    }
  });
});

describe('isSafeUnits', () => {
  it.each([
    [0, true],
    [1, true],
    [MAX, true],
    [MAX + 1, false],
    [-1, false],
    [1.5, false],
    [NaN, false],
    [Infinity, false],
    [-0, true], // -0 is numerically 0; parseDecimalUnits never produces it.
  ])('isSafeUnits(%d) === %s', (value, expected) => {
    expect(isSafeUnits(value)).toBe(expected);
  });

  it('agrees with Number.isSafeInteger(x) && x >= 0 on arbitrary doubles', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), signedUnits), (x) => {
        expect(isSafeUnits(x)).toBe(Number.isSafeInteger(x) && x >= 0);
      }),
      { numRuns: RUNS },
    );
  });
});
