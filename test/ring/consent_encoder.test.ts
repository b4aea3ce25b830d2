// The front's in-place consent encoder must write exactly encodeConsent's blob (the journal, the
// DA batches and `ringbook verify` decode it), for any message, and refuse what it refuses.
import { describe, expect, it } from 'vitest';
import {
  decodeConsent, encodeConsent, MESSAGE_BYTES_MAX, signatureBytes, UserConsentEncoder,
} from '../../src/ring/consent.js';
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
