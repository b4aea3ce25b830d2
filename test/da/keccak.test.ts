// The state root's keccak256 against @noble/hashes' keccak_256: every length around the rate
// boundaries, random contents, offsets, and in-place output (as the state trie uses it).
import { describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { KECCAK_INPUT, keccak256, keccak256Into, keccak256OfInput, keccak256OfWords } from '../../src/da/keccak.js';
import { KECCAK_DIGEST, keccak256OfInputToDigest, keccak256OfWordPair, keccak256TwiceOfInput } from '../../src/util/keccak_wasm.js';

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

  // keccak_wasm.ts copies the digest out by words into an array seen twice in a row (h19c): every
  // output shape against noble, and nothing outside the 32 bytes written, the outputs repeated
  // and alternated in a seeded order so each hash finds the cached view of another array or none.
  it('writes the digest into repeated, alternated, unaligned and shared outputs exactly where set() did', () => {
    let seed = 4242;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    const backing = new Uint8Array(new SharedArrayBuffer(256));
    const outs: Uint8Array[] = [
      new Uint8Array(32), new Uint8Array(33), new Uint8Array(35), new Uint8Array(200),
      new Uint8Array(100).subarray(1), new Uint8Array(100).subarray(4, 70), backing, backing.subarray(2, 90),
      Buffer.alloc(64),
    ];
    for (let round = 0; round < 3000; round++) {
      const out = outs[next() % outs.length];
      const offset = next() % (out.length - 31);
      const n = next() % 300;
      const data = new Uint8Array(n).map(() => next() >>> 24);
      const before = Uint8Array.from(out);
      const entry = next() % 3;
      if (entry === 0) keccak256Into(data, 0, n, out, offset);
      else if (entry === 1) {
        KECCAK_INPUT.set(data);
        keccak256OfInput(n, out, offset);
      } else {
        const words = new Int32Array(Math.ceil((n + 4) / 4));
        new Uint8Array(words.buffer).set(data);
        keccak256OfWords(words, 0, n, out, offset);
      }
      const want = keccak_256(data);
      expect(hex(out.subarray(offset, offset + 32)), `round ${round}`).toBe(hex(want));
      expect(hex(out.subarray(0, offset)) + hex(out.subarray(offset + 32))).toBe(hex(before.subarray(0, offset)) + hex(before.subarray(offset + 32)));
    }
    // Out of range: a RangeError as set() threw, for a cached output as for a fresh one.
    const short = new Uint8Array(40);
    keccak256Into(new Uint8Array(3), 0, 3, short, 8);
    keccak256Into(new Uint8Array(3), 0, 3, short, 8);
    expect(() => keccak256Into(new Uint8Array(3), 0, 3, short, 12)).toThrow(RangeError);
    expect(() => keccak256Into(new Uint8Array(3), 0, 3, new Uint8Array(31), 0)).toThrow(RangeError);
  });

  // Every offset of arrays whose lengths are and are not multiples of 4, each hashed into twice in a
  // row (the second finds the cached words view: word moves when aligned, set() otherwise), the
  // bytes around the digest random and kept, the offsets near the end too.
  it('writes the digest at every offset of an array hashed into twice in a row, bytes around it kept', () => {
    let seed = 99;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (const length of [32, 33, 35, 36, 40, 41, 64, 161]) {
      const out = new Uint8Array(length);
      for (let offset = 0; offset + 32 <= length; offset++) {
        for (let pass = 0; pass < 2; pass++) {
          for (let i = 0; i < length; i++) out[i] = next() >>> 24;
          const before = Uint8Array.from(out);
          const data = new Uint8Array(1 + (next() % 200)).map(() => next() >>> 24);
          if (pass === 0) keccak256Into(data, 0, data.length, out, offset);
          else {
            KECCAK_INPUT.set(data);
            keccak256OfInput(data.length, out, offset);
          }
          const want = Uint8Array.from(before);
          want.set(keccak_256(data), offset);
          expect(hex(out), `length ${length}, offset ${offset}, pass ${pass}`).toBe(hex(want));
        }
      }
    }
  });

  // h20d: the fills tree's double hash (the second reads the first digest where the module left it)
  // and its word pairs (either node first, the output over one of the inputs), against noble.
  it('double-hashes the input buffer and hashes word pairs as noble does', () => {
    let seed = 7;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (const n of [0, 1, 64, 135, 136, 512, 600]) {
      const data = new Uint8Array(n).map(() => next() >>> 24);
      KECCAK_INPUT.set(data);
      const out = new Uint8Array(40);
      keccak256TwiceOfInput(n, out, 5);
      expect(hex(out.subarray(5, 37)), `twice, ${n} bytes`).toBe(hex(keccak_256(keccak_256(data))));
    }
    const nodes = new Int32Array(8 * 5).map(() => next() | 0);
    const bytes = new Uint8Array(nodes.buffer);
    const want = keccak_256(Uint8Array.from([...bytes.subarray(96, 128), ...bytes.subarray(32, 64)]));
    keccak256OfWordPair(nodes, 24, 8, nodes, 8);
    expect(hex(bytes.subarray(32, 64))).toBe(hex(want));
  });

  it('leaves the digest in KECCAK_DIGEST for keccak256OfInputToDigest', () => {
    for (const n of [0, 1, 64, 135, 136, 137, 300, 16 * 1024]) {
      const data = new Uint8Array(n).map((_, i) => (i * 31 + n) & 255);
      KECCAK_INPUT.set(data);
      keccak256OfInputToDigest(n);
      expect(hex(KECCAK_DIGEST), `length ${n}`).toBe(hex(keccak_256(data)));
    }
  });
});
