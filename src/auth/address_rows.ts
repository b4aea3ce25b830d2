// Expected addresses decoded once per text and kept, for the verify record (verify_codec.ts): a
// signed request names its wallet, and a wallet sends many requests, so the front copies the 20
// bytes it decoded for an earlier request (5 words) instead of writing the 42 chars for the verify
// worker to decode again (issue 11, branch h21v: the worker's JS decode of 40 digits and the
// front's native UTF-8 write of 42 chars, ~1,800 instructions a signature between them).
// A direct-mapped cache keyed by the text itself, as signature_rows.ts: a row holds the last
// address whose digits hashed there and its bytes; a miss decodes the text again, so it costs
// time, never a wrong byte. One per thread (module state), used synchronously.
import { HEX_NIBBLE } from '../util/hex.js';

const ADDRESS_CHARS = 42;
const ROW_BITS = 12;
/** Rows: more than the wallets of a load run (bench/load.ts --wallets 2000), 80 KB. */
const ROWS = 1 << ROW_BITS;
/** A row: the address's 20 bytes, 5 words. */
export const ADDRESS_ROW_WORDS = 5;
/** The rows as words: row r is words [r * ADDRESS_ROW_WORDS, +ADDRESS_ROW_WORDS). */
export const ADDRESS_ROWS_WORDS = new Int32Array(ROWS * ADDRESS_ROW_WORDS);
/** The rows as bytes (the same memory). */
export const ADDRESS_ROWS_BYTES = new Uint8Array(ADDRESS_ROWS_WORDS.buffer);
/** The address text each row holds the bytes of (undefined: none). */
const keys: (string | undefined)[] = new Array<string | undefined>(ROWS).fill(undefined);
/** The imported table as this module's const (folded into optimized code; an import is read through its cell each use). */
const NIBBLE = HEX_NIBBLE;

/**
 * The row holding the 20 bytes of `text` (any value) when it is `0x` and 40 hex digits (either
 * case), else -1. A text seen last in its row is a compare; another is decoded into the row
 * (a JS loop: one native call costs more than 40 digits here). The row's bytes stay valid until
 * the next call.
 */
export function addressRowOf(text: unknown): number {
  if (typeof text !== 'string' || text.length !== ADDRESS_CHARS) return -1;
  // The address's first four digits (its leading 16 bits, uniform for real addresses) mixed by a
  // multiplicative hash (as signature_rows.ts).
  const row = Math.imul((text.charCodeAt(2) << 24) | (text.charCodeAt(3) << 16) | (text.charCodeAt(4) << 8) | text.charCodeAt(5), 0x9e3779b1) >>> (32 - ROW_BITS);
  if (keys[row] === text) return row;
  keys[row] = undefined;
  if (text.charCodeAt(0) !== 48 || text.charCodeAt(1) !== 120) return -1; // "0x"
  const out = row * 4 * ADDRESS_ROW_WORDS;
  for (let i = 0; i < 20; i++) {
    const hi = text.charCodeAt(2 + 2 * i);
    const lo = text.charCodeAt(3 + 2 * i);
    if (hi > 255 || lo > 255) return -1;
    const h = NIBBLE[hi];
    const l = NIBBLE[lo];
    if (h === 255 || l === 255) return -1;
    ADDRESS_ROWS_BYTES[out + i] = (h << 4) | l;
  }
  keys[row] = text;
  return row;
}
