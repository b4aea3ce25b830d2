// POST /force-include: the envelope, and the signed request body it carries (the payload).
//
// The envelope is judged here and now: a bad shape is INVALID_REQUEST, a bad envelope signature
// INVALID_SIGNATURE (401), both before the engine sees anything. The payload is judged too, but
// its verdict travels with the entry into the engine's inbox: a payload that is not a well-formed
// signed body, is signed by someone else, or carries a bad signature is still queued, then refused
// at inclusion with that reason (DECISIONS: never dropped silently). docs/api.md has the rules.
import { forceIncludeMessage, forceIncludePayloadHash } from '../auth/messages.js';
import { emptyRequest, Reject, RequestKind, type Request } from '../engine/types.js';
import {
  isBodyError, parseAmend, parseCancel, parseCancelAll, parseOrder, parseReferral, parseWithdrawal,
  type AssetInfo, type BodyError, type MarketLookup, type SignedRequest,
} from './signed_requests.js';

/** Largest payload accepted, in bytes (a signed body is a few hundred). */
export const FORCE_PAYLOAD_BYTES_MAX = 4096;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;

export const FORCED_KIND_NAMES = ['order', 'cancel', 'amend', 'cancel_all', 'withdrawal', 'referral'] as const;
export type ForcedKindName = (typeof FORCED_KIND_NAMES)[number];

const KIND_OF_NAME: Readonly<Record<ForcedKindName, number>> = {
  order: RequestKind.PLACE, cancel: RequestKind.CANCEL, amend: RequestKind.AMEND,
  cancel_all: RequestKind.CANCEL_ALL, withdrawal: RequestKind.WITHDRAW, referral: RequestKind.REFER,
};

export interface ForceEnvelope {
  user: string;
  payload_hex: string;
  payload_hash: string;
  nonce: number;
  signature_hex: string;
  message: string;
}

export interface ForcedPayload {
  /** The payload's request (its kind and nonce as signed; empty when malformed). */
  request: Request;
  kind_name: ForcedKindName | null;
  referrer: string | null;
  /** Reject.NONE, or why it will be refused at inclusion (before the signature check). */
  verdict: number;
  /** Why the payload is malformed, for the log. */
  problem: string;
  /** What to verify when the verdict is still NONE. */
  signed: SignedRequest | null;
}

export function parseForceEnvelope(body: Record<string, unknown>): ForceEnvelope | BodyError {
  const bad = (message: string, code: BodyError['code'] = 'INVALID_REQUEST'): BodyError => ({ code, message });
  for (const k of Object.keys(body)) {
    if (!['user', 'payload', 'nonce', 'signature'].includes(k)) return bad(`unknown field ${JSON.stringify(k).slice(0, 40)}`);
  }
  const user = body.user;
  if (typeof user !== 'string' || !ADDRESS.test(user)) return bad('user must be a 0x-prefixed 20-byte hex address');
  const payload = body.payload;
  if (typeof payload !== 'string' || !/^0x(?:[0-9a-fA-F]{2})+$/.test(payload)) {
    return bad('payload must be 0x-prefixed hex of the signed request body (whole bytes)');
  }
  if ((payload.length - 2) / 2 > FORCE_PAYLOAD_BYTES_MAX) return bad(`payload must be at most ${FORCE_PAYLOAD_BYTES_MAX} bytes`);
  const nonce = body.nonce;
  if (typeof nonce !== 'number' || !Number.isSafeInteger(nonce) || nonce < 0) return bad('nonce must be a non-negative integer');
  const signature = body.signature;
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return bad('signature must be 0x followed by 65 bytes of hex', 'INVALID_SIGNATURE');
  return {
    user: user.toLowerCase(), payload_hex: payload, payload_hash: forceIncludePayloadHash(payload), nonce,
    signature_hex: signature, message: forceIncludeMessage({ user, payload, nonce }),
  };
}

/** The kind a payload body names (`kind` member) or has the shape of. */
function kindOf(body: Record<string, unknown>): ForcedKindName | null {
  if ('kind' in body) {
    const k = body.kind;
    return typeof k === 'string' && (FORCED_KIND_NAMES as readonly string[]).includes(k) ? (k as ForcedKindName) : null;
  }
  if ('referred' in body || 'referrer' in body) return 'referral';
  if ('asset' in body || 'amount' in body) return 'withdrawal';
  if ('side' in body) return 'order';
  if ('order_id' in body && ('price' in body || 'quantity' in body)) return 'amend';
  if ('order_id' in body || 'client_order_id' in body) return 'cancel';
  return 'cancel_all';
}

export function parseForcedPayload(
  envelope: ForceEnvelope, markets: MarketLookup, assets: Map<string, AssetInfo>,
): ForcedPayload {
  const malformed = (problem: string, kind_name: ForcedKindName | null = null): ForcedPayload => {
    // The kind stays known when only the body is bad, so the entry shows what was attempted.
    const request = emptyRequest();
    request.kind = kind_name === null ? 0 : KIND_OF_NAME[kind_name];
    return { request, kind_name, referrer: null, verdict: Reject.FORCED_PAYLOAD_MALFORMED, problem, signed: null };
  };
  let body: unknown;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(envelope.payload_hex.slice(2), 'hex'));
    body = JSON.parse(text);
  } catch {
    return malformed('payload is not UTF-8 JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return malformed('payload is not a JSON object');
  const fields = { ...(body as Record<string, unknown>) };
  const kind_name = kindOf(fields);
  if (kind_name === null) return malformed(`kind must be one of ${FORCED_KIND_NAMES.join(', ')}`);
  delete fields.kind;
  let parsed: SignedRequest | BodyError;
  switch (kind_name) {
    case 'order': parsed = parseOrder(fields, markets); break;
    case 'cancel': parsed = parseCancel(fields); break;
    case 'amend': parsed = parseAmend(fields); break;
    case 'cancel_all': parsed = parseCancelAll(fields, markets); break;
    case 'withdrawal': parsed = parseWithdrawal(fields, assets); break;
    case 'referral': parsed = parseReferral(fields); break;
  }
  if (isBodyError(parsed)) return malformed(`${parsed.code}: ${parsed.message}`, kind_name);
  const request = parsed.request;
  const referrer = parsed.referrer ?? null;
  if (parsed.address !== envelope.user) {
    return { request, kind_name, referrer, verdict: Reject.FORCED_SIGNER_MISMATCH, problem: 'payload signer differs from user', signed: null };
  }
  return { request, kind_name, referrer, verdict: Reject.NONE, problem: '', signed: parsed };
}

/** The FORCE_INCLUDE request: the envelope's account and nonce around the payload's fields. */
export function forceIncludeRequest(envelope: ForceEnvelope, payload: ForcedPayload, verdict: number, kind: number): Request {
  const r: Request = { ...payload.request };
  r.inner_kind = payload.request.kind;
  r.inner_nonce = payload.request.nonce;
  r.inner_reject = verdict;
  r.kind = kind;
  r.nonce = envelope.nonce;
  return r;
}
