// A private-key wallet for the Ringbook SDK. Signing and message texts come from src/auth (the
// same builders the server verifies against); the SDK adds nothing to the texts.
import { addressFromPrivateKey, signPersonalMessage } from '../auth/sign.js';
import {
  amendMessage,
  cancelAllMessage,
  cancelMessage,
  challengeMessage,
  forceIncludeMessage,
  orderJsonMessage,
  referralMessage,
  withdrawalMessage,
  approveAgentMessage,
  revokeAgentMessage,
  type ApproveAgentMessageFields,
  type AmendMessageFields,
  type CancelAllMessageFields,
  type CancelMessageFields,
  type ForceIncludeMessageFields,
  type OrderJsonMessageFields,
  type ReferralMessageFields,
  type WithdrawalMessageFields,
} from '../auth/messages.js';
import { isAddress } from '../util/address.js';

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

  /** POST /agents: approves `agent` (address exactly as sent) to sign this wallet's trading requests until `valid_until_ms`. */
  signApproveAgent(f: ApproveAgentMessageFields): string {
    return this.signMessage(approveAgentMessage(f));
  }

  /** POST /agents/revoke. */
  signRevokeAgent(f: { agent: string; nonce: number }): string {
    return this.signMessage(revokeAgentMessage(f));
  }
}

/**
 * An agent key (docs/api.md, "Agent keys"): a hot key the user approved (POST /agents) that signs
 * for the user. `address` is the USER's address, so every body built with it carries `user` = the
 * user (RingbookClient({wallet: agent}) trades for the user); `agent_address` is the key's own.
 * It may sign orders, cancels, amends, cancel-all, cancel-after and batches; the server refuses
 * its withdrawals, referrals, agent changes and forced inclusions (INVALID_SIGNATURE), and it
 * cannot authenticate a WebSocket for the user. Its nonces are its own (the server keeps a mark
 * per signer), so it never competes with the user's wallet or other agents for nonces.
 */
export class Agent implements Signer {
  /** The user's address: what bodies carry as `user`. */
  readonly address: string;
  /** The agent key's own address (what the user approved). */
  readonly agent_address: string;
  readonly #key: string;

  constructor(private_key: string, user_address: string) {
    if (!isAddress(user_address)) throw new TypeError('Agent: user_address must be a 0x-prefixed 20-byte hex address');
    this.agent_address = addressFromPrivateKey(private_key);
    this.address = user_address.toLowerCase();
    if (this.address === this.agent_address) throw new TypeError('Agent: an agent key signs for another address than its own');
    this.#key = private_key;
  }

  signMessage(text: string): string {
    return signPersonalMessage(this.#key, text);
  }
}
