// The wallet addresses the front has checked, with their lowercase text and their 20 bytes, kept
// by the text they came in (issue 11, branch h21f). A signed request's address was checked by a
// regex and lowercased when its body was parsed (signed_body.ts addressOf), then decoded again,
// char by char, when the request was written to the ring (context.ts submitWithDone): ~2,900
// instructions per signed request for the same 42 chars, while a market maker sends thousands of
// requests from a handful of wallets. A known address now costs one row probe at each end.
//
// Decisions:
// - Only texts that passed isAddress are remembered (the lowercase text and the text as sent, in
//   one row), so a probe that hits is a text the regex accepted: the checks and their refusals
//   are unchanged, and a miss takes the old path.
// - Direct-mapped, ADDRESS_ROWS rows: a text's row comes from its last 8 chars, case folded (an
//   address's low 32 bits: random in real addresses, and the part that varies in sequential ones),
//   and an address takes its row from whoever held it. A probe compares the whole text, so a
//   shared row is a miss, never a wrong answer. No Map: with more wallets than rows, a Map that starts over when full
//   cost 2.5x the old path per request (its growth and rehashing; bench/address_rows.ts
//   --wallets 20000), where a taken row costs the old path and one row write.
import { parseHexStringInto } from '../auth/hex.js';
import { isAddress } from '../util/address.js';

/** Rows (a power of two; a row: 20 bytes, the lowercase text, the text as it was sent). */
export const ADDRESS_ROWS = 65_536;
const ROW_MASK = ADDRESS_ROWS - 1;
const ADDRESS_CHARS = 42;
const ADDRESS_BYTES = 20;
const ROW_WORDS = ADDRESS_BYTES / 4;

/** Per row: the lowercase address ('' when empty), the text it was sent as, its bytes. */
const lower_texts: string[] = new Array<string>(ADDRESS_ROWS).fill('');
const sent_texts: string[] = new Array<string>(ADDRESS_ROWS).fill('');
const row_bytes = new Uint8Array(ADDRESS_ROWS * ADDRESS_BYTES);
const row_words = new Int32Array(row_bytes.buffer);

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
 * The lowercase form of `text` when it is `0x` followed by 40 hex digits in either case
 * (util/address.ts isAddress), else null; remembered, so the same text later costs one row probe.
 */
export function checkedAddress(text: string): string | null {
  if (text.length === ADDRESS_CHARS) {
    const row = rowOf(text);
    const lower = lower_texts[row];
    if (lower === text || sent_texts[row] === text) return lower;
  }
  if (!isAddress(text)) return null;
  const lower = text.toLowerCase();
  const row = rowOf(lower);
  parseHexStringInto(lower, 2, ADDRESS_BYTES, row_bytes, row * ADDRESS_BYTES);
  lower_texts[row] = lower;
  sent_texts[row] = text;
  return lower;
}

/**
 * Copies the 20 bytes of a remembered lowercase address into `out_words` (5 words over 20
 * bytes); false when `lower` is not in its row (the caller decodes it itself).
 */
export function rememberedAddressInto(lower: string, out_words: Int32Array): boolean {
  if (lower.length !== ADDRESS_CHARS) return false;
  const row = rowOf(lower);
  if (lower_texts[row] !== lower) return false;
  const from = row * ROW_WORDS;
  for (let w = 0; w < ROW_WORDS; w++) out_words[w] = row_words[from + w];
  return true;
}
