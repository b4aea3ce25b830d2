// The book checksum of `book_snapshot` and `book_delta` (DECISIONS "Book deltas with a checksum",
// after Kraken's CRC32 book checksum): CRC-32 (IEEE, zlib's crc32) of the UTF-8 text made of the
// best 25 bid levels then the best 25 ask levels, each `price:quantity` (fixed-point integer
// strings), levels joined by `,`, the two sides joined by `|`; an unsigned integer. One
// implementation for the server (ws/hub.ts) and the SDK's book sync (client/ws.ts); the CRC itself
// is zlib's on Node and a table in browser bundles (crc32.ts).
import { crc32Text } from './crc32.js';

/** Levels per side the checksum covers. */
export const BOOK_CHECKSUM_LEVELS = 25;

/** One side of a book, best first: [price, quantity] as integers or their decimal strings. */
export type ChecksumLevels = readonly (readonly [number | string, number | string])[];

function sideText(levels: ChecksumLevels): string {
  let s = '';
  const n = levels.length < BOOK_CHECKSUM_LEVELS ? levels.length : BOOK_CHECKSUM_LEVELS;
  for (let i = 0; i < n; i++) s += (i === 0 ? '' : ',') + levels[i][0] + ':' + levels[i][1];
  return s;
}

/** The text the checksum is taken of. */
export function bookChecksumText(bids: ChecksumLevels, asks: ChecksumLevels): string {
  return `${sideText(bids)}|${sideText(asks)}`;
}

/** CRC-32 of bookChecksumText, unsigned (0 to 2^32 - 1). */
export function bookChecksum(bids: ChecksumLevels, asks: ChecksumLevels): number {
  return crc32Text(bookChecksumText(bids, asks));
}
