// Shape validation of the signed order-entry bodies (orders, cancels, amends, cancel-all,
// cancel-after), and what each one asks the engine to do. Values that need engine state
// (balances, ticks, lots, nonces) are the engine's to judge; this module judges only types,
// presence and formats, before any signature is checked. The account operations' bodies are
// signed_account_requests.ts; what both share, signed_body.ts.
import {
  amendMessage, cancelAfterMessage, cancelAllMessage, cancelMessage, orderJsonMessage, orderMessage, type OrderJsonMessageFields,
} from '../auth/messages.js';
import { CLIENT_ORDER_ID_BYTES_MAX } from '../ring/records.js';
import { NO_MARKET, OrderType, RequestKind, Side, Stp, Tif } from '../engine/types.js';
import { pooledRequest } from './request_pool.js';
import {
  address, addressOf, fail, integer, integerOf, isBodyError, market, nonce, nonceOf, signature, signatureOf, text, textOf, unknownField, DIGITS,
  type Body, type MarketLookup, type MessageForms, type Result, type SignedRequest,
} from './signed_body.js';

/**
 * An order's two forms (DECISIONS "Signatures"): the JSON form, which the SDK signs, first; the
 * colon form is written only when the JSON form did not verify (the signature batcher asks for
 * form 1 after form 0 failed), not for every order (issue 11: ~440 bytes and a dozen strings per
 * order on the front thread for a form the SDK never signs).
 */
class OrderForms implements MessageForms, OrderJsonMessageFields {
  readonly length = 2;
  private json: string | null = null;
  private colon: string | null = null;
  declare readonly market_id: string;
  declare readonly side: string;
  declare readonly price: number;
  declare readonly quantity: number;
  declare readonly nonce: number;
  declare readonly order_type: string;
  declare readonly time_in_force: string;
  declare readonly stp: string | null;
  declare readonly expires_after_ms: number | null;
  constructor(
    market_id: string, side: string, price: number, quantity: number,
    nonce: number, order_type: string, time_in_force: string,
    stp: string | null, expires_after_ms: number | null,
  ) {
    this.market_id = market_id;
    this.side = side;
    this.price = price;
    this.quantity = quantity;
    this.nonce = nonce;
    this.order_type = order_type;
    this.time_in_force = time_in_force;
    this.stp = stp;
    this.expires_after_ms = expires_after_ms;
  }

  at(k: number): string | undefined {
    if (k === 0) return this.json ??= orderJsonMessage(this);
    if (k === 1) return this.colon ??= orderMessage(this);
    return undefined;
  }
}

const CLIENT_ORDER_ID = /^[A-Za-z0-9_-]{1,36}$/;

const SIDES: Record<string, number> = { bid: Side.BID, ask: Side.ASK };
const TYPES: Record<string, number> = { limit: OrderType.LIMIT, market: OrderType.MARKET };
const TIFS: Record<string, number> = { gtc: Tif.GTC, ioc: Tif.IOC, fok: Tif.FOK, post_only: Tif.POST_ONLY };
const STPS: Record<string, number> = { expire_maker: Stp.EXPIRE_MAKER, expire_taker: Stp.EXPIRE_TAKER, expire_both: Stp.EXPIRE_BOTH };

function pick(table: Record<string, number>, value: string): number {
  return Object.prototype.hasOwnProperty.call(table, value) ? table[value] : -1;
}

/** An order's members (a Set: unknownField probes it once per member of every order). */
const ORDER_FIELDS: ReadonlySet<string> = new Set([
  'user', 'market_id', 'side', 'price', 'quantity', 'order_type', 'time_in_force', 'nonce', 'signature', 'client_order_id',
  'stp', 'expires_after_ms',
]);

/** An order body's members, read by name (one hidden class per body shape: no megamorphic keyed load, signed_body.ts). */
interface OrderBody {
  user?: unknown; market_id?: unknown; side?: unknown; price?: unknown; quantity?: unknown; order_type?: unknown;
  time_in_force?: unknown; nonce?: unknown; signature?: unknown; client_order_id?: unknown; stp?: unknown; expires_after_ms?: unknown;
}

