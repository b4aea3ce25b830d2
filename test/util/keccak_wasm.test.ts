import { describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { KECCAK_INPUT, keccak256Into, keccak256OfInput, keccak256Wasm, keccak256WasmOne } from '../../src/util/keccak_wasm.js';
import { eip191HashBytes, eip191HashRangeInto } from '../../src/auth/eip191.js';
import * as browser from '../../src/util/keccak_wasm.browser.js';
import { mulberry32 } from '../../src/util/prng.js';

describe('keccak256 through hash-wasm', () => {
  it('agrees with @noble/hashes on every length across the 136-byte rate boundaries', () => {
    const rnd = mulberry32(11);
    for (let n = 0; n <= 420; n++) {
      const data = new Uint8Array(n);
      for (let i = 0; i < n; i++) data[i] = Math.floor(rnd() * 256);
      const want = keccak_256(data);
      expect(keccak256WasmOne(data)).toEqual(want);
      const cut = Math.floor(n / 3);
      expect(keccak256Wasm(data.subarray(0, cut), data.subarray(cut, 2 * cut), data.subarray(2 * cut))).toEqual(want);
    }
  });

  it('agrees with @noble/hashes past the 16 KiB input buffer (chunked), from offsets and in parts', () => {
    const rnd = mulberry32(12);
    for (const n of [16_383, 16_384, 16_385, 32_768 + 7, 50_000]) {
      const data = new Uint8Array(n + 9);
      for (let i = 0; i < data.length; i++) data[i] = Math.floor(rnd() * 256);
      const want = keccak_256(data.subarray(5, 5 + n));
      expect(keccak256WasmOne(data.subarray(5, 5 + n))).toEqual(want);
      const out = new Uint8Array(40);
      keccak256Into(data, 5, n, out, 3);
      expect(out.subarray(3, 35)).toEqual(want);
      expect(keccak256Wasm(data.subarray(5, 5 + 100), data.subarray(105, 5 + n))).toEqual(want);
    }
  });

  it('hashes a preimage written into its input buffer in place', () => {
    const data = new Uint8Array(129).map((_, i) => (i * 31) & 255);
    KECCAK_INPUT.set(data);
    const out = new Uint8Array(32);
    keccak256OfInput(data.length, out, 0);
    expect(out).toEqual(keccak_256(data));
  });

  it('the web bundle\'s variant (hash-wasm\'s public hasher) gives the same hashes through the same exports', () => {
    const rnd = mulberry32(13);
    for (const n of [0, 1, 64, 129, 136, 137, 1000]) {
      const data = new Uint8Array(n + 4);
      for (let i = 0; i < data.length; i++) data[i] = Math.floor(rnd() * 256);
      const want = keccak_256(data.subarray(2, 2 + n));
      expect(browser.keccak256WasmOne(data.subarray(2, 2 + n))).toEqual(want);
      expect(browser.keccak256Wasm(data.subarray(2, 2 + (n >> 1)), data.subarray(2 + (n >> 1), 2 + n))).toEqual(want);
      const out = new Uint8Array(33);
      browser.keccak256Into(data, 2, n, out, 1);
      expect(out.subarray(1)).toEqual(want);
      browser.KECCAK_INPUT.set(data.subarray(2, 2 + n));
      browser.keccak256OfInput(n, out, 0);
      expect(out.subarray(0, 32)).toEqual(want);
    }
  });

  it('returns a fresh array each call (a caller may keep it)', () => {
    const a = keccak256WasmOne(new Uint8Array([1]));
    const b = keccak256WasmOne(new Uint8Array([2]));
    expect(a).not.toEqual(b);
    expect(a).toEqual(keccak_256(new Uint8Array([1])));
  });

  it('EIP-191 hashes long messages (length text past the precomputed table) like the definition', () => {
    for (const n of [0, 9, 10, 999, 1023, 1024, 5000]) {
      const data = new Uint8Array(n).fill(0x61);
      const prefix = new TextEncoder().encode(`\x19Ethereum Signed Message:\n${n}`);
      const joined = new Uint8Array(prefix.length + n);
      joined.set(prefix);
      joined.set(data, prefix.length);
      expect(eip191HashBytes(data)).toEqual(keccak_256(joined));
    }
  });

  it('EIP-191 of a byte range written in place equals the hash of the copied range, up to and past the input buffer (16 KiB: 26 prefix + 5 length + 16,353 bytes fill it)', () => {
    const bytes = new Uint8Array(40_000);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 7) & 255;
    const out = new Uint8Array(32);
    for (const [start, n] of [[0, 0], [3, 1], [100, 240], [7, 1023], [1, 1024], [5, 16_353], [5, 16_354], [11, 20_000]]) {
      out.fill(0);
      eip191HashRangeInto(bytes, start, start + n, out);
      expect(out, `start ${start}, ${n} bytes`).toEqual(eip191HashBytes(bytes.slice(start, start + n)));
    }
  });
});
