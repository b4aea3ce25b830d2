// keccak-256 through hash-wasm's WebAssembly build: 0.93 µs per 64-byte block here vs 8.2 µs in
// @noble/hashes (issue 11), so it is the keccak of every hot path (the verify workers' EIP-191
// message and signer address; the state trie, fills tree, input hash and verifier through
// src/da/keccak.ts, which names these for src/da). Its JS glue costs ~0.3 µs and three small
// allocations per call (0.77 µs for one 64-byte block, 1.69 µs for three): the trees make one
// call per node and keep a node's preimage contiguous. hash-wasm's instances load asynchronously; this module awaits that
// once at import (top-level await, once per thread), after which every call is synchronous.
//
// One hasher per thread, used only synchronously (init/update/digest never interleave on a
// thread), so sharing it needs no locking.
import { createKeccak, type IHasher } from 'hash-wasm';

const hasher: IHasher = await createKeccak(256);

/** keccak256 of the concatenation of `parts` (32 fresh bytes). */
export function keccak256Wasm(...parts: Uint8Array[]): Uint8Array {
  hasher.init();
  for (let i = 0; i < parts.length; i++) hasher.update(parts[i]);
  return hasher.digest('binary');
}

/** keccak256 of one byte range, without the rest-parameter array of keccak256Wasm. */
export function keccak256WasmOne(data: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest('binary');
}

/** keccak256 of `data[offset .. offset+length)` written to `out[out_offset .. +32)` (may overlap `data`). */
export function keccak256Into(data: Uint8Array, offset: number, length: number, out: Uint8Array, out_offset: number): void {
  hasher.init();
  hasher.update(offset === 0 && length === data.length ? data : data.subarray(offset, offset + length));
  out.set(hasher.digest('binary'), out_offset);
}