export function parseOrder(body: Body, lookup: MarketLookup): Result<SignedRequest> {
  const unknown = unknownField(body, ORDER_FIELDS);
  if (unknown) return unknown;
  const b = body as OrderBody;
  const user = addressOf(b.user, 'user', 'INVALID_ORDER');
  if (isBodyError(user)) return user;
  const market_id = textOf(b.market_id, 'market_id', 'INVALID_ORDER');
  if (isBodyError(market_id)) return market_id;
  const side_text = textOf(b.side, 'side', 'INVALID_ORDER');
  if (isBodyError(side_text)) return side_text;
  const side = pick(SIDES, side_text);
  if (side < 0) return fail('INVALID_ORDER', 'side must be bid or ask');
  const type_text = textOf(b.order_type, 'order_type', 'INVALID_ORDER');
  if (isBodyError(type_text)) return type_text;
  const type = pick(TYPES, type_text);
  if (type < 0) return fail('INVALID_ORDER', 'order_type must be limit or market');
  const tif_text = textOf(b.time_in_force, 'time_in_force', 'INVALID_ORDER');
  if (isBodyError(tif_text)) return tif_text;
  const tif = pick(TIFS, tif_text);
  if (tif < 0) return fail('INVALID_ORDER', 'time_in_force must be gtc, ioc, fok or post_only');
  let price = 0;
  if (type === OrderType.MARKET) {
    if ('price' in body) return fail('INVALID_ORDER', 'a market order must not carry a price');
  } else {
    const p = integerOf(b.price, 'price', 'INVALID_ORDER');
    if (isBodyError(p)) return p;
    price = p;
  }
  const quantity = integerOf(b.quantity, 'quantity', 'INVALID_ORDER');
  if (isBodyError(quantity)) return quantity;
  const n = nonceOf(b.nonce, 'INVALID_ORDER');
  if (isBodyError(n)) return n;
  let coid = '';
  if (body.client_order_id !== undefined) {
    if (typeof body.client_order_id !== 'string' || !CLIENT_ORDER_ID.test(body.client_order_id)) {
      return fail('INVALID_ORDER', 'client_order_id must be 1 to 36 characters of [A-Za-z0-9_-]');
    }
    coid = body.client_order_id;
  }
  let stp_text: string | null = null;
  let stp: number = Stp.EXPIRE_MAKER;
  if (body.stp !== undefined) {
    stp = typeof body.stp === 'string' ? pick(STPS, body.stp) : -1;
    if (stp < 0) return fail('INVALID_ORDER', 'stp must be expire_maker, expire_taker or expire_both');
    stp_text = body.stp as string;
  }
  let expires: number | null = null;
  if (body.expires_after_ms !== undefined) {
    const v = body.expires_after_ms;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) {
      return fail('INVALID_ORDER', 'expires_after_ms must be a positive integer (epoch milliseconds)');
    }
    expires = v;
  }
  const sig = signatureOf(b.signature);
  if (isBodyError(sig)) return sig;
  const m = market(lookup, market_id);
  if (isBodyError(m)) return m;
  const r = pooledRequest();
  r.kind = RequestKind.PLACE;
  r.stp = stp;
  r.expires_after_ms = expires ?? 0;
  r.nonce = n;
  r.market = m;
  r.side = side;
  r.order_type = type;
  r.tif = tif;
  r.price_units = price;
  r.quantity_units = quantity;
  r.client_order_id = coid;
  return {
    request: r, address: user, signature_hex: sig, limit: 'orders',
    messages: new OrderForms(market_id, side_text, price, quantity, n, type_text, tif_text, stp_text, expires),
    json_form_only: stp_text !== null || expires !== null,
  };
}

/**
 * order_id as the cancel/amend wire carries it: a decimal string (or "" ), or an integer, at least
 * 1 (order ids start at 1). Never 0: the consent checker (da/consent_check.ts) reads a cancel's
 * order id 0 as "none" (`ringbook:cancel::<client id>:<nonce>`), so a cancel signed over "0" made
 * every verifier report the operator for fraud.
 */
