// A task's signatures recovered at once (issue 11, h22v): the row layout that verify_codec.ts
// packs and Recoverer.recoverAddressRowsInto reads, and its two implementations: one native
// recoverRows call on the machine's libsecp256k1 (the N-API glue once per task, not per
// signature), or row by row through a recoverer's single-signature path (npm addon, noble).
import { addressFromKeyWordsAt } from './key_address.js';
import type { SystemSecp256k1 } from './secp256k1_native.js';
import { acceptedRecoveryIdAt } from './signature_rules.js';

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

/** Recoverer.recoverAddressRowsInto's signature (recoverer.ts documents it). */
export type RowsInto = (rows: Uint8Array, count: number, addresses: Uint8Array, ok: Uint8Array) => number;
/** Recoverer.recoverAddressInto's signature: one signer's 20 address bytes into `out20`, false when invalid. */
export type RecoverInto = (hash32: Uint8Array, signature65: Uint8Array, out20: Uint8Array) => boolean;

function checkRowsCall(rows: Uint8Array, count: number, addresses: Uint8Array, ok: Uint8Array): void {
  if (!Number.isSafeInteger(count) || count < 0 || count > RECOVER_ROWS_MAX || rows.length < count * RECOVER_ROW_BYTES ||
    addresses.length < 20 * count || ok.length < count) {
    throw new RangeError(`recoverAddressRowsInto: count must be an integer in 0..${RECOVER_ROWS_MAX} with room for its rows`);
  }
}

/** recoverAddressRowsInto as recoverAddressInto per row (the npm addon, noble): the row's digest and signature copied out first. */
export function rowByRow(recoverAddressInto: RecoverInto): RowsInto {
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

/**
 * recoverAddressRowsInto through one recoverRows call: the acceptance rules per row in JS (the
 * one implementation of them: a refused row gets recovery id 255, which the module refuses without
 * a recovery), the recovery of every row natively, then each recovered key's address by hash-wasm.
 */
export function systemRows(system: SystemSecp256k1): RowsInto {
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
