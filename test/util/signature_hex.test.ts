import { describe, expect, it } from 'vitest';
import { isSignatureHex, SIGNATURE_HEX_PATTERN } from '../../src/util/signature_hex.js';
import { checkSignatureHex } from '../../src/ring/consent.js';

const DIGITS = 'a1B2c3D4e5F60789'.repeat(9).slice(0, 130);
const GOOD = `0x${DIGITS}`;

describe('isSignatureHex: the one spelling of a signature outside the signed parsers', () => {
  it('takes 0x and 130 hex digits of either case', () => {
    expect(isSignatureHex(GOOD)).toBe(true);
    expect(isSignatureHex(GOOD.toUpperCase().replace('0X', '0x'))).toBe(true);
  });

  it('refuses other types, lengths, prefixes and non-hex characters', () => {
    for (const v of [undefined, null, 0, 1n, {}, [GOOD], Buffer.from(GOOD)]) expect(isSignatureHex(v)).toBe(false);
    for (const v of ['', '0x', GOOD.slice(0, -1), `${GOOD}0`, `0X${DIGITS}`, `00${DIGITS}`, ` ${GOOD}`, `${GOOD}\n`]) {
      expect(isSignatureHex(v)).toBe(false);
    }
    for (const bad of ['g', 'G', ' ', '\u0130', '\uff10', '\ud800', '٠']) {
      for (const at of [2, 67, 131]) expect(isSignatureHex(GOOD.slice(0, at) + bad + GOOD.slice(at + 1))).toBe(false);
    }
  });

  it('accepts exactly the texts the signed parsers accept (ring/consent.ts checkSignatureHex)', () => {
    const cases = [GOOD, GOOD.slice(0, -1), `${GOOD.slice(0, 70)}z${GOOD.slice(71)}`, `${GOOD.slice(0, 9)}\u0130${GOOD.slice(10)}`];
    for (const c of cases) expect(isSignatureHex(c)).toBe(checkSignatureHex(c));
    expect(SIGNATURE_HEX_PATTERN.test(GOOD)).toBe(true);
  });
});
