/**
 * Small, strict hex helpers for the DA layer (fills tree, batch headers).
 *
 * Bytes to hex is src/util/hex.ts `toHex0x` (`0x`-prefixed lowercase, one flat string), the one
 * spelling the whole tree uses. Parsing accepts an optional `0x`/`0X` prefix and either case, like OpenZeppelin's merkle-tree `toBytes`, but never guesses:
 * an odd number of digits or a non-hex character is an error (or `null` for the `try*` forms).
 */

import { HEX_NIBBLE, NOT_HEX } from '../util/hex.js';

/**
 * Parse hex (optional `0x` prefix, any case) into bytes. Returns `null` when the text is not an
 * even-length run of hex digits, or when `expected_length` is given and does not match.
 */
export function tryHexToBytes(hex: string, expected_length?: number): Uint8Array | null {
  if (typeof hex !== 'string') return null;
  const start = hex.length >= 2 && hex[0] === '0' && (hex[1] === 'x' || hex[1] === 'X') ? 2 : 0;
  const digits = hex.length - start;
  if (digits % 2 !== 0) return null;
  const n = digits / 2;
  if (expected_length !== undefined && n !== expected_length) return null;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const c1 = hex.charCodeAt(start + 2 * i);
    const c2 = hex.charCodeAt(start + 2 * i + 1);
    const hi = c1 < 256 ? HEX_NIBBLE[c1] : NOT_HEX;
    const lo = c2 < 256 ? HEX_NIBBLE[c2] : NOT_HEX;
    if (hi === NOT_HEX || lo === NOT_HEX) return null;
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** Like {@link tryHexToBytes} but throws a `TypeError` naming `what` on bad input. */
export function hexToBytes(hex: string, expected_length?: number, what = 'hex value'): Uint8Array {
  const out = tryHexToBytes(hex, expected_length);
  if (out === null) {
    const len = expected_length === undefined ? '' : ` of ${expected_length} bytes`;
    throw new TypeError(`invalid ${what}: expected hex${len}, got ${JSON.stringify(String(hex))}`);
  }
  return out;
}

/**
 * Lexicographic comparison of two byte ranges of equal length `len`
 * (`a[a_off..a_off+len)` vs `b[b_off..b_off+len)`). For fixed-length hashes this is the same
 * order as comparing them as big-endian unsigned integers, which is what OpenZeppelin uses.
 */
export function compareBytes(
  a: Uint8Array, a_off: number, b: Uint8Array, b_off: number, len: number,
): number {
  for (let i = 0; i < len; i++) {
    const d = a[a_off + i]! - b[b_off + i]!;
    if (d !== 0) return d;
  }
  return 0;
}

/** Constant-shape equality of two byte arrays. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
