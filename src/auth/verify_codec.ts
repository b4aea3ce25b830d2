// The packed batch format between the front thread and the verify workers: one task = one batch,
// written straight into the worker's verify ring (a SharedArrayBuffer, verify_ring.ts).
//   u32 count | u32 message offsets[count + 1] (relative to the message area)
//   | count fixed records of RECORD bytes: 132 signature hex chars, 42 address chars, 1 shape flag,
//     1 count of other candidate signers
//   | message area: each item's message UTF-8 bytes then its other candidates' 42 address chars,
//     back to back.
// The front thread only writes the texts (UTF-8, Buffer#write); all hex parsing and hashing happen in the
// worker, which hashes the UTF-8 bytes directly (EIP-191 needs bytes, not a string).
//
// The answer: one verdict byte per item (0: no candidate signed it; 1: the expected address did;
// 1 + i: other_addresses[i - 1] did: one recovery, compared with every candidate), then TASK_TIMES_BYTES: the worker's start and end of the
// task as two f64 epoch milliseconds (performance.timeOrigin + now(): comparable across threads),
// for the per-stage latency of docs/benchmarks.md. Two clock reads per task.
import { parseHexBytesInto } from './hex.js';
import type { Recoverer } from './recover.js';
import { eip191HashRangeInto } from './eip191.js';
import { SIGNERS_PER_CHECK_MAX, type SignedMessage } from './verify.js';

const SIG_CHARS = 132; // "0x" + 130
const ADDR_CHARS = 42; // "0x" + 40
const RECORD = 176; // SIG_CHARS + ADDR_CHARS + flag + others count, keeps records 4-byte aligned
const FLAG_AT = SIG_CHARS + ADDR_CHARS;
const OTHERS_AT = FLAG_AT + 1;

/** Bytes one item adds to a packed batch at most: offset word, fixed record, message at 3 bytes per char. */
export function packedItemCapacity(item: SignedMessage | null | undefined): number {
  const m = item?.message;
  const others = item?.other_addresses;
  return 4 + RECORD + (typeof m === 'string' ? 3 * m.length : 0) // UTF-8 worst case per UTF-16 unit
    + (Array.isArray(others) ? ADDR_CHARS * others.length : 0);
}

/** The other candidates of an item when they are well-formed (ASCII-length strings), else null. */
function otherAddresses(item: SignedMessage): readonly string[] | null {
  const others = item.other_addresses;
  if (others === undefined) return [];
  if (!Array.isArray(others) || others.length > SIGNERS_PER_CHECK_MAX - 1) return null;
  for (const a of others) if (typeof a !== 'string' || a.length !== ADDR_CHARS) return null;
  return others;
}

