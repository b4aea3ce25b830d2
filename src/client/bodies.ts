// Signed request bodies of the Ringbook API, built exactly as the SDK POSTs them (docs/api.md
// "Signed messages"), and the forced-inclusion payload and envelope around them ("POST
// /force-include"). Pure: a signer and a nonce in, a JSON-ready object out; no I/O, no clock.
// RingbookClient uses these builders for its own requests, so a forced payload is byte for byte
// the body the direct call would have sent (plus the optional `kind` member).
import { parseHexAnyLength, toHex0x } from '../auth/hex.js';
import {
  amendMessage, cancelAfterMessage, cancelAllMessage, cancelMessage, FORCED_KINDS, FORCED_PAYLOAD_BYTES_MAX, forceIncludeMessage,
  inferForcedKind, orderJsonMessage, referralMessage, withdrawalMessage, approveAgentMessage, revokeAgentMessage, type ForcedKind,
} from '../auth/messages.js';
import type { AmendInput, CancelInput, PlaceOrderInput, WithdrawInput } from './input_types.js';
import { isAddress } from '../util/address.js';

/** A signer that answers at once (the SDK's Wallet). */
export interface SyncSigner {
  /** Lowercase 0x address. */
  readonly address: string;
  signMessage(text: string): string;
}

/** A signed request body as sent (field order as the SDK writes it). */
export type SignedBody = Record<string, unknown> & { nonce: number; signature: string };

/** `POST /orders`. `price` is omitted (and signed as 0) on market orders. */
export function orderBody(w: SyncSigner, o: Omit<PlaceOrderInput, 'nonce'>, nonce: number): SignedBody {
  const order_type = o.order_type ?? 'limit';
  const time_in_force = o.time_in_force ?? (order_type === 'market' ? 'ioc' : 'gtc');
  const signature = w.signMessage(orderJsonMessage({
    market_id: o.market_id,
    side: o.side,
    price: order_type === 'market' ? 0 : o.price,
    quantity: o.quantity,
    order_type,
    time_in_force,
    nonce,
    stp: o.stp,
    expires_after_ms: o.expires_after_ms,
  }));
  const body: Record<string, unknown> = { user: w.address, market_id: o.market_id, side: o.side };
  if (order_type !== 'market' && o.price !== undefined) body.price = o.price;
  body.quantity = o.quantity;
  body.order_type = order_type;
  body.time_in_force = time_in_force;
  body.nonce = nonce;
  if (o.client_order_id !== undefined) body.client_order_id = o.client_order_id;
  if (o.stp !== undefined) body.stp = o.stp;
  if (o.expires_after_ms !== undefined) body.expires_after_ms = o.expires_after_ms;
  body.signature = signature;
  return body as SignedBody;
}

/** `POST /orders/cancel`, by `order_id` or `client_order_id` (an absent id is sent as `""`). */
export function cancelBody(w: SyncSigner, c: Omit<CancelInput, 'nonce'>, nonce: number): SignedBody {
  const order_id = c.order_id === undefined ? '' : String(c.order_id);
  const client_order_id = c.client_order_id ?? '';
  const signature = w.signMessage(cancelMessage({ order_id, client_order_id, nonce }));
  return { user: w.address, order_id, client_order_id, nonce, signature };
}

/** `POST /orders/amend` (`quantity` is the new open quantity). */
export function amendBody(w: SyncSigner, a: Omit<AmendInput, 'nonce'>, nonce: number): SignedBody {
  const order_id = String(a.order_id);
  const signature = w.signMessage(amendMessage({ order_id, price: a.price, quantity: a.quantity, nonce }));
  return { user: w.address, order_id, price: a.price, quantity: a.quantity, nonce, signature };
}

/** `POST /orders/cancel-all`; no `market_id` = every market (signed as `*`). */
export function cancelAllBody(w: SyncSigner, market_id: string | undefined, nonce: number): SignedBody {
  const signature = w.signMessage(cancelAllMessage({ market_id: market_id ?? null, nonce }));
  const body: Record<string, unknown> = { user: w.address };
  if (market_id !== undefined) body.market_id = market_id;
  body.nonce = nonce;
  body.signature = signature;
  return body as SignedBody;
}

/** `POST /agents`: the user approves `agent` (sent as given, signed as sent) until `valid_until_ms`. */
export function approveAgentBody(w: SyncSigner, agent: string, name: string, valid_until_ms: number, nonce: number): SignedBody {
  const signature = w.signMessage(approveAgentMessage({ agent, name, valid_until_ms, nonce }));
  return { user: w.address, agent, name, valid_until_ms, nonce, signature } as SignedBody;
}

