// An Ethereum address from an uncompressed secp256k1 public key: the last 20 bytes of
// keccak256(x || y), hashed by hash-wasm in the keccak module's own buffers (no allocation per
// key). Used by every recoverer (recoverer.ts, recover_rows.ts) and the signing helpers (sign.ts).
import { KECCAK_DIGEST, KECCAK_INPUT, keccak256OfInputToDigest } from '../util/keccak_wasm.js';

// The keccak module's buffers as this module's own constants: an imported binding is read through
// its module cell on every use (a load and a hole check per iteration of the loops below), a
// module-level const is folded into the optimized code (issue 11, h19c, callgrind).
const INPUT = KECCAK_INPUT;
const DIGEST = KECCAK_DIGEST;

/**
 * Writes the address of an uncompressed public key (0x04 || x || y, 65 bytes) into
 * `out[out_offset .. +20)`: the last 20 bytes of keccak256(x || y). Nothing is allocated: the key
 * is copied byte by byte into the keccak module's input, hashed in place and the digest's tail
 * read from the module's memory (before: a fresh 32-byte digest and two subarray views per recovery, on every
 * signature check). `out` may be `pub65` itself (the key is read before anything is written).
 */
export function addressFromUncompressed(pub65: Uint8Array, out: Uint8Array, out_offset = 0): void {
  for (let i = 0; i < 64; i++) INPUT[i] = pub65[1 + i];
  // The address straight from the module's digest: no 32-byte copy out first (issue 11, h19c).
  keccak256OfInputToDigest(64);
  for (let i = 0; i < 20; i++) out[out_offset + i] = DIGEST[12 + i];
}

/** The input buffer's first 16 words (4-byte aligned: keccak_wasm.ts checks it; its memory never grows). */
const INPUT_WORDS = new Int32Array(INPUT.buffer, INPUT.byteOffset, 16);

/**
 * A native recoverer's output key: 17 words whose bytes 3..68 are the 65-byte key (`pub`), so
 * that x || y (the key after its 0x04) is words 1..16 and moves into the hash's input as 16 words
 * (addressFromKeyWords) instead of 64 bytes one by one (issue 11, branch h21v).
 */
export function keyWords(): { pub: Uint8Array; words: Int32Array } {
  const words = new Int32Array(17);
  return { pub: new Uint8Array(words.buffer, 3, 65), words };
}

/** addressFromUncompressed of the key in keyWords()'s `words` into `out20`. */
export function addressFromKeyWords(words: Int32Array, out20: Uint8Array): void {
  addressFromKeyWordsAt(words, 0, out20, 0);
}

/** addressFromUncompressed of the key at words[at + 1, at + 17) (a key row's x || y) into `out[out_at, out_at + 20)`. */
export function addressFromKeyWordsAt(words: Int32Array, at: number, out: Uint8Array, out_at: number): void {
  for (let i = 0; i < 16; i++) INPUT_WORDS[i] = words[at + 1 + i];
  keccak256OfInputToDigest(64);
  for (let i = 0; i < 20; i++) out[out_at + i] = DIGEST[12 + i];
}
