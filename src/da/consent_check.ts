// Reading consent out of published batch inputs (docs/verifiability.md, "Consent"): which request
// was asked for by whom. For each request record of a batch:
//   - admin kinds (deposit, credit, fees, markets, pause/resume) carry no consent slot: admin;
//   - every user-signed kind carries a consent slot: origin user (signature over a message text
//     that must say exactly this request), or origin operator (a rule that allows it without a
//     signature: it may only cancel);
//   - a FORCE_INCLUDE's payload, when it will be applied (verdict NONE), has its own signature.
// `consentOf` lists them (GET /da/batches/:id shows them) and names every semantic problem; the
// signatures themselves are recovered in parallel by the verifier (consent_pool.ts).
import { agentMaySign, signerChecked } from '../engine/agents.js';
import {
  amendMessage, approveAgentMessage, revokeAgentMessage, cancelAfterMessage, cancelAllMessage, cancelMessage, orderJsonMessage, orderMessage, referralMessage, withdrawalMessage,
} from '../auth/messages.js';
import { eip191Hash } from '../auth/eip191.js';
import {
  ConsentMalformed, decodeConsent, OPERATOR_RULE_NAMES, readConsentBlob, type Consent, type SignedMessage,
} from '../ring/consent.js';
import { RECORD_WORDS, viewsOfRecords, ADDRESS_BYTES } from '../ring/records.js';
import { RequestReader, RQ_ADDRESS_WORD } from '../ring/request_records.js';
import {
  emptyRequest, NO_MARKET, ORDER_TYPE_NAMES, OrderType, RequestKind, SIDE_NAMES, STP_NAMES, TIF_NAMES, type Request,
} from '../engine/types.js';
import { Reject } from '../engine/codes.js';
import { forcibleKind } from '../engine/rules.js';
import { toHex0x } from '../util/hex.js';

/** What the checker needs to write a request's message: market ids and asset symbols/decimals. */
export interface ConsentLookup {
  /** Market id of an index (markets added at runtime included), or null when unknown. */
  marketId(index: number): string | null;
  assets: readonly { symbol: string; onchain_decimals: number }[];
}

export const USER_SIGNED_KINDS: ReadonlySet<number> = new Set([
  RequestKind.PLACE, RequestKind.CANCEL, RequestKind.AMEND, RequestKind.CANCEL_ALL, RequestKind.WITHDRAW,
  RequestKind.REFER, RequestKind.FORCE_INCLUDE, RequestKind.CANCEL_AFTER, RequestKind.APPROVE_AGENT, RequestKind.REVOKE_AGENT,
]);
/** What an operator request may do (DECISIONS: cancel, never place, move funds or withdraw). */
export const OPERATOR_KINDS: ReadonlySet<number> = new Set([RequestKind.CANCEL, RequestKind.CANCEL_ALL, RequestKind.DISCONNECT_CANCEL]);
/** Kinds only the operator issues (under a rule); they carry an operator consent slot. */
export const OPERATOR_ONLY_KINDS: ReadonlySet<number> = new Set([RequestKind.DISCONNECT_CANCEL]);

const KIND_NAMES: Readonly<Record<number, string>> = {
  1: 'deposit', 2: 'withdrawal', 3: 'order', 4: 'cancel', 5: 'amend', 6: 'cancel_all', 7: 'pause_market',
  8: 'resume_market', 9: 'set_fees', 10: 'set_credit', 11: 'add_market', 12: 'referral', 13: 'force_include',
  14: 'cancel_after', 15: 'dead_man_cancel', 16: 'disconnect_cancel', 17: 'approve_agent', 18: 'revoke_agent',
};

/** One signature to recover: it must give `expected`. */
export interface RecoveryJob {
  hash: Uint8Array;
  signature: Uint8Array;
  expected: string;
  /** Where it is, for the fraud proof ("request 3 (seq 17, order by 0x..)"). */
  label: string;
}

export interface RequestConsentView {
  index: number;
  seq: number;
  kind: string;
  user: string;
  /** The agent that signed for the user (the record's signer words), or null: the user signed. */
  signer: string | null;
  nonce: number;
  origin: 'user' | 'operator' | 'admin';
  signature: string | null;
  message: string | null;
  message_form: string | null;
  operator_rule: string | null;
  payload_signature: string | null;
  payload_message: string | null;
}