/** `POST /agents/revoke`. */
export function revokeAgentBody(w: SyncSigner, agent: string, nonce: number): SignedBody {
  const signature = w.signMessage(revokeAgentMessage({ agent, nonce }));
  return { user: w.address, agent, nonce, signature } as SignedBody;
}

/** `POST /orders/cancel-after` (the dead-man switch; 0 disarms). */
export function cancelAfterBody(w: SyncSigner, timeout_ms: number, nonce: number): SignedBody {
  const signature = w.signMessage(cancelAfterMessage({ timeout_ms, nonce }));
  return { user: w.address, timeout_ms, nonce, signature } as SignedBody;
}

/** The on-chain amount as the digit string the body carries (wei for ETH). */
export function withdrawalAmountText(amount: WithdrawInput['amount']): string {
  const text = typeof amount === 'bigint' ? amount.toString() : typeof amount === 'number' ? String(amount) : amount;
  if (typeof text !== 'string' || !/^[0-9]+$/.test(text)) {
    throw new TypeError('withdraw amount must be a non-negative integer of on-chain units');
  }
  return text;
}

/** `POST /withdrawals` (`address` is the wallet; `amount` in on-chain units, as a digit string). */
export function withdrawalBody(w: SyncSigner, wd: Omit<WithdrawInput, 'nonce'>, nonce: number): SignedBody {
  const amount = withdrawalAmountText(wd.amount);
  const signature = w.signMessage(withdrawalMessage({ address: w.address, asset: wd.asset, amount, nonce }));
  return { address: w.address, asset: wd.asset, amount, nonce, signature };
}

/** The referrer as the SDK sends and signs it (lowercase); TypeError when it is not an address. */
export function referrerText(referrer: string): string {
  if (typeof referrer !== 'string' || !isAddress(referrer)) throw new TypeError('referrer must be 0x + 40 hex digits');
  return referrer.toLowerCase();
}

/**
 * `POST /referral/register`: the signer is the referred user. The referrer is sent (and signed)
 * in lowercase, so the text signed is `ringbook:referral:{referred}:{referrer}:{nonce}` with both
 * addresses exactly as in the body.
 */
export function referralBody(w: SyncSigner, referrer: string, nonce: number): SignedBody {
  const r = referrerText(referrer);
  const signature = w.signMessage(referralMessage({ referred: w.address, referrer: r, nonce }));
  return { referred: w.address, referrer: r, nonce, signature };
}

// ------------------------------------------------------------------ forced inclusion

// The payload kinds, their inference and the size limit are the server's own (src/auth/messages.ts).
export { FORCED_KINDS, FORCED_PAYLOAD_BYTES_MAX, inferForcedKind };

/** One request to force in, described like the direct call's input (its nonce is chosen for it). */
export type ForcedRequest =
  | ({ kind: 'order' } & Omit<PlaceOrderInput, 'nonce'>)
  | ({ kind: 'cancel' } & Omit<CancelInput, 'nonce'>)
  | ({ kind: 'amend' } & Omit<AmendInput, 'nonce'>)
  | { kind: 'cancel_all'; market_id?: string }
  | ({ kind: 'withdrawal' } & Omit<WithdrawInput, 'nonce'>)
  | { kind: 'referral'; referrer: string };

/** The signed body of a forced request, built with the same builder as the direct call. */
export function forcedRequestBody(w: SyncSigner, r: ForcedRequest, nonce: number): SignedBody {
  switch (r.kind) {
    case 'order': {
      const { kind: _k, ...o } = r;
      return orderBody(w, o, nonce);
    }
    case 'cancel':
      return cancelBody(w, { order_id: r.order_id, client_order_id: r.client_order_id }, nonce);
    case 'amend':
      return amendBody(w, { order_id: r.order_id, price: r.price, quantity: r.quantity }, nonce);
    case 'cancel_all':
      return cancelAllBody(w, r.market_id, nonce);
    case 'withdrawal':
      return withdrawalBody(w, { asset: r.asset, amount: r.amount }, nonce);
    case 'referral':
      return referralBody(w, r.referrer, nonce);
    default:
      throw new TypeError(`unknown forced request kind ${JSON.stringify((r as { kind?: unknown }).kind)}`);
  }
}

export interface EncodeForcedPayloadOptions {
  /**
   * The `kind` member written first in the payload: a kind, `true` (default: the kind inferred
   * from the body, written explicitly), or `false` (no member: the server infers it).
   */
  kind?: ForcedKind | boolean;
}

