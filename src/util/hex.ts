// The project's one byte -> hex spelling and one hex-digit table. src/auth/hex.ts (strict parsers on
// the signature path), src/da/hex.ts (DA encodings), the ring codec and the account registry all
// build on these, so there is one spelling of "lowercase hex" in the tree.

/** Char code (0..255) -> nibble value; NOT_HEX marks a character that is not a hex digit (either case). */
export const NOT_HEX = 255;
export const HEX_NIBBLE: Uint8Array = (() => {
  const t = new Uint8Array(256).fill(NOT_HEX);
  for (let i = 0; i < 10; i++) t[48 + i] = i;
  for (let i = 0; i < 6; i++) {
    t[65 + i] = 10 + i; // A-F
    t[97 + i] = 10 + i; // a-f
  }
  return t;
})();

// Both spell the digits into a scratch byte array and make the string with one native UTF-8 decode
// (ASCII in, a flat one-byte string out). Not with `s +=` per byte: V8 makes every concatenation
// past 12 characters a cons-string node (32 bytes) that stays in the result until something
// flattens it, so an address built byte by byte held a chain of ~15 nodes (~480 bytes) instead
// of one 42-character string (~64 bytes); the read model and the matcher's registry keep one
// address string per account (issue 20). Not `'0x' + buffer.toString('hex')` either: that is a
// cons node too. And not a table-and-join: callgrind, 200,000 calls on 32 bytes, Node 20 (h28s):
// join ~17,300 instructions a call, this ~3,700, `'0x' + toString('hex')` ~3,400 (cons).

/** byte -> its two lowercase hex digits as char codes, low byte first (the order they are written). */
const DIGIT_PAIR: Uint16Array = (() => {
  const t = new Uint16Array(256);
  const digits = '0123456789abcdef';
  for (let i = 0; i < 256; i++) t[i] = digits.charCodeAt(i >> 4) | (digits.charCodeAt(i & 15) << 8);
  return t;
})();

/** Inputs up to this many bytes (a hash, an address, a 65-byte signature) reuse one scratch buffer. */
const SCRATCH_INPUT_BYTES = 128;
const PREFIX_CHARS = 2;
// A Uint8Array, not a Buffer: the web view's bundle (web/src) takes this module through src/client,
// and a browser has no Buffer (a Buffer here stopped the page at load: test/web/browser.test.ts).
const scratch = new Uint8Array(PREFIX_CHARS + 2 * SCRATCH_INPUT_BYTES);
const ascii = new TextDecoder('utf-8');

/** Lowercase hex of `bytes[start, end)`, no prefix (one flat string). */
export function toHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  return spell(bytes, start, end, PREFIX_CHARS);
}

/** Lowercase hex of `bytes[start, end)`, with a `0x` prefix (one flat string). */
export function toHex0x(bytes: Uint8Array, start = 0, end = bytes.length): string {
  return spell(bytes, start, end, 0);
}

/** The digits of `bytes[start, end)` after the `0x` prefix; the string starts at `from` (0 keeps the prefix). */
function spell(bytes: Uint8Array, start: number, end: number, from: number): string {
  // Outside the bytes spells nothing, as the table-and-join form did (it joined undefined as '').
  const first = Math.max(0, start);
  const stop = Math.min(end, bytes.length);
  const n = Math.max(0, stop - first);
  const out = n <= SCRATCH_INPUT_BYTES ? scratch : new Uint8Array(PREFIX_CHARS + 2 * n);
  out[0] = 0x30; // '0'
  out[1] = 0x78; // 'x'
  let o = PREFIX_CHARS;
  for (let i = first; i < stop; i++) {
    const pair = DIGIT_PAIR[bytes[i]];
    out[o] = pair & 0xff;
    out[o + 1] = pair >> 8;
    o += 2;
  }
  return ascii.decode(out.subarray(from, o));
}
