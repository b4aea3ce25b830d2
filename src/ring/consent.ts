// Consent on the record (DECISIONS, "Batches, state roots and data availability"; docs/
// verifiability.md, "Consent"): every signed request crosses the request ring, and so the journal
// and the published batch inputs, followed by consent slots that hold who asked for it and how:
//
//   origin user:      the signature (65 bytes) and the exact message text it was made over;
//                     a FORCE_INCLUDE also carries its payload's signature and message text.
//   origin operator:  the rule that lets the operator issue it without a user signature
//                     (OperatorRule); such a request may only cancel.
//
// Requests of the admin kinds (deposits, credit, fees, markets) carry no consent slot: they are
// admin requests, authorised by the admin token, and the batch marks them so.
//
// A consent slot is a whole ring record (RECORD_WORDS words) whose kind word holds CONSENT_KIND,
// so the matcher skips it; its other 188 bytes carry the consent blob, `u16 length || blob`,
// continued over as many slots as it needs (CONSENT_SLOTS_MAX at most). Blob:
//   u8 origin (1 user, 2 operator)
//   user:     65 signature, u16 message length, message (UTF-8), u8 has_payload,
//             [65 payload signature, u16 payload message length, payload message]
//   operator: u8 rule
import { parseHexStringInto } from '../auth/hex.js';
import {
  checkSignatureHex, SIGNATURE_IN_ROW, SIGNATURE_ROW_BYTES, SIGNATURE_ROW_WORDS, SIGNATURE_ROWS_WORDS, signatureRowOf,
} from '../auth/signature_rows.js';

export const CONSENT_KIND = 250;
/** The word of a record holding its kind (RQ_KIND_WORD in records.ts; asserted there). */
export const CONSENT_KIND_WORD = 18;
const KIND_BYTE = CONSENT_KIND_WORD * 4;
/** Data bytes per consent slot: a 192-byte record less its 4-byte kind word. */
export const CONSENT_SLOT_BYTES = 188;
/**
 * Slots one request's consent may take: a message is at most MESSAGE_BYTES_MAX, so a
 * force-include (two signatures, two messages) fits in 2 + 1 + 2 x (65 + 2 + 512) + 1 bytes.
 */
export const CONSENT_SLOTS_MAX = 7;
/** Longest message text journaled (the longest signed form today is ~250 bytes). */
export const MESSAGE_BYTES_MAX = 512;
export const SIGNATURE_BYTES = 65;

export const OperatorRule = {
  CREDIT_AUTO_CANCEL: 1,
  CANCEL_ON_DISCONNECT: 2,
  EXPIRY: 3,
  DEAD_MAN_SWITCH: 4,
} as const;
export const OPERATOR_RULE_NAMES: Readonly<Record<number, string>> = {
  1: 'credit_auto_cancel', 2: 'cancel_on_disconnect', 3: 'expiry', 4: 'dead_man_switch',
};

/** 0x + 130 hex digits (already shape-checked) -> 65 bytes. */
export function signatureBytes(hex: string): Uint8Array {
  const out = new Uint8Array(SIGNATURE_BYTES);
  // One table lookup per digit: parseInt(substr) made two strings per byte (4% of the front, issue 11).
  if (!parseHexStringInto(hex, 2, SIGNATURE_BYTES, out, 0)) throw new Error('consent: a signature is 0x and 130 hex digits');
  return out;
}

export interface SignedMessage {
  signature: Uint8Array;
  message: string;
}

export type Consent =
  | { origin: 'user'; request: SignedMessage; payload: SignedMessage | null }
  | { origin: 'operator'; rule: number };

const ORIGIN_USER = 1;
const ORIGIN_OPERATOR = 2;

const utf8 = new TextEncoder();
const utf8d = new TextDecoder('utf-8', { fatal: true });

/** Bytes of one signed message in a blob: signature, u16 length, the UTF-8 text. */
function signedBytes(message_bytes: number): number {
  return SIGNATURE_BYTES + 2 + message_bytes;
}

function putSigned(out: Uint8Array, at: number, s: SignedMessage, m: Uint8Array): number {
  if (s.signature.length !== SIGNATURE_BYTES) throw new Error('consent: a signature is 65 bytes');
  if (m.length > MESSAGE_BYTES_MAX) throw new Error(`consent: message of ${m.length} bytes exceeds ${MESSAGE_BYTES_MAX}`);
  out.set(s.signature, at);
  out[at + SIGNATURE_BYTES] = m.length >>> 8;
  out[at + SIGNATURE_BYTES + 1] = m.length & 255;
  out.set(m, at + SIGNATURE_BYTES + 2);
  return at + signedBytes(m.length);
}

