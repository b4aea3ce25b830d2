// WebSocket message shapes (docs/api.md, "WebSocket"): the client messages the server accepts,
// the channel names, and the server messages, serialized once each.
//
// Decisions:
// - Every message is one JSON object with a `type`. Prices, quantities, fees, balances and ids
//   (order, fill, trade) are strings holding fixed-point integers (DECISIONS "Wire values": order
//   ids are strings over WebSocket); `sequence` is a JSON integer; timestamps are ISO 8601 UTC
//   from the time of the batch that made the change (the engine's clock, not the front's).
// - The hot-path messages (trade, fill, order_update, balance_update, book_snapshot) are built by
//   string templates: every interpolated value is a number, an enum name, a market id, an address,
//   a client order id (`[A-Za-z0-9_-]`) or an ISO time, none of which needs JSON escaping. Control
//   messages (errors, replies) go through JSON.stringify because they may echo client text.
// - A client may add `request_id` (1 to 64 of `[A-Za-z0-9_.:-]`) to any message; replies and
//   errors about that message echo it. Errors about a message without one carry a server id.
import { ORDER_STATUS_NAMES, SIDE_NAMES } from '../../engine/types.js';
import { BALANCE_REASON_NAMES, UPDATE_REASON_NAMES } from '../../engine/events.js';
import { parseJsonObject } from '../json_object.js';
import { nextRequestId } from '../request_id.js';
import { isAddress } from '../../util/address.js';

// ---------------------------------------------------------------------------------------------
// Channels

export const PUBLIC_KINDS = ['book', 'book_delta', 'trades'] as const;
export const PRIVATE_KINDS = ['fills', 'orders', 'balances'] as const;
export type PublicKind = (typeof PUBLIC_KINDS)[number];
export type PrivateKind = (typeof PRIVATE_KINDS)[number];

/** Index of a private kind in per-address subscriber counters. */
export const PRIVATE_INDEX: Readonly<Record<PrivateKind, number>> = { fills: 0, orders: 1, balances: 2 };

export type Channel =
  | { kind: PublicKind; private: false; market: number; market_id: string; name: string }
  | { kind: PrivateKind; private: true; address: string; name: string };

const CHANNEL_TEXT_MAX = 64;

/**
 * Parses a channel name. `marketIndex` resolves a market id (exact, then uppercased) to its index
 * or -1. Returns the channel with its canonical name (market id as listed, address lowercase), or
 * an error sentence.
 */
export function parseChannel(text: unknown, marketIndex: (id: string) => number): Channel | string {
  if (typeof text !== 'string') return `a channel must be a string, got ${describe(text)}`;
  if (text.length > CHANNEL_TEXT_MAX) return `unknown channel ${describe(text)}`;
  const colon = text.indexOf(':');
  if (colon <= 0) return `unknown channel ${describe(text)}: channels are book:<market>, book_delta:<market>, trades:<market>, fills:<address>, orders:<address>, balances:<address>`;
  const kind = text.slice(0, colon);
  const arg = text.slice(colon + 1);
  if (kind === 'book' || kind === 'book_delta' || kind === 'trades') {
    let m = marketIndex(arg);
    let id = arg;
    if (m < 0) {
      id = arg.toUpperCase();
      m = marketIndex(id);
    }
    if (m < 0) return `unknown market ${describe(arg)} in channel ${describe(text)}`;
    return { kind, private: false, market: m, market_id: id, name: `${kind}:${id}` };
  }
  if (kind === 'fills' || kind === 'orders' || kind === 'balances') {
    if (!isAddress(arg)) return `channel ${describe(text)} must name an address: 0x followed by 40 hexadecimal digits`;
    const address = arg.toLowerCase();
    return { kind, private: true, address, name: `${kind}:${address}` };
  }
  return `unknown channel ${describe(text)}: channels are book:<market>, book_delta:<market>, trades:<market>, fills:<address>, orders:<address>, balances:<address>`;
}

/** A short, safe rendering of client text for an error sentence. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return JSON.stringify(value.length > 70 ? `${value.slice(0, 70)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

// ---------------------------------------------------------------------------------------------
// Client messages

export type ClientMessage =
  | { type: 'subscribe' | 'unsubscribe'; channels: unknown[]; request_id: string | null }
  | { type: 'request_challenge'; address: unknown; request_id: string | null }
  | { type: 'auth'; address: unknown; signature: unknown; request_id: string | null }
  | { type: 'ping'; request_id: string | null }
  | { type: 'cancel_on_disconnect'; enabled: boolean; request_id: string | null }
  | { type: 'post'; id: string; path: unknown; body: unknown; request_id: string | null };

export type ParsedClientMessage =
  | { ok: true; message: ClientMessage }
  | { ok: false; message: string; request_id: string | null };

const REQUEST_ID = /^[A-Za-z0-9_.:-]{1,64}$/;
export const CLIENT_TYPES = ['subscribe', 'unsubscribe', 'request_challenge', 'auth', 'ping', 'cancel_on_disconnect', 'post'] as const;
/** A post's `id` (DECISIONS: 1 to 64 characters). */
const POST_ID_LENGTH_MAX = 64;

