// Fixed-point money <-> plain decimal strings.
//
// Amounts travel over the wire as plain decimal strings ("12.5") and live in the engine as an
// integer count of units, 1 whole = UNITS_PER_WHOLE units, in a plain JS number. Parsing builds
// that integer digit by digit; it never goes through parseFloat/Number(), which would accept
// exponents, hex, whitespace and "Infinity", and would round "0.1"-style fractions to binary.

/**
 * The constants below as a const enum, for hot code: tsc writes the numbers themselves there,
 * where an imported `const` is a module-variable load and a temporal-dead-zone check at every use,
 * in V8's optimized code too (an engine amend computes its lock with six of them;
 * docs/benchmarks.md, 2026-11-26, branch h15f).
 */
export const enum Scale {
  /** Fixed-point scale: an amount of 1 (whole) is 1_000_000 units, so 6 fractional digits. */
  UNITS_PER_WHOLE = 1_000_000,
  /** Basis points in one whole: a fee of 10 bps is 10 / 10_000 of the notional. */
  BPS_PER_WHOLE = 10_000,
  /** Returned by the exact-arithmetic helpers when the exact result exceeds MAX_SAFE_INTEGER. */
  MONEY_OVERFLOW = -1,
}
/** Fixed-point scale: an amount of 1 (whole) is 1_000_000 units, so 6 fractional digits. */
export const UNITS_PER_WHOLE: number = Scale.UNITS_PER_WHOLE;
/** Basis points in one whole: a fee of 10 bps is 10 / 10_000 of the notional. */
export const BPS_PER_WHOLE: number = Scale.BPS_PER_WHOLE;
/** Returned by the exact-arithmetic helpers when the exact result exceeds MAX_SAFE_INTEGER. */
export const MONEY_OVERFLOW: number = Scale.MONEY_OVERFLOW;

/** Thrown for a decimal string that is not an acceptable amount; the message says why. */
export class MoneyFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MoneyFormatError';
  }
}

const FRACTION_DIGITS = 6;
// Longer strings are refused before looking at them: no legitimate amount needs more than
// 1 sign + 16 integer digits + '.' + 6 digits, and leading zeros are the only padding allowed.
const MAX_TEXT_LENGTH = 40;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
// Largest whole part that can still be followed by a fraction without leaving the safe range:
// floor(MAX_SAFE / UNITS_PER_WHOLE) = 9007199254. Keeping the running whole part at or below it
// keeps every `whole * 10 + digit` step exact.
const MAX_WHOLE = Math.floor(MAX_SAFE / UNITS_PER_WHOLE);
// 10^(6 - n) for n fractional digits, to scale "5" in "1.5" to 500000 units.
const FRACTION_SCALE = [1_000_000, 100_000, 10_000, 1_000, 100, 10, 1];

const CHAR_0 = 48;
const CHAR_9 = 57;
const CHAR_DOT = 46;
const CHAR_MINUS = 45;

function refuse(text: string, reason: string): never {
  throw new MoneyFormatError(`invalid amount ${JSON.stringify(text)}: ${reason}`);
}

function unexpected(text: string, index: number): never {
  const ch = text[index];
  const what = ch === '+' ? "a '+' sign is not allowed" : `unexpected character ${JSON.stringify(ch)}`;
  refuse(text, `${what} at position ${index}; expected a plain decimal like "12.5"`);
}

/**
 * Parse a plain decimal string into units: "1.5" -> 1_500_000, "0.000001" -> 1, "42" -> 42_000_000.
 * Accepts digits with an optional '.' and 1 to 6 fractional digits; a leading '-' only when
 * opts.allow_negative. Throws MoneyFormatError for anything else or for a magnitude above
 * MAX_SAFE_INTEGER units.
 */
