// Exact integer arithmetic on fixed-point money held in plain JS numbers.
//
// Every amount is an integer count of units (1 whole = UNITS_PER_WHOLE units) that must stay in
// [0, Number.MAX_SAFE_INTEGER]. The matcher multiplies price by quantity on every fill, and that
// product routinely exceeds 2^53 (e.g. 60_000 USDC x 200 BTC = 6e10 x 2e8 units = 1.2e19), so a
// plain `a * b / d` would silently lose low bits. These helpers return the exact floor/ceil of
// a*b/d, or MONEY_OVERFLOW when the exact result itself cannot be held exactly.
//
// No bigint here on purpose: bigint allocates and is ~50x slower than double arithmetic in V8,
// and this code runs once per fill. The reference implementation lives in the tests.

import { UNITS_PER_WHOLE, BPS_PER_WHOLE, MONEY_OVERFLOW, Scale } from './fixed.js';

const MAX_SAFE = Number.MAX_SAFE_INTEGER; // 2^53 - 1

// 24-bit limbs: a product of two limbs is < 2^48 and a sum of three such products is < 2^50,
// so every column sum in the schoolbook multiply below is an exact double.
const LIMB = 16_777_216; // 2^24
const LIMB2 = 281_474_976_710_656; // 2^48
// Multiplying by 2^-24 is exact for integers (only the exponent changes) and much cheaper than a
// division, so limbs are split with it.
const INV_LIMB = 1 / LIMB;

// A quotient estimate above this is certainly an overflow: the estimate's relative error is
// below 2^-51, so the true quotient exceeds 2^54 * (1 - 2^-51) > MAX_SAFE.
const ESTIMATE_OVERFLOW = 18_014_398_509_481_984; // 2^54

function invalid(name: string, a: number, b: number, d: number): never {
  // Called only on a caller bug (negative, fractional, unsafe, NaN, or d = 0): money must never
  // be rounded silently, so refuse loudly rather than return a number that looks plausible.
  throw new RangeError(
    `${name}: expected non-negative safe integers a, b and a positive safe integer d, got a=${a}, b=${b}, d=${d}`,
  );
}

// Largest d for which (d - 1)^2 <= MAX_SAFE, i.e. floor(sqrt(MAX_SAFE)) + 1: remainders modulo
// such a d multiply exactly. Covers the divisors the engine uses (1e6 for notionals, 1e4 for
// fees), which take the cheaper small-divisor path below.
const SMALL_DIVISOR_MAX = 94_906_266;

