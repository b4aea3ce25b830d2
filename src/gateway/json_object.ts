// The strict JSON-object parser of request bodies: HTTP bodies (http_route.ts, after http_body.ts
// collected them) and WebSocket messages (ws/messages.ts) alike.
//
// Decisions:
// - JSON bodies must be UTF-8 (invalid sequences are refused rather than replaced by U+FFFD), a
//   JSON object at the top level, at most 32 levels deep, without the keys `__proto__`,
//   `constructor` or `prototype` at any depth, and without a number literal that is not an
//   integer but rounds to one as a float (e.g. `1.0000000000000001` or `1e-400`): DECISIONS says
//   values are never silently rounded, and after JSON.parse the difference is invisible.

/** Deepest nesting a JSON body may have (the top-level object counts as level 1). */
export const JSON_MAX_DEPTH = 32;
/** Keys refused at any depth of a JSON body. */
export const FORBIDDEN_JSON_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The forbidden keys' lengths and first chars: a key that matches neither is not one of them, and
 * needs no Set probe (a signed order's ten members probed the Set ten times, ~650 instructions per
 * body; with this filter none of them does; issue 11, branch h17f). Derived from the Set, so a key
 * added there is filtered right.
 */
const FORBIDDEN_KEY_LENGTHS = new Uint8Array(64);
const FORBIDDEN_KEY_FIRSTS = new Uint8Array(128);
for (const k of FORBIDDEN_JSON_KEYS) {
  if (k.length >= FORBIDDEN_KEY_LENGTHS.length || k.charCodeAt(0) >= FORBIDDEN_KEY_FIRSTS.length) throw new Error(`forbidden key ${k} outside the filter's tables`);
  FORBIDDEN_KEY_LENGTHS[k.length] = 1;
  FORBIDDEN_KEY_FIRSTS[k.charCodeAt(0)] = 1;
}

/** Whether `k` is a forbidden key (the filter first, then the Set). */
function forbiddenKey(k: string): boolean {
  const n = k.length;
  if (n >= FORBIDDEN_KEY_LENGTHS.length || FORBIDDEN_KEY_LENGTHS[n] === 0) return false;
  const c = k.charCodeAt(0);
  if (c >= FORBIDDEN_KEY_FIRSTS.length || FORBIDDEN_KEY_FIRSTS[c] === 0) return false;
  return FORBIDDEN_JSON_KEYS.has(k);
}

export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a request body that must be a JSON object (its bytes: a Buffer, or uWS's ArrayBuffer
 * chunk as it came). Failure messages are sentences fit for the `message` of an INVALID_REQUEST reply.
 */
export function parseJsonObject(body: Uint8Array | ArrayBuffer): JsonObjectResult {
  if (body.byteLength === 0) return { ok: false, message: 'body is empty; a JSON object is required' };
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    return { ok: false, message: 'body is not valid UTF-8' };
  }
  const scan = scanNeeded(text) ? scanJsonText(text) : null;
  if (scan !== null) return { ok: false, message: scan };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: 'body is not valid JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, message: 'body must be a JSON object' };
  }
  const keys = checkKeys(value);
  if (keys !== null) return { ok: false, message: keys };
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Whether scanJsonText could refuse `text`; false only when it surely would not, found with a few
 * native searches instead of its char-by-char pass (~4,800 instructions for a signed order's body,
 * a tenth of the front's parse path: bench/signed_parse.ts; issue 11, branch h17f):
 * - it refuses nesting deeper than JSON_MAX_DEPTH, which needs more than that many '{' and '['
 *   (counted here in strings too: a bound, never fewer than the scan's);
 * - it refuses a number literal whose exact value is not an integer but whose float is. Without a
 *   '.', such a literal has no fraction digits, so its exponent must be negative: it holds "e-" or
 *   "E-" (a '-' after an 'e' or 'E'). A text with neither '.' nor those two holds no literal the scan refuses.
 */
function scanNeeded(text: string): boolean {
  if (text.indexOf('.') >= 0) return true;
  // "e-" or "E-": found through the '-'s (one-char searches; a signed order has one, in its
  // market id), not two two-char searches over the whole text (~300 instructions; branch h21f).
  for (let at = text.indexOf('-', 1); at >= 0; at = text.indexOf('-', at + 1)) {
    const before = text.charCodeAt(at - 1);
    if (before === 0x65 /* e */ || before === 0x45 /* E */) return true;
  }
  let opens = 0;
  for (let at = text.indexOf('{'); at >= 0; at = text.indexOf('{', at + 1)) {
    if (++opens > JSON_MAX_DEPTH) return true;
  }
  for (let at = text.indexOf('['); at >= 0; at = text.indexOf('[', at + 1)) {
    if (++opens > JSON_MAX_DEPTH) return true;
  }
  return false;
}

/**
 * One pass over the raw text outside string literals: refuses nesting deeper than JSON_MAX_DEPTH
 * (before JSON.parse builds anything) and number literals that are not integers but parse to one.
 * Malformed text is left for JSON.parse to refuse.
 */
function scanJsonText(text: string): string | null {
  let depth = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Jump to the closing quote: the next '"' preceded by an even number of backslashes.
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) return null; // unterminated string: JSON.parse refuses it
        let k = j - 1;
        let backslashes = 0;
        while (text.charCodeAt(k) === 0x5c) {
          backslashes++;
          k--;
        }
        if ((backslashes & 1) === 0) break;
        j++;
      }
      i = j + 1;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > JSON_MAX_DEPTH) return `body nests deeper than ${JSON_MAX_DEPTH} levels`;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      i++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      let fractional = false;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d >= 0x30 && d <= 0x39) i++;
        else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) {
          fractional = true;
          i++;
        } else break;
      }
      if (fractional) {
        const literal = text.slice(start, i);
        if (roundsToIntegerInexactly(literal)) {
          const shown = literal.length > 40 ? `${literal.slice(0, 40)}...` : literal;
          return `number ${shown} is not an integer but rounds to one; integers must be sent as plain digits`;
        }
      }
    } else {
      i++;
    }
  }
  return null;
}

const NUMBER_LITERAL = /^-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/** True when the JSON number literal's exact decimal value is not an integer but its float is. */
function roundsToIntegerInexactly(literal: string): boolean {
  const m = NUMBER_LITERAL.exec(literal);
  if (m === null) return false; // not a valid literal: JSON.parse refuses it
  if (!Number.isInteger(Number(literal))) return false;
  const frac = m[2] ?? '';
  let digits = m[1] + frac;
  let trailing = 0;
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 0x30) {
    end--;
    trailing++;
  }
  digits = digits.slice(0, end);
  if (/^0*$/.test(digits)) return false; // zero
  const exponent = m[3] === undefined ? 0 : Number(m[3]);
  return exponent - frac.length + trailing < 0;
}

/** Walks the parsed value (iteratively) for forbidden keys. */
function checkKeys(root: object): string | null {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const v = stack.pop() as object;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push(x as object);
    } else {
      const record = v as Record<string, unknown>;
      // for-in over a parsed object walks its map's key cache; Object.keys built an array per body.
      for (const k in record) {
        if (!Object.prototype.hasOwnProperty.call(record, k)) continue;
        if (forbiddenKey(k)) return `body contains the forbidden key "${k}"`;
        const x = record[k];
        if (x !== null && typeof x === 'object') stack.push(x as object);
      }
    }
  }
  return null;
}
