// Ringbook client SDK.
export { Agent, Wallet, type Signer } from './wallet.js';
export { MonotonicNonce, type NonceSource, type MonotonicNonceOptions } from './nonce.js';
export * from './errors.js';
export { RingbookClient, type RingbookClientOptions, type FetchLike } from './rest.js';
export * from './ws.js';
export type * from './types.js';
export type * from './programme_types.js';
export type * from './input_types.js';
// Signed bodies exactly as the client sends them, and the forced-inclusion payload and envelope.
export {
  orderBody, cancelBody, amendBody, cancelAllBody, cancelAfterBody, approveAgentBody, revokeAgentBody, batchBody, withdrawalBody, withdrawalAmountText, referralBody, referrerText, forcedRequestBody,
  inferForcedKind, encodeForcedPayload, decodeForcedPayload, forceIncludeBody, forcedEnvelope, FORCED_KINDS,
  FORCED_PAYLOAD_BYTES_MAX, type SyncSigner, type SignedBody, type ForcedRequest, type BatchRequest, type EncodeForcedPayloadOptions,
} from './bodies.js';
// Fixed-point helpers: the exact ones the server uses (units = value x 1,000,000).
export { parseDecimalUnits, formatUnits, formatUnitsFixed6, UNITS_PER_WHOLE } from '../money/index.js';
export {
  orderJsonMessage, cancelMessage, amendMessage, cancelAllMessage, cancelAfterMessage, withdrawalMessage, referralMessage, forceIncludeMessage,
  forceIncludePayloadHash, challengeMessage, approveAgentMessage, revokeAgentMessage,
} from '../auth/messages.js';
