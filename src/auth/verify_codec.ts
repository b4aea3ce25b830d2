// Task format between the verify pool (front thread) and its workers: one task = one batch.
//
// 'packed' (default): the whole batch in one ArrayBuffer, transferred (not copied) to the worker.
//   u32 count | u32 message offsets[count + 1] (relative to the message area)
//   | count fixed records of RECORD bytes: 132 signature hex chars, 42 address chars, 1 shape flag
//   | message area: each message's UTF-8 bytes, back to back.
//   The front thread only runs TextEncoder.encodeInto; all hex parsing and hashing happen in the
//   worker, which hashes the UTF-8 bytes directly (EIP-191 needs bytes, not a string).
// 'clone': the items array itself, structured-cloned by postMessage (kept for the benchmark).
//
// The answer, either way: one verdict byte per item, then TASK_TIMES_BYTES: the worker's start
// and end of the task as two f64 epoch milliseconds (performance.timeOrigin + now(): comparable
// across threads), for the per-stage latency of docs/benchmarks.md. Two clock reads per task.
import { parseHexBytesInto } from './hex.js';
import type { Recoverer } from './recover.js';
import { verifyMessageBytes, verifySignedMessage, type SignedMessage } from './verify.js';

export type VerifyTransport = 'packed' | 'clone';

export type VerifyTask =
  | { readonly kind: 'packed'; readonly buffer: ArrayBuffer }
  | { readonly kind: 'clone'; readonly items: readonly SignedMessage[] };

const SIG_CHARS = 132; // "0x" + 130
const ADDR_CHARS = 42; // "0x" + 40
const RECORD = 176; // SIG_CHARS + ADDR_CHARS + flag + pad, keeps records 4-byte aligned
const FLAG_AT = SIG_CHARS + ADDR_CHARS;

const utf8 = new TextEncoder();

/** Encodes `items[start, end)` into one packed buffer. Never throws on bad item shapes. */
export function encodePackedBatch(items: readonly SignedMessage[], start: number, end: number): ArrayBuffer {
  const count = end - start;
  const fixedAt = 4 + 4 * (count + 1);
  const messagesAt = fixedAt + count * RECORD;
  let capacity = 0;
  for (let i = start; i < end; i++) {
    const m = items[i]?.message;
    if (typeof m === 'string') capacity += 3 * m.length; // UTF-8 worst case per UTF-16 unit
  }
  const buffer = new ArrayBuffer(messagesAt + capacity);
  const words = new Uint32Array(buffer, 0, 1 + count + 1);
  const bytes = new Uint8Array(buffer);
  words[0] = count;
  let pos = 0;
  for (let k = 0; k < count; k++) {
    words[1 + k] = pos;
    const item = items[start + k];
    if (item === null || typeof item !== 'object') continue;
    const { message, signature_hex: sig, expected_address: addr } = item;
    if (typeof message !== 'string' || typeof sig !== 'string' || typeof addr !== 'string') continue;
    if (sig.length !== SIG_CHARS || addr.length !== ADDR_CHARS) continue;
    const rec = fixedAt + k * RECORD;
    // A non-ASCII char leaves a byte >= 0x80 or a 0 in the slot, which the hex parser refuses.
    utf8.encodeInto(sig, bytes.subarray(rec, rec + SIG_CHARS));
    utf8.encodeInto(addr, bytes.subarray(rec + SIG_CHARS, rec + FLAG_AT));
    bytes[rec + FLAG_AT] = 1;
    pos += utf8.encodeInto(message, bytes.subarray(messagesAt + pos)).written;
  }
  words[1 + count] = pos;
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

function stampTask(out: Uint8Array, count: number, start_ms: number): Uint8Array {
  const view = new DataView(out.buffer, out.byteOffset + count, TASK_TIMES_BYTES);
  view.setFloat64(0, start_ms, true);
  view.setFloat64(8, epochMs(), true);
  return out;
}

/** Worker side: one verdict byte per item (1 valid, 0 invalid), then the task's times. */
export function verifyPackedBatch(buffer: ArrayBuffer, recoverer: Recoverer): Uint8Array {
  const start_ms = epochMs();
  const bytes = new Uint8Array(buffer);
  const count = new Uint32Array(buffer, 0, 1)[0];
  const offsets = new Uint32Array(buffer, 4, count + 1);
  const fixedAt = 4 + 4 * (count + 1);
  const messagesAt = fixedAt + count * RECORD;
  const out = new Uint8Array(count + TASK_TIMES_BYTES);
  const sig = new Uint8Array(65);
  const addr = new Uint8Array(20);
  for (let k = 0; k < count; k++) {
    const rec = fixedAt + k * RECORD;
    if (bytes[rec + FLAG_AT] !== 1) continue;
    if (!isPrefix0x(bytes, rec) || !parseHexBytesInto(bytes, rec + 2, 65, sig, 0)) continue;
    if (!isPrefix0x(bytes, rec + SIG_CHARS) || !parseHexBytesInto(bytes, rec + SIG_CHARS + 2, 20, addr, 0)) continue;
    const message = bytes.subarray(messagesAt + offsets[k], messagesAt + offsets[k + 1]);
    out[k] = verifyMessageBytes(message, sig, addr, recoverer) ? 1 : 0;
  }
  return stampTask(out, count, start_ms);
}

/** Worker side for the 'clone' transport. */
export function verifyClonedBatch(items: readonly SignedMessage[], recoverer: Recoverer): Uint8Array {
  const start_ms = epochMs();
  const out = new Uint8Array(items.length + TASK_TIMES_BYTES);
  for (let k = 0; k < items.length; k++) out[k] = verifySignedMessage(items[k], recoverer) ? 1 : 0;
  return stampTask(out, items.length, start_ms);
}

/** Worker side entry (tasks come only from encodePackedBatch / the pool, never from the wire). */
export function runVerifyTask(task: VerifyTask, recoverer: Recoverer): Uint8Array {
  if (task.kind === 'packed') return verifyPackedBatch(task.buffer, recoverer);
  return verifyClonedBatch(task.items, recoverer);
}
