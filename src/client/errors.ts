// Typed errors for every Ringbook error code (docs/api.md "Envelopes and errors").

export interface RingbookErrorInit {
  code: string;
  message: string;
  status: number;
  request_id: string | null;
}

/** Base of every error answered by a Ringbook server. */
export class RingbookError extends Error {
  readonly code: string;
  /** HTTP status (0 for WebSocket errors). */
  readonly status: number;
  /** The server's request id (X-Request-Id / body `request_id`), null when none was sent. */
  readonly request_id: string | null;

  constructor(init: RingbookErrorInit) {
    super(init.message);
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.request_id = init.request_id;
  }
}

export class InvalidSignatureError extends RingbookError {}
export class InsufficientBalanceError extends RingbookError {}
export class DuplicateNonceError extends RingbookError {}
export class MarketNotFoundError extends RingbookError {}
export class InvalidOrderError extends RingbookError {}
export class CreditBreachError extends RingbookError {}
export class MarketPausedError extends RingbookError {}
export class UnauthorizedError extends RingbookError {}
export class NotFoundError extends RingbookError {}
export class InvalidRequestError extends RingbookError {}
export class OverloadedError extends RingbookError {}
export class InternalError extends RingbookError {}
/** Self-referral (`POST /referral/register`). */
export class InvalidReferralError extends RingbookError {}
/** The referred user already has a referrer; it never changes. */
export class ReferralExistsError extends RingbookError {}
/** The order's `expires_after_ms` was before the batch that would have applied it (nothing changed). */
export class ExpiredError extends RingbookError {}
/** WebSocket only: the connection was not authenticated in time (fatal, close code 4001). */
export class AuthTimeoutError extends RingbookError {}

/** HTTP 429 (form C body, no code in it). `retry_after_s` is the Retry-After header (>= 1). */
export class RateLimitedError extends RingbookError {
  readonly retry_after_s: number;
  constructor(init: RingbookErrorInit & { retry_after_s: number }) {
    super(init);
    this.retry_after_s = init.retry_after_s;
  }
}

/** A response that is not a Ringbook envelope (proxy page, network error body...). */
export class UnexpectedResponseError extends RingbookError {}

type ErrorClass = new (init: RingbookErrorInit) => RingbookError;

export const ERROR_CLASSES: Readonly<Record<string, ErrorClass>> = {
  INVALID_SIGNATURE: InvalidSignatureError,
  INSUFFICIENT_BALANCE: InsufficientBalanceError,
  DUPLICATE_NONCE: DuplicateNonceError,
  MARKET_NOT_FOUND: MarketNotFoundError,
  INVALID_ORDER: InvalidOrderError,
  CREDIT_BREACH: CreditBreachError,
  MARKET_PAUSED: MarketPausedError,
  UNAUTHORIZED: UnauthorizedError,
  NOT_FOUND: NotFoundError,
  INVALID_REQUEST: InvalidRequestError,
  OVERLOADED: OverloadedError,
  INTERNAL_ERROR: InternalError,
  INVALID_REFERRAL: InvalidReferralError,
  REFERRAL_EXISTS: ReferralExistsError,
  AUTH_TIMEOUT: AuthTimeoutError,
  EXPIRED: ExpiredError,
};

/** The typed error for a code (unknown codes give a plain RingbookError). */
export function errorFromCode(init: RingbookErrorInit): RingbookError {
  const Cls = ERROR_CLASSES[init.code];
  return Cls ? new Cls(init) : new RingbookError(init);
}

/**
 * The typed error of a forced request the engine refused at inclusion (`result` of
 * `GET /force-include/:entry_id`), null when it was accepted or is still pending. Its `status`
 * is 0 (the refusal was recorded, not answered over HTTP) and `request_id` null.
 */
export function forcedResultError(result: { accepted: boolean; error: string | null; message: string | null } | null): RingbookError | null {
  if (result === null || result.accepted || result.error === null) return null;
  return errorFromCode({ code: result.error, message: result.message ?? result.error, status: 0, request_id: null });
}
