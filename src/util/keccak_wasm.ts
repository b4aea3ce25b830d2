// keccak-256 through hash-wasm's WebAssembly build: 0.93 µs per 64-byte block here vs 8.2 µs in
// @noble/hashes (issue 11), so it is the keccak of every hot path (the verify workers' EIP-191
// message and signer address; the state trie, fills tree, input hash and verifier through
// src/da/keccak.ts, which names these for src/da).
//
// We call the module's exports directly instead of hash-wasm's public hasher: that hasher's JS
// glue (init/update/digest: a view of the input, a chunk view, the `exports` getter on every
// call, and a fresh 32-byte copy per digest) was ~11% of the DA thread's CPU at max rate and a
// share of its GC (profile of bench/load.ts, 2026-11-26), and 0.82 µs against 0.61 µs per
// 129-byte trie node (tmp micro-bench, same machine). So: the WebAssembly binary is hash-wasm's
// own keccak build (`sha3` in dist/keccak.umd.min.js, the same bytes `createKeccak` compiles),
// instantiated once per thread here; a hash is one copy into its 16 KiB input buffer, one
// `Hash_Calculate` call and one copy out of its digest, no allocation. A wrong binary (another
// hash-wasm layout) fails loudly at import: the two known answers below are checked.
//
// The last block goes straight into the hash context (2026-11-27, issue 11): `Hash_Calculate`
// is Hash_Init + Hash_Update + Hash_Final, and Hash_Update copies the bytes after the last whole
// 136-byte block into the context's message buffer one byte at a time (a `uint8_t` loop in
// hash-wasm's src/sha3.c): 129 iterations for a trie node, ~10% of the DA thread's keccak time
// (`--cpu-prof`: wasm-function[2] = Hash_Update, 4.9% of the DA stacks' self time against 39.5%
// for the permutation). So a hash is Hash_Init, Hash_Update of the whole blocks only (straight
// from the input buffer, no byte copy), the rest written into the context's message buffer by JS
// (as 32-bit words) with its length as the context's `rest`, and Hash_Final (which pads and
// permutes exactly as after Hash_Update). Hash_Final also zeroes the block after `rest` one byte
// at a time (75 iterations for a 61-byte leaf, ~100 for a path), so the padding is written here
// instead: the 0x01 after the rest (Hash_Init zeroed the message buffer), `rest` set to the
// block's last byte and Hash_Final called with padding 0, which then zeroes that one byte and
// sets its 0x80: the same padded block (keccak's pad10*1 with the 0x01 domain byte).
// Same bytes in, same permutations, same digest; the
// context's layout (struct SHA3_CTX: 25 state words, 24 message words, rest, block_size) is
// checked at import against Hash_Calculate at lengths around the block size.
//
// One instance per thread, used only synchronously (init/update/final never interleave on a
// thread), so sharing it needs no locking.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

interface KeccakExports {
  memory: { buffer: ArrayBuffer };
  Hash_GetBuffer(): number;
  Hash_Init(bits: number): void;
  Hash_Update(length: number): void;
  Hash_Final(padding: number): void;
  Hash_GetState(): number;
  Hash_Calculate(length: number, bits: number, padding: number): void;
}

/** The WebAssembly JS API (a global in Node; tsconfig's libs leave it untyped). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const WASM = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** hash-wasm's input buffer (MAIN_BUFFER_SIZE in its src/hash-wasm.h). */
const INPUT_BYTES = 16 * 1024;
/** The size of {@link KECCAK_INPUT}: the longest preimage keccak256OfInput hashes. */
export const KECCAK_INPUT_BYTES = INPUT_BYTES;
const BITS = 256;
/** Keccak's padding byte (SHA-3 would be 0x06): what hash-wasm's createKeccak passes to Hash_Final. */
const KECCAK_PADDING = 0x01;
const DIGEST_BYTES = 32;

