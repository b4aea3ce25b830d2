import { describe, expect, it } from 'vitest';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { keccak256Wasm, keccak256WasmOne } from '../../src/util/keccak_wasm.js';
import { eip191HashBytes } from '../../src/auth/eip191.js';
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
});
