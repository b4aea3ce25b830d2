// Signing with a private key (@noble/curves): for tests, the SDK (src/client/wallet.ts), the
// operator's CLI and the settlement poster; not on the server's hot path, which only recovers
// signers (recover.ts). Signatures come out in the form the acceptance rules take
// (signature_rules.ts): low-s, v 27/28.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { eip191Hash, eip191HashBytes } from './eip191.js';
import { parseHexAnyLength, toHex0x } from './hex.js';
import { addressFromUncompressed } from './key_address.js';

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
