// Ringbook client SDK.
export { Wallet, type Signer } from './wallet.js';
export { MonotonicNonce, type NonceSource, type MonotonicNonceOptions } from './nonce.js';
export * from './errors.js';
export { RingbookClient, type RingbookClientOptions, type FetchLike } from './rest.js';
export * from './ws.js';
export type * from './types.js';
// Fixed-point helpers: the exact ones the server uses (units = value x 1,000,000).
export { parseDecimalUnits, formatUnits, formatUnitsFixed6, UNITS_PER_WHOLE } from '../money/index.js';
export { orderJsonMessage, cancelMessage, amendMessage, cancelAllMessage, withdrawalMessage, challengeMessage } from '../auth/messages.js';
