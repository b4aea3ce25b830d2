// What every signed body parser shares (signed_requests.ts: order entry; signed_account_requests.ts:
// withdrawals, agents, referrals): the parsed request's shape, the refusal's, and the readers of
// the body's fields. They judge only types, presence and formats, before any signature is checked.
import { checkedAddress } from '../auth/address_rows.js';
import { checkSignatureHex } from '../ring/consent.js';
import type { Request } from '../engine/types.js';

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

export interface MarketLookup {
  marketIndex(id: string): number;
}

export interface AssetInfo {
  index: number;
  onchain_decimals: number;
}

export const DIGITS = /^(0|[1-9][0-9]{0,29})$/;

export type Body = Record<string, unknown>;
export type Result<T> = T | BodyError;

export function isBodyError<T>(x: Result<T>): x is BodyError {
  return typeof x === 'object' && x !== null && 'code' in x && 'message' in x && !('request' in x);
}

export function fail(code: BodyError['code'], message: string): BodyError {
  return { code, message };
}

/**
 * The first member of `body` not in `allowed`, refused; null when there is none. A Set for the
 * hot bodies (the order: a hash probe per member, where an array's includes() compared each member
 * with every allowed name; issue 11, branch h17f), an array elsewhere.
 */
export function unknownField(body: Body, allowed: readonly string[] | ReadonlySet<string>): BodyError | null {
  // for-in, not Object.keys: no key array per request (issue 11); own keys only, as Object.keys.
  if (allowed instanceof Set) {
    for (const k in body) {
      if (!Object.prototype.hasOwnProperty.call(body, k)) continue;
      if (!allowed.has(k)) return unknown(k);
    }
    return null;
  }
  const list = allowed as readonly string[];
  for (const k in body) {
    if (!Object.prototype.hasOwnProperty.call(body, k)) continue;
    if (!list.includes(k)) return unknown(k);
  }
  return null;
}

function unknown(k: string): BodyError {
  return fail('INVALID_REQUEST', `unknown field ${JSON.stringify(k).slice(0, 40)}`);
}

// Each reader has a form over the body and a field name, and an `...Of` form over the value, for
// parsers that read their members by name (body.price): a reader's own `body[field]` is a keyed
// load whose name changes from call to call, megamorphic once a parser reads a few fields through
// it (V8's KeyedLoadIC_Megamorphic, ~1,100 instructions per order; issue 11, branch h17f).

export function address(body: Body, field: string, missing: BodyError['code']): Result<string> {
  return addressOf(body[field], field, missing);
}

export function addressOf(v: unknown, field: string, missing: BodyError['code']): Result<string> {
  if (v === undefined) return fail(missing, `${field} is required`);
  // Checked and lowercased through the front's address rows (address_rows.ts): a known text is one Map probe.
  const lower = typeof v === 'string' ? checkedAddress(v) : null;
  if (lower === null) return fail('INVALID_REQUEST', `${field} must be a 0x-prefixed 20-byte hex address`);
  return lower;
}

export function signature(body: Body): Result<string> {
  return signatureOf(body.signature);
}

/**
 * `0x` and 130 hex digits, either case (/^0x[0-9a-fA-F]{130}$/'s texts). Checked by decoding them
 * (ring/consent.ts checkSignatureHex, one native pass), which leaves the 65 bytes for the consent
 * encoder: the regex (~3,600 instructions) and the encoder's own decode were two passes over the
 * same digits (issue 11, branch h20c; a JS loop over a lookup table was no faster than the regex, h17f).
 */
export function signatureOf(v: unknown): Result<string> {
  if (typeof v !== 'string' || !checkSignatureHex(v)) return fail('INVALID_SIGNATURE', 'signature must be 0x followed by 65 bytes of hex');
  return v;
}

/**
 * A JSON integer that must be a safe integer (sign allowed: the engine judges the value). Not an
 * integer at all is INVALID_REQUEST (wrong type); an integer beyond 2^53 - 1 is `invalid`
 * (INVALID_ORDER for order fields: DECISIONS "Numbers", never rounded).
 */
export function integer(body: Body, field: string, invalid: BodyError['code']): Result<number> {
  return integerOf(body[field], field, invalid);
}

export function integerOf(v: unknown, field: string, invalid: BodyError['code']): Result<number> {
  if (v === undefined || v === null) return fail(invalid, `${field} is required`);
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    return fail('INVALID_REQUEST', `${field} must be an integer (a JSON number, fixed-point x 1,000,000)`);
  }
  if (!Number.isSafeInteger(v)) return fail(invalid, `${field} must be at most 2^53 - 1 (never rounded)`);
  return v;
}

export function nonce(body: Body, invalid: BodyError['code'] = 'INVALID_REQUEST'): Result<number> {
  return nonceOf(body.nonce, invalid);
}

export function nonceOf(v: unknown, invalid: BodyError['code'] = 'INVALID_REQUEST'): Result<number> {
  const n = integerOf(v, 'nonce', invalid);
  if (typeof n === 'number' && n < 0) return fail('INVALID_REQUEST', 'nonce must be a non-negative integer');
  return n;
}

export function text(body: Body, field: string, missing: BodyError['code']): Result<string> {
  return textOf(body[field], field, missing);
}

export function textOf(v: unknown, field: string, missing: BodyError['code']): Result<string> {
  if (v === undefined || v === null) return fail(missing, `${field} is required`);
  if (typeof v !== 'string') return fail('INVALID_REQUEST', `${field} must be a string`);
  return v;
}

export function market(lookup: MarketLookup, id: string): Result<number> {
  const m = lookup.marketIndex(id);
  if (m < 0) return fail('MARKET_NOT_FOUND', `market ${JSON.stringify(id).slice(0, 40)} not found`);
  return m;
}
