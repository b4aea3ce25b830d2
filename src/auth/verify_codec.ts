// The packed batch format between the front thread and the verify workers: one task = one batch,
// written straight into the worker's verify ring (a SharedArrayBuffer, verify_ring.ts).
//   u32 count | count fixed records of RECORD bytes | message area
// A record (4-byte aligned; byte offsets):
//   0 flag (1: the item was written whole; 0: refused), 1 count of other candidate signers, 2 spare,
//   3..68 the signature's 65 bytes (r || s || v), 68 u32 message start, 72 u32 message end (both
//   relative to the message area), 76..96 the expected address's 20 bytes.
// The message area: each item's message UTF-8 bytes at its start, then its other candidates' 42
// address chars back to back from its end. A message starts where the worker can move it into
// the hash's input by words (see below): up to 3 bytes of padding before it.
//
// The signature and the expected address go in as bytes (issue 11, branch h21v): the signed
// parsers' check decoded the signature once (signature_rows.ts), so the front copies its 17 kept
// words (the record's first 17) where it wrote the 132 chars, and the worker uses them as they are
// where it decoded the 130 digits again (~2,500 instructions a signature in the worker's JS, and
// the front's UTF-8 write of the chars); the address's 20 bytes come from the front's own cache of
// decoded addresses (address_rows.ts: a wallet sends many requests). The message and the other
// candidates are still written as UTF-8 by the front (Buffer#write) and hashed or parsed by the
// worker (EIP-191 needs bytes, not a string).
//
// The answer: one verdict byte per item (0: no candidate signed it; 1: the expected address did;
// 1 + i: other_addresses[i - 1] did: one recovery, compared with every candidate), then TASK_TIMES_BYTES: the worker's start and end of the
// task as two f64 epoch milliseconds (performance.timeOrigin + now(): comparable across threads),
// for the per-stage latency of docs/benchmarks.md. Two clock reads per task.
import { performance } from 'node:perf_hooks';
import { parseHexBytesInto } from './hex.js';
import { RECOVER_ROW_BYTES, RECOVER_ROW_HASH_AT, RECOVER_ROW_SIG_AT, RECOVER_ROWS_MAX } from './recover_rows.js';
import type { Recoverer } from './recoverer.js';
import { eip191HashRangeInto, eip191HashWordsInto, eip191WordAlignment } from './eip191.js';
import { ADDRESS_ROW_WORDS, ADDRESS_ROWS_BYTES, ADDRESS_ROWS_WORDS, addressRowOf } from './address_rows.js';
import {
  SIGNATURE_BYTES, SIGNATURE_IN_ROW, SIGNATURE_ROW_WORDS, SIGNATURE_ROWS_BYTES, SIGNATURE_ROWS_WORDS, signatureRowOf,
} from './signature_rows.js';
import { SIGNERS_PER_CHECK_MAX, type SignedMessage } from './verify.js';

/** Node's Buffer UTF-8 writer, which takes an offset and reports the bytes written (not in @types/node). */
interface Utf8Writer {
  /** UTF-8 (lone surrogates as U+FFFD); writes at most `length` bytes, throws for an offset past the end. */
  utf8Write(text: string, offset: number, length: number): number;
}
// Called directly, not through Buffer#write: its offset and length checks go through
// hideStackFrames wrappers that V8 left unoptimized (~300 instructions a signature, callgrind,
// issue 11, branch h21v); the native writer checks the offset itself and stops at the end.
// Not in Node's documentation (Buffer#write calls it): refuse to load, naming the cause.
if (typeof (Buffer.prototype as unknown as Partial<Utf8Writer>).utf8Write !== 'function') {
  throw new Error("verify_codec: this Node's Buffer has no utf8Write (the verify path needs Node 20's Buffer writers)");
}

// The imported tables as this module's consts: an imported binding is read through its module
// cell (a load and a hole check) on every use in the copy loops below (issue 11, h19c).
const SIG_ROWS_WORDS = SIGNATURE_ROWS_WORDS;
const SIG_ROWS_BYTES = SIGNATURE_ROWS_BYTES;
const ADDR_ROWS_WORDS = ADDRESS_ROWS_WORDS;
const ADDR_ROWS_BYTES = ADDRESS_ROWS_BYTES;

