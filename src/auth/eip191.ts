// EIP-191 version 0x45 ("personal_sign") message hashing.
import { keccak_256 } from '@noble/hashes/sha3.js';

const PREFIX = new TextEncoder().encode('\x19Ethereum Signed Message:\n');
const utf8 = new TextEncoder();

/** keccak256("\x19Ethereum Signed Message:\n" + byteLength(data) + data) over raw bytes. */
export function eip191HashBytes(data: Uint8Array): Uint8Array {
  return keccak_256
    .create()
    .update(PREFIX)
    .update(utf8.encode(String(data.length)))
    .update(data)
    .digest();
}

/** EIP-191 personal_sign hash of a text message (UTF-8; the length is the byte length). */
export function eip191Hash(message: string): Uint8Array {
  return eip191HashBytes(utf8.encode(message));
}

