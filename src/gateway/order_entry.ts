// Order entry: the signed trading paths (/orders, /orders/cancel, /orders/amend,
// /orders/cancel-all, /orders/batch) as one implementation, answered through an `Answer`. The HTTP
// routes (routes_trading.ts) and the WebSocket `post` message (ws/post.ts) both call
// `runOrderEntry`, so validation, signatures, rate limits, codes and bodies cannot differ
// (DECISIONS "Order entry over WebSocket"). Each request: shape check -> signature (verify pool)
// -> per-wallet limit -> matcher -> answer after commit.
import {
  afterVerification, allowWallet, replyRejected, submit, type GatewayContext, type LimiterName,
} from './context.js';
import { CODE_NAMES, type CodeValue } from '../engine/types.js';
import { encodeConsent, signatureBytes, type Consent } from '../ring/consent.js';
import { Answer, httpStatusOf } from './envelope.js';
import { stampMs } from './stage_timings.js';
import type { Outcome } from './matcher_link.js';
import {
  isBodyError, parseAmend, parseCancel, parseCancelAfter, parseCancelAll, parseOrder,
  type BodyError, type SignedRequest,
} from './signed_requests.js';
import { orderRecord, immediateFill } from './views.js';
import { verifySigner } from './agent_signer.js';

export const LIMITER_OF: Record<SignedRequest['limit'], LimiterName> = {
  orders: 'orders_per_wallet',
  cancels: 'cancels_per_wallet',
  withdrawals: 'withdrawals_per_wallet',
};

const BAD_SIGNATURE = 'the signature does not recover to the request\'s address over any accepted message form (EIP-191 personal_sign, low-s)';
const COLON_FORM_REFUSED = 'an order with stp or expires_after_ms must be signed in the JSON form (the colon form cannot carry them)';

/**
 * After the verify pool: the signature verdict (`message`: the message form that verified, or
 * null), the JSON-form rule for the optional order members, then the wallet's rate limit.
 * Answers and returns false on the first failure.
 */
export function admitSigned(ctx: GatewayContext, answer: Answer, parsed: SignedRequest, message: string | null): boolean {
  if (message === null) {
    answer.error('INVALID_SIGNATURE', BAD_SIGNATURE);
    return false;
  }
  if (message !== parsed.messages[0] && parsed.json_form_only === true) {
    answer.error('INVALID_ORDER', COLON_FORM_REFUSED);
    return false;
  }
  return allowWallet(ctx, answer, LIMITER_OF[parsed.limit], parsed.address);
}

/** Signature, then the wallet's rate limit, then the matcher. */
export function runSigned(ctx: GatewayContext, answer: Answer, parsed: SignedRequest | BodyError, onAccepted: (o: Outcome) => void): void {
  if (isBodyError(parsed)) {
    answer.error(parsed.code, parsed.message);
    return;
  }
  const stamps = answer.stamps;
  if (stamps !== null) stamps.parsed = stampMs();
  const checks = verifySigner(ctx, parsed, stamps);
  afterVerification(ctx, answer, parsed.address, checks, ({ message, signer }) => {
    if (!admitSigned(ctx, answer, parsed, message)) return;
    submit(ctx, answer, parsed.request, parsed.address, (o) => {
      if (!o.accepted) replyRejected(answer, o);
      else onAccepted(o);
      if (stamps !== null && ctx.stages !== null) {
        stamps.answered = stampMs();
        ctx.stages.record(stamps);
      }
    }, parsed.referrer ?? null, userConsent(parsed, message as string), signer);
  });
}

/** Who asked for a signed request (journaled and published with it: src/ring/consent.ts). */
function userConsent(parsed: SignedRequest, message: string): Consent {
  return { origin: 'user', request: { signature: signatureBytes(parsed.signature_hex), message }, payload: null };
}

/** One signed trading request kind: how its body is read and how an accepted outcome is answered. */
export interface OrderEntryKind {
  /** The `kind` of a POST /orders/batch item (null: not allowed in a batch). */
  batch_kind: 'order' | 'cancel' | 'amend' | 'cancel_all' | null;
  parse(ctx: GatewayContext, body: Record<string, unknown>): SignedRequest | BodyError;
  /** Answers an accepted outcome (the request was accepted by the engine and committed). */
  answer(ctx: GatewayContext, answer: Answer, o: Outcome, parsed: SignedRequest): void;
}

