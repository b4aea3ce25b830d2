// Loads the libsecp256k1 addons for src/auth/recover.ts (Node only: CommonJS require of a native
// module): the project's own native/build/secp256k1_recover.node (the machine's libsecp256k1,
// built by `make native`) and the `secp256k1` npm package's prebuilt addon. Browser bundles
// replace this file by secp256k1_native.browser.ts (src/web/bundle.ts).
import { createRequire } from 'node:module';
import { findNativeModule } from '../util/native_module.js';

export type NativeSecp256k1 = typeof import('secp256k1');

const requireCjs = createRequire(import.meta.url);

/**
 * The addon itself, or null when it does not load. `secp256k1/index.js` silently falls back to
 * the pure-JS `elliptic` build when the addon is missing, so the bindings entry is required directly.
 */
export function loadNativeSecp256k1(): NativeSecp256k1 | null {
  try {
    const m = requireCjs('secp256k1/bindings') as NativeSecp256k1;
    return typeof m.ecdsaRecover === 'function' ? m : null;
  } catch {
    return null;
  }
}

/** native/build/secp256k1_recover.node (native/secp256k1_recover.c). */
export interface SystemSecp256k1 {
  /**
   * Writes the uncompressed public key (65 bytes) recovered from `sig`'s first 64 bytes (r || s)
   * and `recid` over `hash32` into `out65`; false when libsecp256k1 refuses the signature.
   * Throws a TypeError for a wrong type or buffer length, a RangeError for a recid that is not an
   * integer in 0..3.
   */
  recover(sig: Uint8Array, recid: number, hash32: Uint8Array, out65: Uint8Array): boolean;
  /**
   * A task's rows in one call (issue 11, h22v): row i of `rows` (100 bytes: digest at 0, recovery
   * id at 32, r || s at 35..99; a recovery id over 3 refuses the row) recovered into `keys` row i
   * (68 bytes: status at 0, 1 recovered or 0 refused; the 65-byte key at 3). Returns the rows
   * recovered. TypeError for a wrong type, RangeError for a count not an integer >= 0 or buffers
   * too short. Absent from a module built before it (then recoverer.ts calls recover() per row).
   */
  recoverRows?(rows: Uint8Array, count: number, keys: Uint8Array): number;
}

/** The module recovering through the machine's libsecp256k1, or null when it is not built or does not load. */
export function loadSystemSecp256k1(): SystemSecp256k1 | null {
  const found = findNativeModule<SystemSecp256k1>('secp256k1_recover.node');
  return 'module' in found && typeof found.module.recover === 'function' ? found.module : null;
}