/** The blob, sized first and written once (it was a number[] grown byte by byte, per signed request). */
export function encodeConsent(c: Consent): Uint8Array {
  if (c.origin === 'operator') return Uint8Array.of(ORIGIN_OPERATOR, c.rule);
  const request = utf8.encode(c.request.message);
  const payload = c.payload === null ? null : utf8.encode(c.payload.message);
  const out = new Uint8Array(2 + signedBytes(request.length) + (payload === null ? 0 : signedBytes(payload.length)));
  out[0] = ORIGIN_USER;
  let at = putSigned(out, 1, c.request, request);
  out[at++] = payload === null ? 0 : 1;
  if (c.payload !== null && payload !== null) putSigned(out, at, c.payload, payload);
  return out;
}

/**
 * The user encoder's buffer is the blob framed as consent slot data: the u16 blob length, the blob
 * (origin, signature, u16 message length, message, no payload), then zeros to the end of its last
 * slot. writeConsentSlots copies it into the ring by 32-bit words (47 per slot) instead of byte by
 * byte (issue 11, branch h19c).
 */
const FRAMED_BLOB_AT = 2;
const FRAMED_SIGNATURE_AT = FRAMED_BLOB_AT + 1;
const FRAMED_LENGTH_AT = FRAMED_SIGNATURE_AT + SIGNATURE_BYTES;
const FRAMED_TEXT_AT = FRAMED_LENGTH_AT + 2;
const SLOT_WORDS = CONSENT_SLOT_BYTES / 4;
const KIND_SLOT_WORD = KIND_BYTE / 4;
/** Room for the largest framed blob: every slot a request may take (a multiple of 4 bytes). */
const FRAMED_BYTES_MIN = CONSENT_SLOTS_MAX * CONSENT_SLOT_BYTES;

/** Node's Buffer writers, which take an offset and report the bytes written (not in @types/node). */
interface BufferWriters {
  /** Hex digits -> bytes, stopping at the first pair that is not hex; returns the bytes written. */
  hexWrite(text: string, offset: number, length: number): number;
  /** UTF-8 (lone surrogates as U+FFFD, as TextEncoder); returns the bytes written. */
  utf8Write(text: string, offset: number, length: number): number;
}
type WritableBuffer = Buffer & BufferWriters;
// They are not in Node's documentation (Buffer.write calls them): refuse to load, naming the cause,
// rather than fail on the first signed order of a Node that dropped them.
for (const name of ['hexWrite', 'utf8Write'] as const) {
  if (typeof (Buffer.prototype as unknown as Partial<BufferWriters>)[name] !== 'function') {
    throw new Error(`consent: this Node's Buffer has no ${name} (the signed path needs Node 20's Buffer writers)`);
  }
}

// The signature checked once (auth/signature_rows.ts): the parsers' shape check decodes the digits
// while it checks them, and the encoder copies the kept bytes (a row's 17 words: 3 bytes of
// padding, then the signature at FRAMED_SIGNATURE_AT, as in the framed blob) instead of decoding
// the digits a second time (issue 11, branch h20c).
if (FRAMED_SIGNATURE_AT !== SIGNATURE_IN_ROW || SIGNATURE_ROW_BYTES !== FRAMED_LENGTH_AT) {
  throw new Error('consent: the framed blob and the signature rows disagree on where the signature is');
}
export { checkSignatureHex };

/** The framed blob the last UserConsentEncoder.encode returned (writeConsentSlots' word copy). */
let framed_view: Uint8Array | null = null;
let framed_words: Int32Array | null = null;

/**
 * encodeConsent of a user's own signed request (origin user, no payload), written from the
 * signature's hex straight into a buffer this encoder keeps: the view returned is valid until the
 * next call (the front's signed path copies it into the request ring at once). Same bytes as
 * `encodeConsent({ origin: 'user', request: { signature: signatureBytes(hex), message }, payload:
 * null })` without its three fresh buffers per request (signature, UTF-8 message, blob: each over
 * V8's 64-byte limit for on-heap typed arrays, so malloc'd and later swept; issue 11).
 *
 * Its costs are native calls and word copies, not JS loops (issue 11, branches h19c and h20c,
 * callgrind): the signature's 65 bytes as the 17 words the parser's check left decoded
 * (auth/signature_rows.ts; on a miss, the check's one hexWrite after one UTF-8 length check; a JS
 * loop over charCodeAt cost ~88 instructions a byte); the message through utf8Write (no result
 * object as encodeInto makes); and the view returned is cached per length (a subarray per request
 * was ~850 instructions and a young object). A text that is not `0x` and 130 hex digits throws.
 */
