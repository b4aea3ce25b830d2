// The browser's keccak_wasm.ts (src/web/bundle.ts swaps it in: a page cannot read hash-wasm's
// bundle from disk to instantiate its module directly). hash-wasm's public hasher: the same
// WebAssembly keccak, through its JS glue, which costs a little per call and does not matter for
// the few hashes a page makes when it signs. Same exports as the server's module.
import { createKeccak, type IHasher } from 'hash-wasm';

const hasher: IHasher = await createKeccak(256);

/** Size of KECCAK_INPUT, as in the server's module (a longer preimage is hashed from a copy). */
export const KECCAK_INPUT_BYTES = 16 * 1024;

/** Scratch for preimages written in place (the server's module hashes this buffer itself). */
export const KECCAK_INPUT: Uint8Array = new Uint8Array(KECCAK_INPUT_BYTES);

/** keccak256 of `KECCAK_INPUT[0 .. length)` written to `out[out_offset .. +32)`. */
export function keccak256OfInput(length: number, out: Uint8Array, out_offset: number): void {
  keccak256Into(KECCAK_INPUT, 0, length, out, out_offset);
}

/** The digest of the last keccak256OfInputToDigest (the server's module: a view of its memory). */
export const KECCAK_DIGEST: Uint8Array = new Uint8Array(32);

/** keccak256 of `KECCAK_INPUT[0 .. length)` left in KECCAK_DIGEST (valid until the next hash). */
export function keccak256OfInputToDigest(length: number): void {
  keccak256Into(KECCAK_INPUT, 0, length, KECCAK_DIGEST, 0);
}

/** keccak256(keccak256(`KECCAK_INPUT[0 .. length)`)) written to `out[out_offset .. +32)`. */
export function keccak256TwiceOfInput(length: number, out: Uint8Array, out_offset: number): void {
  keccak256Into(KECCAK_INPUT, 0, length, KECCAK_DIGEST, 0);
  keccak256Into(KECCAK_DIGEST, 0, 32, out, out_offset);
}

/** keccak256 of `words[a .. a+8) ++ words[b .. b+8)` written to `out[o .. o+8)`. */
export function keccak256OfWordPair(words: Int32Array, a: number, b: number, out: Int32Array, o: number): void {
  const pair = new Uint8Array(64);
  pair.set(new Uint8Array(words.buffer, words.byteOffset + 4 * a, 32), 0);
  pair.set(new Uint8Array(words.buffer, words.byteOffset + 4 * b, 32), 32);
  keccak256Into(pair, 0, 64, new Uint8Array(out.buffer, out.byteOffset + 4 * o, 32), 0);
}

/** keccak256 of `data[offset .. offset+length)` written to `out[out_offset .. +32)` (may overlap `data`). */
export function keccak256Into(data: Uint8Array, offset: number, length: number, out: Uint8Array, out_offset: number): void {
  hasher.init();
  hasher.update(data.subarray(offset, offset + length));
  out.set(hasher.digest('binary'), out_offset);
}

/** keccak256 of one byte range (32 fresh bytes). */
export function keccak256WasmOne(data: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest('binary');
}

/** keccak256 of the concatenation of `parts` (32 fresh bytes). */
export function keccak256Wasm(...parts: Uint8Array[]): Uint8Array {
  hasher.init();
  for (let i = 0; i < parts.length; i++) hasher.update(parts[i]);
  return hasher.digest('binary');
}