// Exact floor(a*b/d) (or ceil when roundUp) for a product a*b that does not fit in 53 bits.
//
// Small d: write a = aq*d + ar and b = bq*d + br (ar, br < d). Then
//   a*b/d = aq*b + ar*bq + ar*br/d,
// where ar*bq < b is a safe product, ar*br < d^2 is a safe product, and aq*b is either safe or
// already an overflow. All terms are non-negative, so every partial sum of an in-range total is
// exact, and an out-of-range total rounds to >= 2^53 (rounding is monotone): one final compare.
//
// Large d: take the double-precision quotient as an estimate, compute the exact remainder
// a*b - q*d in 24-bit limbs, then step q until 0 <= remainder < d. This is long division with a
// single, nearly exact, trial quotient digit; it needs no allocation and at most a few steps.
function mulDivWide(a: number, b: number, d: number, roundUp: boolean): number {
  if (d <= SMALL_DIVISOR_MAX) {
    const aq = Math.floor(a / d);
    const ar = a - aq * d;
    const bq = Math.floor(b / d);
    const br = b - bq * d;
    const rr = ar * br;
    const rq = Math.floor(rr / d);
    let result = aq * b + ar * bq + rq;
    if (roundUp && rq * d !== rr) result += 1;
    return result > MAX_SAFE ? MONEY_OVERFLOW : result;
  }

  // 1) Estimate. fl(fl(a*b)/d) has relative error < 2^-51, so for a true quotient below 2^54 the
  //    floor of the estimate is within 5 of floor(a*b/d).
  const estimate = (a * b) / d;
  if (estimate > ESTIMATE_OVERFLOW) return MONEY_OVERFLOW;
  const q = Math.floor(estimate);

  // 2) Exact remainder R = a*b - q*d. a, b, d < 2^53 and q <= 2^54 split into three 24-bit limbs
  //    (the top limb is < 2^7); splitting by powers of two is exact.
  let t = Math.floor(a * INV_LIMB);
  const a0 = a - t * LIMB;
  const a2 = Math.floor(t * INV_LIMB);
  const a1 = t - a2 * LIMB;
  t = Math.floor(b * INV_LIMB);
  const b0 = b - t * LIMB;
  const b2 = Math.floor(t * INV_LIMB);
  const b1 = t - b2 * LIMB;
  t = Math.floor(q * INV_LIMB);
  const q0 = q - t * LIMB;
  const q2 = Math.floor(t * INV_LIMB);
  const q1 = t - q2 * LIMB;
  t = Math.floor(d * INV_LIMB);
  const d0 = d - t * LIMB;
  const d2 = Math.floor(t * INV_LIMB);
  const d1 = t - d2 * LIMB;

  // Column i is the coefficient of 2^(24*i) in a*b - q*d; each is an exact double (|c| < 2^51).
  let c0 = a0 * b0 - q0 * d0;
  let c1 = a0 * b1 + a1 * b0 - (q0 * d1 + q1 * d0);
  let c2 = a0 * b2 + a1 * b1 + a2 * b0 - (q0 * d2 + q1 * d1 + q2 * d0);
  let c3 = a1 * b2 + a2 * b1 - (q1 * d2 + q2 * d1);
  const c4 = a2 * b2 - q2 * d2;

  // Signed carry propagation: afterwards c0, c1, c2 are in [0, 2^24).
  let carry = Math.floor(c0 * INV_LIMB);
  c0 -= carry * LIMB;
  c1 += carry;
  carry = Math.floor(c1 * INV_LIMB);
  c1 -= carry * LIMB;
  c2 += carry;
  carry = Math.floor(c2 * INV_LIMB);
  c2 -= carry * LIMB;
  c3 += carry;

  // R = rHigh * 2^48 + rLow with 0 <= rLow < 2^48. |R| <= 5d < 2^56, so |rHigh| < 2^8. Each
  // intermediate below is an integer of at most 53 significant bits (the columns are small and
  // scaling by 2^24 is exact), so both halves are exact.
  let rLow = c1 * LIMB + c0;
  let rHigh = (c3 + c4 * LIMB) * LIMB + c2;

  // d split at the same point: d = dHigh * 2^48 + dLow.
  const dHigh = d2;
  const dLow = d1 * LIMB + d0;

  // 3) Correct the estimate until 0 <= R < d (a handful of steps at most). The correction is
  //    kept apart from q: above 2^53 doubles are spaced by 2 or 4, so stepping q itself by 1
  //    would round. q + step is exact whenever its true value is <= MAX_SAFE, and is >= 2^53
  //    (so reported as overflow) otherwise.
  let step = 0;
  while (rHigh < 0) {
    step -= 1; // R < 0: q was too high, add d back.
    rLow += dLow;
    rHigh += dHigh;
    if (rLow >= LIMB2) {
      rLow -= LIMB2;
      rHigh += 1;
    }
  }
  while (rHigh > dHigh || (rHigh === dHigh && rLow >= dLow)) {
    step += 1; // R >= d: q was too low, take d off.
    rLow -= dLow;
    rHigh -= dHigh;
    if (rLow < 0) {
      rLow += LIMB2;
      rHigh -= 1;
    }
  }
  if (roundUp && (rHigh !== 0 || rLow !== 0)) step += 1;
  const result = q + step;
  return result > MAX_SAFE ? MONEY_OVERFLOW : result;
}

// Direct path, for an exact product p <= MAX_SAFE: Math.floor(p / d) and Math.ceil(p / d) are
// exact. Why: the double quotient could only round across an integer n if |n - p/d| (at least
// 1/d, as p/d is not n) were within half an ulp of n, at most n * 2^-53. For ceil that needs
// n*d >= 2^53 with n = floor(p/d), impossible as n*d <= p. For floor (n = floor(p/d) + 1) it
// forces d to be a power of two, where the division is exact. The property tests pin this down
// against a BigInt reference, including p near 2^53 with large d.

/** Exact floor(a*b/d); MONEY_OVERFLOW when the result exceeds MAX_SAFE_INTEGER. */
export function mulDivFloor(a: number, b: number, d: number): number {
  if (!(Number.isSafeInteger(a) && Number.isSafeInteger(b) && Number.isSafeInteger(d) && a >= 0 && b >= 0 && d > 0)) {
    invalid('mulDivFloor', a, b, d);
  }
  const p = a * b;
  // A double product <= MAX_SAFE means the true product is <= MAX_SAFE (rounding is monotone and
  // 2^53 is representable), hence exact.
  if (p <= MAX_SAFE) return Math.floor(p / d);
  return mulDivWide(a, b, d, false);
}

/** Exact ceil(a*b/d); MONEY_OVERFLOW when the result exceeds MAX_SAFE_INTEGER. */
export function mulDivCeil(a: number, b: number, d: number): number {
  if (!(Number.isSafeInteger(a) && Number.isSafeInteger(b) && Number.isSafeInteger(d) && a >= 0 && b >= 0 && d > 0)) {
    invalid('mulDivCeil', a, b, d);
  }
  const p = a * b;
  if (p <= MAX_SAFE) return Math.ceil(p / d);
  return mulDivWide(a, b, d, true);
}