export function parseDecimalUnits(text: string, opts: { allow_negative: boolean }): number {
  if (typeof text !== 'string') {
    // Values come from JSON bodies at run time, whatever the static type says.
    throw new MoneyFormatError(`invalid amount: expected a decimal string, got ${text === null ? 'null' : typeof text}`);
  }
  const length = text.length;
  if (length === 0) refuse(text, 'empty string');
  if (length > MAX_TEXT_LENGTH) {
    // Do not echo a hostile string back into logs and responses.
    throw new MoneyFormatError(`invalid amount: ${length} characters, at most ${MAX_TEXT_LENGTH} allowed`);
  }

  let index = 0;
  let negative = false;
  if (text.charCodeAt(0) === CHAR_MINUS) {
    if (!opts.allow_negative) refuse(text, 'negative amounts are not allowed here');
    negative = true;
    index = 1;
    if (length === 1) refuse(text, "no digits after '-'");
  }

  // Whole part: at least one digit. The running value stops growing once it is already too
  // large (so it stays exact), but the rest is still scanned so syntax errors win over size.
  const wholeStart = index;
  let whole = 0;
  let tooLarge = false;
  while (index < length) {
    const code = text.charCodeAt(index);
    if (code < CHAR_0 || code > CHAR_9) break;
    if (!tooLarge) {
      whole = whole * 10 + (code - CHAR_0);
      if (whole > MAX_WHOLE) tooLarge = true;
    }
    index++;
  }
  if (index === wholeStart) {
    if (index < length && text.charCodeAt(index) === CHAR_DOT) refuse(text, "missing digits before '.'");
    unexpected(text, index);
  }

  // Optional fraction: '.' then 1 to 6 digits.
  let fractionUnits = 0;
  if (index < length) {
    if (text.charCodeAt(index) !== CHAR_DOT) unexpected(text, index);
    index++;
    const fractionStart = index;
    let fraction = 0;
    while (index < length) {
      const code = text.charCodeAt(index);
      if (code < CHAR_0 || code > CHAR_9) unexpected(text, index);
      // Only the first 6 digits are accumulated (more is refused below), so `fraction` is exact.
      if (index - fractionStart < FRACTION_DIGITS) fraction = fraction * 10 + (code - CHAR_0);
      index++;
    }
    const fractionDigits = index - fractionStart;
    if (fractionDigits === 0) refuse(text, "missing digits after '.'");
    if (fractionDigits > FRACTION_DIGITS) {
      refuse(text, `${fractionDigits} fractional digits, at most ${FRACTION_DIGITS} allowed (1 unit = 0.000001)`);
    }
    fractionUnits = fraction * FRACTION_SCALE[fractionDigits];
  }

  // whole <= MAX_WHOLE here, so whole * 1e6 <= 9_007_199_254_000_000 < 2^53 is exact. Adding the
  // fraction may exceed 2^53 and round, but only to a value still > MAX_SAFE, so the check holds.
  const units = tooLarge ? Infinity : whole * UNITS_PER_WHOLE + fractionUnits;
  if (units > MAX_SAFE) {
    refuse(text, `magnitude exceeds the largest amount ${formatUnits(MAX_SAFE)}`);
  }
  // "-0" and "-0.000" are zero, not the float -0 (which would format and compare surprisingly).
  return negative && units !== 0 ? -units : units;
}

function splitUnits(units: number, caller: string): { sign: string; whole: number; fraction: number } {
  if (!Number.isSafeInteger(units)) {
    throw new RangeError(`${caller}: expected a safe integer number of units, got ${units}`);
  }
  const magnitude = units < 0 ? -units : units;
  // % on integers is exact, and (magnitude - fraction) is an exact multiple of 1e6, so the
  // division is exact too: no reliance on how a fractional quotient would round.
  const fraction = magnitude % UNITS_PER_WHOLE;
  const whole = (magnitude - fraction) / UNITS_PER_WHOLE;
  return { sign: units < 0 ? '-' : '', whole, fraction };
}

/** Units as a decimal string with trailing fractional zeros trimmed: 1_500_000 -> "1.5", 0 -> "0". */
export function formatUnits(units: number): string {
  const { sign, whole, fraction } = splitUnits(units, 'formatUnits');
  if (fraction === 0) return sign + String(whole);
  let digits = String(fraction).padStart(FRACTION_DIGITS, '0');
  let end = digits.length;
  while (digits.charCodeAt(end - 1) === CHAR_0) end--;
  digits = digits.slice(0, end);
  return `${sign}${whole}.${digits}`;
}

/** Units as a decimal string with exactly 6 fractional digits, for aligned tables: "1.500000". */
export function formatUnitsFixed6(units: number): string {
  const { sign, whole, fraction } = splitUnits(units, 'formatUnitsFixed6');
  return `${sign}${whole}.${String(fraction).padStart(FRACTION_DIGITS, '0')}`;
}

/** A valid amount of money: an exact, non-negative integer count of units. */
export function isSafeUnits(x: number): boolean {
  return Number.isSafeInteger(x) && x >= 0;
}
