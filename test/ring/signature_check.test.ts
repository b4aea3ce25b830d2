// checkSignatureHex (ring/consent.ts), the signed parsers' signature check since branch h20c: it
// must accept exactly the texts /^0x[0-9a-fA-F]{130}$/ accepted (signed_body.ts's check before),
// and the bytes it keeps for UserConsentEncoder must be the digits' bytes, whichever signature
// last took the cache row, so that the encoder's blob is encodeConsent's.
import { describe, expect, it } from 'vitest';
import { checkSignatureHex, encodeConsent, signatureBytes, UserConsentEncoder } from '../../src/ring/consent.js';
import { signatureOf } from '../../src/gateway/signed_body.js';
import { Rng } from '../../src/util/prng.js';

const PATTERN = /^0x[0-9a-fA-F]{130}$/;
const HEX = '0123456789abcdefABCDEF';

function randomSignature(rng: Rng): string {
  let s = '0x';
  for (let i = 0; i < 130; i++) s += HEX[rng.int(0, HEX.length - 1)];
  return s;
}

/** Every char that is not a hex digit but that a sloppy decoder might read as one. */
const NOT_HEX = [
  'g', 'G', 'x', 'X', ' ', '\n', '\0', '/', ':', '@', '`', '[', '{', '-', '+', '.',
  '\u00e0', '\u00ff', '\u0080', // latin-1 (one-byte strings)
  '\u0130', '\u0161', '\u0141', '\u0a30', '\u3030', '\uff10', '\uff41', // low byte a digit or a letter a-f
  '\ud83d', '\ude00', '😀',
];

describe('checkSignatureHex', () => {
  it('accepts what the pattern accepted: mixed case, every digit at every position', () => {
    const rng = new Rng(11);
    for (let i = 0; i < 300; i++) {
      const s = randomSignature(rng);
      expect(checkSignatureHex(s)).toBe(true);
      expect(signatureOf(s)).toBe(s);
    }
    for (const c of HEX) {
      for (let at = 2; at < 132; at++) {
        const s = `0x${'a'.repeat(at - 2)}${c}${'B'.repeat(131 - at)}`;
        expect(checkSignatureHex(s), `${c} at ${at}`).toBe(true);
      }
    }
  });

  it('refuses a non-hex char at every position, as the pattern did', () => {
    const rng = new Rng(12);
    const base = randomSignature(rng);
    for (const bad of NOT_HEX) {
      for (let at = 0; at < 132; at++) {
        const s = base.slice(0, at) + bad + base.slice(at + 1);
        const want = PATTERN.test(s);
        expect(checkSignatureHex(s), `${JSON.stringify(bad)} at ${at}`).toBe(want);
        expect(want).toBe(s === base); // 'x' at 1 is the prefix itself
      }
    }
  });

  it('refuses wrong lengths and prefixes, as the pattern did', () => {
    const rng = new Rng(13);
    const base = randomSignature(rng);
    const cases = [
      '', '0x', base.slice(0, 131), base.slice(0, 130), `${base}0`, `${base}00`, `${base}\n`, base.slice(2), `00${base.slice(2)}`,
      `0X${base.slice(2)}`, `x0${base.slice(2)}`, ` ${base.slice(1)}`, `0x${base.slice(2, 131)}\u0130`, `0x${'0'.repeat(128)}`,
      `0x${'0'.repeat(132)}`, `0x${'😀'.repeat(65)}`, `0x${'\u0130'.repeat(130)}`,
    ];
    for (const s of cases) {
      expect(checkSignatureHex(s), JSON.stringify(s)).toBe(PATTERN.test(s));
      expect(checkSignatureHex(s)).toBe(false);
    }
    for (const v of [undefined, null, 7, {}, ['0x'], Buffer.from(base)]) {
      expect(signatureOf(v)).toEqual({ code: 'INVALID_SIGNATURE', message: 'signature must be 0x followed by 65 bytes of hex' });
    }
  });

  it('agrees with the pattern on generated near-miss texts (random chars, lengths 128-134)', () => {
    const rng = new Rng(14);
    const pool = [...HEX, ...NOT_HEX.filter((c) => c.length === 1)];
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      let s = rng.int(0, 9) === 0 ? '0X' : '0x';
      const n = rng.int(126, 132);
      for (let k = 0; k < n; k++) s += rng.int(0, 399) === 0 ? pool[rng.int(0, pool.length - 1)] : HEX[rng.int(0, HEX.length - 1)];
      const want = PATTERN.test(s);
      if (want) accepted++;
      expect(checkSignatureHex(s), JSON.stringify(s)).toBe(want);
    }
    expect(accepted).toBeGreaterThan(100);
  });

  it('the encoder writes the checked signature\'s bytes, after checks that share its cache row, fail in it, or never happened', () => {
    const enc = new UserConsentEncoder();
    const blob = (sig: string, message: string): Buffer => Buffer.from(encodeConsent({ origin: 'user', request: { signature: signatureBytes(sig), message }, payload: null }));
    const a = `0x${'12ab'.repeat(32)}ff`;
    // The same leading digits (so the same row), different bytes after.
    const b = `0x${'12ab'}${'cd'.repeat(63)}`;
    const c = `0x${'12AB'}${'00'.repeat(63)}`;
    expect(checkSignatureHex(a)).toBe(true);
    expect(Buffer.from(enc.encode(a, 'm1')).equals(blob(a, 'm1'))).toBe(true);
    expect(checkSignatureHex(b)).toBe(true); // takes a's row
    expect(Buffer.from(enc.encode(a, 'm2')).equals(blob(a, 'm2'))).toBe(true); // a: decoded again
    expect(Buffer.from(enc.encode(b, 'm3')).equals(blob(b, 'm3'))).toBe(true);
    // A refused text that shares the row overwrites part of it: b's bytes are not taken from it after.
    expect(checkSignatureHex(`${b.slice(0, 100)}zz${b.slice(102)}`)).toBe(false);
    expect(Buffer.from(enc.encode(b, 'm4')).equals(blob(b, 'm4'))).toBe(true);
    // Case differs, bytes do not; a text never checked is decoded by the encoder itself.
    expect(checkSignatureHex(c)).toBe(true);
    expect(Buffer.from(enc.encode(c.toLowerCase(), 'm5')).equals(blob(c, 'm5'))).toBe(true);
    expect(Buffer.from(enc.encode(c, 'm6')).equals(blob(c, 'm6'))).toBe(true);
    // Many signatures checked, then encoded in another order: every blob exact.
    const rng = new Rng(15);
    const sigs = Array.from({ length: 6000 }, () => randomSignature(rng));
    for (const s of sigs) expect(checkSignatureHex(s)).toBe(true);
    for (let i = sigs.length - 1; i >= 0; i -= 7) {
      expect(Buffer.from(enc.encode(sigs[i], `order ${i}`)).equals(blob(sigs[i], `order ${i}`)), String(i)).toBe(true);
    }
  });
});
