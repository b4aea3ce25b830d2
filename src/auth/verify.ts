// One signed message, one verdict. Used inline (tests, the WebSocket auth) and by the pool worker.
import { eip191Hash, eip191HashBytes } from './eip191.js';
import { isHexOfLength, parseHexStringInto } from './hex.js';
import { defaultRecovererInstance, type Recoverer } from './recover.js';
import { parseSignatureHex } from './signature_rules.js';

export interface SignedMessage {
  /** The exact text the wallet signed (see messages.ts). */
  message: string;
  /** `0x` + 130 hex chars: r || s || v. */
  signature_hex: string;
  /** The address the request claims (`user`, or `address` for withdrawals); any case. */
  expected_address: string;
  /**
   * Other addresses that may have signed (a user's live agents), `0x` + 40 hex chars each, at most
   * SIGNERS_PER_CHECK_MAX - 1. The check still costs one recovery: the recovered address is
   * compared with each, and the verdict says which matched (verify_codec.ts).
   */
  other_addresses?: readonly string[];
}

/** Candidate signers one check may compare (the verdict byte numbers them 1..this; 0: none). */
export const SIGNERS_PER_CHECK_MAX = 255;

/** Parses `0x` + 40 hex chars (either case) into `out20`; false when malformed. */
export function parseAddressInto(text: unknown, out20: Uint8Array): boolean {
  return isHexOfLength(text, 20) && parseHexStringInto(text, 2, 20, out20, 0);
}

function equal20(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < 20; i++) if (a[i] !== b[i]) return false;
  return true;
}

const expected = new Uint8Array(20);
const recovered = new Uint8Array(20);

/**
 * True when the EIP-191 hash of `messageBytes` was signed by `expectedAddress20` under the
 * acceptance rules of signature_rules.ts. Signatures over the un-prefixed hash (eth_sign) recover to some
 * other address and so fail here.
 */
export function verifyMessageBytes(
  messageBytes: Uint8Array,
  signature65: Uint8Array,
  expectedAddress20: Uint8Array,
  recoverer: Recoverer = defaultRecovererInstance(),
): boolean {
  return (
    recoverer.recoverAddressInto(eip191HashBytes(messageBytes), signature65, recovered) &&
    equal20(recovered, expectedAddress20)
  );
}

/** Verifies one signed message; false for any malformed field (never throws). */
export function verifySignedMessage(
  item: SignedMessage,
  recoverer: Recoverer = defaultRecovererInstance(),
): boolean {
  if (item === null || typeof item !== 'object' || typeof item.message !== 'string') return false;
  const sig = parseSignatureHex(item.signature_hex);
  if (sig === null || !parseAddressInto(item.expected_address, expected)) return false;
  return (
    recoverer.recoverAddressInto(eip191Hash(item.message), sig, recovered) && equal20(recovered, expected)
  );
}
