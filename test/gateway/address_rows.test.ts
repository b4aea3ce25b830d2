// The front's address rows (gateway/address_rows.ts, branch h21f): a remembered address must be
// judged, lowercased and decoded exactly as the regex, toLowerCase and the hex decode did, the
// refusals must stay those of isAddress, and the table must start over at its bound.
import { describe, expect, it } from 'vitest';
import { parseHexStringInto } from '../../src/auth/hex.js';
import { ADDRESS_ROWS, addressRowsUsed, checkedAddress, rememberedAddressInto } from '../../src/gateway/address_rows.js';
import { addressOf } from '../../src/gateway/signed_body.js';
import { isAddress } from '../../src/util/address.js';

function bytesOf(text: string): Uint8Array | null {
  const out = new Uint8Array(20);
  const words = new Int32Array(out.buffer);
  return rememberedAddressInto(text, words) ? out : null;
}

function decoded(lower: string): Uint8Array {
  const out = new Uint8Array(20);
  if (!parseHexStringInto(lower, 2, 20, out, 0)) throw new Error(`not hex: ${lower}`);
  return out;
}

const HEX = '0123456789abcdefABCDEF';

describe('address rows', () => {
  it('accepts and refuses exactly what isAddress does, lowercased, first time and remembered', () => {
    const texts: string[] = [
      '0x00000000000000000000000000000000A11CE000', '0x' + 'f'.repeat(40), '0x' + 'F'.repeat(40),
      '0x' + 'a'.repeat(39), '0x' + 'a'.repeat(41), '0X' + 'a'.repeat(40), '00' + 'a'.repeat(40), '',
      '0x' + 'a'.repeat(39) + 'g', '0x' + 'a'.repeat(39) + '\u0130', '0x' + 'a'.repeat(39) + '\u0661',
      '0x' + 'a'.repeat(20) + ' ' + 'a'.repeat(19), ' 0x' + 'a'.repeat(40), '0x' + 'a'.repeat(40) + '\n',
    ];
    // Near misses at every position: each char of a valid address replaced by a non-hex one.
    const base = '0x' + 'c0ffee'.repeat(7).slice(0, 40);
    for (let i = 0; i < base.length; i++) for (const c of ['g', 'x', 'G', '.', '\u0000', '\u0100', '\uff10']) texts.push(base.slice(0, i) + c + base.slice(i + 1));
    // Mixed case at every position.
    for (let i = 2; i < base.length; i++) texts.push(base.slice(0, i) + base[i].toUpperCase() + base.slice(i + 1));
    for (let round = 0; round < 2; round++) {
      for (const t of texts) {
        const want = isAddress(t) ? t.toLowerCase() : null;
        expect(checkedAddress(t)).toBe(want);
        const r = addressOf(t, 'user', 'INVALID_ORDER');
        expect(r).toEqual(want ?? { code: 'INVALID_REQUEST', message: 'user must be a 0x-prefixed 20-byte hex address' });
      }
    }
    expect(addressOf(undefined, 'user', 'INVALID_ORDER')).toEqual({ code: 'INVALID_ORDER', message: 'user is required' });
    expect(addressOf(5, 'agent', 'INVALID_REQUEST')).toEqual({ code: 'INVALID_REQUEST', message: 'agent must be a 0x-prefixed 20-byte hex address' });
  });

  it('gives the decoded bytes of a checked address, under the text as sent and its lowercase form', () => {
    let seed = 12345;
    const next = (): number => (seed = (seed * 1103515245 + 12345) >>> 0);
    for (let k = 0; k < 500; k++) {
      let t = '0x';
      for (let i = 0; i < 40; i++) t += HEX[next() % HEX.length];
      const lower = checkedAddress(t) as string;
      expect(lower).toBe(t.toLowerCase());
      expect(bytesOf(lower)).toEqual(decoded(lower));
      expect(bytesOf(t)).toEqual(decoded(lower));
    }
    // Never checked, or refused: not remembered (the ring write decodes it itself).
    expect(bytesOf('0x' + '7'.repeat(40))).toBeNull();
    expect(checkedAddress('0x' + 'z'.repeat(40))).toBeNull();
    expect(bytesOf('0x' + 'z'.repeat(40))).toBeNull();
  });

  it('starts over at its bound, and a row taken later holds its own bytes', () => {
    const first = '0x' + '1'.repeat(40);
    checkedAddress(first);
    expect(bytesOf(first)).toEqual(decoded(first));
    let n = 0;
    // Fill past the bound with distinct addresses: the table starts over once.
    while (n < ADDRESS_ROWS + 10) {
      const t = '0x' + n.toString(16).padStart(40, '0');
      expect(checkedAddress(t)).toBe(t);
      n++;
    }
    expect(addressRowsUsed()).toBeLessThanOrEqual(ADDRESS_ROWS);
    expect(bytesOf(first)).toBeNull(); // dropped with the rest
    for (let j = ADDRESS_ROWS; j < ADDRESS_ROWS + 10; j++) {
      const t = '0x' + j.toString(16).padStart(40, '0');
      expect(bytesOf(t)).toEqual(decoded(t));
    }
    // Checked again: remembered again, with its bytes.
    expect(checkedAddress(first)).toBe(first);
    expect(bytesOf(first)).toEqual(decoded(first));
  });
});
