// Strict hex helpers for the auth hot path. Parsers never throw: they report failure, so a hostile
// signature or address string costs one pass and a `false`, never an exception.

import { HEX_NIBBLE as NIBBLE, toHex0x } from '../util/hex.js';

export { toHex0x };

/**
 * Parses `byteCount` bytes of hex from `text` starting at char `start` into `out` at `outOffset`.
 * Returns false (leaving `out` partly written) on any non-hex character or short input.
 */
export function parseHexStringInto(
  text: string,
  start: number,
  byteCount: number,
  out: Uint8Array,
  outOffset: number,
): boolean {
  if (start + 2 * byteCount > text.length) return false;
  for (let i = 0; i < byteCount; i++) {
    const hi = text.charCodeAt(start + 2 * i);
    const lo = text.charCodeAt(start + 2 * i + 1);
    if (hi > 255 || lo > 255) return false;
    const h = NIBBLE[hi];
    const l = NIBBLE[lo];
    if (h === 255 || l === 255) return false;
    out[outOffset + i] = (h << 4) | l;
  }
  return true;
}

/** Same as parseHexStringInto, reading ASCII hex from a byte array (the packed pool transport). */
export function parseHexBytesInto(
  src: Uint8Array,
  start: number,
  byteCount: number,
  out: Uint8Array,
  outOffset: number,
): boolean {
  if (start + 2 * byteCount > src.length) return false;
  for (let i = 0; i < byteCount; i++) {
    const h = NIBBLE[src[start + 2 * i]];
    const l = NIBBLE[src[start + 2 * i + 1]];
    if (h === 255 || l === 255) return false;
    out[outOffset + i] = (h << 4) | l;
  }
  return true;
}

/** True when `text` starts with the `0x` prefix (lowercase x only, as Ethereum tooling writes it). */
function has0x(text: string): boolean {
  return text.charCodeAt(0) === 48 && text.charCodeAt(1) === 120;
}

/** True when `text` is `0x` followed by exactly `byteCount` bytes of hex (digits in either case). */
export function isHexOfLength(text: unknown, byteCount: number): text is string {
  if (typeof text !== 'string' || text.length !== 2 + 2 * byteCount || !has0x(text)) return false;
  for (let i = 2; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 255 || NIBBLE[c] === 255) return false;
  }
  return true;
}

/** Parses `0x` + 2*byteCount hex chars into a new array; null when malformed. */
export function parsePrefixedHex(text: unknown, byteCount: number): Uint8Array | null {
  if (typeof text !== 'string' || text.length !== 2 + 2 * byteCount || !has0x(text)) return null;
  const out = new Uint8Array(byteCount);
  return parseHexStringInto(text, 2, byteCount, out, 0) ? out : null;
}

/** Parses `0x`-prefixed (or bare) hex of any even length; null when malformed. */
export function parseHexAnyLength(text: string): Uint8Array | null {
  const start = has0x(text) ? 2 : 0;
  const digits = text.length - start;
  if (digits % 2 !== 0) return null;
  const out = new Uint8Array(digits / 2);
  return parseHexStringInto(text, start, digits / 2, out, 0) ? out : null;
}