function loadExports(): KeccakExports {
  const dist = path.dirname(createRequire(import.meta.url).resolve('hash-wasm'));
  const bundle = readFileSync(path.join(dist, 'keccak.umd.min.js'), 'utf8');
  const m = /name:"sha3",data:"([A-Za-z0-9+/=]+)"/.exec(bundle);
  if (m === null) throw new Error(`keccak: hash-wasm's keccak WebAssembly not found in ${dist}/keccak.umd.min.js`);
  const instance = new WASM.Instance(new WASM.Module(Buffer.from(m[1], 'base64')), {});
  const x = instance.exports as unknown as KeccakExports;
  for (const f of ['Hash_GetBuffer', 'Hash_Init', 'Hash_Update', 'Hash_Final', 'Hash_GetState', 'Hash_Calculate'] as const) {
    if (typeof x[f] !== 'function') throw new Error(`keccak: hash-wasm's keccak module lacks ${f}`);
  }
  return x;
}

const wasm = loadExports();
const base = wasm.Hash_GetBuffer();
// The module never grows its memory (hash-wasm's keccak has no allocator), so these views stay valid.
/**
 * The module's input buffer: write a preimage of up to 16 KiB here and hash it in place with
 * {@link keccak256OfInput} (no copy from a scratch buffer). Overwritten by every hash.
 */
export const KECCAK_INPUT: Uint8Array = new Uint8Array(wasm.memory.buffer, base, INPUT_BYTES);
/**
 * The same input buffer as 32-bit words (its offset in the module's memory is a multiple of 4:
 * checked below), for {@link keccak256OfWords}.
 */
if (base % 4 !== 0) throw new Error(`keccak: hash-wasm's input buffer at ${base} is not 4-byte aligned`);
const INPUT_WORDS = new Int32Array(wasm.memory.buffer, base, INPUT_BYTES / 4);
/** Hash_Final leaves the digest at the start of the buffer. */
const digest = new Uint8Array(wasm.memory.buffer, base, DIGEST_BYTES);
/** The same digest as 8 words (the input buffer is 4-byte aligned: checked above). */
const DIGEST_WORDS = new Int32Array(wasm.memory.buffer, base, DIGEST_BYTES / 4);
/**
 * The digest of the last hash, a view of the module's memory: valid until the next hash on this
 * thread. For callers that read the digest once (the verify workers' address is its last 20
 * bytes): no copy at all.
 */
export const KECCAK_DIGEST: Uint8Array = digest;
const calculate = wasm.Hash_Calculate;
const hashInit = wasm.Hash_Init;
const hashUpdate = wasm.Hash_Update;
const hashFinal = wasm.Hash_Final;

/** keccak-256's rate: bytes absorbed per permutation. */
const RATE_BYTES = 136;
// hash-wasm's context (struct SHA3_CTX in its src/sha3.c): uint64_t hash[25], uint64_t
// message[24], unsigned rest, unsigned block_size.
const CTX_MESSAGE_BYTE = 25 * 8;
const CTX_REST_WORD = (25 + 24) * 2;
const CTX_BLOCK_SIZE_WORD = CTX_REST_WORD + 1;
const ctx = wasm.Hash_GetState();
if (ctx % 8 !== 0) throw new Error(`keccak: hash-wasm's keccak context at ${ctx} is not 8-byte aligned`);
/** The context's words (rest, block_size). */
const CTX_WORDS = new Uint32Array(wasm.memory.buffer, ctx, CTX_BLOCK_SIZE_WORD + 1);
/** The context's message buffer: the partial block Hash_Final pads and absorbs. */
const MESSAGE = new Uint8Array(wasm.memory.buffer, ctx + CTX_MESSAGE_BYTE, RATE_BYTES);
const MESSAGE_WORDS = new Int32Array(wasm.memory.buffer, ctx + CTX_MESSAGE_BYTE, RATE_BYTES / 4);

// The digest's copy out. `out.set(digest, at)` is a call into Builtins_TypedArrayPrototypeSet,
// ~166 instructions for 32 bytes (callgrind, issue 11), at the end of every hash: the DA thread
// hashes ~22 times per request, mostly into the same array (the trie's node rows). So an array
// seen twice in a row gets a words view over it (once), and the digest goes out as 8 word moves
// when the array and the offset are 4-byte aligned; any other output (a fresh array per hash, an
// odd offset) still takes set(), whose range check throws as before.
/** The output of the last hash, and its words view once it came twice in a row (null: none yet). */
let out_last: Uint8Array | null = null;
let out_last_words: Int32Array | null = null;

