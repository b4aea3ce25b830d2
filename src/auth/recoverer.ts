// The Recoverer: one secp256k1 library behind one interface, as recover.ts hands it out. Three
// implementations, all returning the same address for every input (property-tested):
//   - `system`: the machine's libsecp256k1 through native/build/secp256k1_recover.node (built by
//     `make native`: Debian's libsecp256k1 0.2 recovers in ~47 us of CPU here against ~62 us for
//     the `secp256k1` npm prebuild, issue 11);
//   - `npm`: the `secp256k1` package's prebuilt addon;
//   - `noble`: @noble/curves, when no addon loads (and in browser bundles).
// Each checks the acceptance rules (signature_rules.ts) before its library sees the bytes.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { toHex0x } from './hex.js';
import { addressFromKeyWords, addressFromUncompressed, keyWords } from './key_address.js';
import { rowByRow, systemRows, type RowsInto } from './recover_rows.js';
import type { NativeSecp256k1, SystemSecp256k1 } from './secp256k1_native.js';
import { acceptedRecoveryId } from './signature_rules.js';

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
   * A task's signatures at once (issue 11, h22v; recover_rows.ts): rows `[0, count)` of `rows`
   * (count at most RECOVER_ROWS_MAX; row i at RECOVER_ROW_BYTES * i, 4-byte aligned: the digest at
   * RECOVER_ROW_HASH_AT, a signature row's 17 words, the signature's 65 bytes at RECOVER_ROW_SIG_AT)
   * checked as recoverAddressInto checks one: row i's signer's 20 address bytes into
   * `addresses[20 i, 20 i + 20)` and `ok[i]` = 1, or `ok[i]` = 0 when the signature is invalid.
   * Returns the rows recovered. Overwrites each row's byte RECOVER_ROW_SIG_AT - 3 (the recovery id
   * for the native call). The machine's libsecp256k1 recovers them in one native call (the N-API
   * glue once per task, not per signature); the other libraries row by row.
   */
  recoverAddressRowsInto(rows: Uint8Array, count: number, addresses: Uint8Array, ok: Uint8Array): number;
}

/** The library `r` calls. */
export function recovererLibrary(r: Recoverer): Secp256k1Library {
  return r.library ?? 'noble';
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

/** The `secp256k1` npm addon. */
export function npmRecoverer(native: NativeSecp256k1): Recoverer {
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
export function systemRecoverer(system: SystemSecp256k1): Recoverer {
  const { pub, words } = keyWords();
  return makeRecoverer('native', 'system', (hash32, sig65, recid, out20) => {
    if (!system.recover(sig65, recid, hash32, pub)) return false;
    addressFromKeyWords(words, out20);
    return true;
  }, system.recoverRows === undefined ? null : () => systemRows(system));
}

/** @noble/curves: no addon. */
export function nobleRecoverer(): Recoverer {
  return makeRecoverer('noble', null, (hash32, sig65, recid, out20) => {
    const sig = secp256k1.Signature.fromBytes(sig65.subarray(0, 64), 'compact').addRecoveryBit(recid);
    addressFromUncompressed(sig.recoverPublicKey(hash32).toBytes(false), out20);
    return true;
  });
}
