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

/** Lowercase hex of `bytes[start, end)`, no prefix. */
export function toHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let s = '';
  for (let i = start; i < end; i++) s += BYTE_HEX[bytes[i]];
  return s;
}

/** Lowercase hex of `bytes[start, end)`, with a `0x` prefix. */
export function toHex0x(bytes: Uint8Array, start = 0, end = bytes.length): string {
  let s = '0x';
  for (let i = start; i < end; i++) s += BYTE_HEX[bytes[i]];
  return s;
}
