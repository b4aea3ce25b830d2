// The state root's keccak256 against @noble/hashes' keccak_256: every length around the rate
// boundaries, random contents, offsets, and in-place output (as the state trie uses it).
import { describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { KECCAK_INPUT, keccak256, keccak256Into, keccak256OfInput, keccak256OfWords } from '../../src/da/keccak.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

describe('keccak256', () => {
  it('matches noble for lengths 0..700 and known vectors', () => {
    expect(hex(keccak256(new Uint8Array(0)))).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(hex(keccak256(Buffer.from('abc')))).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
    let seed = 12345;
    for (let n = 0; n <= 700; n++) {
      const d = new Uint8Array(n);
      for (let i = 0; i < n; i++) d[i] = (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
      expect(hex(keccak256(d)), `length ${n}`).toBe(hex(keccak_256(d)));
    }
  });

  it('hashes a sub-range into an offset, also in place', () => {
    const buf = new Uint8Array(200).map((_, i) => (i * 7) & 255);
    const out = new Uint8Array(40);
    keccak256Into(buf, 10, 64, out, 5);
    expect(hex(out.subarray(5, 37))).toBe(hex(keccak_256(buf.subarray(10, 74))));
    const expected = keccak_256(buf.subarray(64, 128));
    keccak256Into(buf, 64, 64, buf, 0);
    expect(hex(buf.subarray(0, 32))).toBe(hex(expected));
  });

  // keccak256OfInput, keccak256OfWords and keccak256Into write the bytes after the last whole
  // block straight into hash-wasm's context (src/util/keccak_wasm.ts): in a shuffled order of
  // lengths, so each hash starts from whatever the one before left in the context (a longer
  // message, a finished state), it fails for a context not reset, a stale `rest` or a message
  // byte not zeroed.
  it('agrees with noble through every entry point, lengths in a shuffled order', () => {
    let seed = 777;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const lengths = Array.from({ length: 701 }, (_, i) => i);
    lengths.push(1000, 4096, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 40_000);
    for (let i = lengths.length - 1; i > 0; i--) {
      const j = next() % (i + 1);
      [lengths[i], lengths[j]] = [lengths[j], lengths[i]];
    }
    const out = new Uint8Array(32);
    for (const n of lengths) {
      const buf = new Uint8Array(n + 8);
      for (let i = 0; i < buf.length; i++) buf[i] = next() >>> 24;
      const want = hex(keccak_256(buf.subarray(4, 4 + n)));
      keccak256Into(buf, 4, n, out, 0);
      expect(hex(out), `keccak256Into, length ${n}`).toBe(want);
      if (n <= KECCAK_INPUT.length) {
        KECCAK_INPUT.set(buf.subarray(4, 4 + n));
        keccak256OfInput(n, out, 0);
        expect(hex(out), `keccak256OfInput, length ${n}`).toBe(want);
        // Words from word 1 on (byte 4): the word loop reads up to 3 bytes past the length.
        keccak256OfWords(new Int32Array(buf.buffer, 0, buf.length >> 2), 1, n, out, 0);
        expect(hex(out), `keccak256OfWords, length ${n}`).toBe(want);
      }
    }
  });
});