/**
 * Fill notional in quote units, rounded down: what the seller receives.
 * price_units is quote units per whole base, quantity_units is base units, so
 * notional = price * quantity / UNITS_PER_WHOLE. MONEY_OVERFLOW when it cannot be held exactly.
 */
export function notionalFloor(price_units: number, quantity_units: number): number {
  return mulDivFloor(price_units, quantity_units, UNITS_PER_WHOLE);
}

/** Fill notional in quote units, rounded up: what the buyer pays (the extra unit goes to fees). */
export function notionalCeil(price_units: number, quantity_units: number): number {
  return mulDivCeil(price_units, quantity_units, UNITS_PER_WHOLE);
}

/** A paid fee: ceil(notional * bps / 10_000), so rounding never favours the payer. bps >= 0. */
export function feeCeil(notional_units: number, bps: number): number {
  return mulDivCeil(notional_units, bps, BPS_PER_WHOLE);
}

/** A rebate: floor(notional * bps / 10_000), so rounding never overpays. bps >= 0 (pass |bps|). */
export function feeFloor(notional_units: number, bps: number): number {
  return mulDivFloor(notional_units, bps, BPS_PER_WHOLE);
}

// Unchecked forms for the matcher's hot paths, whose inputs are already validated (non-negative
// safe integers: the engine refuses any request whose numbers are not safe integers, then checks
// signs, ticks and lots). The same results as the checked forms above on such inputs; on anything
// else the result is meaningless rather than an error. The four Number.isSafeInteger guards of
// the checked forms ran 3-6 times per request (bidLock, fill) for inputs checked once already.

// The unchecked forms run on the engine's hot paths: their constants are literals there
// (Scale, and Number.MAX_SAFE_INTEGER, which V8 folds), not module variables (fixed.ts says why).

/** notionalFloor without the argument checks (inputs: non-negative safe integers). */
export function notionalFloorUnchecked(price_units: number, quantity_units: number): number {
  const p = price_units * quantity_units;
  return p <= Number.MAX_SAFE_INTEGER ? Math.floor(p / Scale.UNITS_PER_WHOLE) : mulDivWide(price_units, quantity_units, Scale.UNITS_PER_WHOLE, false);
}

/** notionalCeil without the argument checks (inputs: non-negative safe integers). */
export function notionalCeilUnchecked(price_units: number, quantity_units: number): number {
  const p = price_units * quantity_units;
  return p <= Number.MAX_SAFE_INTEGER ? Math.ceil(p / Scale.UNITS_PER_WHOLE) : mulDivWide(price_units, quantity_units, Scale.UNITS_PER_WHOLE, true);
}

/** feeCeil without the argument checks (inputs: non-negative safe integers). */
export function feeCeilUnchecked(notional_units: number, bps: number): number {
  const p = notional_units * bps;
  return p <= Number.MAX_SAFE_INTEGER ? Math.ceil(p / Scale.BPS_PER_WHOLE) : mulDivWide(notional_units, bps, Scale.BPS_PER_WHOLE, true);
}

/** feeFloor without the argument checks (inputs: non-negative safe integers). */
export function feeFloorUnchecked(notional_units: number, bps: number): number {
  const p = notional_units * bps;
  return p <= Number.MAX_SAFE_INTEGER ? Math.floor(p / Scale.BPS_PER_WHOLE) : mulDivWide(notional_units, bps, Scale.BPS_PER_WHOLE, false);
}

/**
 * Whether x is a multiple of step, for safe integers 0 <= x and step >= 1, without `%`: on
 * doubles V8 computes `%` with a call to fmod, which cost more than the rest of an amend's checks.
 * Exact: if step does not divide x, x / step lies at least 1/step from every integer, and the
 * rounding error of the division is below (x / step) * 2^-53 < 1/step (x < 2^53), so the
 * quotient cannot round onto an integer; if it divides, the quotient is exact.
 */
export function isMultiple(x: number, step: number): boolean {
  const k = x / step;
  return k === Math.floor(k);
}

/** Balance credit: a + b, or MONEY_OVERFLOW when the sum exceeds MAX_SAFE_INTEGER. */
export function addChecked(a: number, b: number): number {
  if (!(Number.isSafeInteger(a) && Number.isSafeInteger(b) && a >= 0 && b >= 0)) {
    throw new RangeError(`addChecked: expected non-negative safe integers, got a=${a}, b=${b}`);
  }
  const sum = a + b;
  // An exact sum <= MAX_SAFE is computed exactly; an exact sum above it rounds to >= 2^53
  // (rounding is monotone and 2^53 is representable), so this comparison never misses.
  return sum > MAX_SAFE ? MONEY_OVERFLOW : sum;
}