function putDigest(out: Uint8Array, out_offset: number): void {
  if (out !== out_last) {
    out_last = out;
    out_last_words = null;
  } else if (out_last_words === null && (out.byteOffset & 3) === 0) {
    out_last_words = new Int32Array(out.buffer, out.byteOffset, out.length >> 2);
  }
  const words = out_last_words;
  if (words !== null && (out_offset & 3) === 0 && out_offset >= 0 && out_offset + DIGEST_BYTES <= 4 * words.length) {
    const w = out_offset >> 2;
    words[w] = DIGEST_WORDS[0];
    words[w + 1] = DIGEST_WORDS[1];
    words[w + 2] = DIGEST_WORDS[2];
    words[w + 3] = DIGEST_WORDS[3];
    words[w + 4] = DIGEST_WORDS[4];
    words[w + 5] = DIGEST_WORDS[5];
    words[w + 6] = DIGEST_WORDS[6];
    words[w + 7] = DIGEST_WORDS[7];
    return;
  }
  out.set(digest, out_offset);
}

/**
 * Pads and absorbs the last block and leaves the digest in `digest`: the `rest` bytes after the
 * whole blocks are in MESSAGE (written as `words` 32-bit words: the bytes past `rest` in the last
 * one are cleared here), the rest of it zero since Hash_Init. The 0x01 goes after the rest and
 * Hash_Final (padding 0, `rest` = the last byte) only sets the final 0x80, instead of zeroing
 * the block byte by byte; a rest of 135 bytes (0x01 and 0x80 in one byte) takes Hash_Final's own
 * padding. 8,640 against 9,320 instructions per 61-byte hash (callgrind, tmp micro-bench).
 */
function finalBlock(rest: number, words: number): void {
  if (rest === RATE_BYTES - 1) {
    CTX_WORDS[CTX_REST_WORD] = rest;
    hashFinal(KECCAK_PADDING);
    return;
  }
  MESSAGE[rest] = KECCAK_PADDING;
  for (let i = rest + 1; i < 4 * words; i++) MESSAGE[i] = 0;
  CTX_WORDS[CTX_REST_WORD] = RATE_BYTES - 1;
  hashFinal(0);
}

/**
 * keccak256 of `KECCAK_INPUT[0 .. length)` (length <= 16 KiB) written to `out[out_offset .. +32)`:
 * the whole blocks absorbed from the input buffer, the rest moved into the context (see above).
 */
export function keccak256OfInput(length: number, out: Uint8Array, out_offset: number): void {
  keccak256OfInputToDigest(length);
  putDigest(out, out_offset);
}

/**
 * keccak256 of `KECCAK_INPUT[0 .. length)` (length <= 16 KiB) left in {@link KECCAK_DIGEST}, not
 * copied anywhere (valid until the next hash on this thread).
 */
export function keccak256OfInputToDigest(length: number): void {
  const rest = length % RATE_BYTES;
  const whole = length - rest;
  hashInit(BITS);
  if (whole > 0) hashUpdate(whole);
  // The rest by words (whole blocks are 34 words; reads up to 3 bytes past `length`, inside the
  // 16 KiB buffer): 9,250 against 9,950 instructions per 61-byte hash with `copyWithin`
  // (callgrind, tmp micro-bench; Hash_Calculate 9,710), whose C++ entry costs more than the copy.
  const from = whole >> 2;
  const n = (rest + 3) >> 2;
  for (let i = 0; i < n; i++) MESSAGE_WORDS[i] = INPUT_WORDS[from + i];
  finalBlock(rest, n);
}

/**
 * keccak256(keccak256(`KECCAK_INPUT[0 .. length)`)) written to `out[out_offset .. +32)`: the fills
 * tree's double-hashed leaves (OpenZeppelin's). Hash_Final leaves the first digest at the start of
 * the input buffer ({@link KECCAK_DIGEST} is `KECCAK_INPUT[0 .. 32)`), which is where the second
 * hash reads its 32 bytes: no copy out and back in between.
 */
