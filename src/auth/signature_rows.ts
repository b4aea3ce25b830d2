// The signature checked once, and its 65 bytes kept for the two writers that carry them on: the
// consent encoder (ring/consent.ts UserConsentEncoder) and the verify record (verify_codec.ts).
//
// The signed parsers' shape check (gateway/signed_body.ts signatureOf, through ring/consent.ts
// checkSignatureHex) decodes the digits while it checks them (issue 11, branch h20c: the regex
// /^0x[0-9a-fA-F]{130}$/ was ~3,600 instructions a signature), and the bytes wait here: the
// consent encoder and the verify record copy them as 17 words instead of decoding the digits
// again (the verify worker's JS decode of 130 digits was ~2,500 instructions a signature, issue 11,
// branch h21v). A direct-mapped cache keyed by the text itself: a row holds the last signature
// whose digits hashed there and its bytes; a row lost to a later signature (or a signature never
// checked on this thread) is checked and decoded again when asked for, so a miss costs time, never
// a wrong byte. One per thread (module state), used synchronously.

/** Node's Buffer hex writer, which takes an offset and reports the bytes written (not in @types/node). */
interface HexWriter {
  /** Hex digits -> bytes, stopping at the first pair that is not hex; returns the bytes written. */
  hexWrite(text: string, offset: number, length: number): number;
}
// Not in Node's documentation (Buffer.write calls it): refuse to load, naming the cause, rather
// than fail on the first signed order of a Node that dropped it.
if (typeof (Buffer.prototype as unknown as Partial<HexWriter>).hexWrite !== 'function') {
  throw new Error("signature_rows: this Node's Buffer has no hexWrite (the signed path needs Node 20's Buffer writers)");
}

export const SIGNATURE_BYTES = 65;
const SIGNATURE_CHARS = 2 + 2 * SIGNATURE_BYTES;
const ROW_BITS = 12;
const ROWS = 1 << ROW_BITS;
/**
 * A row: 3 bytes of padding, then the 65 signature bytes, 17 words in all. Offset 3 so that a
 * writer whose signature follows a 3-byte head (the consent blob's u16 length and origin; the
 * verify record's flag, candidate count and a spare byte) copies whole words and then writes the head.
 */
export const SIGNATURE_ROW_BYTES = 68;
export const SIGNATURE_ROW_WORDS = SIGNATURE_ROW_BYTES / 4;
/** Where the signature starts in a row. */
export const SIGNATURE_IN_ROW = 3;

const rows = Buffer.allocUnsafeSlow(ROWS * SIGNATURE_ROW_BYTES) as Buffer & HexWriter;
rows.fill(0);
/** The rows as words: row r is words [r * SIGNATURE_ROW_WORDS, +SIGNATURE_ROW_WORDS). */
export const SIGNATURE_ROWS_WORDS: Int32Array = new Int32Array(rows.buffer, rows.byteOffset, rows.length >> 2);
/** The rows as bytes (the same memory as SIGNATURE_ROWS_WORDS). */
export const SIGNATURE_ROWS_BYTES: Uint8Array = rows;
/** The signature text each row holds the bytes of (undefined: none). */
const keys: (string | undefined)[] = new Array<string | undefined>(ROWS).fill(undefined);

/**
 * The row of a signature text: its first four digits (r's leading 16 bits, uniform for real
 * signatures) mixed by a multiplicative hash into 12 bits. The low nibbles of the chars, as until
 * h21v, took only ten values a digit ('a'-'f' share '1'-'6') and the last two overlapped: 64
 * signatures of the verify bench took 61 rows, now as a uniform draw would.
 */
function rowOf(text: string): number {
  return Math.imul((text.charCodeAt(2) << 24) | (text.charCodeAt(3) << 16) | (text.charCodeAt(4) << 8) | text.charCodeAt(5), 0x9e3779b1) >>> (32 - ROW_BITS);
}

/**
 * True when `text` is `0x` and 130 hex digits (either case): the same texts as
 * /^0x[0-9a-fA-F]{130}$/. Its 65 bytes are kept (signatureRowOf). One native decode (Buffer's
 * hexWrite, which stops at the first pair that is not hex) after one UTF-8 length check: hexWrite
 * reads a char above 0xFF by its low byte (U+0130 would pass as '0'), and the digits are all
 * ASCII exactly when their UTF-8 length is their length.
 */
export function checkSignatureHex(text: string): boolean {
  if (text.length !== SIGNATURE_CHARS || text.charCodeAt(0) !== 48 || text.charCodeAt(1) !== 120) return false;
  const digits = text.slice(2);
  const row = rowOf(text);
  if (Buffer.byteLength(digits, 'utf8') !== digits.length ||
    rows.hexWrite(digits, row * SIGNATURE_ROW_BYTES + SIGNATURE_IN_ROW, SIGNATURE_BYTES) !== SIGNATURE_BYTES) {
    keys[row] = undefined; // its bytes are overwritten in part
    return false;
  }
  keys[row] = text;
  return true;
}

/**
 * The row holding the bytes of `text` (any value): checked and decoded by checkSignatureHex
 * earlier on this thread (a compare), or now (a miss); -1 when `text` is not `0x` and 130 hex
 * digits. The row's bytes stay valid until the next checkSignatureHex or signatureRowOf call.
 */
export function signatureRowOf(text: unknown): number {
  if (typeof text !== 'string' || text.length !== SIGNATURE_CHARS) return -1;
  // rowOf written out: V8 left the call in the verify codec's encoder (~125 instructions).
  const row = Math.imul((text.charCodeAt(2) << 24) | (text.charCodeAt(3) << 16) | (text.charCodeAt(4) << 8) | text.charCodeAt(5), 0x9e3779b1) >>> (32 - ROW_BITS);
  if (keys[row] === text) return row;
  return checkSignatureHex(text) ? row : -1;
}
