// The project's one byte -> hex table and one hex-digit table. src/auth/hex.ts (strict parsers on
// the signature path), src/da/hex.ts (DA encodings), the ring codec and the account registry all
// build on these, so there is one spelling of "lowercase hex" in the tree.

/** byte -> two lowercase hex digits. */
export const BYTE_HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

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

// Both build the string with one join, not with `s +=` per byte: V8 makes every concatenation
// past 12 characters a cons-string node (32 bytes) that stays in the result until something
// flattens it, so an address built byte by byte held a chain of ~15 nodes (~480 bytes) instead
// of one 42-character string (~64 bytes). The read model and the matcher's registry keep one
// address string per account: a heap snapshot of the front after 10,000 fresh wallets held
// 150,000 such nodes (issue 20).

/** Lowercase hex of `bytes[start, end)`, no prefix (one flat string). */
export function toHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  return hexParts(bytes, start, end, 0).join('');
}

/** Lowercase hex of `bytes[start, end)`, with a `0x` prefix (one flat string). */
export function toHex0x(bytes: Uint8Array, start = 0, end = bytes.length): string {
  const parts = hexParts(bytes, start, end, 1);
  parts[0] = '0x';
  return parts.join('');
}

function hexParts(bytes: Uint8Array, start: number, end: number, first: number): string[] {
  const parts = new Array<string>(Math.max(0, end - start) + first);
  for (let i = start; i < end; i++) parts[i - start + first] = BYTE_HEX[bytes[i]];
  return parts;
}
