// Validators for path parameters, query parameters and JSON body fields.
//
// Decisions:
// - Every validator returns `Parsed<T>`: `{ok: true, value}` or `{ok: false, message}` (a
//   discriminated union rather than "value or message string", because several values are
//   strings themselves). Messages name the field and what is wrong, e.g.
//   `quantity must be an integer, got 1.5`; routes answer them as INVALID_REQUEST (wrong type or
//   shape) or INVALID_ORDER (order rules), whichever the route's contract says.
// - Addresses: `0x` + 40 hex digits in any case; the value is lowercased (DECISIONS: addresses
//   compare case-insensitively, responses use lowercase). The `0X` prefix is refused.
// - Market ids: `^[A-Z0-9]{1,12}-[A-Z0-9]{1,12}$`, case-sensitive (no uppercasing of input).
// - JSON integers (`parseSafeUint`): only JSON numbers that are safe integers >= 0 (or within
//   `min`/`max`); strings, booleans, null, NaN, infinities, fractions and values above 2^53 - 1
//   are refused, never rounded. `-0` is returned as 0.
// - Integer strings (`parseUintString`, for query parameters such as `limit`): canonical decimal
//   only (`0` or no leading zero, no sign, no spaces, at most 16 digits), safe integer.
// - Signatures: `0x` + 130 hex digits (r, s, v), lowercased. Low-s and v checks belong to
//   src/auth.
// - Query strings: `application/x-www-form-urlencoded` rules (`+` is a space, `%XX` escapes
//   decoded as UTF-8), but strict: a malformed escape, invalid UTF-8, an empty name, a repeated
//   name, more than `max_params` parameters or a raw query longer than `max_length` is an error.
//   Empty segments (`a=1&&b=2`) are skipped; a name without `=` has the value `""`.
// - Path parameters from uWS `getParameter()` are raw (not percent-decoded); the address and
//   market id shapes contain no characters that need decoding, so a percent sign simply fails
//   validation.
import { isAddress } from '../util/address.js';
import { SIGNATURE_HEX_PATTERN } from '../util/signature_hex.js';

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

function ok<T>(value: T): Parsed<T> {
  return { ok: true, value };
}

function fail<T>(message: string): Parsed<T> {
  return { ok: false, message };
}

/** A short, safe rendering of a hostile value for an error message. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  switch (typeof value) {
    case 'string': {
      const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
      return JSON.stringify(shown);
    }
    case 'number':
      return String(value);
    case 'boolean':
      return `a boolean (${value})`;
    case 'object':
      return Array.isArray(value) ? 'an array' : 'an object';
    default:
      return `a ${typeof value}`;
  }
}

const MARKET_ID = /^[A-Z0-9]{1,12}-[A-Z0-9]{1,12}$/;
const UINT_STRING = /^(?:0|[1-9][0-9]{0,15})$/;

/** `0x` + 40 hex digits, any case; returns the lowercase form. */
export function parseAddress(text: unknown, field = 'address'): Parsed<string> {
  if (typeof text !== 'string') return fail(`${field} must be a string, got ${describeValue(text)}`);
  if (!isAddress(text)) {
    return fail(`${field} must be 0x followed by 40 hexadecimal digits, got ${describeValue(text)}`);
  }
  return ok(text.toLowerCase());
}

/** `<BASE>-<QUOTE>`, each 1 to 12 of `[A-Z0-9]`. */
export function parseMarketId(text: unknown, field = 'market_id'): Parsed<string> {
  if (typeof text !== 'string') return fail(`${field} must be a string, got ${describeValue(text)}`);
  if (!MARKET_ID.test(text)) {
    return fail(`${field} must look like BASE-QUOTE (1 to 12 of A-Z and 0-9 each), got ${describeValue(text)}`);
  }
  return ok(text);
}

/** `0x` + 130 hex digits; returns the lowercase form. */
export function parseSignatureHex(text: unknown, field = 'signature'): Parsed<string> {
  if (typeof text !== 'string') return fail(`${field} must be a string, got ${describeValue(text)}`);
  if (!SIGNATURE_HEX_PATTERN.test(text)) {
    const hint = text.length > 200 ? `a string of ${text.length} characters` : describeValue(text);
    return fail(`${field} must be 0x followed by 130 hexadecimal digits, got ${hint}`);
  }
  return ok(text.toLowerCase());
}

