// The wallet addresses the front has checked, with their lowercase text and their 20 bytes, kept
// by the text they came in (issue 11, branch h21f). A signed request's address was checked by a
// regex and lowercased when its body was parsed (signed_body.ts addressOf), then decoded again,
// char by char, when the request was written to the ring (context.ts submitWithDone): ~2,900
// instructions per signed request for the same 42 chars, while a market maker sends thousands of
// requests from a handful of wallets. A known address now costs one Map probe at each end.
//
// Decisions:
// - Only texts that passed isAddress are remembered (under the text as sent and under its
//   lowercase form), so a probe that hits is a text the regex accepted: the checks and their
//   refusals are unchanged, and a miss takes the old path.
// - Bounded: at ADDRESS_ROWS rows the whole table starts over (no per-entry bookkeeping). A request
//   whose row went meanwhile misses at the ring write and is decoded there as before.
import { parseHexStringInto } from '../auth/hex.js';
import { isAddress } from '../util/address.js';

/** Rows kept before the table starts over (a row: 20 bytes, its lowercase text, one or two Map keys). */
export const ADDRESS_ROWS = 16_384;
const ADDRESS_BYTES = 20;
const ROW_WORDS = ADDRESS_BYTES / 4;

const rows_by_text = new Map<string, number>();
const lower_texts: string[] = new Array<string>(ADDRESS_ROWS).fill('');
const row_bytes = new Uint8Array(ADDRESS_ROWS * ADDRESS_BYTES);
const row_words = new Int32Array(row_bytes.buffer);
let rows_used = 0;

/**
 * The lowercase form of `text` when it is `0x` followed by 40 hex digits in either case
 * (util/address.ts isAddress), else null; remembered, so the same text later costs one Map probe.
 */
export function checkedAddress(text: string): string | null {
  const row = rows_by_text.get(text);
  if (row !== undefined) return lower_texts[row];
  if (!isAddress(text)) return null;
  const lower = text.toLowerCase();
  if (rows_used === ADDRESS_ROWS) {
    rows_by_text.clear();
    rows_used = 0;
  }
  const at = rows_used++;
  parseHexStringInto(lower, 2, ADDRESS_BYTES, row_bytes, at * ADDRESS_BYTES);
  lower_texts[at] = lower;
  rows_by_text.set(text, at);
  if (lower !== text) rows_by_text.set(lower, at);
  return lower;
}

/**
 * Copies the 20 bytes of a remembered address text into `out_words` (5 words over 20 bytes);
 * false when `text` is not in the table (the caller decodes it itself).
 */
export function rememberedAddressInto(text: string, out_words: Int32Array): boolean {
  const row = rows_by_text.get(text);
  if (row === undefined) return false;
  const from = row * ROW_WORDS;
  for (let w = 0; w < ROW_WORDS; w++) out_words[w] = row_words[from + w];
  return true;
}

/** Rows in use (tests). */
export function addressRowsUsed(): number {
  return rows_used;
}
