// The browser's secp256k1_native.ts (src/web/bundle.ts swaps it in): no native addon in a page,
// so recover.ts chooses @noble/curves there.
export type NativeSecp256k1 = typeof import('secp256k1');

export function loadNativeSecp256k1(): NativeSecp256k1 | null {
  return null;
}

export interface SystemSecp256k1 {
  recover(sig: Uint8Array, recid: number, hash32: Uint8Array, out65: Uint8Array): boolean;
}

export function loadSystemSecp256k1(): SystemSecp256k1 | null {
  return null;
}