export class UserConsentEncoder {
  private buf: WritableBuffer = UserConsentEncoder.alloc(FRAMED_BYTES_MIN);
  private words = new Int32Array(this.buf.buffer, this.buf.byteOffset, this.buf.length >> 2);
  /** views[n]: the blob of n bytes (a view of `buf`; dropped with it). */
  private views: (Uint8Array | undefined)[] = [];

  private static alloc(bytes: number): WritableBuffer {
    // Its own ArrayBuffer (never the pool's), so the words view starts at offset 0.
    return Buffer.allocUnsafeSlow(bytes) as WritableBuffer;
  }

  encode(signature_hex: string, message: string): Uint8Array {
    // A UTF-16 unit is at most 3 UTF-8 bytes: room for any message, checked against the limit
    // below, and for the zeros to the end of the last slot.
    const room = FRAMED_TEXT_AT + 3 * message.length + 1 + CONSENT_SLOT_BYTES;
    if (this.buf.length < room) {
      this.buf = UserConsentEncoder.alloc(4 * Math.ceil(Math.max(room, 2 * this.buf.length) / 4));
      this.words = new Int32Array(this.buf.buffer, this.buf.byteOffset, this.buf.length >> 2);
      this.views = [];
    }
    const out = this.buf;
    // Checked and decoded by checkSignatureHex (the parser's shape check), or now: words 0-16 of
    // the row are bytes 0-67 of the framed blob, the signature at FRAMED_SIGNATURE_AT (the length
    // and the origin before it are written below).
    const row = signatureRowOf(signature_hex);
    const words = this.words;
    if (row >= 0) {
      const from = row * SIGNATURE_ROW_WORDS;
      for (let w = 0; w < SIGNATURE_ROW_WORDS; w++) words[w] = SIGNATURE_ROWS_WORDS[from + w];
    } else {
      // Not `0x` and 130 hex digits: the digits 2..132 as signatureBytes reads them (its prefix and
      // any longer tail are the caller's check), all ASCII, so hexWrite reads them as they are.
      const digits = signature_hex.slice(2, 2 + 2 * SIGNATURE_BYTES);
      if (digits.length !== 2 * SIGNATURE_BYTES || Buffer.byteLength(digits, 'utf8') !== digits.length ||
        out.hexWrite(digits, FRAMED_SIGNATURE_AT, SIGNATURE_BYTES) !== SIGNATURE_BYTES) {
        throw new Error('consent: a signature is 0x and 130 hex digits');
      }
    }
    out[FRAMED_BLOB_AT] = ORIGIN_USER;
    const written = out.utf8Write(message, FRAMED_TEXT_AT, out.length - FRAMED_TEXT_AT);
    if (written > MESSAGE_BYTES_MAX) throw new Error(`consent: message of ${written} bytes exceeds ${MESSAGE_BYTES_MAX}`);
    out[FRAMED_LENGTH_AT] = written >>> 8;
    out[FRAMED_LENGTH_AT + 1] = written & 255;
    let end = FRAMED_TEXT_AT + written;
    out[end++] = 0; // no payload
    const length = end - FRAMED_BLOB_AT;
    out[0] = length >>> 8;
    out[1] = length & 255;
    // Zeros to the end of the last slot: the bytes to a word boundary, then whole words.
    while ((end & 3) !== 0) out[end++] = 0;
    const slots_end = consentSlotCount(length) * SLOT_WORDS;
    for (let w = end >> 2; w < slots_end; w++) words[w] = 0;
    let view = this.views[length];
    if (view === undefined) this.views[length] = view = out.subarray(FRAMED_BLOB_AT, FRAMED_BLOB_AT + length);
    framed_view = view;
    framed_words = words;
    return view;
  }
}

export class ConsentMalformed extends Error {}

