// The 65-byte Ethereum-style signature (r || s || v): its text form and the acceptance rules
// (DECISIONS "Signatures"), checked before any secp256k1 library sees the bytes:
//   - v is 27/28 or 0/1; anything else is invalid (no EIP-155 v, no recovery ids 2/3);
//   - 1 <= r < n and 1 <= s <= n/2 (high-s refused: malleability), whatever the library allows.
// One implementation for every recoverer (recoverer.ts) and the batched rows (recover_rows.ts).
import { parseHexAnyLength, parsePrefixedHex } from './hex.js';

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
export function acceptedRecoveryIdAt(bytes: Uint8Array, at: number): number {
  const v = bytes[at + 64];
  const recid = v === 27 || v === 28 ? v - 27 : v === 0 || v === 1 ? v : -1;
  if (recid < 0) return -1;
  if (isZeroWord(bytes, at) || cmpWord(bytes, at, N) >= 0) return -1; // r in [1, n)
  if (isZeroWord(bytes, at + 32) || cmpWord(bytes, at + 32, HALF_N) > 0) return -1; // s in [1, n/2]
  return recid;
}

/** `0x` + 130 hex chars (either case) into 65 bytes; null otherwise. Never throws. */
export function parseSignatureHex(text: unknown): Uint8Array | null {
  return parsePrefixedHex(text, 65);
}
