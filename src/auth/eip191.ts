// EIP-191 version 0x45 ("personal_sign") message hashing, with the WASM keccak (the verify
// workers hash every signed request's message: 27 µs in @noble/hashes, issue 11).
import { keccak256Wasm } from '../util/keccak_wasm.js';

const utf8 = new TextEncoder();
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
