// The packed batch format between the front thread and the verify workers: one task = one batch,
// written straight into the worker's verify ring (a SharedArrayBuffer, verify_ring.ts).
//   u32 count | u32 message offsets[count + 1] (relative to the message area)
//   | count fixed records of RECORD bytes: 132 signature hex chars, 42 address chars, 1 shape flag,
//     1 count of other candidate signers
//   | message area: each item's message UTF-8 bytes then its other candidates' 42 address chars,
//     back to back.
// The front thread only runs TextEncoder.encodeInto; all hex parsing and hashing happen in the
// worker, which hashes the UTF-8 bytes directly (EIP-191 needs bytes, not a string).
//
// The answer: one verdict byte per item (0: no candidate signed it; 1: the expected address did;
// 1 + i: other_addresses[i - 1] did: one recovery, compared with every candidate), then TASK_TIMES_BYTES: the worker's start and end of the
// task as two f64 epoch milliseconds (performance.timeOrigin + now(): comparable across threads),
// for the per-stage latency of docs/benchmarks.md. Two clock reads per task.
import { parseHexBytesInto } from './hex.js';
import type { Recoverer } from './recover.js';
import { recoverMessageBytesInto, SIGNERS_PER_CHECK_MAX, type SignedMessage } from './verify.js';

const SIG_CHARS = 132; // "0x" + 130
const ADDR_CHARS = 42; // "0x" + 40
const RECORD = 176; // SIG_CHARS + ADDR_CHARS + flag + others count, keeps records 4-byte aligned
const FLAG_AT = SIG_CHARS + ADDR_CHARS;
const OTHERS_AT = FLAG_AT + 1;

const utf8 = new TextEncoder();

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
 * Encodes `items[start, end)` into `bytes` (4-byte aligned, at least
 * packedBatchCapacity long; a view into the verify ring or a fresh buffer) and returns the bytes
 * used. Never throws on bad item shapes: such an item keeps its flag 0 and is refused.
 */
export function encodePackedBatchInto(bytes: Uint8Array, items: readonly SignedMessage[], start: number, end: number): number {
  const count = end - start;
  const fixedAt = 4 + 4 * (count + 1);
  const messagesAt = fixedAt + count * RECORD;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, 1 + count + 1);
  words[0] = count;
  let pos = 0;
  for (let k = 0; k < count; k++) {
    words[1 + k] = pos;
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
    // A non-ASCII char does not fit its slot (fewer chars read than the length): refused.
    if (utf8.encodeInto(sig, bytes.subarray(rec, rec + SIG_CHARS)).read !== SIG_CHARS) continue;
    if (utf8.encodeInto(addr, bytes.subarray(rec + SIG_CHARS, rec + FLAG_AT)).read !== ADDR_CHARS) continue;
    let others_end = messagesAt + pos + utf8.encodeInto(message, bytes.subarray(messagesAt + pos)).written;
    let others_ok = true;
    for (const other of others) {
      others_ok &&= utf8.encodeInto(other, bytes.subarray(others_end, others_end + ADDR_CHARS)).read === ADDR_CHARS;
      others_end += ADDR_CHARS;
    }
    pos = others_end - messagesAt;
    if (!others_ok) continue;
    bytes[rec + OTHERS_AT] = others.length;
    bytes[rec + FLAG_AT] = 1;
  }
  words[1 + count] = pos;
  return messagesAt + pos;
}

/** Encodes `items[start, end)` into one fresh packed buffer (tests, benches, the in-thread path). */
export function encodePackedBatch(items: readonly SignedMessage[], start: number, end: number): ArrayBuffer {
  const buffer = new ArrayBuffer(packedBatchCapacity(items, start, end));
  encodePackedBatchInto(new Uint8Array(buffer), items, start, end);
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

/**
 * Worker side: checks the packed batch in `batch` (4-byte aligned) and writes one verdict byte per
 * item (1 valid, 0 invalid) into `out`, then the task's start and end times (TASK_TIMES_BYTES).
 * `out` holds at least count + TASK_TIMES_BYTES bytes. Returns the item count.
 */
export function verifyPackedInto(batch: Uint8Array, out: Uint8Array, recoverer: Recoverer): number {
  const start_ms = epochMs();
  const count = new Uint32Array(batch.buffer, batch.byteOffset, 1)[0];
  const offsets = new Uint32Array(batch.buffer, batch.byteOffset + 4, count + 1);
  const fixedAt = 4 + 4 * (count + 1);
  const messagesAt = fixedAt + count * RECORD;
  for (let k = 0; k < count; k++) {
    out[k] = 0;
    const rec = fixedAt + k * RECORD;
    if (batch[rec + FLAG_AT] !== 1) continue;
    if (!isPrefix0x(batch, rec) || !parseHexBytesInto(batch, rec + 2, 65, SIG, 0)) continue;
    if (!isPrefix0x(batch, rec + SIG_CHARS) || !parseHexBytesInto(batch, rec + SIG_CHARS + 2, 20, CANDIDATES, 0)) continue;
    const others = batch[rec + OTHERS_AT];
    const others_at = messagesAt + offsets[k + 1] - ADDR_CHARS * others;
    if (others_at < messagesAt + offsets[k]) continue;
    let parsed = true;
    for (let i = 0; i < others && parsed; i++) {
      const at = others_at + ADDR_CHARS * i;
      parsed = isPrefix0x(batch, at) && parseHexBytesInto(batch, at + 2, 20, CANDIDATES, 20 * (i + 1));
    }
    if (!parsed) continue;
    const message = batch.subarray(messagesAt + offsets[k], others_at);
    if (!recoverMessageBytesInto(message, SIG, RECOVERED, recoverer)) continue;
    out[k] = matchingCandidate(others + 1);
  }
  const view = new DataView(out.buffer, out.byteOffset + count, TASK_TIMES_BYTES);
  view.setFloat64(0, start_ms, true);
  view.setFloat64(8, epochMs(), true);
  return count;
}

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
  const batch = new Uint8Array(buffer);
  const count = new Uint32Array(buffer, 0, 1)[0];
  const out = new Uint8Array(count + TASK_TIMES_BYTES);
  verifyPackedInto(batch, out, recoverer);
  return out;
}
