// The front's in-place consent encoder must write exactly encodeConsent's blob (the journal, the
// DA batches and `ringbook verify` decode it), for any message, and refuse what it refuses.
import { describe, expect, it } from 'vitest';
import {
  decodeConsent, encodeConsent, MESSAGE_BYTES_MAX, readConsentBlob, signatureBytes, UserConsentEncoder, writeConsentSlots,
} from '../../src/ring/consent.js';
import { parseHexStringInto } from '../../src/auth/hex.js';
import { orderJsonMessage } from '../../src/auth/messages.js';
import { Rng } from '../../src/util/prng.js';

function hex(rng: Rng, bytes: number): string {
  let s = '0x';
  for (let i = 0; i < bytes; i++) s += rng.int(0, 255).toString(16).padStart(2, '0');
  return s;
}

describe('UserConsentEncoder', () => {
  it('writes encodeConsent\'s bytes for ASCII and non-ASCII messages, reusing one buffer', () => {
    const rng = new Rng(7);
    const enc = new UserConsentEncoder();
    const alphabet = ['a', '{', '"', ':', '9', 'é', '€', '😀'];
    for (let i = 0; i < 500; i++) {
      const sig = hex(rng, 65);
      const length = rng.int(0, 160);
      let message = '';
      for (let k = 0; k < length; k++) message += alphabet[rng.int(0, alphabet.length - 1)];
      const got = enc.encode(sig, message);
      const want = encodeConsent({ origin: 'user', request: { signature: signatureBytes(sig), message }, payload: null });
      expect(Buffer.from(got).equals(Buffer.from(want))).toBe(true);
      const back = decodeConsent(got.slice());
      expect(back.origin === 'user' && back.request.message === message && back.payload === null).toBe(true);
    }
  });

  it('grows for a long message and refuses one over the limit or a bad signature', () => {
    const enc = new UserConsentEncoder();
    const sig = '0x' + 'ab'.repeat(65);
    const long = 'x'.repeat(MESSAGE_BYTES_MAX);
    expect(enc.encode(sig, long).length).toBe(1 + 65 + 2 + MESSAGE_BYTES_MAX + 1);
    // After growing, the same bytes as encodeConsent, long and short.
    for (const message of [long, 'é€'.repeat(100), 'short']) {
      const want = encodeConsent({ origin: 'user', request: { signature: signatureBytes(sig), message }, payload: null });
      expect(Buffer.from(enc.encode(sig, message)).equals(Buffer.from(want))).toBe(true);
    }
    expect(() => enc.encode(sig, 'é'.repeat(MESSAGE_BYTES_MAX / 2 + 1))).toThrow(/exceeds/);
    expect(() => enc.encode('0x' + 'zz'.repeat(65), 'm')).toThrow(/signature/);
    expect(() => encodeConsent({ origin: 'user', request: { signature: new Uint8Array(65), message: 'é'.repeat(MESSAGE_BYTES_MAX / 2 + 1) }, payload: null })).toThrow(/exceeds/);
  });
});

/**
 * main's encoder before branch h19c (2f4b088), kept as the reference the native-call encoder must
 * match byte for byte and refusal for refusal: the digits through parseHexStringInto, the message
 * through TextEncoder.encodeInto.
 */
class ReferenceUserConsentEncoder {
  private buf = new Uint8Array(512);
  encode(signature_hex: string, message: string): Uint8Array {
    const room = 2 + 65 + 2 + message.length * 3;
    if (this.buf.length < room) this.buf = new Uint8Array(Math.max(room, 2 * this.buf.length));
    const out = this.buf;
    out[0] = 1;
    if (!parseHexStringInto(signature_hex, 2, 65, out, 1)) throw new Error('consent: a signature is 0x and 130 hex digits');
    const written = new TextEncoder().encodeInto(message, out.subarray(68)).written;
    if (written > MESSAGE_BYTES_MAX) throw new Error(`consent: message of ${written} bytes exceeds ${MESSAGE_BYTES_MAX}`);
    out[66] = written >>> 8;
    out[67] = written & 255;
    out[68 + written] = 0;
    return out.slice(0, 69 + written);
  }
}

/** Hex of `bytes` random bytes, each digit's case drawn at random (mixed-case signatures). */
function mixedHex(rng: Rng, bytes: number): string {
  let s = '0x';
  for (let i = 0; i < bytes * 2; i++) {
    const d = rng.int(0, 15).toString(16);
    s += rng.int(0, 1) === 0 ? d : d.toUpperCase();
  }
  return s;
}

/** Orders' JSON message forms with edge values (zero, 2^53 - 1, long ids, the optional members). */
function orderMessages(rng: Rng, n: number): string[] {
  const edges = [0, 1, 9, 10, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2_000_000_000, 1_795_000_000_000];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const pick = (): number => (rng.int(0, 2) === 0 ? edges[rng.int(0, edges.length - 1)] : rng.int(0, 1_000_000_000));
    out.push(orderJsonMessage({
      market_id: ['ETH-USDC', 'X', 'A'.repeat(64), 'é-€'][rng.int(0, 3)], side: rng.int(0, 1) === 0 ? 'bid' : 'ask',
      price: pick(), quantity: pick(), nonce: pick(), order_type: rng.int(0, 1) === 0 ? 'limit' : 'market',
      time_in_force: ['gtc', 'ioc', 'fok', 'post_only'][rng.int(0, 3)],
      stp: rng.int(0, 3) === 0 ? 'cancel_taker' : null, expires_after_ms: rng.int(0, 3) === 0 ? pick() : null,
    }));
  }
  return out;
}

