// The browser's secp256k1_native.ts (src/web/bundle.ts swaps it in): no native addon in a page,
// so recover.ts uses @noble/curves there.
export type NativeSecp256k1 = typeof import('secp256k1');

export function loadNativeSecp256k1(): NativeSecp256k1 | null {
  return null;
}
