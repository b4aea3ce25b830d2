// POST /force-include: the envelope, and the signed request body it carries (the payload).
//
// The envelope is judged here and now: a bad shape is INVALID_REQUEST, a bad envelope signature
// INVALID_SIGNATURE (401), both before the engine sees anything. The payload is judged too, but
// its verdict travels with the entry into the engine's inbox: a payload that is not a well-formed
// signed body, is signed by someone else, or carries a bad signature is still queued, then refused
// at inclusion with that reason (DECISIONS: never dropped silently). docs/api.md has the rules.
import {
  FORCED_KINDS, FORCED_PAYLOAD_BYTES_MAX, forceIncludeMessage, forceIncludePayloadHash, inferForcedKind,
  type ForcedKind,
} from '../auth/messages.js';
import { emptyRequest, RequestKind, type Request } from '../engine/types.js';
import { Reject } from '../engine/codes.js';
import { parseAmend, parseCancel, parseCancelAll, parseOrder } from './signed_requests.js';
import { parseReferral, parseWithdrawal } from './signed_account_requests.js';
import { parseJsonObject } from './json_object.js';
import { isBodyError, type AssetInfo, type BodyError, type MarketLookup, type SignedRequest } from './signed_body.js';
import { isAddress } from '../util/address.js';
import { isSignatureHex } from '../util/signature_hex.js';

const KIND_OF_NAME: Readonly<Record<ForcedKind, number>> = {
  order: RequestKind.PLACE, cancel: RequestKind.CANCEL, amend: RequestKind.AMEND,
  cancel_all: RequestKind.CANCEL_ALL, withdrawal: RequestKind.WITHDRAW, referral: RequestKind.REFER,
};

/** The wire name of a payload's request kind (`unknown` for a payload that could not be read). */
export function forcedKindName(kind: number): ForcedKind | 'unknown' {
  for (const name of FORCED_KINDS) if (KIND_OF_NAME[name] === kind) return name;
  return 'unknown';
}

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
  kind_name: ForcedKind | null;
  referrer: string | null;
  /** Reject.NONE, or why it will be refused at inclusion (before the signature check). */
  verdict: number;
  /** What to verify when the verdict is still NONE. */
  signed: SignedRequest | null;
}

export function parseForceEnvelope(body: Record<string, unknown>): ForceEnvelope | BodyError {
  const bad = (message: string, code: BodyError['code'] = 'INVALID_REQUEST'): BodyError => ({ code, message });
  for (const k of Object.keys(body)) {
    if (!['user', 'payload', 'nonce', 'signature'].includes(k)) return bad(`unknown field ${JSON.stringify(k).slice(0, 40)}`);
  }
  const user = body.user;
  if (typeof user !== 'string' || !isAddress(user)) return bad('user must be a 0x-prefixed 20-byte hex address');
  const payload = body.payload;
  if (typeof payload !== 'string' || !/^0x(?:[0-9a-fA-F]{2})+$/.test(payload)) {
    return bad('payload must be 0x-prefixed hex of the signed request body (whole bytes)');
  }
  if ((payload.length - 2) / 2 > FORCED_PAYLOAD_BYTES_MAX) return bad(`payload must be at most ${FORCED_PAYLOAD_BYTES_MAX} bytes`);
  const nonce = body.nonce;
  if (typeof nonce !== 'number' || !Number.isSafeInteger(nonce) || nonce < 0) return bad('nonce must be a non-negative integer');
  const signature = body.signature;
  if (!isSignatureHex(signature)) return bad('signature must be 0x followed by 65 bytes of hex', 'INVALID_SIGNATURE');
  return {
    user: user.toLowerCase(), payload_hex: payload, payload_hash: forceIncludePayloadHash(payload), nonce,
    signature_hex: signature, message: forceIncludeMessage({ user, payload, nonce }),
  };
}

/** The kind a payload body names (`kind` member, null when it names none of them) or has the shape of. */
function kindOf(body: Record<string, unknown>): ForcedKind | null {
  if (!Object.prototype.hasOwnProperty.call(body, 'kind')) return inferForcedKind(body);
  const k = body.kind;
  return typeof k === 'string' && (FORCED_KINDS as readonly string[]).includes(k) ? (k as ForcedKind) : null;
}

export function parseForcedPayload(
  envelope: ForceEnvelope, markets: MarketLookup, assets: Map<string, AssetInfo>,
): ForcedPayload {
  // A malformed payload keeps the kind it names or has the shape of, so the entry shows what was
  // attempted; the reason it is refused is always FORCED_PAYLOAD_MALFORMED.
  const malformed = (kind_name: ForcedKind | null = null): ForcedPayload => {
    const request = emptyRequest();
    request.kind = kind_name === null ? 0 : KIND_OF_NAME[kind_name];
    return { request, kind_name, referrer: null, verdict: Reject.FORCED_PAYLOAD_MALFORMED, signed: null };
  };
  // The direct endpoint's parser (json_object.ts), so a payload meets the same rules: a plain
  // JSON.parse took `"price":1000000.00000000001` as 1000000, which POST /orders refuses.
  const body = parseJsonObject(Buffer.from(envelope.payload_hex.slice(2), 'hex'));
  if (!body.ok) return malformed(); // not a UTF-8 JSON object within the body rules
  const fields = { ...body.value };
  const kind_name = kindOf(fields);
  if (kind_name === null) return malformed(); // names a kind that is not one of FORCED_KINDS
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
  if (isBodyError(parsed)) return malformed(kind_name);
  // The inbox keeps a payload's order fields only (docs/api.md): an order that asks for stp or
  // expires_after_ms could not be honoured after a hold of up to 24 h, so it is refused visibly.
  if (parsed.json_form_only === true) return malformed(kind_name);
  const request = parsed.request;
  const referrer = parsed.referrer ?? null;
  if (parsed.address !== envelope.user) {
    return { request, kind_name, referrer, verdict: Reject.FORCED_SIGNER_MISMATCH, signed: null };
  }
  return { request, kind_name, referrer, verdict: Reject.NONE, signed: parsed };
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