/**
 * A force-include `payload`: `0x` + lowercase hex of the UTF-8 JSON of a signed body (compact,
 * the body's key order, `kind` first when written). Throws RangeError above 4096 bytes.
 */
export function encodeForcedPayload(body: Record<string, unknown>, opts: EncodeForcedPayloadOptions = {}): string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new TypeError('payload body must be an object');
  const k = opts.kind ?? true;
  const { kind: own, ...rest } = body;
  let out: Record<string, unknown>;
  if (k === false) out = body;
  else {
    const kind = k === true ? (typeof own === 'string' ? (own as ForcedKind) : inferForcedKind(rest)) : k;
    if (!FORCED_KINDS.includes(kind)) throw new TypeError(`kind must be one of ${FORCED_KINDS.join(', ')}`);
    out = { kind, ...rest };
  }
  const bytes = new TextEncoder().encode(JSON.stringify(out));
  if (bytes.byteLength > FORCED_PAYLOAD_BYTES_MAX) {
    throw new RangeError(`forced payload is ${bytes.byteLength} bytes; the limit is ${FORCED_PAYLOAD_BYTES_MAX}`);
  }
  return toHex0x(bytes);
}

/** The JSON object inside a payload (`0x` optional). Throws on bad hex, bad UTF-8 or JSON that is not an object. */
export function decodeForcedPayload(payload: string): Record<string, unknown> {
  const bytes = typeof payload === 'string' ? parseHexAnyLength(payload) : null;
  if (!bytes) throw new TypeError('payload must be hex');
  const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  const v: unknown = JSON.parse(text);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new TypeError('payload JSON must be an object');
  return v as Record<string, unknown>;
}

/**
 * `POST /force-include` body: the envelope `{user, payload, nonce, signature}`, signed by `user`
 * over `ringbook:force-include:{user}:{keccak256(payload bytes)}:{nonce}`. The envelope nonce is
 * its own per-account sequence (above the account's last envelope nonce); the payload keeps the
 * nonce it was signed with, checked against the trading mark when the entry is included. So the
 * two are independent: payload n in envelope n + 1, or envelope n around payload n + 1.
 */
export function forceIncludeBody(w: SyncSigner, payload: string, nonce: number): SignedBody {
  const bytes = typeof payload === 'string' ? parseHexAnyLength(payload) : null;
  if (!bytes) throw new TypeError('payload must be hex (0x optional)');
  if (bytes.byteLength > FORCED_PAYLOAD_BYTES_MAX) {
    throw new RangeError(`forced payload is ${bytes.byteLength} bytes; the limit is ${FORCED_PAYLOAD_BYTES_MAX}`);
  }
  const hex = toHex0x(bytes);
  const signature = w.signMessage(forceIncludeMessage({ user: w.address, payload: hex, nonce }));
  return { user: w.address, payload: hex, nonce, signature };
}

/** The payload and the envelope of one forced request: payload nonce `payload_nonce` (default envelope + 1; any value is valid). */
export function forcedEnvelope(
  w: SyncSigner,
  r: ForcedRequest,
  nonce: number,
  opts: { payload_nonce?: number; kind_member?: boolean } = {},
): { envelope: SignedBody; body: SignedBody; payload_nonce: number } {
  const payload_nonce = opts.payload_nonce ?? nonce + 1;
  if (!Number.isSafeInteger(payload_nonce) || payload_nonce <= 0) {
    throw new RangeError(`payload_nonce (${payload_nonce}) must be a positive safe integer`);
  }
  const body = forcedRequestBody(w, r, payload_nonce);
  const payload = encodeForcedPayload(body, { kind: opts.kind_member === false ? false : r.kind });
  return { envelope: forceIncludeBody(w, payload, nonce), body, payload_nonce };
}

// ------------------------------------------------------------------ batches

/** One item of `POST /orders/batch`, described like the direct call's input. */
export type BatchRequest = Extract<ForcedRequest, { kind: 'order' | 'cancel' | 'amend' | 'cancel_all' }>;

/**
 * `POST /orders/batch`: each item signed with the same builder as its direct call, plus its
 * `kind`; `nextNonce` gives the items their nonces in order (the engine applies them in order).
 */
export function batchBody(w: SyncSigner, items: readonly BatchRequest[], nextNonce: () => number): { requests: SignedBody[] } {
  return { requests: items.map((item) => ({ kind: item.kind, ...forcedRequestBody(w, item, nextNonce()) })) };
}