/** Parses one client frame; failures are sentences for an INVALID_REQUEST error. */
export function parseClientMessage(data: ArrayBuffer): ParsedClientMessage {
  // The frame as uWS handed it (readable during this call): no Buffer view per message.
  const parsed = parseJsonObject(data);
  if (!parsed.ok) return { ok: false, message: parsed.message.replace(/^body/, 'message'), request_id: null };
  const o = parsed.value;
  let request_id: string | null = null;
  if (o.request_id !== undefined) {
    if (typeof o.request_id !== 'string' || !REQUEST_ID.test(o.request_id)) {
      return { ok: false, message: 'request_id must be 1 to 64 of [A-Za-z0-9_.:-]', request_id: null };
    }
    request_id = o.request_id;
  }
  const type = o.type;
  switch (type) {
    case 'subscribe':
    case 'unsubscribe': {
      if (!Array.isArray(o.channels) || o.channels.length === 0) {
        return { ok: false, message: `${type} needs channels: a non-empty array of channel names`, request_id };
      }
      return { ok: true, message: { type, channels: o.channels, request_id } };
    }
    case 'request_challenge':
      return { ok: true, message: { type, address: o.address, request_id } };
    case 'auth':
      return { ok: true, message: { type, address: o.address, signature: o.signature, request_id } };
    case 'ping':
      return { ok: true, message: { type, request_id } };
    case 'cancel_on_disconnect':
      if (typeof o.enabled !== 'boolean') return { ok: false, message: 'cancel_on_disconnect needs enabled: true or false', request_id };
      return { ok: true, message: { type, enabled: o.enabled, request_id } };
    case 'post':
      if (typeof o.id !== 'string' || o.id.length === 0 || o.id.length > POST_ID_LENGTH_MAX) {
        return { ok: false, message: `post needs id: a string of 1 to ${POST_ID_LENGTH_MAX} characters`, request_id };
      }
      return { ok: true, message: { type, id: o.id, path: o.path, body: o.body, request_id } };
    default:
      if (type === undefined) return { ok: false, message: 'message has no type', request_id };
      return {
        ok: false,
        message: `unknown message type ${describe(type)}: expected one of ${CLIENT_TYPES.join(', ')}`,
        request_id,
      };
  }
}

// ---------------------------------------------------------------------------------------------
// Control messages

function withRequestId(o: Record<string, unknown>, request_id: string | null): string {
  if (request_id !== null) o.request_id = request_id;
  return JSON.stringify(o);
}

/** The acknowledgement of a cancel_on_disconnect message: the same message. */
export function cancelOnDisconnectReply(enabled: boolean, request_id: string | null): string {
  return withRequestId({ type: 'cancel_on_disconnect', enabled }, request_id);
}

/** `{"type":"error","code","message","request_id"}`; a server id when the client gave none. */
export function errorMessage(code: string, message: string, request_id: string | null): string {
  return JSON.stringify({ type: 'error', code, message, request_id: request_id ?? nextRequestId() });
}

export function subscribedMessage(channels: string[], request_id: string | null): string {
  return withRequestId({ type: 'subscribed', channels }, request_id);
}

export function unsubscribedMessage(channels: string[], request_id: string | null): string {
  return withRequestId({ type: 'unsubscribed', channels }, request_id);
}

export function challengeReply(nonce: string, expires_ms: number, request_id: string | null): string {
  return withRequestId({ type: 'challenge', nonce, expires_at: new Date(expires_ms).toISOString() }, request_id);
}

export function authSuccessMessage(address: string, request_id: string | null): string {
  return withRequestId({ type: 'auth_success', address }, request_id);
}

export function pongMessage(now_ms: number, request_id: string | null): string {
  return withRequestId({ type: 'pong', timestamp: new Date(now_ms).toISOString() }, request_id);
}

// ---------------------------------------------------------------------------------------------
// Event messages (hot path)

/** Levels best first: [price, quantity] pairs of numbers. */
export type Levels = readonly (readonly [number, number])[];

