// Shape validation of the signed POST bodies, and what each one asks the engine to do. Values
// that need engine state (balances, ticks, lots, nonces) are the engine's to judge; this module
// judges only types, presence and formats, before any signature is checked.
import {
  amendMessage, approveAgentMessage, cancelAfterMessage, revokeAgentMessage, cancelAllMessage, cancelMessage, orderJsonMessage, orderMessage, referralMessage,
  withdrawalMessage, type OrderJsonMessageFields,
} from '../auth/messages.js';
import { CLIENT_ORDER_ID_BYTES_MAX } from '../ring/records.js';
import {
  emptyRequest, NO_MARKET, OrderType, RequestKind, Side, Stp, Tif, type Request,
} from '../engine/types.js';
import { isAddress } from '../util/address.js';

/**
 * Requests of answered signed requests, kept for the next parse: a Request is ~28 fields (~250
 * bytes, and boxes for prices past 2^31), one per signed request on the front (issue 11, branch
 * h11z). The signed path gives a request back (releaseRequest) once its answer is written: from
 * then on nothing reads it (the ring holds a copy since the submit). Requests that never reach an
 * answer (refused, or a group's) are simply not given back. At most REQUEST_POOL_MAX kept: the
 * requests answered in one burst, well above the ~256 in flight of the load bench.
 */
export const REQUEST_POOL_MAX = 4096;
const request_pool: Request[] = [];

/** A Request with emptyRequest()'s values: a given-back one when there is one, else a new one. */
export function pooledRequest(): Request {
  const r = request_pool.pop();
  if (r === undefined) return emptyRequest();
  resetRequest(r);
  return r;
}

/** Gives `r` back once nothing will read it any more (after its signed request's answer). */
export function releaseRequest(r: Request): void {
  if (request_pool.length < REQUEST_POOL_MAX) request_pool.push(r);
}

/** Writes emptyRequest()'s values into `r` (test/gateway/signed_requests.test.ts checks every field of it). */
export function resetRequest(r: Request): void {
  r.kind = 0; r.account = 0; r.nonce = 0; r.market = NO_MARKET; r.side = 0; r.order_type = 0; r.tif = 0;
  r.price_units = 0; r.quantity_units = 0; r.order_id = 0; r.client_order_id = ''; r.asset = 0; r.asset_quote = 0;
  r.amount_units = 0; r.maker_fee_bps = 0; r.taker_fee_bps = 0; r.credit_limit_units = 0;
  r.auto_cancel_ratio_ppm = 0; r.tick_size_units = 0; r.lot_size_units = 0; r.referrer_account = 0;
  r.inner_kind = 0; r.inner_nonce = 0; r.inner_reject = 0; r.stp = 0; r.expires_after_ms = 0; r.signer = 0; r.agent_account = 0;
}

export interface BodyError {
  code: 'INVALID_REQUEST' | 'INVALID_ORDER' | 'INVALID_SIGNATURE' | 'MARKET_NOT_FOUND';
  message: string;
}

export interface SignedRequest {
  request: Request;
  /** Lowercase 0x address that must have signed. */
  address: string;
  signature_hex: string;
  /** Accepted message forms, most likely first (orders have two; DECISIONS). */
  messages: MessageForms;
  /** What to rate-limit it as (referrals and forced inclusions count as slow operations, like withdrawals). */
  limit: 'orders' | 'cancels' | 'withdrawals';
  /**
   * The record's second address, lowercase 0x (the matcher resolves it to an account): REFER's
   * referrer, APPROVE_AGENT's and REVOKE_AGENT's agent.
   */
  referrer?: string;
  /**
   * The order carries stp / expires_after_ms: only messages[0] (the JSON form) may sign it. The
   * colon form is still checked, to answer INVALID_ORDER ("needs the JSON form") rather than
   * INVALID_SIGNATURE when that is what the client signed (DECISIONS).
   */
  json_form_only?: boolean;
}

