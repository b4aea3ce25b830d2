// BigInt reference implementations and shared fast-check arbitraries for the money tests.
// BigInt is exact at any size, so it is the oracle the double-only code in src/money is held to.
import fc from 'fast-check';

export const MAX = Number.MAX_SAFE_INTEGER;
export const MAX_BIG = BigInt(MAX);
export const OVERFLOW = -1;

// Several thousand runs per property, as the brief asks; arithmetic properties are cheap.
export const RUNS = 10_000;

export function refMulDiv(a: number, b: number, d: number, roundUp: boolean): number {
  const product = BigInt(a) * BigInt(b);
  const divisor = BigInt(d);
  let q = product / divisor; // BigInt division truncates, which is floor for non-negatives.
  if (roundUp && q * divisor !== product) q += 1n;
  return q > MAX_BIG ? OVERFLOW : Number(q);
}

export function refAdd(a: number, b: number): number {
  const sum = BigInt(a) + BigInt(b);
  return sum > MAX_BIG ? OVERFLOW : Number(sum);
}

/** Reference formatter: BigInt division into whole and fraction, trailing zeros trimmed. */
export function refFormat(units: number, fixed6: boolean): string {
  const value = BigInt(units);
  const magnitude = value < 0n ? -value : value;
  const whole = magnitude / 1_000_000n;
  let fraction = (magnitude % 1_000_000n).toString().padStart(6, '0');
  if (!fixed6) fraction = fraction.replace(/0+$/, '');
  const sign = value < 0n ? '-' : '';
  return fraction === '' ? `${sign}${whole}` : `${sign}${whole}.${fraction}`;
}

/** Reference parser over the grammar -?[0-9]+(\.[0-9]{1,6})?; null when the string is refused. */
export function refParse(text: string, allowNegative: boolean): number | null {
  if (text.length > 40) return null;
  const match = /^(-?)([0-9]+)(?:\.([0-9]{1,6}))?$/.exec(text);
  if (match === null) return null;
  const [, sign, whole, fraction = ''] = match;
  if (sign === '-' && !allowNegative) return null;
  const magnitude = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
  if (magnitude > MAX_BIG) return null;
  const value = Number(magnitude);
  return sign === '-' && value !== 0 ? -value : value;
}

const clampSafe = (x: number): number => Math.min(MAX, Math.max(0, x));

// Hand-picked values: zero and one, tick and lot multiples, limb and power-of-two boundaries,
// sqrt(2^53) (where a*a crosses into the limb path), and the top of the safe range.
export const EDGE_VALUES: readonly number[] = [
  0, 1, 2, 3, 7, 9, 10, 99, 100, 101, 999, 1_000, 9_999, 10_000, 10_001, 100_000, 999_999, 1_000_000,
  1_000_001, 10_000_000, 1e9, 1e12, 1e15, 2 ** 24 - 1, 2 ** 24, 2 ** 24 + 1, 2 ** 26 - 1, 2 ** 26, 2 ** 26 + 1,
  2 ** 27, 2 ** 32 - 1, 2 ** 32, 2 ** 48 - 1, 2 ** 48, 2 ** 48 + 1, 94_906_265, 94_906_266, 94_906_267,
  2 ** 52 - 1, 2 ** 52, 2 ** 52 + 1, MAX - 1_000_000, MAX - 2, MAX - 1, MAX,
  // MAX = 6361 * 69431 * 20394401, so these multiply to exactly MAX.
  6_361, 69_431, 20_394_401, 441_650_591, 1_416_003_655_831, 129_728_784_761,
];

/** Non-negative safe integers, biased towards the sizes and shapes that break naive code. */
export const safeNat: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(...EDGE_VALUES),
  fc.maxSafeNat(),
  // Uniform bit length, so small and mid-sized values are as common as huge ones.
  fc.integer({ min: 0, max: 53 }).chain((bits) => fc.integer({ min: 0, max: 2 ** bits - 1 })),
  fc.integer({ min: 0, max: 1_000_000 }).map((k) => MAX - k),
  fc.tuple(fc.integer({ min: 0, max: 53 }), fc.integer({ min: -3, max: 3 })).map(([e, k]) => clampSafe(2 ** e + k)),
  // Prices on a 0.01 / 0.1 tick and quantities on 0.0001 / 0.00001 lots (units of 1e-6).
  ...[10_000, 100_000, 100, 10].map((step) => fc.integer({ min: 0, max: Math.floor(MAX / step) }).map((k) => k * step)),
);