export function decodeConsent(blob: Uint8Array): Consent {
  let at = 0;
  const need = (n: number): void => {
    if (at + n > blob.length) throw new ConsentMalformed('consent blob truncated');
  };
  const u8 = (): number => {
    need(1);
    return blob[at++];
  };
  const signed = (): SignedMessage => {
    need(SIGNATURE_BYTES + 2);
    const signature = blob.slice(at, at + SIGNATURE_BYTES);
    at += SIGNATURE_BYTES;
    const len = (blob[at] << 8) | blob[at + 1];
    at += 2;
    need(len);
    let message: string;
    try {
      message = utf8d.decode(blob.subarray(at, at + len));
    } catch {
      throw new ConsentMalformed('consent message is not UTF-8');
    }
    at += len;
    return { signature, message };
  };
  const origin = u8();
  let c: Consent;
  if (origin === ORIGIN_OPERATOR) c = { origin: 'operator', rule: u8() };
  else if (origin === ORIGIN_USER) {
    const request = signed();
    const payload = u8() === 1 ? signed() : null;
    c = { origin: 'user', request, payload };
  } else throw new ConsentMalformed(`consent origin ${origin} is neither user (1) nor operator (2)`);
  if (at !== blob.length) throw new ConsentMalformed('consent blob has trailing bytes');
  return c;
}

/** Slots a blob of `blob_bytes` takes (its u16 length prefix included). */
export function consentSlotCount(blob_bytes: number): number {
  return Math.ceil((blob_bytes + 2) / CONSENT_SLOT_BYTES);
}

/** Byte `k` of the slot data -> its byte offset in the slot (skipping the kind word). */
function slotByte(k: number): number {
  return k < KIND_BYTE ? k : k + 4;
}

/**
 * Writes the blob over consent slots; `slotByteOffset(j)` is the byte offset of the j-th slot in
 * `u8` (ring slots need not be contiguous). `i32` and `u8` view the same memory.
 */
export function writeConsentSlots(u8: Uint8Array, i32: Int32Array, slotByteOffset: (j: number) => number, blob: Uint8Array): number {
  const n = consentSlotCount(blob.length);
  if (n > CONSENT_SLOTS_MAX) throw new Error(`consent of ${blob.length} bytes needs ${n} slots (max ${CONSENT_SLOTS_MAX})`);
  if (blob === framed_view && framed_words !== null) {
    // The blob UserConsentEncoder.encode just framed (length, blob, zeros), copied word by word.
    const src = framed_words;
    for (let j = 0; j < n; j++) {
      const base = slotByteOffset(j);
      if ((base & 3) !== 0) throw new Error('a consent slot starts on a 4-byte boundary');
      const w = base >> 2;
      const s = j * SLOT_WORDS;
      for (let k = 0; k < KIND_SLOT_WORD; k++) i32[w + k] = src[s + k];
      i32[w + KIND_SLOT_WORD] = CONSENT_KIND;
      for (let k = KIND_SLOT_WORD; k < SLOT_WORDS; k++) i32[w + k + 1] = src[s + k];
    }
    return n;
  }
  // Slot data = u16 length + the blob + zero padding; byte k of it is blob[k - 2].
  const total = blob.length + 2;
  for (let j = 0; j < n; j++) {
    const base = slotByteOffset(j);
    i32[(base + KIND_BYTE) >> 2] = CONSENT_KIND;
    for (let k = 0; k < CONSENT_SLOT_BYTES; k++) {
      const d = j * CONSENT_SLOT_BYTES + k;
      u8[base + slotByte(k)] = d === 0 ? blob.length >>> 8 : d === 1 ? blob.length & 255 : d < total ? blob[d - 2] : 0;
    }
  }
  return n;
}

/** Whether the record at byte offset `base` is a consent slot. */
export function isConsentSlot(i32: Int32Array, base: number): boolean {
  return i32[(base + KIND_BYTE) >> 2] === CONSENT_KIND;
}

/**
 * Reads the blob starting at the consent slot at byte offset `first` of contiguous records
 * (`record_bytes` each, `end` = byte end of the records). Returns the blob and the slots used.
 */
export function readConsentBlob(u8: Uint8Array, i32: Int32Array, first: number, record_bytes: number, end: number): { blob: Uint8Array; slots: number } {
  const len = (u8[first + slotByte(0)] << 8) | u8[first + slotByte(1)];
  const n = consentSlotCount(len);
  if (n > CONSENT_SLOTS_MAX || first + n * record_bytes > end) throw new ConsentMalformed('consent slots run past the batch');
  const data = new Uint8Array(n * CONSENT_SLOT_BYTES);
  for (let j = 0; j < n; j++) {
    const base = first + j * record_bytes;
    if (!isConsentSlot(i32, base)) throw new ConsentMalformed('a consent blob continues into a record that is not a consent slot');
    for (let k = 0; k < CONSENT_SLOT_BYTES; k++) data[j * CONSENT_SLOT_BYTES + k] = u8[base + slotByte(k)];
  }
  return { blob: data.slice(2, 2 + len), slots: n };
}
