// The two CRC-32 paths of the book checksum: zlib's on Node (crc32.ts) and the table loop browser
// bundles get (crc32.browser.ts) must give the same number for every text.
import { describe, expect, it } from 'vitest';
import { crc32Text as nodeCrc } from '../../src/util/crc32.js';
import { crc32Text as browserCrc } from '../../src/util/crc32.browser.js';
import { mulberry32 } from '../../src/util/prng.js';

describe('crc32Text', () => {
  it('gives the known IEEE values', () => {
    // The CRC-32 check value ("123456789" -> 0xCBF43926) and the empty book's text.
    for (const f of [nodeCrc, browserCrc]) {
      expect(f('123456789')).toBe(0xcbf43926);
      expect(f('')).toBe(0);
    }
    expect(browserCrc('|')).toBe(nodeCrc('|'));
  });

  it('the browser table agrees with zlib on random texts, non-ASCII included', () => {
    const rnd = mulberry32(16);
    const alphabet = '0123456789:,|abcé€😀';
    for (let n = 0; n < 600; n++) {
      let s = '';
      const chars = [...alphabet];
      for (let i = 0; i < n; i++) s += chars[Math.floor(rnd() * chars.length)];
      expect(browserCrc(s)).toBe(nodeCrc(s));
    }
  });
});