export function keccak256TwiceOfInput(length: number, out: Uint8Array, out_offset: number): void {
  keccak256OfInputToDigest(length);
  keccak256OfInputToDigest(DIGEST_BYTES);
  putDigest(out, out_offset);
}

/**
 * keccak256 of the 64 bytes `words[a .. a+8) ++ words[b .. b+8)` (two 32-byte nodes) written to
 * `out[o .. o+8)` (may be `words`, any of the three places): a Merkle pair (the fills tree's),
 * one block straight from the words into the context, the digest out by 8 word moves. The
 * callers' node indices are inside their arrays (not checked here: a typed array read past its
 * end gives 0, a write is dropped).
 */
export function keccak256OfWordPair(words: Int32Array, a: number, b: number, out: Int32Array, o: number): void {
  hashInit(BITS);
  for (let i = 0; i < 8; i++) MESSAGE_WORDS[i] = words[a + i];
  for (let i = 0; i < 8; i++) MESSAGE_WORDS[8 + i] = words[b + i];
  finalBlock(2 * DIGEST_BYTES, 16);
  for (let i = 0; i < 8; i++) out[o + i] = DIGEST_WORDS[i];
}

/**
 * keccak256 of the `length` bytes (<= 16 KiB) starting at word `word_offset` of `words`, written
 * to `out[out_offset .. +32)`. A word loop instead of `set(subarray(..))`: the state trie hashes
 * ~16 nodes per request at max rate, and the view each `subarray` made was the largest single
 * source of the DA thread's garbage (15% of its allocated bytes, sampling heap profile of
 * bench/state_root.ts-like replay, 2026-11-26); the copy itself is 26 against 50 ns per
 * 129-byte node (micro-bench, same machine). Reads up to 3 bytes past `length` (the word's rest).
 */
export function keccak256OfWords(words: Int32Array, word_offset: number, length: number, out: Uint8Array, out_offset: number): void {
  const n = (length + 3) >> 2;
  if (length < RATE_BYTES) {
    // One block (a trie node, 129 bytes): the words go straight into the context's message buffer.
    hashInit(BITS);
    for (let i = 0; i < n; i++) MESSAGE_WORDS[i] = words[word_offset + i];
    finalBlock(length, n);
  } else {
    for (let i = 0; i < n; i++) INPUT_WORDS[i] = words[word_offset + i];
    calculate(length, BITS, KECCAK_PADDING);
  }
  putDigest(out, out_offset);
}

/** Feeds `data[offset .. offset+length)` to a hash begun with hashInit, 16 KiB at a time. */
function absorb(data: Uint8Array, offset: number, length: number): void {
  for (let at = offset, end = offset + length; at < end; at += INPUT_BYTES) {
    const n = Math.min(INPUT_BYTES, end - at);
    KECCAK_INPUT.set(data.subarray(at, at + n));
    hashUpdate(n);
  }
}

/** keccak256 of `data[offset .. offset+length)` written to `out[out_offset .. +32)` (may overlap `data`). */
export function keccak256Into(data: Uint8Array, offset: number, length: number, out: Uint8Array, out_offset: number): void {
  if (length < RATE_BYTES) {
    hashInit(BITS);
    MESSAGE.set(offset === 0 && length === data.length ? data : data.subarray(offset, offset + length));
    finalBlock(length, 0);
  } else if (length <= INPUT_BYTES) {
    KECCAK_INPUT.set(offset === 0 && length === data.length ? data : data.subarray(offset, offset + length));
    keccak256OfInput(length, out, out_offset);
    return;
  } else {
    hashInit(BITS);
    absorb(data, offset, length);
    hashFinal(KECCAK_PADDING);
  }
  putDigest(out, out_offset);
}

/** keccak256 of one byte range (32 fresh bytes). */
export function keccak256WasmOne(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(DIGEST_BYTES);
  keccak256Into(data, 0, data.length, out, 0);
  return out;
}

/** keccak256 of the concatenation of `parts` (32 fresh bytes). */
export function keccak256Wasm(...parts: Uint8Array[]): Uint8Array {
  hashInit(BITS);
  for (let i = 0; i < parts.length; i++) absorb(parts[i], 0, parts[i].length);
  hashFinal(KECCAK_PADDING);
  return digest.slice();
}