function orderAnswer(ctx: GatewayContext, answer: Answer, o: Outcome, with_fills: boolean): void {
  const order = ctx.rm.orders.get(o.order_id);
  if (order === undefined) {
    answer.error('INTERNAL_ERROR', 'accepted order missing from the read model');
    return;
  }
  const record = orderRecord(ctx.rm, order);
  if (with_fills) record.fills = o.fills.map(immediateFill);
  record.batch_id = String(o.batch_id);
  answer.ok(record);
}

export const ORDER_ENTRY_KINDS: Readonly<Record<
  '/orders' | '/orders/cancel' | '/orders/amend' | '/orders/cancel-all' | '/orders/cancel-after', OrderEntryKind
>> = {
  '/orders': {
    batch_kind: 'order',
    parse: (ctx, body) => parseOrder(body, ctx.rm),
    answer: (ctx, answer, o) => orderAnswer(ctx, answer, o, true),
  },
  '/orders/cancel': {
    batch_kind: 'cancel',
    parse: (_ctx, body) => parseCancel(body),
    answer: (ctx, answer, o) => orderAnswer(ctx, answer, o, false),
  },
  '/orders/amend': {
    batch_kind: 'amend',
    parse: (_ctx, body) => parseAmend(body),
    answer: (ctx, answer, o) => orderAnswer(ctx, answer, o, true),
  },
  '/orders/cancel-all': {
    batch_kind: 'cancel_all',
    parse: (ctx, body) => parseCancelAll(body, ctx.rm),
    answer: (ctx, answer, o) => {
      const cancelled = [];
      for (const id of o.order_updates) {
        const order = ctx.rm.orders.get(id);
        if (order) cancelled.push(orderRecord(ctx.rm, order));
      }
      answer.ok({ cancelled, batch_id: String(o.batch_id) });
    },
  },
  '/orders/cancel-after': {
    batch_kind: null,
    parse: (_ctx, body) => parseCancelAfter(body),
    answer: (_ctx, answer, o, parsed) => {
      // The engine armed the switch at the batch's time + timeout (docs/engine.md, CANCEL_AFTER).
      const timeout_ms = parsed.request.amount_units;
      answer.ok({
        deadline: timeout_ms === 0 ? null : new Date(o.time_ms + timeout_ms).toISOString(),
        batch_id: String(o.batch_id),
      });
    },
  },
};

/** The paths order entry serves, in both transports. */
export const ORDER_ENTRY_PATHS = [...Object.keys(ORDER_ENTRY_KINDS), '/orders/batch'] as const;

/**
 * Runs one order-entry request for `path` with its parsed JSON body; answers through `answer`.
 * Returns false (answering nothing) when `path` is not an order-entry path.
 */
export function runOrderEntry(ctx: GatewayContext, answer: Answer, path: string, body: Record<string, unknown>): boolean {
  if (path === '/orders/batch') {
    runBatch(ctx, answer, body);
    return true;
  }
  if (!Object.prototype.hasOwnProperty.call(ORDER_ENTRY_KINDS, path)) return false;
  const kind = ORDER_ENTRY_KINDS[path as keyof typeof ORDER_ENTRY_KINDS];
  const parsed = kind.parse(ctx, body);
  runSigned(ctx, answer, parsed, (o) => kind.answer(ctx, answer, o, parsed as SignedRequest));
  return true;
}

// ---------------------------------------------------------------------------------------------
// POST /orders/batch

/**
 * One item's answer inside a batch: `{"ok":true,"data":..}` or `{"ok":false,"error":..,"message":..}`
 * (DECISIONS: no request_id per item; a rate-limited item is `RATE_LIMITED` with the limit's sentence).
 */
class ItemAnswer extends Answer {
  json = '';
  get aborted(): boolean {
    return false;
  }
  protected transmit(_http_status: number, body_json: string): void {
    this.json = body_json;
  }
  override error(code: string | CodeValue, message: string, http_status?: number): boolean {
    const name = typeof code === 'number' ? (CODE_NAMES[code] ?? 'INTERNAL_ERROR') : code;
    return this.send(http_status ?? httpStatusOf(name), JSON.stringify({ ok: false, error: name, message }));
  }
  override rateLimited(_retry_after_s: number, sentence: string): boolean {
    return this.send(429, JSON.stringify({ ok: false, error: 'RATE_LIMITED', message: sentence }));
  }
}

const BATCH_KINDS: Readonly<Record<string, OrderEntryKind>> = Object.fromEntries(
  Object.values(ORDER_ENTRY_KINDS).filter((k) => k.batch_kind !== null).map((k) => [k.batch_kind, k]),
);