export interface UintBounds {
  /** Smallest allowed value (default 0). */
  min?: number;
  /** Largest allowed value (default Number.MAX_SAFE_INTEGER). */
  max?: number;
}

function checkBounds(value: number, field: string, opts: UintBounds | undefined): Parsed<number> {
  const min = opts?.min ?? 0;
  const max = opts?.max ?? Number.MAX_SAFE_INTEGER;
  if (value < min) return fail(`${field} must be at least ${min}, got ${value}`);
  if (value > max) return fail(`${field} must be at most ${max}, got ${value}`);
  return ok(value);
}

/** A JSON number that is a non-negative safe integer (within `opts`). */
export function parseSafeUint(value: unknown, field: string, opts?: UintBounds): Parsed<number> {
  if (typeof value !== 'number') {
    return fail(`${field} must be a JSON number (an integer), got ${describeValue(value)}`);
  }
  if (Number.isNaN(value) || !Number.isFinite(value)) return fail(`${field} must be a finite integer, got ${value}`);
  if (!Number.isInteger(value)) return fail(`${field} must be an integer, got ${value}`);
  if (value < 0) return fail(`${field} must not be negative, got ${value}`);
  if (value > Number.MAX_SAFE_INTEGER) {
    return fail(`${field} must be at most ${Number.MAX_SAFE_INTEGER}, got ${value}`);
  }
  return checkBounds(value + 0, field, opts); // + 0 turns -0 into 0
}

/** A canonical decimal string of a non-negative safe integer (within `opts`). */
export function parseUintString(text: unknown, field: string, opts?: UintBounds): Parsed<number> {
  if (typeof text !== 'string') return fail(`${field} must be a string of digits, got ${describeValue(text)}`);
  if (!UINT_STRING.test(text)) {
    return fail(`${field} must be a non-negative integer in decimal digits without sign or leading zeros, got ${describeValue(text)}`);
  }
  const value = Number(text);
  if (!Number.isSafeInteger(value)) return fail(`${field} must be at most ${Number.MAX_SAFE_INTEGER}, got ${describeValue(text)}`);
  return checkBounds(value, field, opts);
}

export interface QueryLimits {
  /** Most parameters (default 32). */
  max_params?: number;
  /** Longest raw query string in characters (default 2048). */
  max_length?: number;
}

export const QUERY_MAX_PARAMS = 32;
export const QUERY_MAX_LENGTH = 2048;

function decodeComponent(raw: string): string | null {
  const spaced = raw.indexOf('+') >= 0 ? raw.replace(/\+/g, ' ') : raw;
  if (spaced.indexOf('%') < 0) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return null;
  }
}

/**
 * The raw query string (uWS `req.getQuery()`, without `?`) as a Map of decoded name -> value.
 */
export function parseQuery(query: string, limits?: QueryLimits): Parsed<Map<string, string>> {
  const max_params = limits?.max_params ?? QUERY_MAX_PARAMS;
  const max_length = limits?.max_length ?? QUERY_MAX_LENGTH;
  const out = new Map<string, string>();
  if (query.length === 0) return ok(out);
  if (query.length > max_length) return fail(`query string must be at most ${max_length} characters, got ${query.length}`);
  for (const part of query.split('&')) {
    if (part.length === 0) continue;
    const eq = part.indexOf('=');
    const raw_name = eq < 0 ? part : part.slice(0, eq);
    const raw_value = eq < 0 ? '' : part.slice(eq + 1);
    const name = decodeComponent(raw_name);
    if (name === null) return fail(`query parameter name ${describeValue(raw_name)} has a malformed percent escape`);
    if (name.length === 0) return fail('query parameter names must not be empty');
    const value = decodeComponent(raw_value);
    if (value === null) return fail(`query parameter ${describeValue(name)} has a malformed percent escape`);
    if (out.has(name)) return fail(`query parameter ${describeValue(name)} must not be repeated`);
    if (out.size >= max_params) return fail(`query string must have at most ${max_params} parameters`);
    out.set(name, value);
  }
  return ok(out);
}