function levelsJson(levels: Levels): string {
  if (levels.length === 0) return '[]';
  let s = '[';
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i];
    s += (i === 0 ? '["' : ',["') + l[0] + '","' + l[1] + '"]';
  }
  return s + ']';
}

/** `checksum`: src/marketdata/book_checksum.ts over the best 25 levels of each side. */
export function bookSnapshotMessage(market_id: string, sequence: number, bids: Levels, asks: Levels, checksum: number, iso: string): string {
  return `{"type":"book_snapshot","market_id":"${market_id}","sequence":${sequence},"bids":${levelsJson(bids)},"asks":${levelsJson(asks)},"checksum":${checksum},"timestamp":"${iso}"}`;
}

/**
 * The levels of one market that changed in a committed batch (quantity 0: the level is gone),
 * `prev_sequence` the sequence of the previous message on the channel, `checksum` of the book after.
 */
export function bookDeltaMessage(
  market_id: string, sequence: number, prev_sequence: number, bids: Levels, asks: Levels, checksum: number, iso: string,
): string {
  return `{"type":"book_delta","market_id":"${market_id}","sequence":${sequence},"prev_sequence":${prev_sequence},"bids":${levelsJson(bids)},"asks":${levelsJson(asks)},"checksum":${checksum},"timestamp":"${iso}"}`;
}

export function tradeMessage(market_id: string, fill_id: number, price: number, quantity: number, taker_side: number, iso: string): string {
  return `{"type":"trade","market_id":"${market_id}","trade_id":"${fill_id}","price":"${price}","quantity":"${quantity}","side":"${SIDE_NAMES[taker_side]}","timestamp":"${iso}"}`;
}

/**
 * `fee` is the signed fee of the HTTP fill record split in two non-negative strings: a positive
 * fee is `fee`, a negative one (maker rebate) is `rebate`; fee - rebate = the HTTP `fee`.
 */
export function fillMessage(
  fill_id: number, order_id: number, market_id: string, side: number, price: number, quantity: number,
  filled_cumulative: number, is_maker: boolean, signed_fee: number, batch_id: number, iso: string,
): string {
  const fee = signed_fee > 0 ? signed_fee : 0;
  const rebate = signed_fee < 0 ? -signed_fee : 0;
  return `{"type":"fill","fill_id":"${fill_id}","order_id":"${order_id}","market_id":"${market_id}","side":"${SIDE_NAMES[side]}","price":"${price}","quantity":"${quantity}","filled_quantity_cumulative":"${filled_cumulative}","is_maker":${is_maker},"fee":"${fee}","rebate":"${rebate}","batch_id":"${batch_id}","timestamp":"${iso}"}`;
}

export function orderUpdateMessage(
  order_id: number, client_order_id: string, market_id: string, side: number, status: number, price: number,
  quantity: number, filled: number, remaining: number, last_fill_price: number, reason: number, iso: string,
): string {
  return `{"type":"order_update","order_id":"${order_id}","client_order_id":"${client_order_id}","market_id":"${market_id}","side":"${SIDE_NAMES[side]}","status":"${ORDER_STATUS_NAMES[status]}","price":"${price}","quantity":"${quantity}","filled_quantity":"${filled}","remaining_quantity":"${remaining}","last_fill_price":"${last_fill_price}","reason":"${UPDATE_REASON_NAMES[reason] ?? 'unknown'}","timestamp":"${iso}"}`;
}

export function balanceUpdateMessage(asset: string, available: number, locked: number, reason: number, iso: string): string {
  return `{"type":"balance_update","asset":"${asset}","total":"${available + locked}","available":"${available}","reserved":"${locked}","reason":"${BALANCE_REASON_NAMES[reason] ?? 'unknown'}","timestamp":"${iso}"}`;
}

/** Reasons shown in the one error frame of a message with refused channels. */
const REFUSALS_SHOWN_MAX = 3;

/** The refused channels of one subscribe/unsubscribe: the first code, the first few reasons. */
export class Refusals {
  code: 'INVALID_REQUEST' | 'UNAUTHORIZED' | null = null;
  count = 0;
  private readonly shown: string[] = [];

  add(code: 'INVALID_REQUEST' | 'UNAUTHORIZED', reason: string): void {
    if (this.code === null) this.code = code;
    this.count++;
    if (this.shown.length < REFUSALS_SHOWN_MAX) this.shown.push(reason);
  }

  sentence(named: number): string {
    const more = this.count - this.shown.length;
    const prefix = this.count === 1 ? '' : `${this.count} of ${named} channels refused: `;
    return prefix + this.shown.join('; ') + (more > 0 ? `; and ${more} more` : '');
  }
}