export interface BatchConsent {
  requests: RequestConsentView[];
  jobs: RecoveryJob[];
  /** Fraud reasons found without recovering anything (missing consent, a message that says another request, an operator request that does more than cancel). */
  problems: string[];
}

function messageForm(kind: number, message: string): string {
  if (kind === RequestKind.PLACE) return message.startsWith('{') ? 'json' : 'colon';
  return 'colon';
}

/**
 * The texts a signed request of these fields may have been signed over (orders: two forms), or
 * null when none can say it. A record field with no integer text (1.5, 2^53: the gateway never
 * writes one, a forged record may) makes the builders throw: that is a request no text says, a
 * problem of the batch, not a crash of the verifier that should report it.
 */
function expectedMessages(r: Request, user: string, referrer: string, look: ConsentLookup, plain_order = false): string[] | null {
  try {
    return messagesOf(r, user, referrer, look, plain_order);
  } catch (e) {
    if (e instanceof TypeError || e instanceof RangeError) return null;
    throw e;
  }
}

/** `plain_order`: an order without the optional members (a forced payload): its two plain forms only. */
function messagesOf(r: Request, user: string, referrer: string, look: ConsentLookup, plain_order: boolean): string[] | null {
  const market = r.market === NO_MARKET ? null : look.marketId(r.market);
  switch (r.kind) {
    case RequestKind.PLACE: {
      if (market === null) return null;
      const price = r.order_type === OrderType.MARKET ? 0 : r.price_units;
      const base = { market_id: market, side: SIDE_NAMES[r.side] ?? '?', price, quantity: r.quantity_units, nonce: r.nonce };
      const json = { ...base, order_type: ORDER_TYPE_NAMES[r.order_type] ?? '?', time_in_force: TIF_NAMES[r.tif] ?? '?' };
      if (plain_order) return [orderJsonMessage(json), orderMessage(base)];
      const expires = r.expires_after_ms === 0 ? null : r.expires_after_ms;
      // stp 0 (expire_maker) is both the default and a mode the body may name: the message may
      // omit it or carry it. The optional members have no place in the colon form (DECISIONS).
      if (r.stp === 0) {
        const out = [orderJsonMessage({ ...json, expires_after_ms: expires }), orderJsonMessage({ ...json, stp: STP_NAMES[0], expires_after_ms: expires })];
        if (expires === null) out.push(orderMessage(base));
        return out;
      }
      return [orderJsonMessage({ ...json, stp: STP_NAMES[r.stp] ?? '?', expires_after_ms: expires })];
    }
    case RequestKind.CANCEL:
      return [cancelMessage({ order_id: r.order_id === 0 ? '' : r.order_id, client_order_id: r.client_order_id, nonce: r.nonce })];
    case RequestKind.AMEND:
      return [amendMessage({ order_id: r.order_id, price: r.price_units, quantity: r.quantity_units, nonce: r.nonce })];
    case RequestKind.CANCEL_ALL:
      if (r.market !== NO_MARKET && market === null) return null;
      return [cancelAllMessage({ market_id: market, nonce: r.nonce })];
    case RequestKind.WITHDRAW: {
      const a = look.assets[r.asset];
      if (a === undefined) return null;
      const wei = (BigInt(r.amount_units) * 10n ** BigInt(a.onchain_decimals - 6)).toString();
      return [withdrawalMessage({ address: user, asset: a.symbol, amount: wei, nonce: r.nonce })];
    }
    case RequestKind.REFER:
      return [referralMessage({ referred: user, referrer, nonce: r.nonce })];
    case RequestKind.CANCEL_AFTER:
      // The timeout rides in amount_units (RequestKind.CANCEL_AFTER).
      return [cancelAfterMessage({ timeout_ms: r.amount_units, nonce: r.nonce })];
    case RequestKind.APPROVE_AGENT:
      // The agent is the second address; valid_until_ms rides in amount_units, the name in client_order_id.
      return [approveAgentMessage({ agent: referrer, name: r.client_order_id, valid_until_ms: r.amount_units, nonce: r.nonce })];
    case RequestKind.REVOKE_AGENT:
      return [revokeAgentMessage({ agent: referrer, nonce: r.nonce })];
    default:
      return null;
  }
}

