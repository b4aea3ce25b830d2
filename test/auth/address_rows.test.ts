// The front's address rows (auth/address_rows.ts; branches h21f and h21v): a remembered address must be
// judged, lowercased and decoded exactly as the regex, toLowerCase and the hex decode did, the
// refusals must stay those of isAddress, and a row taken by another address must never answer for the old one.
import { describe, expect, it } from 'vitest';
import { parseHexStringInto } from '../../src/auth/hex.js';
import { ADDRESS_ROWS, checkedAddress, rememberedAddressInto } from '../../src/auth/address_rows.js';
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

  it('gives the decoded bytes of a checked address by its lowercase text, and knows the text as sent', () => {
    let seed = 12345;
    const next = (): number => (seed = (seed * 1103515245 + 12345) >>> 0);
    for (let k = 0; k < 500; k++) {
      let t = '0x';
      for (let i = 0; i < 40; i++) t += HEX[next() % HEX.length];
      const lower = checkedAddress(t) as string;
      expect(lower).toBe(t.toLowerCase());
      expect(bytesOf(lower)).toEqual(decoded(lower));
      // Remembered as sent too: checked again, the same lowercase text (from its row).
      expect(checkedAddress(t)).toBe(lower);
      // The ring write asks with the lowercase text only; any other spelling is decoded there.
      if (t !== lower) expect(bytesOf(t)).toBeNull();
    }
    // Never checked, or refused: not remembered (the ring write decodes it itself).
    expect(bytesOf('0x' + '7'.repeat(40))).toBeNull();
    expect(checkedAddress('0x' + 'z'.repeat(40))).toBeNull();
    expect(bytesOf('0x' + 'z'.repeat(40))).toBeNull();
  });

  it('a row taken by another address is a miss for the old one, never its bytes', () => {
    // More distinct addresses than rows, sequential ones (the load bench's) and random ones: each
    // just checked is remembered with its own bytes; every earlier one is remembered with its own
    // bytes or not at all.
    let seed = 777;
    const next = (): number => (seed = (seed * 1103515245 + 12345) >>> 0);
    const all: string[] = [];
    for (let n = 0; n < ADDRESS_ROWS + 2_000; n++) {
      let t: string;
      if (n % 2 === 0) t = '0x' + n.toString(16).padStart(40, '0');
      else {
        t = '0x';
        for (let i = 0; i < 40; i++) t += HEX[next() % HEX.length];
      }
      expect(checkedAddress(t)).toBe(t.toLowerCase());
      expect(bytesOf(t.toLowerCase())).toEqual(decoded(t.toLowerCase()));
      all.push(t);
    }
    let kept = 0;
    for (const t of all) {
      const lower = t.toLowerCase();
      const b = bytesOf(lower);
      if (b !== null) {
        kept++;
        expect(b).toEqual(decoded(lower));
        expect(checkedAddress(lower)).toBe(lower);
      }
    }
    // Direct-mapped: most rows hold someone (sequential addresses spread over the rows too).
    expect(kept).toBeGreaterThan(ADDRESS_ROWS / 2);
    // An address whose row was taken is checked again as before, and remembered again.
    const evicted = all.find((t) => bytesOf(t.toLowerCase()) === null);
    expect(evicted).toBeDefined();
    expect(checkedAddress(evicted as string)).toBe((evicted as string).toLowerCase());
    expect(bytesOf((evicted as string).toLowerCase())).toEqual(decoded((evicted as string).toLowerCase()));
  });
});