/** The encoder's outcome: its bytes, or the message it threw. */
function outcome(encode: () => Uint8Array): string {
  try {
    return Buffer.from(encode()).toString('hex');
  } catch (e) {
    return `threw: ${(e as Error).message}`;
  }
}

describe('UserConsentEncoder against main\'s encoder (h19c)', () => {
  it('writes the same bytes for generated orders, mixed-case signatures and messages at every slot boundary up to the limit', () => {
    const rng = new Rng(19);
    const enc = new UserConsentEncoder();
    const ref = new ReferenceUserConsentEncoder();
    const messages = orderMessages(rng, 400);
    // Messages whose blobs end on both sides of each slot boundary (186 = one slot's blob), the
    // longest allowed, and ones with lone surrogates (U+FFFD in both encoders).
    for (let len = 0; len <= MESSAGE_BYTES_MAX; len += len < 100 ? 37 : 1) {
      if (len > 100 && len < MESSAGE_BYTES_MAX - 2 && ![117, 118, 119, 305, 306, 307, 493, 494, 495].includes(len)) continue;
      messages.push('m'.repeat(len));
    }
    messages.push('\ud800', 'a\udfffb', '€'.repeat(170), 'é'.repeat(256));
    let count = 0;
    for (const message of messages) {
      for (const sig of [mixedHex(rng, 65), hex(rng, 65).toUpperCase().replace('0X', '0x'), '0x' + '00'.repeat(65), '0x' + 'ff'.repeat(65)]) {
        expect(outcome(() => enc.encode(sig, message))).toBe(outcome(() => ref.encode(sig, message)));
        count++;
      }
    }
    expect(count).toBeGreaterThan(1_600);
  });

  it('refuses exactly the signatures main refused (non-hex, non-ASCII whose low byte is a digit, short), accepts what it accepted', () => {
    const enc = new UserConsentEncoder();
    const ref = new ReferenceUserConsentEncoder();
    const good = '0x' + 'aB'.repeat(65);
    const at = (k: number, c: string): string => good.slice(0, k) + c + good.slice(k + 1);
    const cases = [
      good, good.slice(0, 131), good.slice(0, 2), '', good + 'zz', good + '€', // longer: digits past 130 unread
      'zz' + good.slice(2), '€x' + good.slice(2), // the prefix is the caller's check (SIGNATURE), not read
    ];
    for (const k of [2, 3, 64, 130, 131]) {
      for (const c of ['g', 'G', ' ', '\u0130', '\u0161', '\u0141', 'é', '\u00ff', '\ud800', '😀']) cases.push(at(k, c));
    }
    const refused = cases.filter((sig) => outcome(() => ref.encode(sig, 'm')).startsWith('threw'));
    expect(refused.length).toBeGreaterThan(40);
    for (const sig of cases) expect(outcome(() => enc.encode(sig, 'm'))).toBe(outcome(() => ref.encode(sig, 'm')));
  });

  it('fills consent slots with the same bytes through the word copy as through the byte path', () => {
    const rng = new Rng(23);
    const enc = new UserConsentEncoder();
    const slot = 192;
    // Non-contiguous slots (a ring wraps), the destination dirty beforehand.
    const order = [5, 2, 7, 0, 3, 6, 1];
    const offset = (j: number): number => order[j] * slot;
    for (const message of [...orderMessages(rng, 200), 'm'.repeat(MESSAGE_BYTES_MAX), '', 'é'.repeat(200), 'x'.repeat(117), 'x'.repeat(118)]) {
      const sig = mixedHex(rng, 65);
      const fast = new Uint8Array(8 * slot).fill(0xee);
      const slow = new Uint8Array(8 * slot).fill(0xee);
      const blob = enc.encode(sig, message);
      const n = writeConsentSlots(fast, new Int32Array(fast.buffer), offset, blob);
      expect(writeConsentSlots(slow, new Int32Array(slow.buffer), offset, blob.slice())).toBe(n);
      expect(Buffer.from(fast).equals(Buffer.from(slow))).toBe(true);
      // Back out of contiguous slots: the blob main's encoder wrote.
      const contiguous = new Uint8Array(n * slot);
      for (let j = 0; j < n; j++) contiguous.set(fast.subarray(offset(j), offset(j) + slot), j * slot);
      const back = readConsentBlob(contiguous, new Int32Array(contiguous.buffer), 0, slot, contiguous.length);
      expect(back.slots).toBe(n);
      expect(Buffer.from(back.blob).equals(Buffer.from(new ReferenceUserConsentEncoder().encode(sig, message)))).toBe(true);
    }
  });
});
