// Loads the libsecp256k1 addon for src/auth/recover.ts (Node only: CommonJS require of a native
// module). Browser bundles replace this file by secp256k1_native.browser.ts (src/web/bundle.ts).
import { createRequire } from 'node:module';

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
