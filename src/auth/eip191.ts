// EIP-191 version 0x45 ("personal_sign") message hashing, with the WASM keccak (the verify
// workers hash every signed request's message: 27 µs in @noble/hashes, issue 11).
import { KECCAK_INPUT, KECCAK_INPUT_BYTES, keccak256OfInput, keccak256Wasm } from '../util/keccak_wasm.js';

const utf8 = new TextEncoder();
/** The module's input buffer as this module's const (folded into optimized code; an import is read through its cell each use). */
const INPUT = KECCAK_INPUT;
const PREFIX = utf8.encode('\x19Ethereum Signed Message:\n');
/** The decimal length texts of short messages, encoded once (every signed request is < 1,000 bytes). */
const LENGTH_TEXTS: Uint8Array[] = Array.from({ length: 1024 }, (_, n) => utf8.encode(String(n)));
/** The input buffer as words (its offset is 4-byte aligned: keccak_wasm.ts checks it; the module's memory never grows). */
const INPUT_WORDS = new Int32Array(INPUT.buffer, INPUT.byteOffset, KECCAK_INPUT_BYTES >> 2);
/** The prefix's whole words (its first 24 bytes), in the platform's byte order as INPUT_WORDS. */
const PREFIX_WORDS = new Int32Array(Uint8Array.from(PREFIX.subarray(0, PREFIX.length & ~3)).buffer);
const PREFIX_TAIL_AT = PREFIX.length & ~3;

/** keccak256("\x19Ethereum Signed Message:\n" + byteLength(data) + data) over raw bytes. */
export function eip191HashBytes(data: Uint8Array): Uint8Array {
  const n = data.length;
  return keccak256Wasm(PREFIX, n < LENGTH_TEXTS.length ? LENGTH_TEXTS[n] : utf8.encode(String(n)), data);
}

/** EIP-191 personal_sign hash of a text message (UTF-8; the length is the byte length). */
export function eip191Hash(message: string): Uint8Array {
  return eip191HashBytes(utf8.encode(message));
}

/**
 * eip191HashBytes of `bytes[start, end)` written to `out32[out_at, out_at + 32)`, with one view (the message) and no digest copy: the
 * prefix, the length text and the bytes go straight into the hash's input buffer (the verify
 * codec's path, once per signature check on the front and in the workers; issue 11, branch h11z).
 */
export function eip191HashRangeInto(bytes: Uint8Array, start: number, end: number, out32: Uint8Array, out_at = 0): void {
  const n = end - start;
  const len = n < LENGTH_TEXTS.length ? LENGTH_TEXTS[n] : utf8.encode(String(n));
  const total = PREFIX.length + len.length + n;
  if (total > KECCAK_INPUT_BYTES) {
    out32.set(eip191HashBytes(bytes.subarray(start, end)), out_at);
    return;
  }
  INPUT.set(PREFIX, 0);
  // The length's 1-4 digits by a loop (a set() call is ~160 instructions).
  for (let i = 0; i < len.length; i++) INPUT[PREFIX.length + i] = len[i];
  // The message by one set() of a view: a JS byte loop cost ~26 instructions a byte (~4,400 for an
  // order's ~170-byte message), subarray + set ~1,000 whatever the length (issue 11, h19c, callgrind).
  INPUT.set(bytes.subarray(start, end), PREFIX.length + len.length);
  keccak256OfInput(total, out32, out_at);
}

/**
 * The byte offset, modulo 4, at which a message of `length` bytes starts in its hash's input (after
 * the prefix and the length's digits): where a writer puts the message (modulo 4) so that
 * eip191HashWordsInto moves it by words. A writer that knows only the text's UTF-16 length passes
 * that; a message whose UTF-8 length differs (not ASCII) is then merely hashed the slow way.
 */
export function eip191WordAlignment(length: number): number {
  const digits = length < LENGTH_TEXTS.length ? LENGTH_TEXTS[length].length : String(length).length;
  return (PREFIX.length + digits) & 3;
}

/**
 * eip191HashRangeInto of `bytes[start, end)` with the message moved into the hash's input by words,
 * when `start` is where eip191WordAlignment(end - start) puts it (modulo 4) and `words` views the
 * same memory as `bytes` from the same offset; else eip191HashRangeInto (same digest). The verify
 * codec's path (issue 11, branch h21v): the message went in by `set()` of a `subarray` of the ring,
 * a fresh view per signature and, the ring being a SharedArrayBuffer, V8's byte-by-byte
 * `relaxed_memmove` (~2,000 instructions a signature with the view's making; ~300 by words).
 * Reads up to 3 bytes on each side of the range (inside `words`; checked).
 */
export function eip191HashWordsInto(words: Int32Array, bytes: Uint8Array, start: number, end: number, out32: Uint8Array, out_at = 0): void {
  const n = end - start;
  const len = n < LENGTH_TEXTS.length ? LENGTH_TEXTS[n] : null;
  const head = PREFIX.length + (len === null ? 0 : len.length);
  const total = head + n;
  const to = head >> 2;
  const from = start >> 2;
  const count = ((total + 3) >> 2) - to;
  if (len === null || ((start ^ head) & 3) !== 0 || total > KECCAK_INPUT_BYTES || from + count > words.length || n < 0) {
    eip191HashRangeInto(bytes, start, end, out32, out_at);
    return;
  }
  // The message's words first: the first one's bytes before the message land where the prefix and
  // the length go, and are overwritten by them next.
  for (let i = 0; i < count; i++) INPUT_WORDS[to + i] = words[from + i];
  for (let i = 0; i < PREFIX_WORDS.length; i++) INPUT_WORDS[i] = PREFIX_WORDS[i];
  for (let i = PREFIX_TAIL_AT; i < PREFIX.length; i++) INPUT[i] = PREFIX[i];
  for (let i = 0; i < len.length; i++) INPUT[PREFIX.length + i] = len[i];
  keccak256OfInput(total, out32, out_at);
}