/**
 * The message forms a signature may be over, most likely first: an array, or forms built only when
 * asked (OrderForms). `at(k)` is undefined past the last form.
 */
export interface MessageForms {
  readonly length: number;
  at(k: number): string | undefined;
}

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
  constructor(
    readonly market_id: string, readonly side: string, readonly price: number, readonly quantity: number,
    readonly nonce: number, readonly order_type: string, readonly time_in_force: string,
    readonly stp: string | null, readonly expires_after_ms: number | null,
  ) {}

  at(k: number): string | undefined {
    if (k === 0) return this.json ??= orderJsonMessage(this);
    if (k === 1) return this.colon ??= orderMessage(this);
    return undefined;
  }
}

export interface MarketLookup {
  marketIndex(id: string): number;
}

export interface AssetInfo {
  index: number;
  onchain_decimals: number;
}

const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
const CLIENT_ORDER_ID = /^[A-Za-z0-9_-]{1,36}$/;
const DIGITS = /^(0|[1-9][0-9]{0,29})$/;

type Body = Record<string, unknown>;
type Result<T> = T | BodyError;

export function isBodyError<T>(x: Result<T>): x is BodyError {
  return typeof x === 'object' && x !== null && 'code' in x && 'message' in x && !('request' in x);
}

function fail(code: BodyError['code'], message: string): BodyError {
  return { code, message };
}

function unknownField(body: Body, allowed: readonly string[]): BodyError | null {
  // for-in, not Object.keys: no key array per request (issue 11); own keys only, as Object.keys.
  for (const k in body) {
    if (!Object.prototype.hasOwnProperty.call(body, k)) continue;
    if (!allowed.includes(k)) return fail('INVALID_REQUEST', `unknown field ${JSON.stringify(k).slice(0, 40)}`);
  }
  return null;
}

function address(body: Body, field: string, missing: BodyError['code']): Result<string> {
  const v = body[field];
  if (v === undefined) return fail(missing, `${field} is required`);
  if (typeof v !== 'string' || !isAddress(v)) return fail('INVALID_REQUEST', `${field} must be a 0x-prefixed 20-byte hex address`);
  return v.toLowerCase();
}

function signature(body: Body): Result<string> {
  const v = body.signature;
  if (typeof v !== 'string' || !SIGNATURE.test(v)) return fail('INVALID_SIGNATURE', 'signature must be 0x followed by 65 bytes of hex');
  return v;
}

/**
 * A JSON integer that must be a safe integer (sign allowed: the engine judges the value). Not an
 * integer at all is INVALID_REQUEST (wrong type); an integer beyond 2^53 - 1 is `invalid`
 * (INVALID_ORDER for order fields: DECISIONS "Numbers", never rounded).
 */
function integer(body: Body, field: string, invalid: BodyError['code']): Result<number> {
  const v = body[field];
  if (v === undefined || v === null) return fail(invalid, `${field} is required`);
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    return fail('INVALID_REQUEST', `${field} must be an integer (a JSON number, fixed-point x 1,000,000)`);
  }
  if (!Number.isSafeInteger(v)) return fail(invalid, `${field} must be at most 2^53 - 1 (never rounded)`);
  return v;
}

function nonce(body: Body, invalid: BodyError['code'] = 'INVALID_REQUEST'): Result<number> {
  const v = integer(body, 'nonce', invalid);
  if (typeof v === 'number' && v < 0) return fail('INVALID_REQUEST', 'nonce must be a non-negative integer');
  return v;
}

function text(body: Body, field: string, missing: BodyError['code']): Result<string> {
  const v = body[field];
  if (v === undefined || v === null) return fail(missing, `${field} is required`);
  if (typeof v !== 'string') return fail('INVALID_REQUEST', `${field} must be a string`);
  return v;
}

function market(lookup: MarketLookup, id: string): Result<number> {
  const m = lookup.marketIndex(id);
  if (m < 0) return fail('MARKET_NOT_FOUND', `market ${JSON.stringify(id).slice(0, 40)} not found`);
  return m;
}

