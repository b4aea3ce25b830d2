// A private-key wallet for the Ringbook SDK. Signing and message texts come from src/auth (the
// same builders the server verifies against); the SDK adds nothing to the texts.
import { addressFromPrivateKey, signPersonalMessage } from '../auth/recover.js';
import {
  amendMessage,
  cancelAllMessage,
  cancelMessage,
  challengeMessage,
  forceIncludeMessage,
  orderJsonMessage,
  referralMessage,
  withdrawalMessage,
  type AmendMessageFields,
  type CancelAllMessageFields,
  type CancelMessageFields,
  type ForceIncludeMessageFields,
  type OrderJsonMessageFields,
  type ReferralMessageFields,
  type WithdrawalMessageFields,
} from '../auth/messages.js';

/** Something that can sign EIP-191 personal messages for one address (a private key, or a browser wallet adapter). */
export interface Signer {
  /** Lowercase 0x address. */
  readonly address: string;
  /** EIP-191 personal_sign of a UTF-8 text: `0x` + 130 hex. */
  signMessage(text: string): string | Promise<string>;
}

export class Wallet implements Signer {
  readonly address: string;
  readonly #key: string;

  constructor(private_key: string) {
    this.address = addressFromPrivateKey(private_key); // throws TypeError on a bad key
    this.#key = private_key;
  }

  signMessage(text: string): string {
    return signPersonalMessage(this.#key, text);
  }

  /** Order, compact JSON form (binds order type and time in force). Price is 0 for market orders. */
  signOrder(f: OrderJsonMessageFields): string {
    return this.signMessage(orderJsonMessage(f));
  }

  signCancel(f: CancelMessageFields): string {
    return this.signMessage(cancelMessage(f));
  }

  signAmend(f: AmendMessageFields): string {
    return this.signMessage(amendMessage(f));
  }

  signCancelAll(f: CancelAllMessageFields): string {
    return this.signMessage(cancelAllMessage(f));
  }

  /** `address` and `amount` must be exactly as they will be sent in the body. */
  signWithdrawal(f: WithdrawalMessageFields): string {
    return this.signMessage(withdrawalMessage(f));
  }

  /** Referral registration, signed by the referred user; addresses exactly as sent. */
  signReferral(f: ReferralMessageFields): string {
    return this.signMessage(referralMessage(f));
  }

  /** Force-include envelope: `ringbook:force-include:{user}:{keccak256(payload)}:{nonce}`. */
  signForceInclude(f: ForceIncludeMessageFields): string {
    return this.signMessage(forceIncludeMessage(f));
  }

  /** WebSocket auth: `Ringbook Exchange\nNonce: <nonce>`. */
  signChallenge(nonce: string): string {
    return this.signMessage(challengeMessage(nonce));
  }
}
