// The WebSocket challenge flow (spec "Authentication" item 7, DECISIONS "WebSocket"), one
// `AuthState` per connection, independent of uWS so its rules read in one place.
//
// Rules:
// - `request_challenge {address}` answers `challenge {nonce, expires_at}`: 16 random bytes as 32
//   hex digits, valid for `challenge_ttl_ms` (60 s by default) and for one `auth` only. A new
//   request replaces the connection's pending challenge (one at a time per connection).
// - The client signs `Ringbook Exchange\nNonce: <nonce>` (EIP-191 personal_sign) and sends
//   `auth {address, signature}`. Any auth attempt consumes the pending challenge, right or wrong,
//   so a nonce can never be tried twice. A challenge belongs to the connection that asked for it.
// - Grace period (spec item 10): the first `request_challenge` starts a deadline of
//   `auth_grace_ms` (30 s by default); a connection not authenticated by then, or whose auth
//   fails `auth_failures_max` times (3), gets a fatal AUTH_TIMEOUT error and is closed. Later
//   challenges do not move the deadline.
// - A failed auth is any `auth` that does not authenticate: malformed fields, no pending
//   challenge, a challenge for another address, an expired challenge or a wrong signature. A
//   signature the server could not check (its verify pool failed) is an OVERLOADED error instead,
//   not counted as a failure.
// - A connection authenticates once, as one address; afterwards `request_challenge` and `auth`
//   are INVALID_REQUEST errors (not failures).
import { randomBytes } from 'node:crypto';
import { challengeMessage } from '../../auth/messages.js';
import { describe } from './messages.js';
import { isAddress } from '../../util/address.js';
import { isSignatureHex } from '../../util/signature_hex.js';

export interface AuthLimits {
  challenge_ttl_ms: number;
  auth_grace_ms: number;
  auth_failures_max: number;
}

/** What the connection must do with an auth step. */
export type AuthStep =
  /** Send `challenge`. */
  | { kind: 'challenge'; nonce: string; expires_ms: number }
  /** Verify `signature` over `message` for `address`; then call `verified()`. */
  | { kind: 'verify'; address: string; message: string; signature: string }
  /** Send a non-fatal error. */
  | { kind: 'error'; code: string; message: string }
  /** Send a fatal AUTH_TIMEOUT and close. */
  | { kind: 'fatal'; message: string };

export class AuthState {
  /** The authenticated address (lowercase), or null. */
  address: string | null = null;
  failures = 0;
  /** Wall-clock deadline of the grace period; 0 while no challenge was asked for. */
  deadline_ms = 0;
  /** A signature check is in flight. */
  verifying = false;
  private challenge: { nonce: string; address: string; expires_ms: number } | null = null;
  private readonly limits: AuthLimits;

  constructor(limits: AuthLimits) {
    this.limits = limits;
  }

  requestChallenge(address: unknown, now_ms: number): AuthStep {
    if (this.address !== null) return { kind: 'error', code: 'INVALID_REQUEST', message: `already authenticated as ${this.address}` };
    if (typeof address !== 'string' || !isAddress(address)) {
      return { kind: 'error', code: 'INVALID_REQUEST', message: `address must be 0x followed by 40 hexadecimal digits, got ${describe(address)}` };
    }
    const nonce = randomBytes(16).toString('hex');
    const expires_ms = now_ms + this.limits.challenge_ttl_ms;
    this.challenge = { nonce, address: address.toLowerCase(), expires_ms };
    if (this.deadline_ms === 0) this.deadline_ms = now_ms + this.limits.auth_grace_ms;
    return { kind: 'challenge', nonce, expires_ms };
  }

  auth(address: unknown, signature: unknown, now_ms: number): AuthStep {
    if (this.address !== null) return { kind: 'error', code: 'INVALID_REQUEST', message: `already authenticated as ${this.address}` };
    if (this.verifying) return { kind: 'error', code: 'INVALID_REQUEST', message: 'an auth is already being verified on this connection' };
    const challenge = this.challenge;
    this.challenge = null;
    if (typeof address !== 'string' || !isAddress(address)) {
      return this.failed('INVALID_REQUEST', `address must be 0x followed by 40 hexadecimal digits, got ${describe(address)}`);
    }
    if (!isSignatureHex(signature)) {
      return this.failed('INVALID_SIGNATURE', 'signature must be 0x followed by 65 bytes of hex');
    }
    if (challenge === null) return this.failed('UNAUTHORIZED', 'no pending challenge: send request_challenge first (a challenge is single-use)');
    const lower = address.toLowerCase();
    if (challenge.address !== lower) return this.failed('UNAUTHORIZED', `the pending challenge was issued for ${challenge.address}, not ${lower}`);
    if (now_ms > challenge.expires_ms) return this.failed('UNAUTHORIZED', 'the challenge expired: request a new one');
    this.verifying = true;
    return { kind: 'verify', address: lower, message: challengeMessage(challenge.nonce), signature: signature.toLowerCase() };
  }

  /** The verdict of a `verify` step. */
  verified(address: string, ok: boolean, now_ms: number): AuthStep | null {
    this.verifying = false;
    if (ok) {
      this.address = address;
      this.deadline_ms = 0;
      this.failures = 0;
      return null;
    }
    if (this.deadline_ms !== 0 && now_ms > this.deadline_ms) return { kind: 'fatal', message: this.timeoutSentence() };
    return this.failed('INVALID_SIGNATURE', `the signature does not recover to ${address} over the challenge text`);
  }

  /**
   * The server could not check the signature (a verify worker died with it, or the verify pool is
   * broken): an OVERLOADED error that is not the client's failure (not counted; the challenge was
   * used, so the client asks for a new one), unless the grace period is over.
   */
  unchecked(now_ms: number): AuthStep {
    this.verifying = false;
    if (this.deadline_ms !== 0 && now_ms > this.deadline_ms) return { kind: 'fatal', message: this.timeoutSentence() };
    return { kind: 'error', code: 'OVERLOADED', message: 'the server could not check the signature (its verify pool failed); request a new challenge and retry' };
  }

  /** True when the grace period is over without authentication (and no verdict is pending). */
  expired(now_ms: number): boolean {
    return this.address === null && !this.verifying && this.deadline_ms !== 0 && now_ms > this.deadline_ms;
  }

  timeoutSentence(): string {
    return `not authenticated within ${this.limits.auth_grace_ms} ms of the first challenge`;
  }

  private failed(code: string, message: string): AuthStep {
    this.failures++;
    if (this.failures >= this.limits.auth_failures_max) {
      return { kind: 'fatal', message: `${message}; auth failed ${this.failures} times` };
    }
    return { kind: 'error', code, message };
  }
}