const ADDR_CHARS = 42; // "0x" + 40
const FLAG_AT = 0;
const OTHERS_AT = 1;
const SPARE_AT = 2;
/** The signature's place in a record: a signature row's (its 17 words are the record's first 17). */
const SIG_AT = SIGNATURE_IN_ROW;
const SIG_WORDS = SIGNATURE_ROW_WORDS;
const MESSAGE_START_AT = 4 * SIG_WORDS; // 68
const MESSAGE_END_AT = MESSAGE_START_AT + 4;
const ADDR_AT = MESSAGE_END_AT + 4; // 76
export const RECORD = ADDR_AT + 20; // 96
/** Bytes before the first record: the count. */
const HEADER = 4;
/** Padding before a message at most (its word alignment). */
const MESSAGE_PAD_MAX = 3;

/** Bytes one item adds to a packed batch at most: fixed record, padding, message at 3 bytes per char, other candidates. */
export function packedItemCapacity(item: SignedMessage | null | undefined): number {
  const m = item?.message;
  const others = item?.other_addresses;
  return RECORD + MESSAGE_PAD_MAX + (typeof m === 'string' ? 3 * m.length : 0) // UTF-8 worst case per UTF-16 unit
    + (Array.isArray(others) ? ADDR_CHARS * others.length : 0);
}

/** No other candidates (not frozen: a frozen array's elements kind takes V8's slow for-of and length paths). */
const NO_OTHERS: readonly string[] = [];

/** The other candidates of an item when they are well-formed (ASCII-length strings), else null. */
function otherAddresses(item: SignedMessage): readonly string[] | null {
  const others = item.other_addresses;
  if (others === undefined) return NO_OTHERS; // not a fresh [] per item
  if (!Array.isArray(others) || others.length > SIGNERS_PER_CHECK_MAX - 1) return null;
  for (const a of others) if (typeof a !== 'string' || a.length !== ADDR_CHARS) return null;
  return others;
}

/** Bytes encodePackedBatchInto may need for `items[start, end)`. */
export function packedBatchCapacity(items: readonly SignedMessage[], start: number, end: number): number {
  let capacity = HEADER;
  for (let i = start; i < end; i++) capacity += packedItemCapacity(items[i]);
  return capacity;
}

// The words view of the last byte array seen (the front writes into its lanes' areas and its
// scratch; a worker reads one area): one view per array, kept while that array comes back, so
// the signature and the message move by words without a view per task or per item. Null when the
// array does not start on a 4-byte boundary: then bytes move one by one.
let words_of: Uint8Array | null = null;
let words_view: Int32Array | null = null;
const words_views = new WeakMap<Uint8Array, Int32Array | null>();

function wordsOf(bytes: Uint8Array): Int32Array | null {
  if (bytes === words_of) return words_view;
  let view = words_views.get(bytes);
  if (view === undefined) {
    view = (bytes.byteOffset & 3) === 0 ? new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2) : null;
    words_views.set(bytes, view);
  }
  words_of = bytes;
  words_view = view;
  return view;
}

/**
 * Encodes `items[start, end)` into `bytes[at, limit)` (`at` 4-byte aligned, at least
 * packedBatchCapacity bytes up to `limit`; the verify ring's area or a scratch buffer) and returns
 * the bytes used. Never throws on bad item shapes: such an item keeps its flag 0 and is refused.
 *
 * Offsets into one Buffer rather than a view per field: the texts go in with Buffer#write (UTF-8
 * at an offset, the same speed as TextEncoder.encodeInto here: 400-440 against 430-570 ns per
 * signature + message pair) instead of encodeInto into a `subarray` per text, three views per item
 * and one per task that were ~0.4 KB of the front's garbage per signed request (issue 11, branch
 * h11z). The signature and the expected address are checked here, by the rules the worker's parse
 * of their texts applied (`0x` and 130 or 40 hex digits, either case; signature_rows.ts,
 * address_rows.ts), and the item refused (flag 0, verdict 0) when they fail. An other candidate
 * that is not ASCII cannot pass for hex: its multi-byte UTF-8 fills its slot only with bytes >=
 * 0x80, which the worker's hex parse refuses, or leaves the slot short (refused here).
 */