/** Positive safe divisors: the real ones (1e6, 1e4), 1, and values near 2^53. */
export const divisor: fc.Arbitrary<number> = fc.oneof(
  // 94_906_266 / 94_906_267 straddle the switch between the small- and large-divisor limb paths.
  fc.constantFrom(1, 2, 3, 10, 10_000, 1_000_000, 94_906_266, 94_906_267, 1e12, 2 ** 26, 2 ** 48, 2 ** 52, MAX - 1, MAX),
  fc.integer({ min: 94_906_200, max: 94_906_330 }),
  safeNat.map((x) => Math.max(1, x)),
  fc.integer({ min: 0, max: 1_000_000 }).map((k) => MAX - k),
);

/** (a, b, d) whose product a*b sits within a couple of units of 2^53: the path switch. */
export const productNear2p53: fc.Arbitrary<[number, number, number]> = fc
  .tuple(fc.integer({ min: 1, max: MAX }), fc.integer({ min: -2, max: 2 }), divisor)
  .map(([a, delta, d]) => [a, clampSafe(Math.floor(2 ** 53 / a) + delta), d]);

function nearMax(a: number, d: number, delta: number): [number, number, number] {
  // With d <= a, b = MAX*d/a (+ delta) is a safe integer and a*b/d lands next to MAX.
  const b = (MAX_BIG * BigInt(d)) / BigInt(a) + BigInt(delta);
  return [a, Number(b < 0n ? 0n : b > MAX_BIG ? MAX_BIG : b), d];
}

/** (a, b, d) whose exact quotient a*b/d is within a few units of MAX_SAFE_INTEGER. */
export const quotientNearMax: fc.Arbitrary<[number, number, number]> = fc.oneof(
  // Divisors of any size.
  fc
    .tuple(fc.integer({ min: 1, max: MAX }), fc.integer({ min: 1, max: MAX }), fc.integer({ min: -3, max: 3 }))
    .map(([x, y, delta]) => nearMax(Math.max(x, y), Math.min(x, y), delta)),
  // The engine's divisors and other small ones (the small-divisor path).
  fc
    .tuple(fc.integer({ min: 1, max: MAX }), divisor, fc.integer({ min: -3, max: 3 }))
    .map(([x, d, delta]) => nearMax(Math.max(x, d), d, delta)),
);

function modInverse(value: bigint, modulus: bigint): bigint | null {
  // Extended Euclid; null when value and modulus share a factor.
  let [oldR, r] = [value % modulus, modulus];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  if (oldR !== 1n) return null;
  return ((oldS % modulus) + modulus) % modulus;
}

/**
 * (a, b, d) with a*b = q*d + r for a chosen tiny remainder r in {0, 1, 2, d-1, d-2}: the exact
 * quotient sits within 2/d of an integer, where any rounding inside the division shows up.
 * Built from residues: pick ar < d, solve br = r / ar (mod d), then a = aq*d + ar, b = bq*d + br.
 */
export const nearIntegerQuotient: fc.Arbitrary<[number, number, number]> = fc
  .tuple(
    fc.oneof(divisor, fc.integer({ min: 2, max: 2 ** 40 }), fc.integer({ min: 2 ** 26, max: 2 ** 30 })),
    fc.bigInt({ min: 0n, max: MAX_BIG }),
    fc.bigInt({ min: 0n, max: MAX_BIG }),
    fc.bigInt({ min: 0n, max: MAX_BIG }),
    fc.constantFrom(0n, 1n, 2n, -1n, -2n),
  )
  .map(([dNumber, arSeed, aqSeed, bqSeed, rOffset]) => {
    const d = BigInt(Math.max(2, dNumber));
    let ar = arSeed % d;
    let inverse = modInverse(ar, d);
    if (inverse === null) {
      ar = 1n;
      inverse = 1n;
    }
    const r = (((rOffset % d) + d) % d);
    const br = (r * inverse) % d;
    const aq = aqSeed % ((MAX_BIG - ar) / d + 1n);
    const bq = bqSeed % ((MAX_BIG - br) / d + 1n);
    return [Number(aq * d + ar), Number(bq * d + br), Number(d)] as [number, number, number];
  });