/**
 * An address field of an expected text (expected texts hold addresses in lowercase): `0x` and 40
 * hex digits between colons (no other field of a signed text is that long and of that shape).
 */
const ADDRESS_FIELD = /(?<=:)0x[0-9a-f]{40}(?=:)/g;

/**
 * Whether `found` says `expected`: exactly, except that an address's hex digits may be in any case
 * (the gateway accepts an address in any case and signs it as sent). Nothing else may differ in
 * case: the gateway writes the service token, the kind, asset symbols and names exactly, and
 * refuses `0X` (withdrawal and referral texts were compared lowercased whole, which took
 * `RINGBOOK:WITHDRAW:..:eth:..` for a withdrawal of ETH).
 */
function sameText(found: string, expected: string): boolean {
  if (found === expected) return true;
  if (found.length !== expected.length) return false;
  let at = 0;
  for (const a of expected.matchAll(ADDRESS_FIELD)) {
    const start = (a.index ?? 0) + 2;
    if (found.slice(at, start) !== expected.slice(at, start)) return false;
    if (found.slice(start, start + 40).toLowerCase() !== expected.slice(start, start + 40)) return false;
    at = start + 40;
  }
  return found.slice(at) === expected.slice(at);
}

const FORCE_RE = /^ringbook:force-include:(0x[0-9a-fA-F]{40}):0x[0-9a-f]{64}:(0|[1-9][0-9]*)$/;

function addressAt(u8: Uint8Array, byte_offset: number): string {
  return toHex0x(u8.subarray(byte_offset, byte_offset + ADDRESS_BYTES));
}

/** Consent of every request in a batch's input records (`bytes`: whole records). */
export function consentOf(bytes: Uint8Array, look: ConsentLookup): BatchConsent {
  const record_bytes = RECORD_WORDS * 4;
  // A fresh, aligned copy (a Buffer may be a view into a shared pool at any offset).
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const views = viewsOfRecords(new Int32Array(copy.buffer, 0, copy.length >> 2));
  const reader = new RequestReader(views);
  const out: BatchConsent = { requests: [], jobs: [], problems: [] };
  const count = copy.length / record_bytes;
  const r = emptyRequest();
  let index = 0;
  for (let k = 0; k < count; k++) {
    const o = k * RECORD_WORDS;
    if (reader.isConsent(o)) {
      out.problems.push(`record ${k} is a consent slot that follows no request`);
      continue;
    }
    const seq = reader.read(o, r);
    const user = addressAt(copy, (o + RQ_ADDRESS_WORD) * 4);
    // As the matcher reads it: the signer words count only on the kinds whose signer the engine checks.
    const signer_at = signerChecked(r.kind) ? reader.signerByteOffset(o) : -1;
    const signer = signer_at < 0 ? null : addressAt(copy, signer_at);
    const referrer = addressAt(copy, reader.referrerByteOffset(o));
    const kind = KIND_NAMES[r.kind] ?? `kind ${r.kind}`;
    const label = `request ${index} (seq ${seq}, ${kind} by ${user}${signer === null ? '' : ` signed by its agent ${signer}`}, nonce ${r.nonce})`;
    let consent: Consent | null = null;
    if (k + 1 < count && reader.isConsent(o + RECORD_WORDS)) {
      try {
        const c = readConsentBlob(copy, views.i32, (k + 1) * record_bytes, record_bytes, copy.length);
        consent = decodeConsent(c.blob);
        k += c.slots;
      } catch (e) {
        if (!(e instanceof ConsentMalformed)) throw e;
        out.problems.push(`${label}: ${e.message}`);
        while (k + 1 < count && reader.isConsent((k + 1) * RECORD_WORDS)) k++;
      }
    }
    const view: RequestConsentView = {
      index, seq, kind, user, signer, nonce: r.nonce, origin: 'admin', signature: null, message: null, message_form: null,
      operator_rule: null, payload_signature: null, payload_message: null,
    };
    index++;
    out.requests.push(view);
    const operator_only = OPERATOR_ONLY_KINDS.has(r.kind);
    if (!USER_SIGNED_KINDS.has(r.kind) && !operator_only) {
      if (consent !== null) out.problems.push(`${label}: an admin request carries a consent slot`);
      continue;
    }
    if (operator_only && consent !== null && consent.origin !== 'operator') {
      out.problems.push(`${label}: ${kind} is issued by the operator only, under a rule`);
      continue;
    }
    if (consent === null) {
      out.problems.push(`${label}: a user request without consent (no signature and no operator rule)`);
      continue;
    }
    if (consent.origin === 'operator') {
      view.origin = 'operator';
      view.operator_rule = OPERATOR_RULE_NAMES[consent.rule] ?? `rule ${consent.rule}`;
      if (OPERATOR_RULE_NAMES[consent.rule] === undefined) out.problems.push(`${label}: operator request under unknown rule ${consent.rule}`);
      if (!OPERATOR_KINDS.has(r.kind)) out.problems.push(`${label}: an operator request may only cancel, not ${kind}`);
      continue;
    }
    view.origin = 'user';
    if (signer !== null && !agentMaySign(r.kind)) out.problems.push(`${label}: an agent may not sign ${kind}`);
    checkSigned(out, view, r, user, signer ?? user, referrer, consent.request, consent.payload, look, label);
  }
  return out;
}