export function encodePackedBatchInto(bytes: Buffer, at: number, limit: number, items: readonly SignedMessage[], start: number, end: number): number {
  const count = end - start;
  const fixedAt = at + HEADER;
  const messagesAt = fixedAt + count * RECORD;
  // Whole words only when the records are on word boundaries (`at` 4-byte aligned, as the lanes write them).
  const words = (fixedAt & 3) === 0 ? wordsOf(bytes) : null;
  const out = bytes as Buffer & Utf8Writer;
  writeU32(bytes, at, count);
  let pos = 0;
  for (let k = 0; k < count; k++) {
    const rec = fixedAt + k * RECORD;
    // The ring's bytes are reused: the flag says "refused" until the item is written whole.
    bytes[rec + FLAG_AT] = 0;
    bytes[rec + OTHERS_AT] = 0;
    const item = items[start + k];
    if (item === null || typeof item !== 'object') continue;
    const { message, signature_hex: sig, expected_address: addr } = item;
    if (typeof message !== 'string') continue;
    // No other candidates (the common case) without a call: V8 left otherAddresses a baseline
    // call with a generic load per item (callgrind, h21v).
    const others = item.other_addresses === undefined ? NO_OTHERS : otherAddresses(item);
    if (others === null) continue;
    const row = signatureRowOf(sig);
    if (row < 0) continue;
    const addr_row = addressRowOf(addr);
    if (addr_row < 0) continue;
    // The row's 17 words (3 bytes of padding, the signature) are the record's first 17; the flag,
    // the count and the spare byte are written over the padding.
    if (words !== null) {
      const w = rec >> 2;
      const from = row * SIG_WORDS;
      for (let i = 0; i < SIG_WORDS; i++) words[w + i] = SIG_ROWS_WORDS[from + i];
      const a = (rec + ADDR_AT) >> 2;
      const addr_from = addr_row * ADDRESS_ROW_WORDS;
      for (let i = 0; i < ADDRESS_ROW_WORDS; i++) words[a + i] = ADDR_ROWS_WORDS[addr_from + i];
    } else {
      const from = row * 4 * SIG_WORDS + SIG_AT;
      for (let i = 0; i < SIGNATURE_BYTES; i++) bytes[rec + SIG_AT + i] = SIG_ROWS_BYTES[from + i];
      const addr_from = addr_row * 4 * ADDRESS_ROW_WORDS;
      for (let i = 0; i < 20; i++) bytes[rec + ADDR_AT + i] = ADDR_ROWS_BYTES[addr_from + i];
    }
    bytes[rec + FLAG_AT] = 0;
    bytes[rec + OTHERS_AT] = 0;
    bytes[rec + SPARE_AT] = 0;
    // The message where its hash input wants it (an ASCII message's: its byte length is its length).
    pos += (eip191WordAlignment(message.length) - (messagesAt + pos)) & 3;
    const message_at = messagesAt + pos;
    const message_end = message_at + out.utf8Write(message, message_at, limit - message_at);
    let others_end = message_end;
    let others_ok = true;
    for (let i = 0; i < others.length; i++) {
      others_ok &&= out.utf8Write(others[i], others_end, ADDR_CHARS) === ADDR_CHARS;
      others_end += ADDR_CHARS;
    }
    pos = others_end - messagesAt;
    if (!others_ok) continue;
    writeU32(bytes, rec + MESSAGE_START_AT, message_at - messagesAt);
    writeU32(bytes, rec + MESSAGE_END_AT, message_end - messagesAt);
    bytes[rec + OTHERS_AT] = others.length;
    bytes[rec + FLAG_AT] = 1;
  }
  return messagesAt + pos - at;
}

/** Little-endian u32 at a byte offset (the packed format's words; x86 and ARM are little-endian, as the typed-array views of the ring are). */
function writeU32(bytes: Uint8Array, at: number, v: number): void {
  bytes[at] = v & 255;
  bytes[at + 1] = (v >>> 8) & 255;
  bytes[at + 2] = (v >>> 16) & 255;
  bytes[at + 3] = v >>> 24;
}

function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at] | (bytes[at + 1] << 8) | (bytes[at + 2] << 16) | (bytes[at + 3] << 24)) >>> 0;
}

/** Encodes `items[start, end)` into one fresh packed buffer (tests, benches, the in-thread path). */
export function encodePackedBatch(items: readonly SignedMessage[], start: number, end: number): ArrayBuffer {
  const buffer = new ArrayBuffer(packedBatchCapacity(items, start, end));
  encodePackedBatchInto(Buffer.from(buffer), 0, buffer.byteLength, items, start, end);
  return buffer;
}

function isPrefix0x(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === 48 && bytes[at + 1] === 120; // "0x"
}

/** Bytes after the verdicts of a task's answer: the task's start and end (f64 epoch ms each). */
export const TASK_TIMES_BYTES = 16;

/**
 * The thread's timeOrigin, read once (fixed at its start); `performance` is perf_hooks' binding:
 * the global one is an accessor running Node's lazy getter per read (h22f, gateway/stage_timings.ts).
 */
const TIME_ORIGIN_MS = performance.timeOrigin;

function epochMs(): number {
  return TIME_ORIGIN_MS + performance.now();
}

