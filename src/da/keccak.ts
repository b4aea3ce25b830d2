// keccak256 for src/da (the state trie, the fills tree, the journal's input hash, the verifier):
// the one hash-wasm hasher of src/util/keccak_wasm.ts, under the names src/da has always used.
// Byte-for-byte @noble/hashes' keccak_256 (test/da/keccak.test.ts: every length 0..700, offsets,
// in place).
export {
  KECCAK_INPUT, keccak256Into, keccak256OfInput, keccak256OfWordPair, keccak256OfWords, keccak256TwiceOfInput, keccak256WasmOne as keccak256,
} from '../util/keccak_wasm.js';