// Known answers (keccak256 of '' and of 'abc'): a different binary or padding fails here, at import.
function selfCheck(): void {
  const want: [string, string][] = [
    ['', 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'],
    ['abc', '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45'],
  ];
  for (const [text, hex] of want) {
    const got = Buffer.from(keccak256WasmOne(Buffer.from(text))).toString('hex');
    if (got !== hex) throw new Error(`keccak: hash-wasm's keccak module gives ${got} for '${text}', expected ${hex}`);
  }
}
selfCheck();

// The context's layout, as the direct paths above assume it: after Hash_Init(256) the block size
// is the rate and nothing is buffered; and every path agrees with Hash_Calculate (the module's own
// Init + Update + Final) at lengths around one and two blocks (a different layout fails here).
function layoutCheck(): void {
  hashInit(BITS);
  if (CTX_WORDS[CTX_BLOCK_SIZE_WORD] !== RATE_BYTES || CTX_WORDS[CTX_REST_WORD] !== 0) {
    throw new Error(`keccak: hash-wasm's keccak context is not laid out as expected (block size ${CTX_WORDS[CTX_BLOCK_SIZE_WORD]}, rest ${CTX_WORDS[CTX_REST_WORD]})`);
  }
  const data = new Uint8Array(2 * RATE_BYTES + 9);
  for (let i = 0; i < data.length; i++) data[i] = (i * 167 + 13) & 0xff;
  const words = new Int32Array(data.buffer, 0, (RATE_BYTES + 4) >> 2);
  const want = new Uint8Array(DIGEST_BYTES);
  const got = new Uint8Array(DIGEST_BYTES);
  for (const length of [0, 1, 31, 32, 64, 129, 135, RATE_BYTES, RATE_BYTES + 1, 2 * RATE_BYTES - 1, 2 * RATE_BYTES, 2 * RATE_BYTES + 9]) {
    KECCAK_INPUT.set(data.subarray(0, length));
    calculate(length, BITS, KECCAK_PADDING);
    want.set(digest);
    const ways: [string, () => void][] = [
      ['keccak256OfInput', () => {
        KECCAK_INPUT.set(data.subarray(0, length));
        keccak256OfInput(length, got, 0);
      }],
      ['keccak256Into', () => keccak256Into(data, 0, length, got, 0)],
    ];
    if (length <= 4 * words.length) ways.push(['keccak256OfWords', () => keccak256OfWords(words, 0, length, got, 0)]);
    for (const [name, hash] of ways) {
      got.fill(0);
      hash();
      if (Buffer.compare(got, want) !== 0) throw new Error(`keccak: ${name} disagrees with hash-wasm's Hash_Calculate at ${length} bytes`);
    }
    // The double hash reads the first digest where Hash_Final left it (the buffer's start).
    KECCAK_INPUT.set(want);
    calculate(DIGEST_BYTES, BITS, KECCAK_PADDING);
    want.set(digest);
    KECCAK_INPUT.set(data.subarray(0, length));
    got.fill(0);
    keccak256TwiceOfInput(length, got, 0);
    if (Buffer.compare(got, want) !== 0) throw new Error(`keccak: keccak256TwiceOfInput disagrees with hash-wasm's Hash_Calculate at ${length} bytes`);
  }
  // A pair of words: the 64 bytes from two places.
  const pair = new Int32Array(24);
  for (let i = 0; i < 16; i++) pair[i] = Math.imul(i + 1, 0x9e3779b1);
  KECCAK_INPUT.set(new Uint8Array(pair.buffer, 0, 64));
  calculate(2 * DIGEST_BYTES, BITS, KECCAK_PADDING);
  want.set(digest);
  keccak256OfWordPair(pair, 0, 8, pair, 16);
  if (Buffer.compare(new Uint8Array(pair.buffer, 64, DIGEST_BYTES), want) !== 0) throw new Error("keccak: keccak256OfWordPair disagrees with hash-wasm's Hash_Calculate");
}
layoutCheck();