/** The verdicts of an answer and the task's [start, end] epoch ms. */
export function splitTaskAnswer(answer: Uint8Array): { verdicts: Uint8Array; start_ms: number; end_ms: number } {
  const count = answer.length - TASK_TIMES_BYTES;
  const view = new DataView(answer.buffer, answer.byteOffset + count, TASK_TIMES_BYTES);
  return { verdicts: answer.subarray(0, count), start_ms: view.getFloat64(0, true), end_ms: view.getFloat64(8, true) };
}

/** The task's start and end (f64 epoch ms) written at `bytes[at, at + 16)` (unaligned: byte copies through F64_BYTES). */
function writeTaskTimes(bytes: Uint8Array, at: number, start_ms: number, end_ms: number): void {
  F64[0] = start_ms;
  F64[1] = end_ms;
  for (let i = 0; i < TASK_TIMES_BYTES; i++) bytes[at + i] = F64_BYTES[i];
}

/** The task times of an answer whose `count` verdicts start at `bytes[at]`, into `times_ms[2i]`, `[2i + 1]` for i in [from, to). */
export function readTaskTimesInto(bytes: Uint8Array, at: number, count: number, times_ms: Float64Array, from: number, to: number): void {
  for (let i = 0; i < TASK_TIMES_BYTES; i++) F64_BYTES[i] = bytes[at + count + i];
  for (let i = from; i < to; i++) {
    times_ms[2 * i] = F64[0];
    times_ms[2 * i + 1] = F64[1];
  }
}

/**
 * Worker side: checks the packed batch at `bytes[batch_at, ...)` (4-byte aligned) and writes one
 * verdict byte per item (1 valid, 0 invalid) at `bytes[answer_at, ...)` (room for count +
 * TASK_TIMES_BYTES bytes), then the task's start and end times. Returns the item count. Offsets,
 * not views (see encodePackedBatchInto): the front runs this too, for its inline and stolen checks.
 *
 * The items are checked in rows of up to RECOVER_ROWS_MAX (issue 11, h22v): each well-formed
 * item's digest and signature go into a row, then the rows are recovered in one call
 * (Recoverer.recoverAddressRowsInto: one native call for the machine's libsecp256k1, where it
 * was one a signature) and each recovered address compared with the item's candidates. A task of
 * one item keeps the single call (recoverAddressInto, over row 0).
 */
export function verifyPackedInto(bytes: Uint8Array, batch_at: number, answer_at: number, recoverer: Recoverer): number {
  const start_ms = epochMs();
  const count = readU32(bytes, batch_at);
  const fixedAt = batch_at + HEADER;
  const messagesAt = fixedAt + count * RECORD;
  const words = (fixedAt & 3) === 0 ? wordsOf(bytes) : null;
  let rows = 0;
  for (let k = 0; k < count; k++) {
    bytes[answer_at + k] = 0;
    const rec = fixedAt + k * RECORD;
    if (bytes[rec + FLAG_AT] !== 1) continue;
    const message_at = messagesAt + readU32(bytes, rec + MESSAGE_START_AT);
    const others_at = messagesAt + readU32(bytes, rec + MESSAGE_END_AT);
    if (others_at < message_at) continue;
    if (bytes[rec + OTHERS_AT] !== 0 && !parseOthers(bytes, others_at, bytes[rec + OTHERS_AT])) continue;
    // The signature's 17 words (the record's first 17) into the row after its digest's 8.
    const row_at = rows * RECOVER_ROW_BYTES;
    if (words !== null) {
      const w = rec >> 2;
      const r = (row_at + RECOVER_ROW_SIG_AT - SIG_AT) >> 2;
      for (let i = 0; i < SIG_WORDS; i++) ROWS_WORDS[r + i] = words[w + i];
      eip191HashWordsInto(words, bytes, message_at, others_at, ROWS, row_at + RECOVER_ROW_HASH_AT);
    } else {
      for (let i = 0; i < SIGNATURE_BYTES; i++) ROWS[row_at + RECOVER_ROW_SIG_AT + i] = bytes[rec + SIG_AT + i];
      eip191HashRangeInto(bytes, message_at, others_at, ROWS, row_at + RECOVER_ROW_HASH_AT);
    }
    ITEM_OF_ROW[rows++] = k;
    if (rows === RECOVER_ROWS_MAX) {
      answerRows(bytes, words, fixedAt, messagesAt, answer_at, rows, recoverer);
      rows = 0;
    }
  }
  if (rows !== 0) answerRows(bytes, words, fixedAt, messagesAt, answer_at, rows, recoverer);
  writeTaskTimes(bytes, answer_at + count, start_ms, epochMs());
  return count;
}