/** Bytes encodePackedBatchInto may need for `items[start, end)`. */
export function packedBatchCapacity(items: readonly SignedMessage[], start: number, end: number): number {
  let capacity = 8; // count and the closing offset
  for (let i = start; i < end; i++) capacity += packedItemCapacity(items[i]);
  return capacity;
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
 * h11z). A text that is not ASCII cannot pass for a hex field: its multi-byte UTF-8 fills the
 * fixed slot only with bytes >= 0x80, which the worker's hex parse refuses, or leaves the slot
 * short (fewer bytes written than the slot's length: refused here).
 */
export function encodePackedBatchInto(bytes: Buffer, at: number, limit: number, items: readonly SignedMessage[], start: number, end: number): number {
  const count = end - start;
  const fixedAt = at + 4 + 4 * (count + 1);
  const messagesAt = fixedAt + count * RECORD;
  writeU32(bytes, at, count);
  let pos = 0;
  for (let k = 0; k < count; k++) {
    writeU32(bytes, at + 4 * (1 + k), pos);
    const rec = fixedAt + k * RECORD;
    // The ring's bytes are reused: the flag says "refused" until the item is written whole.
    bytes[rec + FLAG_AT] = 0;
    bytes[rec + OTHERS_AT] = 0;
    const item = items[start + k];
    if (item === null || typeof item !== 'object') continue;
    const { message, signature_hex: sig, expected_address: addr } = item;
    if (typeof message !== 'string' || typeof sig !== 'string' || typeof addr !== 'string') continue;
    if (sig.length !== SIG_CHARS || addr.length !== ADDR_CHARS) continue;
    const others = otherAddresses(item);
    if (others === null) continue;
    if (bytes.write(sig, rec, SIG_CHARS, 'utf8') !== SIG_CHARS) continue;
    if (bytes.write(addr, rec + SIG_CHARS, ADDR_CHARS, 'utf8') !== ADDR_CHARS) continue;
    const message_at = messagesAt + pos;
    let others_end = message_at + bytes.write(message, message_at, limit - message_at, 'utf8');
    let others_ok = true;
    for (const other of others) {
      others_ok &&= bytes.write(other, others_end, ADDR_CHARS, 'utf8') === ADDR_CHARS;
      others_end += ADDR_CHARS;
    }
    pos = others_end - messagesAt;
    if (!others_ok) continue;
    bytes[rec + OTHERS_AT] = others.length;
    bytes[rec + FLAG_AT] = 1;
  }
  writeU32(bytes, at + 4 * (1 + count), pos);
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

function epochMs(): number {
  return performance.timeOrigin + performance.now();
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
 */
export function verifyPackedInto(bytes: Uint8Array, batch_at: number, answer_at: number, recoverer: Recoverer): number {
  const start_ms = epochMs();
  const count = readU32(bytes, batch_at);
  const offsets_at = batch_at + 4;
  const fixedAt = batch_at + 4 + 4 * (count + 1);
  const messagesAt = fixedAt + count * RECORD;
  for (let k = 0; k < count; k++) {
    bytes[answer_at + k] = 0;
    const rec = fixedAt + k * RECORD;
    if (bytes[rec + FLAG_AT] !== 1) continue;
    if (!isPrefix0x(bytes, rec) || !parseHexBytesInto(bytes, rec + 2, 65, SIG, 0)) continue;
    if (!isPrefix0x(bytes, rec + SIG_CHARS) || !parseHexBytesInto(bytes, rec + SIG_CHARS + 2, 20, CANDIDATES, 0)) continue;
    const others = bytes[rec + OTHERS_AT];
    const message_at = messagesAt + readU32(bytes, offsets_at + 4 * k);
    const others_at = messagesAt + readU32(bytes, offsets_at + 4 * (k + 1)) - ADDR_CHARS * others;
    if (others_at < message_at) continue;
    let parsed = true;
    for (let i = 0; i < others && parsed; i++) {
      const o = others_at + ADDR_CHARS * i;
      parsed = isPrefix0x(bytes, o) && parseHexBytesInto(bytes, o + 2, 20, CANDIDATES, 20 * (i + 1));
    }
    if (!parsed) continue;
    eip191HashRangeInto(bytes, message_at, others_at, HASH);
    if (!recoverer.recoverAddressInto(HASH, SIG, RECOVERED)) continue;
    bytes[answer_at + k] = matchingCandidate(others + 1);
  }
  writeTaskTimes(bytes, answer_at + count, start_ms, epochMs());
  return count;
}

const F64 = new Float64Array(2);
const F64_BYTES = new Uint8Array(F64.buffer);
const HASH = new Uint8Array(32);
const SIG = new Uint8Array(65);
const RECOVERED = new Uint8Array(20);
/** The expected address, then the other candidates, 20 bytes each. */
const CANDIDATES = new Uint8Array(20 * SIGNERS_PER_CHECK_MAX);

/** 1 + the index of the first of `count` CANDIDATES equal to RECOVERED, or 0. */
function matchingCandidate(count: number): number {
  for (let c = 0; c < count; c++) {
    let i = 0;
    while (i < 20 && CANDIDATES[20 * c + i] === RECOVERED[i]) i++;
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
