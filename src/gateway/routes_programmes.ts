// Referral and forced-inclusion routes (docs/api.md, "Referrals", "Forced inclusion"):
// POST /referral/register, GET /referral/:address, POST /force-include, GET /force-include/:id.
// Answers come from the read model, which only ever holds committed state.
import { signatureBytes, type Consent } from '../ring/consent.js';
import type { TemplatedApp } from 'uWebSockets.js';
import { RequestKind, type Request } from '../engine/types.js';
import { CODE_NAMES, REJECT_MESSAGES, Reject } from '../engine/codes.js';
import { FORCE_INCLUSION_DEADLINE_MS, REFERRAL_ACTIVE_MS } from '../engine/rules.js';
import {
  allowWallet, getAndHead, getRoute, postRoute, queryParams, replyRejected, submit, uintParam, type GatewayContext,
} from './context.js';
import type { Reply } from './http_reply.js';
import {
  forceIncludeRequest, forcedKindName, parseForceEnvelope, parseForcedPayload, type ForceEnvelope, type ForcedPayload,
} from './forced_payload.js';
import { parseAddress } from './params.js';
import type { InboxView } from '../read_model/programmes_model.js';
import type { ReadModel } from '../read_model/read_model.js';
import { afterVerification, LIMITER_OF, runSigned } from './signed_route.js';
import { parseReferral } from './signed_account_requests.js';
import { isBodyError, type BodyError } from './signed_body.js';
import { isoTime } from './views.js';

function addressOf(rm: ReadModel, account: number): string {
  return rm.address_by_account[account] ?? '';
}

function usdcIndex(rm: ReadModel): number {
  return rm.assets.indexOf('USDC');
}

/** Rows of the referral lists in one answer (`limit`): the most recent registrations. */
export const REFERRAL_ROWS_DEFAULT = 100;
export const REFERRAL_ROWS_MAX = 1000;

/**
 * GET /referral/:address (docs/api.md): what the address earned as a referrer, and its own
 * referrer. Counts and totals cover every referral; the lists the `rows_max` most recent.
 */
export function referralStats(rm: ReadModel, address: string, now_ms: number, rows_max = REFERRAL_ROWS_DEFAULT): Record<string, unknown> {
  const account = rm.account_by_address.get(address);
  const usdc = usdcIndex(rm);
  const p = rm.programmes;
  const referrals: Record<string, unknown>[] = [];
  const active: Record<string, unknown>[] = [];
  let total = 0;
  let latest_active_until = 0;
  const all = account === undefined ? [] : p.referred_by.get(account) ?? [];
  const first_row = Math.max(0, all.length - rows_max);
  let active_count = 0;
  for (let i = 0; i < all.length; i++) {
    const v = p.referral_of.get(all[i]);
    if (v === undefined) continue;
    const earned = usdc >= 0 ? v.earned_units[usdc] : 0;
    total += earned;
    const is_active = now_ms < v.active_until_ms;
    if (is_active) {
      active_count++;
      // Registrations only grow later in the list, so the last active one ends last.
      if (v.active_until_ms > latest_active_until) latest_active_until = v.active_until_ms;
    }
    if (i < first_row) continue;
    const row = { address: addressOf(rm, all[i]), active_until: isoTime(v.active_until_ms), earned_usdc: String(earned) };
    referrals.push({ ...row, active: is_active });
    if (is_active) active.push(row);
  }
  const own = account === undefined ? undefined : p.referral_of.get(account);
  return {
    address,
    referral_code: address,
    referred_users: all.length,
    active_referral_count: active_count,
    total_earnings_usdc: String(total),
    active_until: latest_active_until > 0 ? isoTime(latest_active_until) : null,
    active_referrals: active,
    referrals,
    referred_by: own === undefined ? null : { referrer: addressOf(rm, own.referrer), active_until: isoTime(own.active_until_ms) },
  };
}

/** An inbox entry as GET /force-include/:id and admin state show it. */
export function inboxRecord(rm: ReadModel, e: InboxView): Record<string, unknown> {
  const r = e.result;
  return {
    entry_id: e.entry_id,
    user: addressOf(rm, e.account),
    kind: forcedKindName(e.kind),
    nonce: e.envelope_nonce,
    payload_nonce: e.payload_nonce,
    queued_at: isoTime(e.queued_ms),
    deadline: isoTime(e.deadline_ms),
    status: e.included_batch_id > 0 ? 'included' : 'pending',
    included_at: e.included_batch_id > 0 ? isoTime(e.included_ms) : null,
    included_batch_id: e.included_batch_id > 0 ? e.included_batch_id : null,
    result: r === null ? null : {
      accepted: r.accepted,
      error: r.accepted ? null : CODE_NAMES[r.code] ?? 'INTERNAL_ERROR',
      message: r.accepted ? null : REJECT_MESSAGES[r.reason] ?? 'rejected',
      order_id: r.accepted && r.order_id > 0 ? r.order_id : null,
    },
  };
}

export function pendingInclusions(rm: ReadModel): Record<string, unknown>[] {
  return [...rm.programmes.pending.values()].map((e) => ({
    entry_id: e.entry_id, user: addressOf(rm, e.account), kind: forcedKindName(e.kind), payload_nonce: e.payload_nonce,
    queued_at: isoTime(e.queued_ms), deadline: isoTime(e.deadline_ms),
  }));
}

/** A force-include body checked as far as the front can: its request, or why it is refused. */
export type ForceIncludeCheck =
  | { ok: true; user: string; request: Request; envelope: ForceEnvelope; payload: ForcedPayload; consent: Consent }
  | { ok: false; code: 'INVALID_REQUEST' | 'INVALID_SIGNATURE'; message: string };

