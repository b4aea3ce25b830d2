// secp256k1 signer recovery for Ethereum-style 65-byte signatures (r || s || v).
//
// Acceptance rules (DECISIONS "Signatures"), checked here before any backend sees the bytes:
//   - v is 27/28 or 0/1; anything else is invalid (no EIP-155 v, no recovery ids 2/3);
//   - 1 <= r < n and 1 <= s <= n/2 (high-s refused: malleability), whatever the backend allows.
// Backends: native libsecp256k1 chosen once at start, @noble/curves when no native addon loads.
// Native is, first, the machine's libsecp256k1 through native/build/secp256k1_recover.node (built
// by `make native`: Debian's libsecp256k1 0.2 recovers in ~47 us of CPU here against ~62 us for
// the `secp256k1` npm prebuild, issue 11), else that npm addon. All return the same address for
// every input (property-tested). The addons are loaded by ./secp256k1_native.ts; browser bundles
// get secp256k1_native.browser.ts (no addon: noble), so the SDK signs in a browser (src/web/bundle.ts).
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { eip191Hash, eip191HashBytes } from './eip191.js';
import { parseHexAnyLength, parsePrefixedHex, toHex0x } from './hex.js';
import { KECCAK_DIGEST, KECCAK_INPUT, keccak256OfInputToDigest } from '../util/keccak_wasm.js';
import { loadNativeSecp256k1, loadSystemSecp256k1, type NativeSecp256k1, type SystemSecp256k1 } from './secp256k1_native.js';
import { SECP256K1_ENV, secp256k1Choice, type Secp256k1Choice } from './secp256k1_choice.js';

export type RecoverBackendName = 'native' | 'noble';
/**
 * Which library a native recoverer calls: `system`, the machine's libsecp256k1 through
 * native/build/secp256k1_recover.node; `npm`, the `secp256k1` package's prebuilt addon.
 */
export type NativeLibrary = 'system' | 'npm';
/** The library a recoverer calls, as operators see it (log, /admin/state, metrics): a native one or `noble`. */
export type Secp256k1Library = NativeLibrary | 'noble';
/** Every Secp256k1Library, in RINGBOOK_SECP256K1's order (a thread reports its own as an index here: verify_ring.ts). */
export const SECP256K1_LIBRARIES: readonly Secp256k1Library[] = ['system', 'npm', 'noble'];

export interface RecovererOptions {
  /** Force a backend. 'native' throws when no addon can load; default: RINGBOOK_SECP256K1's, unset: native, else noble. */
  backend?: RecoverBackendName;
  /** Force the native library (tests, benches); default: system when it loads and works, else npm. */
  library?: NativeLibrary;
}

export interface Recoverer {
  readonly backend: RecoverBackendName;
  /** The native library, null for noble. */
  readonly library: NativeLibrary | null;
  /** Writes the signer's 20 address bytes into `out20`; false when the signature is invalid. */
  recoverAddressInto(hash32: Uint8Array, signature65: Uint8Array, out20: Uint8Array): boolean;
  /** Lowercase 0x address of the signer, or null when the signature is invalid. */
  recoverAddress(hash32: Uint8Array, signature65: Uint8Array): string | null;
  /**
   * A task's signatures at once (issue 11, h22v): rows `[0, count)` of `rows` (count at most
   * RECOVER_ROWS_MAX; row i at RECOVER_ROW_BYTES * i, 4-byte aligned: the digest at
   * RECOVER_ROW_HASH_AT, a signature row's 17 words, the signature's 65 bytes at RECOVER_ROW_SIG_AT)
   * checked as recoverAddressInto checks one: row i's signer's 20 address bytes into
   * `addresses[20 i, 20 i + 20)` and `ok[i]` = 1, or `ok[i]` = 0 when the signature is invalid.
   * Returns the rows recovered. Overwrites each row's byte RECOVER_ROW_SIG_AT - 3 (the recovery id
   * for the native call). The machine's libsecp256k1 recovers them in one native call (the N-API
   * glue once per task, not per signature); the other libraries row by row.
   */
  recoverAddressRowsInto(rows: Uint8Array, count: number, addresses: Uint8Array, ok: Uint8Array): number;
}