interface BatchItem {
  kind: OrderEntryKind;
  parsed: SignedRequest;
  answer: ItemAnswer;
}

/**
 * `{"requests":[...]}`: each item verified on its own (in the verify pool, all in one pool call
 * when they arrive together), rate-limited against its own wallet, then the admitted items are
 * written to the request ring as one group, which the matcher applies contiguously in one batch.
 * One answer, 200, `data` holding one result per item in the given order. A malformed envelope
 * (not an array, empty, too many items, other members) is a 400 for the whole call.
 */
function runBatch(ctx: GatewayContext, answer: Answer, body: Record<string, unknown>): void {
  const max = ctx.cfg.limits.orders_batch_items_max;
  for (const k of Object.keys(body)) {
    if (k !== 'requests') return void answer.error('INVALID_REQUEST', `unknown field ${JSON.stringify(k).slice(0, 40)}`);
  }
  const list = body.requests;
  if (!Array.isArray(list) || list.length === 0 || list.length > max) {
    return void answer.error('INVALID_REQUEST', `requests must be an array of 1 to ${max} signed request bodies`);
  }
  const answers = list.map(() => new ItemAnswer(answer.request_id));
  const items: (BatchItem | null)[] = list.map((raw, i) => {
    const a = answers[i];
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      a.error('INVALID_REQUEST', 'each request must be a JSON object');
      return null;
    }
    const fields = { ...(raw as Record<string, unknown>) };
    const name = fields.kind;
    const kind = typeof name === 'string' && Object.prototype.hasOwnProperty.call(BATCH_KINDS, name) ? BATCH_KINDS[name] : undefined;
    if (kind === undefined) {
      a.error('INVALID_REQUEST', 'kind must be order, cancel, amend or cancel_all');
      return null;
    }
    delete fields.kind;
    const parsed = kind.parse(ctx, fields);
    if (isBodyError(parsed)) {
      a.error(parsed.code, parsed.message);
      return null;
    }
    return { kind, parsed, answer: a };
  });
  const finish = (): void => {
    answer.okJson(`[${answers.map((a) => a.json).join(',')}]`);
  };
  const live = items.filter((x): x is BatchItem => x !== null);
  if (live.length === 0) return finish();
  // Every wallet of the batch keeps its arrival order: the group goes to the engine once each of
  // them has reached this batch's turn, and each wallet's later requests wait until it is sent.
  const wallets = [...new Set(live.map((x) => x.parsed.address))];
  const tickets = wallets.map((w) => ctx.arrival.take(w));
  const checks = Promise.all(live.map((x) => verifySigner(ctx, x.parsed)));
  const afterTurns = (then: () => void): void => {
    const dones: (() => void)[] = [];
    wallets.forEach((w, k) => ctx.arrival.releaseHeld(w, tickets[k], (done) => {
      dones.push(done);
      if (dones.length < wallets.length) return;
      try {
        then();
      } finally {
        for (const d of dones) d();
      }
    }));
  };
  checks.then((forms) => afterTurns(() => {
    if (answer.done) return;
    const admitted: (BatchItem & { message: string; signer: string | null })[] = [];
    live.forEach((x, k) => {
      if (admitSigned(ctx, x.answer, x.parsed, forms[k].message)) admitted.push({ ...x, message: forms[k].message as string, signer: forms[k].signer });
    });
    if (admitted.length === 0) return finish();
    const outcomes = ctx.link.submitGroup(admitted.map((x) => ({
      request: x.parsed.request, address: Buffer.from(x.parsed.address.slice(2), 'hex'), address_hex: x.parsed.address,
      consent: encodeConsent(userConsent(x.parsed, x.message)),
      signer: x.signer === null ? null : Buffer.from(x.signer.slice(2), 'hex'),
    })));
    if (outcomes === null) {
      for (const x of admitted) x.answer.error('OVERLOADED', 'the engine is at capacity (request ring full); retry shortly', 503);
      return finish();
    }
    Promise.all(outcomes).then((os) => {
      admitted.forEach((x, k) => {
        if (!os[k].accepted) replyRejected(x.answer, os[k]);
        else x.kind.answer(ctx, x.answer, os[k], x.parsed);
      });
      finish();
    }, (e: unknown) => {
      console.error('ringbook: batch request failed:', e);
      answer.error('INTERNAL_ERROR', 'unexpected engine failure');
    });
  }), (e: unknown) => afterTurns(() => {
    console.error('ringbook: signature check failed:', e);
    answer.error('INTERNAL_ERROR', 'signature verification failed unexpectedly');
  }));
}
