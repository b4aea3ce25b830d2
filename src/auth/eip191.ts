// EIP-191 version 0x45 ("personal_sign") message hashing, with the WASM keccak (the verify
// workers hash every signed request's message: 27 µs in @noble/hashes, issue 11).
import { KECCAK_INPUT, KECCAK_INPUT_BYTES, keccak256OfInput, keccak256Wasm } from '../util/keccak_wasm.js';

const utf8 = new TextEncoder();
/** The module's input buffer as this module's const (folded into optimized code; an import is read through its cell each use). */
const INPUT = KECCAK_INPUT;
const PREFIX = utf8.encode('\x19Ethereum Signed Message:\n');
/** The decimal length texts of short messages, encoded once (every signed request is < 1,000 bytes). */
const LENGTH_TEXTS: Uint8Array[] = Array.from({ length: 1024 }, (_, n) => utf8.encode(String(n)));

/** keccak256("\x19Ethereum Signed Message:\n" + byteLength(data) + data) over raw bytes. */
export function eip191HashBytes(data: Uint8Array): Uint8Array {
  const n = data.length;
  return keccak256Wasm(PREFIX, n < LENGTH_TEXTS.length ? LENGTH_TEXTS[n] : utf8.encode(String(n)), data);
}

/** EIP-191 personal_sign hash of a text message (UTF-8; the length is the byte length). */
export function eip191Hash(message: string): Uint8Array {
  return eip191HashBytes(utf8.encode(message));
}

/**
 * eip191HashBytes of `bytes[start, end)` written to `out32`, with one view (the message) and no digest copy: the
 * prefix, the length text and the bytes go straight into the hash's input buffer (the verify
 * codec's path, once per signature check on the front and in the workers; issue 11, branch h11z).
 */
export function eip191HashRangeInto(bytes: Uint8Array, start: number, end: number, out32: Uint8Array): void {
  const n = end - start;
  const len = n < LENGTH_TEXTS.length ? LENGTH_TEXTS[n] : utf8.encode(String(n));
  const total = PREFIX.length + len.length + n;
  if (total > KECCAK_INPUT_BYTES) {
    out32.set(eip191HashBytes(bytes.subarray(start, end)));
    return;
  }
  INPUT.set(PREFIX, 0);
  // The length's 1-4 digits by a loop (a set() call is ~160 instructions).
  for (let i = 0; i < len.length; i++) INPUT[PREFIX.length + i] = len[i];
  // The message by one set() of a view: a JS byte loop cost ~26 instructions a byte (~4,400 for an
  // order's ~170-byte message), subarray + set ~1,000 whatever the length (issue 11, h19c, callgrind).
  INPUT.set(bytes.subarray(start, end), PREFIX.length + len.length);
  keccak256OfInput(total, out32, 0);
}
