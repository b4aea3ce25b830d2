// keccak256 (the Ethereum Keccak, padding 0x01) for every hot hashing path: the state root, the
// fills tree, the input hash, the verifier (and the verify workers' EIP-191 messages may import
// it too). Backed by hash-wasm's WASM Keccak: ~1 µs per 64-byte input here against ~8 µs for
// @noble/hashes and ~3 µs for the unrolled JS permutation this module held before
// (bench/state_root.ts measures it; docs/benchmarks.md).
//
// hash-wasm builds its hasher asynchronously (it compiles the WASM module); this module awaits it
// at load (top-level await), so every importer, in any thread, finds it ready and the calls
// below are synchronous. One hasher per thread (a module instance per thread), reused for every
// call: `init().update().digest()` on it costs no WASM instantiation. Its JS glue still costs
// ~0.3 µs and three small allocations per call (a view, a chunk, the digest copy: measured
// 0.77 µs for one 64-byte block, 1.69 µs for three blocks); the trees make one call per node,
// so they keep a node's preimage contiguous. The functions are not re-entrant, and need not be:
// nothing they call hashes.
//
// Byte-for-byte @noble/hashes' keccak_256 (test/da/keccak.test.ts: every length 0..700).
import { createKeccak } from 'hash-wasm';

const hasher = await createKeccak(256);

/** keccak256 of `data[offset .. offset+length)` written to `out[out_offset .. +32)` (may overlap `data`). */
export function keccak256Into(data: Uint8Array, offset: number, length: number, out: Uint8Array, out_offset: number): void {
  hasher.init();
  hasher.update(offset === 0 && length === data.length ? data : data.subarray(offset, offset + length));
  out.set(hasher.digest('binary'), out_offset);
}

/** keccak256 of `data` (a new 32-byte array). */
export function keccak256(data: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest('binary');
}
