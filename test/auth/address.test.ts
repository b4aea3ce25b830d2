// addressFromUncompressed (src/auth/key_address.ts): the signer's address from a recovered public key,
// written into the caller's buffer without allocating. Its answers are byte-identical to the
// function it replaced (a fresh keccak digest of the key's subarray, its last 20 bytes set into
// the output) and to an independent keccak (@noble/hashes) on the viem vectors' keys and 2,000
// more; and a call never disturbs an earlier call's output, the bytes around its own, or its input.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { addressFromUncompressed } from '../../src/auth/key_address.js';
import { parsePrivateKey } from '../../src/auth/sign.js';
import { keccak256WasmOne } from '../../src/util/keccak_wasm.js';
import { eip191Cases, hex } from './vectors.js';

/** The function as it was before (allocating): kept here as the reference its replacement must match. */
function oldAddressFromUncompressed(pub65: Uint8Array, out20: Uint8Array): void {
  const h = keccak256WasmOne(pub65.subarray(1, 65));
  out20.set(h.subarray(12, 32));
}

/** Deterministic keys: keccak of a counter, reduced into [1, n) by the validity check (rare misses skipped). */
function keys(count: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; out.length < count && i < 2 * count; i++) {
    const k = keccak_256(new TextEncoder().encode(`address test key ${i}`));
    if (secp256k1.utils.isValidSecretKey(k)) out.push(k);
  }
  return out;
}

describe('addressFromUncompressed', () => {
  it('gives the viem vectors\' addresses for their keys', () => {
    const seen = new Set<string>();
    for (const c of eip191Cases) {
      if (seen.has(c.private_key)) continue;
      seen.add(c.private_key);
      const out = new Uint8Array(20);
      addressFromUncompressed(secp256k1.getPublicKey(parsePrivateKey(c.private_key), false), out);
      expect(hex(out), c.what).toBe(c.address);
    }
    expect(seen.size).toBeGreaterThan(1);
  });

  it('is byte-identical to the old function and to @noble/hashes keccak on 2,000 keys; each result stays as written', () => {
    const pubs = keys(2000).map((k) => secp256k1.getPublicKey(k, false));
    expect(pubs).toHaveLength(2000);
    // All results into one buffer, each at its own offset between guard bytes: a later call
    // writing anywhere but its own 20 bytes, or a result aliasing a shared scratch, shows here.
    const STRIDE = 24;
    const all = new Uint8Array(pubs.length * STRIDE).fill(0xa5);
    const inputs = pubs.map((p) => p.slice());
    for (let i = 0; i < pubs.length; i++) addressFromUncompressed(pubs[i], all, i * STRIDE + 2);
    const old = new Uint8Array(20);
    for (let i = 0; i < pubs.length; i++) {
      const got = all.subarray(i * STRIDE + 2, i * STRIDE + 22);
      oldAddressFromUncompressed(pubs[i], old);
      expect(Buffer.from(got).equals(Buffer.from(old)), `key ${i}`).toBe(true);
      expect(Buffer.from(got).equals(Buffer.from(keccak_256(pubs[i].subarray(1)).subarray(12))), `key ${i}`).toBe(true);
      for (const g of [0, 1, 22, 23]) expect(all[i * STRIDE + g], `guard byte ${g} of key ${i}`).toBe(0xa5);
      expect(Buffer.from(pubs[i]).equals(Buffer.from(inputs[i])), `input ${i} unchanged`).toBe(true);
    }
    // Distinct keys, distinct addresses: no two results share bytes by aliasing one buffer.
    const texts = new Set(pubs.map((_, i) => hex(all.subarray(i * STRIDE + 2, i * STRIDE + 22))));
    expect(texts.size).toBe(pubs.length);
  });

  it('may write the address over its own input key', () => {
    const pub = secp256k1.getPublicKey(keys(1)[0], false);
    const want = new Uint8Array(20);
    oldAddressFromUncompressed(pub, want);
    const same = pub.slice();
    addressFromUncompressed(same, same, 1); // over x's first 20 bytes, which it reads first
    expect(hex(same.subarray(1, 21))).toBe(hex(want));
    expect(hex(same.subarray(21))).toBe(hex(pub.subarray(21)));
  });
});