/** What the two signature checks found: the message each signature is over (null: none). */
type ForceChecks = [string | null, string | null];

/**
 * The checks of POST /force-include (one implementation for the route and the settlement chain
 * link, src/gateway/chain_link.ts): the envelope's shape now, then (after `checks`) the
 * envelope signature, the payload's verdict and the consent journaled with the request.
 */
export function prepareForceInclude(ctx: GatewayContext, body: Record<string, unknown>):
  { error: BodyError } | { user: string; checks: Promise<ForceChecks>; finish: (r: ForceChecks) => ForceIncludeCheck } {
  const envelope = parseForceEnvelope(body);
  if (isBodyError(envelope)) return { error: envelope };
  const payload = parseForcedPayload(envelope, ctx.rm, ctx.assets);
  const user = envelope.user;
  const signed = payload.signed;
  const checks: Promise<ForceChecks> = Promise.all([
    ctx.signatures.verifyAny([envelope.message], envelope.signature_hex, user),
    signed === null ? Promise.resolve(null) : ctx.signatures.verifyAny(signed.messages, signed.signature_hex, signed.address),
  ]);
  const finish = ([envelope_message, payload_message]: ForceChecks): ForceIncludeCheck => {
    if (envelope_message === null) {
      return { ok: false, code: 'INVALID_SIGNATURE', message: 'the envelope signature does not recover to user over ringbook:force-include:{user}:{keccak256(payload)}:{nonce}' };
    }
    // A bad payload signature is not an error of this request: it is the verdict the entry carries.
    const verdict = payload.verdict !== Reject.NONE ? payload.verdict : payload_message !== null ? Reject.NONE : Reject.FORCED_SIGNATURE_INVALID;
    // The payload's consent is journaled when it will be applied (a refused payload does nothing).
    const payload_consent = signed !== null && payload_message !== null && verdict === Reject.NONE
      ? { signature: signatureBytes(signed.signature_hex), message: payload_message } : null;
    const consent: Consent = { origin: 'user', request: { signature: signatureBytes(envelope.signature_hex), message: envelope_message }, payload: payload_consent };
    return { ok: true, user, envelope, payload, consent, request: forceIncludeRequest(envelope, payload, verdict, RequestKind.FORCE_INCLUDE) };
  };
  return { user, checks, finish };
}

function forceInclude(ctx: GatewayContext, reply: Reply, body: Record<string, unknown>): void {
  const prepared = prepareForceInclude(ctx, body);
  if ('error' in prepared) {
    reply.error(prepared.error.code, prepared.error.message);
    return;
  }
  const user = prepared.user;
  afterVerification(ctx, reply, user, prepared.checks, (results) => {
    const c = prepared.finish(results);
    if (!c.ok) {
      reply.error(c.code, c.message);
      return;
    }
    if (!allowWallet(ctx, reply, LIMITER_OF.withdrawals, user)) return;
    const { envelope, payload } = c;
    submit(ctx, reply, c.request, user, (o) => {
      if (!o.accepted) {
        replyRejected(reply, o);
        return;
      }
      reply.ok({
        entry_id: o.order_id,
        user,
        kind: payload.kind_name ?? 'unknown',
        payload_hash: envelope.payload_hash,
        nonce: envelope.nonce,
        payload_nonce: payload.request.nonce,
        queued_at: isoTime(o.time_ms),
        deadline: isoTime(o.time_ms + FORCE_INCLUSION_DEADLINE_MS),
        status: 'pending',
        batch_id: String(o.batch_id),
      });
    }, payload.referrer, c.consent);
  });
}

export function registerProgrammeRoutes(app: TemplatedApp, ctx: GatewayContext): void {
  const rm = ctx.rm;
  app.post('/referral/register', postRoute(ctx, { admin: false, stamped: true }, (reply, body) => {
    const parsed = parseReferral(body);
    runSigned(ctx, reply, parsed, (o) => {
      if (isBodyError(parsed)) return;
      reply.ok({
        referred: parsed.address,
        referrer: parsed.referrer,
        active_until: isoTime(o.time_ms + REFERRAL_ACTIVE_MS),
        batch_id: String(o.batch_id),
      });
    });
  }));
  getAndHead(app, '/referral/:address', getRoute(ctx, (reply, req) => {
    const a = parseAddress(req.getParameter(0) ?? '');
    if (!a.ok) {
      reply.error('INVALID_REQUEST', a.message);
      return;
    }
    const q = queryParams(reply, req.getQuery() ?? '');
    if (q === null) return;
    const limit = uintParam(reply, q.get('limit'), 'limit', REFERRAL_ROWS_DEFAULT, 1, REFERRAL_ROWS_MAX);
    if (limit === null) return;
    // Activity is judged at the engine's clock (the last committed batch), not the front's.
    reply.ok(referralStats(rm, a.value, rm.batch_time_ms, limit));
  }));
  app.post('/force-include', postRoute(ctx, { admin: false }, (reply, body) => forceInclude(ctx, reply, body)));
  getAndHead(app, '/force-include/:entry_id', getRoute(ctx, (reply, req) => {
    const text = req.getParameter(0) ?? '';
    if (!/^[1-9][0-9]{0,15}$/.test(text) || !Number.isSafeInteger(Number(text))) {
      reply.error('INVALID_REQUEST', 'entry_id must be a positive integer');
      return;
    }
    const e = rm.programmes.entries.get(Number(text));
    if (e === undefined) {
      reply.error('NOT_FOUND', `forced-inclusion entry ${JSON.stringify(text).slice(0, 24)} not found`);
      return;
    }
    reply.ok(inboxRecord(rm, e));
  }));
}
