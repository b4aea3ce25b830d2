// The one spelling of an address on the wire and in config: `0x` and 40 hex digits, either case.
// (Checksums are not required; callers lowercase an address before using it as a key.)

export const ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/;

/** True when `text` is `0x` followed by 40 hex digits. */
export function isAddress(text: unknown): text is string {
  return typeof text === 'string' && ADDRESS_PATTERN.test(text);
}
