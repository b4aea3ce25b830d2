// Book sync by deltas (docs/api.md "book_delta"): applying a `book_delta` to the book held, and
// checking a book against the server's checksum (the server's own function, so the two cannot
// differ). RingbookSocket (ws.ts) decides when to apply, drop or re-fetch.
import { bookChecksum } from '../util/book_checksum.js';
import type { BookLevel } from './types.js';

export interface BookDeltaMessage {
  type: 'book_delta';
  market_id: string;
  sequence: number;
  /** The sequence of the previous message on the channel: must be the book held. */
  prev_sequence: number;
  /** Changed levels, `[price, quantity]`; quantity `"0"` removes the level. */
  bids: BookLevel[];
  asks: BookLevel[];
  checksum: number;
  timestamp: string;
}

/** `side` with `changes` applied, best first (bids descending, asks ascending by price). */
export function applyLevels(side: readonly BookLevel[], changes: readonly BookLevel[], bids: boolean): BookLevel[] {
  if (changes.length === 0) return side.slice();
  const m = new Map<string, string>();
  for (const [p, q] of side) m.set(p, q);
  for (const [p, q] of changes) {
    if (q === '0') m.delete(p);
    else m.set(p, q);
  }
  // Prices are fixed-point integer strings: compare as integers (BigInt: exact beyond 2^53 too).
  const out: BookLevel[] = [...m.entries()];
  out.sort((a, b) => {
    const x = BigInt(a[0]);
    const y = BigInt(b[0]);
    return x === y ? 0 : (x > y) === bids ? -1 : 1;
  });
  return out;
}

/** True when the book's best 25 levels per side give `checksum`. */
export function checksumMatches(bids: readonly BookLevel[], asks: readonly BookLevel[], checksum: number): boolean {
  return bookChecksum(bids, asks) === checksum;
}