function orderIdText(body: Body, allow_empty: boolean): Result<string> {
  const v = body.order_id;
  if (v === undefined || v === null) return allow_empty ? '' : fail('INVALID_REQUEST', 'order_id is required');
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1) return String(v);
  if (typeof v === 'string' && ((DIGITS.test(v) && v !== '0') || (allow_empty && v === ''))) return v;
  return fail('INVALID_REQUEST', 'order_id must be a decimal string of an order id (1 or more)');
}

export function parseCancel(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['user', 'order_id', 'client_order_id', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const id = orderIdText(body, true);
  if (isBodyError(id)) return id;
  let coid = '';
  if (body.client_order_id !== undefined && body.client_order_id !== '') {
    if (typeof body.client_order_id !== 'string' || !CLIENT_ORDER_ID.test(body.client_order_id)) {
      return fail('INVALID_REQUEST', 'client_order_id must be 1 to 36 characters of [A-Za-z0-9_-]');
    }
    coid = body.client_order_id;
  }
  if (id === '' && coid === '') return fail('INVALID_REQUEST', 'order_id or client_order_id is required');
  const order_id = id === '' ? 0 : Number(id);
  if (!Number.isSafeInteger(order_id)) return fail('INVALID_REQUEST', 'order_id is too large');
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.CANCEL;
  r.nonce = n;
  r.order_id = order_id;
  r.client_order_id = coid;
  return {
    request: r, address: user, signature_hex: sig, limit: 'cancels',
    messages: [cancelMessage({ order_id: id, client_order_id: coid, nonce: n })],
  };
}

export function parseAmend(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['user', 'order_id', 'price', 'quantity', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const id = orderIdText(body, false);
  if (isBodyError(id)) return id;
  const order_id = Number(id);
  if (!Number.isSafeInteger(order_id)) return fail('INVALID_REQUEST', 'order_id is too large');
  const price = integer(body, 'price', 'INVALID_ORDER');
  if (isBodyError(price)) return price;
  const quantity = integer(body, 'quantity', 'INVALID_ORDER');
  if (isBodyError(quantity)) return quantity;
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.AMEND;
  r.nonce = n;
  r.order_id = order_id;
  r.price_units = price;
  r.quantity_units = quantity;
  return {
    request: r, address: user, signature_hex: sig, limit: 'orders',
    messages: [amendMessage({ order_id: id, price, quantity, nonce: n })],
  };
}

export function parseCancelAll(body: Body, lookup: MarketLookup): Result<SignedRequest> {
  const unknown = unknownField(body, ['user', 'market_id', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  let m = NO_MARKET;
  let market_text = '*';
  if (body.market_id !== undefined && body.market_id !== null && body.market_id !== '*') {
    const id = text(body, 'market_id', 'INVALID_REQUEST');
    if (isBodyError(id)) return id;
    const idx = market(lookup, id);
    if (isBodyError(idx)) return idx;
    m = idx;
    market_text = id;
  }
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.CANCEL_ALL;
  r.nonce = n;
  r.market = m;
  return {
    request: r, address: user, signature_hex: sig, limit: 'cancels',
    messages: [cancelAllMessage({ market_id: market_text, nonce: n })],
  };
}

/**
 * POST /orders/cancel-after `{user, timeout_ms, nonce, signature}`: the dead-man switch. The range
 * (0, or 1,000 to 86,400,000) is the engine's rule (TIMEOUT_INVALID); the timeout rides in the
 * request's amount_units (RequestKind.CANCEL_AFTER).
 */
export function parseCancelAfter(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['user', 'timeout_ms', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const timeout_ms = integer(body, 'timeout_ms', 'INVALID_REQUEST');
  if (isBodyError(timeout_ms)) return timeout_ms;
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.CANCEL_AFTER;
  r.nonce = n;
  r.amount_units = timeout_ms;
  return {
    request: r, address: user, signature_hex: sig, limit: 'cancels',
    messages: [cancelAfterMessage({ timeout_ms, nonce: n })],
  };
}

export { CLIENT_ORDER_ID_BYTES_MAX };