/** A row of recoverAddressRowsInto: the digest's 32 bytes, then a signature row's 17 words (3 spare bytes and the signature). */
export const RECOVER_ROW_BYTES = 100;
export const RECOVER_ROW_HASH_AT = 0;
/** The signature's 65 bytes in a row (r || s || v): on a signature row's place (signature_rows.ts), after the digest's 8 words. */
export const RECOVER_ROW_SIG_AT = 35;
/** Where native/secp256k1_recover.c recoverRows reads a row's recovery id (a spare byte before the signature). */
const ROW_RECID_AT = 32;
/** Rows per recoverAddressRowsInto call at most: its key buffer's size (64 rows, 4.3 KB). */
export const RECOVER_ROWS_MAX = 64;
/** A key row of recoverRows: status byte, 2 spare, the 65-byte key (x || y on words 1..16). */
const KEY_ROW_BYTES = 68;
const KEY_ROW_WORDS = KEY_ROW_BYTES >> 2;

/** The library `r` calls. */
export function recovererLibrary(r: Recoverer): Secp256k1Library {
  return r.library ?? 'noble';
}

// Curve order n and floor(n/2), big-endian.
const N = hexConst('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
const HALF_N = hexConst('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0');

function hexConst(hex: string): Uint8Array {
  const b = parseHexAnyLength(hex);
  if (b === null) throw new Error('bad constant');
  return b;
}

/** Compares the 32-byte big-endian word at `a[off..off+32)` with `k`: -1, 0 or 1. */
function cmpWord(a: Uint8Array, off: number, k: Uint8Array): number {
  for (let i = 0; i < 32; i++) {
    const d = a[off + i] - k[i];
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

function isZeroWord(a: Uint8Array, off: number): boolean {
  for (let i = 0; i < 32; i++) if (a[off + i] !== 0) return false;
  return true;
}

/**
 * The recovery id (0 or 1) of a signature that passes the acceptance rules, else -1.
 * Exported so the rules can be tested on their own.
 */
export function acceptedRecoveryId(signature65: Uint8Array): number {
  if (!(signature65 instanceof Uint8Array) || signature65.length !== 65) return -1;
  return acceptedRecoveryIdAt(signature65, 0);
}

/** acceptedRecoveryId of the 65 bytes at `bytes[at, at + 65)` (a batch row's signature). */
function acceptedRecoveryIdAt(bytes: Uint8Array, at: number): number {
  const v = bytes[at + 64];
  const recid = v === 27 || v === 28 ? v - 27 : v === 0 || v === 1 ? v : -1;
  if (recid < 0) return -1;
  if (isZeroWord(bytes, at) || cmpWord(bytes, at, N) >= 0) return -1; // r in [1, n)
  if (isZeroWord(bytes, at + 32) || cmpWord(bytes, at + 32, HALF_N) > 0) return -1; // s in [1, n/2]
  return recid;
}

let nativeModule: NativeSecp256k1 | null | undefined;
let systemModule: SystemSecp256k1 | null | undefined;

function loadNative(): NativeSecp256k1 | null {
  if (nativeModule === undefined) nativeModule = loadNativeSecp256k1();
  return nativeModule;
}

function loadSystem(): SystemSecp256k1 | null {
  if (systemModule === undefined) systemModule = loadSystemSecp256k1();
  return systemModule;
}

/** Whether a native libsecp256k1 addon loads on this machine (`library`: that one). */
export function nativeBackendAvailable(library?: NativeLibrary): boolean {
  if (library === 'system') return loadSystem() !== null;
  if (library === 'npm') return loadNative() !== null;
  return loadSystem() !== null || loadNative() !== null;
}

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
function keyWords(): { pub: Uint8Array; words: Int32Array } {
  const words = new Int32Array(17);
  return { pub: new Uint8Array(words.buffer, 3, 65), words };
}

/** addressFromUncompressed of the key in keyWords()'s `words` into `out20`. */
function addressFromKeyWords(words: Int32Array, out20: Uint8Array): void {
  addressFromKeyWordsAt(words, 0, out20, 0);
}

/** addressFromUncompressed of the key at words[at + 1, at + 17) (a key row's x || y) into `out[out_at, out_at + 20)`. */
function addressFromKeyWordsAt(words: Int32Array, at: number, out: Uint8Array, out_at: number): void {
  for (let i = 0; i < 16; i++) INPUT_WORDS[i] = words[at + 1 + i];
  keccak256OfInputToDigest(64);
  for (let i = 0; i < 20; i++) out[out_at + i] = DIGEST[12 + i];
}

type RowsInto = (rows: Uint8Array, count: number, addresses: Uint8Array, ok: Uint8Array) => number;

function checkRowsCall(rows: Uint8Array, count: number, addresses: Uint8Array, ok: Uint8Array): void {
  if (!Number.isSafeInteger(count) || count < 0 || count > RECOVER_ROWS_MAX || rows.length < count * RECOVER_ROW_BYTES ||
    addresses.length < 20 * count || ok.length < count) {
    throw new RangeError(`recoverAddressRowsInto: count must be an integer in 0..${RECOVER_ROWS_MAX} with room for its rows`);
  }
}

function makeRecoverer(
  backend: RecoverBackendName,
  library: NativeLibrary | null,
  into: (hash32: Uint8Array, sig65: Uint8Array, recid: number, out20: Uint8Array) => boolean,
  rowsInto: ((recoverAddressInto: Recoverer['recoverAddressInto']) => RowsInto) | null = null,
): Recoverer {
  const scratch = new Uint8Array(20);
  const recoverAddressInto = (hash32: Uint8Array, signature65: Uint8Array, out20: Uint8Array): boolean => {
    if (!(hash32 instanceof Uint8Array) || hash32.length !== 32) return false;
    const recid = acceptedRecoveryId(signature65);
    if (recid < 0) return false;
    try {
      return into(hash32, signature65, recid, out20);
    } catch {
      return false; // point not on the curve, infinity, or any backend refusal
    }
  };
  return Object.freeze({
    backend,
    library,
    recoverAddressInto,
    recoverAddress(hash32: Uint8Array, signature65: Uint8Array): string | null {
      return recoverAddressInto(hash32, signature65, scratch) ? toHex0x(scratch) : null;
    },
    recoverAddressRowsInto: (rowsInto ?? rowByRow)(recoverAddressInto),
  });
}

/** recoverAddressRowsInto as recoverAddressInto per row (the npm addon, noble): the row's digest and signature copied out first. */
function rowByRow(recoverAddressInto: Recoverer['recoverAddressInto']): RowsInto {
  const hash = new Uint8Array(32);
  const sig = new Uint8Array(65);
  const out = new Uint8Array(20);
  return (rows, count, addresses, ok) => {
    checkRowsCall(rows, count, addresses, ok);
    let recovered = 0;
    for (let r = 0; r < count; r++) {
      const at = r * RECOVER_ROW_BYTES;
      for (let i = 0; i < 32; i++) hash[i] = rows[at + RECOVER_ROW_HASH_AT + i];
      for (let i = 0; i < 65; i++) sig[i] = rows[at + RECOVER_ROW_SIG_AT + i];
      rows[at + ROW_RECID_AT] = 255; // as the native rows call leaves it: not read again
      ok[r] = 0;
      if (!recoverAddressInto(hash, sig, out)) continue;
      for (let i = 0; i < 20; i++) addresses[20 * r + i] = out[i];
      ok[r] = 1;
      recovered++;
    }
    return recovered;
  };
}

function nativeRecoverer(native: NativeSecp256k1): Recoverer {
  const { pub, words } = keyWords();
  return makeRecoverer('native', 'npm', (hash32, sig65, recid, out20) => {
    native.ecdsaRecover(sig65.subarray(0, 64), recid, hash32, false, pub);
    addressFromKeyWords(words, out20);
    return true;
  });
}

/**
 * The machine's libsecp256k1: reads r || s from the signature in place (no subarray per call); a
 * task's rows in one recoverRows call, when the module has it (one built before h22v does not).
 */
function systemRecoverer(system: SystemSecp256k1): Recoverer {
  const { pub, words } = keyWords();
  return makeRecoverer('native', 'system', (hash32, sig65, recid, out20) => {
    if (!system.recover(sig65, recid, hash32, pub)) return false;
    addressFromKeyWords(words, out20);
    return true;
  }, system.recoverRows === undefined ? null : () => systemRows(system));
}

/**
 * recoverAddressRowsInto through one recoverRows call: the acceptance rules per row in JS (the
 * one implementation of them: a refused row gets recovery id 255, which the module refuses without
 * a recovery), the recovery of every row natively, then each recovered key's address by hash-wasm.
 */
function systemRows(system: SystemSecp256k1): RowsInto {
  const keys_words = new Int32Array(KEY_ROW_WORDS * RECOVER_ROWS_MAX);
  const keys = new Uint8Array(keys_words.buffer);
  const recoverRows = system.recoverRows as NonNullable<SystemSecp256k1['recoverRows']>;
  return (rows, count, addresses, ok) => {
    checkRowsCall(rows, count, addresses, ok);
    for (let r = 0; r < count; r++) {
      const at = r * RECOVER_ROW_BYTES;
      rows[at + ROW_RECID_AT] = acceptedRecoveryIdAt(rows, at + RECOVER_ROW_SIG_AT) & 255; // -1: 255
    }
    try {
      recoverRows.call(system, rows, count, keys);
    } catch {
      for (let r = 0; r < count; r++) ok[r] = 0; // a wrong buffer (not expected): nothing recovered
      return 0;
    }
    let recovered = 0;
    for (let r = 0; r < count; r++) {
      ok[r] = 0;
      if (keys[r * KEY_ROW_BYTES] !== 1) continue;
      addressFromKeyWordsAt(keys_words, r * KEY_ROW_WORDS, addresses, 20 * r);
      ok[r] = 1;
      recovered++;
    }
    return recovered;
  };
}

function nobleRecoverer(): Recoverer {
  return makeRecoverer('noble', null, (hash32, sig65, recid, out20) => {
    const sig = secp256k1.Signature.fromBytes(sig65.subarray(0, 64), 'compact').addRecoveryBit(recid);
    addressFromUncompressed(sig.recoverPublicKey(hash32).toBytes(false), out20);
    return true;
  });
}

// One known-good case (vectors/eip191.json, first case) to check a loaded addon actually works.
const SELF_TEST = {
  hash: '0x338dce181f952315d79a1fe26e31cfb8c0261a632cfcfc1f4f3e3a89029df60b',
  signature:
    '0xedbb6b922aae3bc0768f51523c7cb18ffe3e897614cec7d7044799ed80411ca641dad462c5912fb8e2ec0b25994fe4fd531f94e6bd2737181e572494770fc7a81b',
  address: '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a',
};

function selfTest(r: Recoverer): boolean {
  const hash = parsePrefixedHex(SELF_TEST.hash, 32);
  const sig = parseSignatureHex(SELF_TEST.signature);
  return hash !== null && sig !== null && r.recoverAddress(hash, sig) === SELF_TEST.address;
}

/** The options RINGBOOK_SECP256K1 asks for (secp256k1_choice.ts); throws for a misspelt value. */
function optionsOfEnv(): { choice: Secp256k1Choice; options: RecovererOptions } {
  // Browser bundles have no process: the default.
  const env = typeof process === 'undefined' ? undefined : process.env;
  const asked = env === undefined ? { choice: 'auto' as const } : secp256k1Choice(env);
  if ('error' in asked) throw new Error(asked.error);
  const options: RecovererOptions =
    asked.choice === 'noble' ? { backend: 'noble' } : asked.choice === 'auto' ? {} : { library: asked.choice };
  return { choice: asked.choice, options };
}

/**
 * A recoverer on the requested backend. Without `backend` and `library`, as RINGBOOK_SECP256K1
 * asks (secp256k1_choice.ts; unset: native when an addon loads and works, the machine's
 * libsecp256k1 first, else noble), so the front, the verify workers and the DA thread follow the
 * operator's switch; a value it cannot honour throws, naming it. A forced `library` is that one
 * or a throw.
 */
export function createRecoverer(options: RecovererOptions = {}): Recoverer {
  if (options.backend !== undefined || options.library !== undefined) return recovererFor(options);
  const asked = optionsOfEnv();
  if (asked.choice === 'auto') return recovererFor(asked.options);
  try {
    return recovererFor(asked.options);
  } catch (e) {
    throw new Error(`${SECP256K1_ENV}=${asked.choice}, but ${(e as Error).message}`);
  }
}

function recovererFor(options: RecovererOptions): Recoverer {
  const want = options.backend;
  if (want === 'noble') return nobleRecoverer();
  const forced = want === 'native' || options.library !== undefined;
  const system = options.library === 'npm' ? null : loadSystem();
  if (system !== null) {
    const r = systemRecoverer(system);
    if (options.library === 'system' || selfTest(r)) return r;
  }
  const native = options.library === 'system' ? null : loadNative();
  if (native !== null) {
    const r = nativeRecoverer(native);
    if (forced || selfTest(r)) return r;
  }
  if (forced) throw new Error(`native secp256k1 backend${options.library === undefined ? '' : ` (${options.library} library)`} is not available`);
  return nobleRecoverer();
}

/** Made at first use (not at import: main.ts checks RINGBOOK_SECP256K1 first, and says so in one line). */
let defaultRecoverer: Recoverer | null = null;

/** The backend the module-level functions use, chosen once (at first use). */
export function recoverBackendName(): RecoverBackendName {
  return defaultRecovererInstance().backend;
}

/** The recoverer the module-level functions use; throws when RINGBOOK_SECP256K1 asks for what cannot load. */
export function defaultRecovererInstance(): Recoverer {
  return (defaultRecoverer ??= createRecoverer());
}

/** Lowercase 0x address that signed `hash32`, or null for any invalid signature. */
export function recoverAddress(hash32: Uint8Array, signature65: Uint8Array): string | null {
  return defaultRecovererInstance().recoverAddress(hash32, signature65);
}

/** `0x` + 130 hex chars (either case) into 65 bytes; null otherwise. Never throws. */
export function parseSignatureHex(text: unknown): Uint8Array | null {
  return parsePrefixedHex(text, 65);
}

// ---- Signing helpers (@noble/curves; for tests, the SDK and the operator; not on the hot path) ----

/** A 32-byte private key from `0x` + 64 hex (the `0x` is optional); throws TypeError when invalid. */
export function parsePrivateKey(privateKeyHex: string): Uint8Array {
  const bytes = typeof privateKeyHex === 'string' ? parseHexAnyLength(privateKeyHex) : null;
  if (bytes === null || bytes.length !== 32 || !secp256k1.utils.isValidSecretKey(bytes)) {
    throw new TypeError('private key must be 32 bytes of hex in [1, n)');
  }
  return bytes;
}

/** Lowercase 0x address of a private key. */
export function addressFromPrivateKey(privateKeyHex: string): string {
  const out = new Uint8Array(20);
  addressFromUncompressed(secp256k1.getPublicKey(parsePrivateKey(privateKeyHex), false), out);
  return toHex0x(out);
}

/** Signs a 32-byte hash: 65 bytes r || s || v, low-s, v 27/28, RFC 6979 deterministic. */
export function signHash(privateKeyHex: string, hash32: Uint8Array): Uint8Array {
  const rec = secp256k1.sign(hash32, parsePrivateKey(privateKeyHex), { prehash: false, format: 'recovered' });
  const out = new Uint8Array(65);
  out.set(rec.subarray(1, 65), 0); // noble 'recovered' layout is recid || r || s
  out[64] = 27 + rec[0];
  return out;
}

/**
 * EIP-191 personal_sign, as viem's signMessage: a string is signed as its UTF-8 text, `{raw}` as
 * the raw bytes. Returns `0x` + 130 lowercase hex chars.
 */
export function signPersonalMessage(privateKeyHex: string, message: string | { raw: Uint8Array }): string {
  const hash = typeof message === 'string' ? eip191Hash(message) : eip191HashBytes(message.raw);
  return toHex0x(signHash(privateKeyHex, hash));
}
