// The records that cross the rings: requests (front -> matcher, request_records.ts) and events
// (matcher -> front, event_records.ts). This module holds what both layouts share: the record size,
// the rings of records, the typed views over record memory and a growable copy of records. Each
// layout is asserted when its module loads.
//
// A record is `RECORD_WORDS` 32-bit words. Numbers that can reach 2^53 (prices, quantities,
// balances, ids, nonces) sit in float64 words (exact for integers up to 2^53); small enums in
// int32 words; addresses and client order ids as raw bytes.
import { SpscRing } from './spsc_ring.js';

export const RECORD_WORDS = 52;
/** Client order id bytes (ASCII) a record carries at most, and an address's raw bytes. */
export const CLIENT_ORDER_ID_BYTES_MAX = 36;
export const ADDRESS_BYTES = 20;

// Offsets carry their index space in their name: `_F64` offsets index the Float64Array from the
// slot's f64 base (word offset >> 1), `_WORD` offsets index the Int32Array from the slot's word
// offset. (Without it, the float64 index 23 and the word index 23 read alike and are 23 words
// apart.)

// Layout assertions (TIGER_STYLE: at load, not in the hot path).
if (RECORD_WORDS % 2 !== 0) throw new Error('records must be 8-byte aligned');

export function createRecordRing(capacity_slots: number): SpscRing {
  return SpscRing.create({ capacity_slots, slot_words: RECORD_WORDS });
}

export function attachRecordRing(sab: SharedArrayBuffer): SpscRing {
  const ring = SpscRing.attach(sab);
  if (ring.slot_words !== RECORD_WORDS) throw new Error(`ring has ${ring.slot_words}-word slots, records need ${RECORD_WORDS}`);
  return ring;
}

/** Typed views of memory holding records: a ring's slots or a copied batch buffer. */
export interface RecordViews {
  i32: Int32Array;
  f64: Float64Array;
  u8: Uint8Array;
}

/** Byte view of a ring, shared by both codecs. */
export function bytesOf(ring: SpscRing): Uint8Array {
  return new Uint8Array(ring.sab);
}

export function writeAscii(u8: Uint8Array, byte_offset: number, text: string): void {
  for (let i = 0; i < text.length; i++) u8[byte_offset + i] = text.charCodeAt(i);
}

/**
 * The `length` bytes at `byte_offset` as a string, one UTF-16 unit per byte. Up to eight bytes per
 * String.fromCharCode call: a string allocated per eight bytes, where adding one character at a
 * time allocated one per character (a client id in every request of a journal replay: ~35 against
 * ~75-100 ns for a 7-character id; docs/benchmarks.md, h15p).
 */
export function readAscii(u8: Uint8Array, byte_offset: number, length: number): string {
  let s = '';
  let o = byte_offset;
  const end = byte_offset + length;
  for (; o + 8 <= end; o += 8) {
    s += String.fromCharCode(u8[o], u8[o + 1], u8[o + 2], u8[o + 3], u8[o + 4], u8[o + 5], u8[o + 6], u8[o + 7]);
  }
  switch (end - o) {
    case 1: return s + String.fromCharCode(u8[o]);
    case 2: return s + String.fromCharCode(u8[o], u8[o + 1]);
    case 3: return s + String.fromCharCode(u8[o], u8[o + 1], u8[o + 2]);
    case 4: return s + String.fromCharCode(u8[o], u8[o + 1], u8[o + 2], u8[o + 3]);
    case 5: return s + String.fromCharCode(u8[o], u8[o + 1], u8[o + 2], u8[o + 3], u8[o + 4]);
    case 6: return s + String.fromCharCode(u8[o], u8[o + 1], u8[o + 2], u8[o + 3], u8[o + 4], u8[o + 5]);
    case 7: return s + String.fromCharCode(u8[o], u8[o + 1], u8[o + 2], u8[o + 3], u8[o + 4], u8[o + 5], u8[o + 6]);
    default: return s;
  }
}

/** Typed views over a plain Int32Array of records (a batch copy, a journal batch). */
export function viewsOfRecords(records: Int32Array): RecordViews {
  return {
    i32: records,
    f64: new Float64Array(records.buffer, records.byteOffset, records.length >> 1),
    u8: new Uint8Array(records.buffer, records.byteOffset, records.length * 4),
  };
}

export function viewsOfRing(ring: SpscRing): RecordViews {
  return { i32: ring.i32, f64: ring.f64, u8: bytesOf(ring) };
}

/**
 * A growable copy of event records (the front keeps a batch's events here until the batch's
 * commit marker arrives).
 */
export class RecordBuffer {
  declare views: RecordViews;
  count = 0;

  constructor(records_initial: number) {
    this.views = RecordBuffer.alloc(Math.max(1, records_initial));
  }

  private static alloc(records: number): RecordViews {
    const ab = new ArrayBuffer(records * RECORD_WORDS * 4);
    return { i32: new Int32Array(ab), f64: new Float64Array(ab), u8: new Uint8Array(ab) };
  }

  /** Copies one record from `from` at word offset `o`; returns the copy's word offset. */
  push(from: RecordViews, o: number): number {
    const capacity = this.views.i32.length / RECORD_WORDS;
    if (this.count === capacity) {
      const grown = RecordBuffer.alloc(capacity * 2);
      grown.i32.set(this.views.i32);
      this.views = grown;
    }
    const at = this.count * RECORD_WORDS;
    // A word loop, not set(subarray): no view object per event record (~4-5 records, ~360 bytes
    // of the front's ~10 KB of garbage per request at max rate, 2026-11-26), at the same speed
    // (48-59 ns per 52-word record either way, measured).
    // The bound in a local: RECORD_WORDS is a module binding, which optimized code reloaded and
    // checked for its TDZ hole in every iteration (~45 instructions per word, h16c).
    const to = this.views.i32;
    const src = from.i32;
    const end = o + RECORD_WORDS;
    for (let s = o, d = at; s < end; s++, d++) to[d] = src[s];
    this.count++;
    return at;
  }

  clear(): void {
    this.count = 0;
  }
}