const SIDES: Record<string, number> = { bid: Side.BID, ask: Side.ASK };
const TYPES: Record<string, number> = { limit: OrderType.LIMIT, market: OrderType.MARKET };
const TIFS: Record<string, number> = { gtc: Tif.GTC, ioc: Tif.IOC, fok: Tif.FOK, post_only: Tif.POST_ONLY };
const STPS: Record<string, number> = { expire_maker: Stp.EXPIRE_MAKER, expire_taker: Stp.EXPIRE_TAKER, expire_both: Stp.EXPIRE_BOTH };

function pick(table: Record<string, number>, value: string): number {
  return Object.prototype.hasOwnProperty.call(table, value) ? table[value] : -1;
}

const ORDER_FIELDS = [
  'user', 'market_id', 'side', 'price', 'quantity', 'order_type', 'time_in_force', 'nonce', 'signature', 'client_order_id',
  'stp', 'expires_after_ms',
] as const;

export function parseOrder(body: Body, lookup: MarketLookup): Result<SignedRequest> {
  const unknown = unknownField(body, ORDER_FIELDS);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_ORDER');
  if (isBodyError(user)) return user;
  const market_id = text(body, 'market_id', 'INVALID_ORDER');
  if (isBodyError(market_id)) return market_id;
  const side_text = text(body, 'side', 'INVALID_ORDER');
  if (isBodyError(side_text)) return side_text;
  const side = pick(SIDES, side_text);
  if (side < 0) return fail('INVALID_ORDER', 'side must be bid or ask');
  const type_text = text(body, 'order_type', 'INVALID_ORDER');
  if (isBodyError(type_text)) return type_text;
  const type = pick(TYPES, type_text);
  if (type < 0) return fail('INVALID_ORDER', 'order_type must be limit or market');
  const tif_text = text(body, 'time_in_force', 'INVALID_ORDER');
  if (isBodyError(tif_text)) return tif_text;
  const tif = pick(TIFS, tif_text);
  if (tif < 0) return fail('INVALID_ORDER', 'time_in_force must be gtc, ioc, fok or post_only');
  let price = 0;
  if (type === OrderType.MARKET) {
    if ('price' in body) return fail('INVALID_ORDER', 'a market order must not carry a price');
  } else {
    const p = integer(body, 'price', 'INVALID_ORDER');
    if (isBodyError(p)) return p;
    price = p;
  }
  const quantity = integer(body, 'quantity', 'INVALID_ORDER');
  if (isBodyError(quantity)) return quantity;
  const n = nonce(body, 'INVALID_ORDER');
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
  const sig = signature(body);
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

/** order_id as the cancel/amend wire carries it: a decimal string (or "" ), or an integer. */
function orderIdText(body: Body, allow_empty: boolean): Result<string> {
  const v = body.order_id;
  if (v === undefined || v === null) return allow_empty ? '' : fail('INVALID_REQUEST', 'order_id is required');
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && (DIGITS.test(v) || (allow_empty && v === ''))) return v;
  return fail('INVALID_REQUEST', 'order_id must be a decimal string of an order id');
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

/**
 * Withdrawal amounts are in the asset's on-chain smallest unit (wei for ETH, DECISIONS), as a
 * decimal string or a safe JSON integer; engine units are 10^(decimals - 6) of those.
 */
export function parseWithdrawal(body: Body, assets: Map<string, AssetInfo>): Result<SignedRequest> {
  const unknown = unknownField(body, ['address', 'asset', 'amount', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'address', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const symbol = text(body, 'asset', 'INVALID_REQUEST');
  if (isBodyError(symbol)) return symbol;
  const asset = assets.get(symbol);
  if (asset === undefined) return fail('INVALID_REQUEST', `unknown asset ${JSON.stringify(symbol).slice(0, 20)}`);
  const v = body.amount;
  let amount_text: string;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) amount_text = String(v);
  else if (typeof v === 'string' && DIGITS.test(v)) amount_text = v;
  else return fail('INVALID_REQUEST', 'amount must be a non-negative integer (decimal string or JSON integer) in the asset\'s smallest on-chain unit');
  const scale = 10n ** BigInt(asset.onchain_decimals - 6);
  const onchain = BigInt(amount_text);
  if (onchain % scale !== 0n) {
    return fail('INVALID_ORDER', `amount must be a multiple of ${scale} (one engine unit of ${symbol})`);
  }
  const units = onchain / scale;
  if (units > BigInt(Number.MAX_SAFE_INTEGER)) return fail('INVALID_REQUEST', 'amount is too large');
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.WITHDRAW;
  r.nonce = n;
  r.asset = asset.index;
  r.amount_units = Number(units);
  return {
    request: r, address: user, signature_hex: sig, limit: 'withdrawals',
    messages: [withdrawalMessage({ address: body.address as string, asset: symbol, amount: amount_text, nonce: n })],
  };
}

const AGENT_NAME = /^[A-Za-z0-9_.-]{1,16}$/;

/**
 * POST /agents `{user, agent, name, valid_until_ms, nonce, signature}`, signed by the user over the
 * agent address exactly as sent. valid_until_ms rides in amount_units and the name in
 * client_order_id (RequestKind.APPROVE_AGENT); its range is the engine's rule (batch time).
 */
export function parseApproveAgent(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['user', 'agent', 'name', 'valid_until_ms', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const agent = address(body, 'agent', 'INVALID_REQUEST');
  if (isBodyError(agent)) return agent;
  const name = text(body, 'name', 'INVALID_REQUEST');
  if (isBodyError(name)) return name;
  if (!AGENT_NAME.test(name)) return fail('INVALID_REQUEST', 'name must be 1 to 16 characters of [A-Za-z0-9_.-]');
  const valid_until_ms = integer(body, 'valid_until_ms', 'INVALID_REQUEST');
  if (isBodyError(valid_until_ms)) return valid_until_ms;
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.APPROVE_AGENT;
  r.nonce = n;
  r.amount_units = valid_until_ms;
  r.client_order_id = name;
  return {
    request: r, address: user, referrer: agent, signature_hex: sig, limit: 'withdrawals',
    messages: [approveAgentMessage({ agent: body.agent as string, name, valid_until_ms, nonce: n })],
  };
}

/** POST /agents/revoke `{user, agent, nonce, signature}`, signed by the user. */
export function parseRevokeAgent(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['user', 'agent', 'nonce', 'signature']);
  if (unknown) return unknown;
  const user = address(body, 'user', 'INVALID_REQUEST');
  if (isBodyError(user)) return user;
  const agent = address(body, 'agent', 'INVALID_REQUEST');
  if (isBodyError(agent)) return agent;
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.REVOKE_AGENT;
  r.nonce = n;
  return {
    request: r, address: user, referrer: agent, signature_hex: sig, limit: 'withdrawals',
    messages: [revokeAgentMessage({ agent: body.agent as string, nonce: n })],
  };
}

/** POST /referral/register: signed by the referred user over the addresses exactly as sent. */
export function parseReferral(body: Body): Result<SignedRequest> {
  const unknown = unknownField(body, ['referred', 'referrer', 'nonce', 'signature']);
  if (unknown) return unknown;
  const referred = address(body, 'referred', 'INVALID_REQUEST');
  if (isBodyError(referred)) return referred;
  const referrer = address(body, 'referrer', 'INVALID_REQUEST');
  if (isBodyError(referrer)) return referrer;
  const n = nonce(body);
  if (isBodyError(n)) return n;
  const sig = signature(body);
  if (isBodyError(sig)) return sig;
  const r = pooledRequest();
  r.kind = RequestKind.REFER;
  r.nonce = n;
  return {
    request: r, address: referred, referrer, signature_hex: sig, limit: 'withdrawals',
    messages: [referralMessage({ referred: body.referred as string, referrer: body.referrer as string, nonce: n })],
  };
}

export { CLIENT_ORDER_ID_BYTES_MAX };
