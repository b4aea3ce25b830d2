// The wallet addresses the front has checked, kept with their lowercase text and their 20 bytes
// (issue 11). A market maker sends thousands of requests from a handful of wallets, and each
// signed request's address was handled three times for the same 42 chars: a regex and
// `toLowerCase` when its body was parsed (gateway/signed_body.ts), a char-by-char decode when it
// was written to the request ring (gateway/context.ts), and the 42 chars again into the verify
// record for the worker to decode (verify_codec.ts). A known address now costs one row probe at
// each of those places. (Branches h21f and h21v each wrote a table for their end; this is the one
// table for all three.)
//
// Decisions:
// - Only texts that pass util/address.ts isAddress are kept (the lowercase text and the text as
//   sent, in one row), so a probe that hits is a text the check accepted: the checks and their
//   refusals are unchanged, and a miss takes the full path and fills the row.
// - Direct-mapped, ADDRESS_ROWS rows: a text's row comes from its last 8 chars, case folded (an
//   address's low 32 bits: random in real addresses, and the part that varies in sequential
//   ones), and an address takes its row from whoever held it. A probe compares the whole text, so
//   a shared row is a miss, never another address's bytes. No Map: with more wallets than rows, a
//   Map that starts over when full cost 2.5x the old path per request (its growth and rehashing;
//   bench/address_rows.ts --wallets 20000), where a taken row costs the old path and a row write.
// - One table per thread (module state), used synchronously: a row's bytes are valid until the
//   next call that fills a row.
import { isAddress } from '../util/address.js';
import { parseHexStringInto } from './hex.js';

/** Rows (a power of two; a row: 20 bytes, the lowercase text, the text as it was sent). */
export const ADDRESS_ROWS = 65_536;
const ROW_MASK = ADDRESS_ROWS - 1;
const ADDRESS_CHARS = 42;
const ADDRESS_BYTES = 20;
/** A row's bytes as words: row r is words [r * ADDRESS_ROW_WORDS, +ADDRESS_ROW_WORDS). */
export const ADDRESS_ROW_WORDS = ADDRESS_BYTES / 4;

/** Per row: the lowercase address ('' when empty), the text it was sent as, its bytes. */
const lower_texts: string[] = new Array<string>(ADDRESS_ROWS).fill('');
const sent_texts: string[] = new Array<string>(ADDRESS_ROWS).fill('');
/** The rows' bytes (row r at r * 20). */
export const ADDRESS_ROWS_BYTES = new Uint8Array(ADDRESS_ROWS * ADDRESS_BYTES);
/** The same memory as words. */
export const ADDRESS_ROWS_WORDS = new Int32Array(ADDRESS_ROWS_BYTES.buffer);

/**
 * The row of a 42-char text: its last 8 chars, case folded (a text and its lowercase form share
 * the row), mixed.
 */
function rowOf(text: string): number {
  let h = 0;
  for (let i = ADDRESS_CHARS - 8; i < ADDRESS_CHARS; i++) h = (Math.imul(h, 31) + (text.charCodeAt(i) | 0x20)) | 0;
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  return (h ^ (h >>> 12)) & ROW_MASK;
}

/**
 * The row holding `text` (any value) when it is `0x` followed by 40 hex digits in either case
 * (isAddress), else -1; a text not in its row is checked, decoded and put there.
 */
export function addressRowOf(text: unknown): number {
  if (typeof text !== 'string' || text.length !== ADDRESS_CHARS) return -1;
  const row = rowOf(text);
  if (lower_texts[row] === text || sent_texts[row] === text) return row;
  if (!isAddress(text)) return -1;
  const lower = text.toLowerCase();
  parseHexStringInto(lower, 2, ADDRESS_BYTES, ADDRESS_ROWS_BYTES, row * ADDRESS_BYTES);
  lower_texts[row] = lower;
  sent_texts[row] = text;
  return row;
}

/**
 * The lowercase form of `text` when it is `0x` followed by 40 hex digits in either case
 * (isAddress), else null; remembered, so the same text later costs one row probe.
 */
export function checkedAddress(text: string): string | null {
  const row = addressRowOf(text);
  return row < 0 ? null : lower_texts[row];
}

/**
 * Copies the 20 bytes of a remembered lowercase address into `out_words` (5 words over 20
 * bytes); false when `lower` is not in its row (the caller decodes it itself).
 */
export function rememberedAddressInto(lower: string, out_words: Int32Array): boolean {
  if (lower.length !== ADDRESS_CHARS) return false;
  const row = rowOf(lower);
  if (lower_texts[row] !== lower) return false;
  const from = row * ADDRESS_ROW_WORDS;
  for (let w = 0; w < ADDRESS_ROW_WORDS; w++) out_words[w] = ADDRESS_ROWS_WORDS[from + w];
  return true;
}
