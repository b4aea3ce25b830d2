// readAscii (the request and event readers' client ids and agent names) against the string built
// one character at a time, at every length up to past the 36-byte client id.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readAscii, writeAscii } from '../../src/ring/records.js';

function oneByOne(u8: Uint8Array, at: number, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(u8[at + i]);
  return s;
}

describe('readAscii', () => {
  it('reads every length from 0 to 80 at any offset, bytes 0-255', () => {
    fc.assert(fc.property(fc.uint8Array({ minLength: 100, maxLength: 100 }), fc.integer({ min: 0, max: 19 }), (bytes, at) => {
      for (let n = 0; n <= 80; n++) expect(readAscii(bytes, at, n)).toBe(oneByOne(bytes, at, n));
    }), { numRuns: 200 });
  });

  it('gives back what writeAscii wrote', () => {
    const u8 = new Uint8Array(64);
    for (const id of ['', 'a', 'c1234567', 'c12345678', 'order-0001_x', '0123456789abcdef0123456789abcdef-_XY']) {
      u8.fill(0);
      writeAscii(u8, 3, id);
      expect(readAscii(u8, 3, id.length)).toBe(id);
    }
  });
});