function job(out: BatchConsent, s: SignedMessage, expected: string, label: string): void {
  out.jobs.push({ hash: eip191Hash(s.message), signature: s.signature, expected, label });
}

/**
 * `signer`: whom the signature must recover to: the user, or the agent the record names (whether
 * that agent was live for the user at the batch is the engine's rule, re-executed by the verifier).
 */
function checkSigned(
  out: BatchConsent, view: RequestConsentView, r: Request, user: string, signer: string, referrer: string,
  request: SignedMessage, payload: SignedMessage | null, look: ConsentLookup, label: string,
): void {
  view.signature = toHex0x(request.signature);
  view.message = request.message;
  view.message_form = messageForm(r.kind, request.message);
  if (r.kind === RequestKind.FORCE_INCLUDE) {
    const m = FORCE_RE.exec(request.message);
    // The nonce as text: Number(m[2]) took a text nonce that only rounds to the record's (2^53 + 1
    // for 2^53), which the gateway never signs.
    if (m === null || m[1].toLowerCase() !== user || !Number.isSafeInteger(r.nonce) || m[2] !== String(r.nonce)) {
      out.problems.push(`${label}: the signed message ${JSON.stringify(request.message)} is not this envelope`);
    }
    job(out, request, user, label);
    if (payload === null) {
      if (r.inner_reject === Reject.NONE) out.problems.push(`${label}: a payload to be applied without its signature`);
      return;
    }
    view.payload_signature = toHex0x(payload.signature);
    view.payload_message = payload.message;
    // The payload as the engine applies it (engine/programmes.ts payloadRequest): a forcible kind,
    // and none of the optional order members, which an inbox entry does not keep (the gateway
    // refuses a payload carrying them: forced_payload.ts). A payload text naming an stp or expiry
    // is consent to an order the engine does not apply; the record's own stp was taken as said.
    const inner: Request = { ...r, kind: r.inner_kind, nonce: r.inner_nonce, stp: 0, expires_after_ms: 0 };
    const candidates = forcibleKind(inner.kind) ? expectedMessages(inner, user, referrer, look, true) : null;
    if (candidates === null || !candidates.some((c) => sameText(payload.message, c))) {
      out.problems.push(`${label}: the payload's signed message ${JSON.stringify(payload.message)} does not say the payload request`);
    }
    job(out, payload, user, `${label}, payload`);
    return;
  }
  const candidates = expectedMessages(r, user, referrer, look);
  if (candidates === null || !candidates.some((c) => sameText(request.message, c))) {
    out.problems.push(`${label}: the signed message ${JSON.stringify(request.message)} does not say this request`);
  }
  job(out, request, signer, label);
}
