// The one spelling of a 65-byte signature (r, s, v) on the wire: `0x` and 130 hex digits, either
// case. The signed requests' parsers check it by decoding it once (ring/consent.ts
// checkSignatureHex keeps the bytes for the consent encoder); the other readers of a signature
// (query parameters, forced-inclusion payloads, the WebSocket login) check it here.

export const SIGNATURE_HEX_PATTERN = /^0x[0-9a-fA-F]{130}$/;

/** True when `text` is `0x` followed by 130 hex digits. */
export function isSignatureHex(text: unknown): text is string {
  return typeof text === 'string' && SIGNATURE_HEX_PATTERN.test(text);
}