/** Whether the `count` other candidates at `bytes[at, ...)` are `0x` and 40 hex digits each; parsed into CANDIDATES[20 ..). */
function parseOthers(bytes: Uint8Array, at: number, count: number): boolean {
  for (let i = 0; i < count; i++) {
    const o = at + ADDR_CHARS * i;
    if (!isPrefix0x(bytes, o) || !parseHexBytesInto(bytes, o + 2, 20, CANDIDATES, 20 * (i + 1))) return false;
  }
  return true;
}

/** Recovers the `rows` rows and writes their items' verdicts. */
function answerRows(
  bytes: Uint8Array, words: Int32Array | null, fixedAt: number, messagesAt: number, answer_at: number, rows: number, recoverer: Recoverer,
): void {
  if (rows === 1) OK[0] = recoverer.recoverAddressInto(ROW0_HASH, ROW0_SIG, RECOVERED) ? 1 : 0;
  else recoverer.recoverAddressRowsInto(ROWS, rows, RECOVERED, OK);
  for (let j = 0; j < rows; j++) {
    if (OK[j] !== 1) continue;
    const k = ITEM_OF_ROW[j];
    const rec = fixedAt + k * RECORD;
    // The expected address (the common match) by its 5 words when the records are on word boundaries.
    if (words !== null) {
      const a = (rec + ADDR_AT) >> 2;
      const g = 5 * j;
      if (words[a] === RECOVERED_WORDS[g] && words[a + 1] === RECOVERED_WORDS[g + 1] && words[a + 2] === RECOVERED_WORDS[g + 2] &&
        words[a + 3] === RECOVERED_WORDS[g + 3] && words[a + 4] === RECOVERED_WORDS[g + 4]) {
        bytes[answer_at + k] = 1;
        continue;
      }
    }
    bytes[answer_at + k] = matchingCandidate(bytes, rec, messagesAt, j);
  }
}

const F64 = new Float64Array(2);
const F64_BYTES = new Uint8Array(F64.buffer);
/** The rows of recoverAddressRowsInto (4-byte aligned), and row 0's digest and signature as views for a single call. */
const ROWS_WORDS = new Int32Array((RECOVER_ROW_BYTES >> 2) * RECOVER_ROWS_MAX);
const ROWS = new Uint8Array(ROWS_WORDS.buffer);
const ROW0_HASH = ROWS.subarray(RECOVER_ROW_HASH_AT, RECOVER_ROW_HASH_AT + 32);
const ROW0_SIG = ROWS.subarray(RECOVER_ROW_SIG_AT, RECOVER_ROW_SIG_AT + SIGNATURE_BYTES);
/** The item of each row. */
const ITEM_OF_ROW = new Int32Array(RECOVER_ROWS_MAX);
/** Each row's recovered address (20 bytes) and whether it was recovered. */
const RECOVERED_WORDS = new Int32Array(5 * RECOVER_ROWS_MAX);
const RECOVERED = new Uint8Array(RECOVERED_WORDS.buffer);
const OK = new Uint8Array(RECOVER_ROWS_MAX);
/** The other candidates of the item being compared, from byte 20 (20 bytes each). */
const CANDIDATES = new Uint8Array(20 * SIGNERS_PER_CHECK_MAX);

/**
 * 1 + the index of the first of row `j`'s item's candidates (the record's expected address, then
 * its other candidates, parsed again here: items with them are rare) equal to the row's
 * recovered address, or 0.
 */
function matchingCandidate(bytes: Uint8Array, rec: number, messagesAt: number, j: number): number {
  const got = 20 * j;
  const expected = rec + ADDR_AT;
  let i = 0;
  while (i < 20 && bytes[expected + i] === RECOVERED[got + i]) i++;
  if (i === 20) return 1;
  const others = bytes[rec + OTHERS_AT];
  if (others === 0 || !parseOthers(bytes, messagesAt + readU32(bytes, rec + MESSAGE_END_AT), others)) return 0;
  for (let c = 1; c <= others; c++) {
    i = 0;
    while (i < 20 && CANDIDATES[20 * c + i] === RECOVERED[got + i]) i++;
    if (i === 20) return c + 1;
  }
  return 0;
}

/** verifyPackedInto on a fresh packed buffer, answering a fresh array (tests, benches). */
export function verifyPackedBatch(buffer: ArrayBuffer, recoverer: Recoverer): Uint8Array {
  const count = new Uint32Array(buffer, 0, 1)[0];
  const bytes = new Uint8Array(buffer.byteLength + count + TASK_TIMES_BYTES);
  bytes.set(new Uint8Array(buffer));
  verifyPackedInto(bytes, 0, buffer.byteLength, recoverer);
  return bytes.slice(buffer.byteLength);
}
