// Order entry: the signed trading paths (/orders, /orders/cancel, /orders/amend,
// /orders/cancel-all, /orders/batch) as one implementation, answered through an `Answer`. The HTTP
// routes (routes_trading.ts) and the WebSocket `post` message (ws/post.ts) both call
// `runOrderEntry`, so validation, signatures, rate limits, codes and bodies cannot differ
// (DECISIONS "Order entry over WebSocket"). Each request then takes the signed path of
// signed_route.ts: signature (verify pool) -> per-wallet limit -> matcher -> answer after commit.
import type { GatewayContext } from './context.js';
import { CODE_NAMES, type CodeValue } from '../engine/codes.js';
import { Answer, bodyText, httpStatusOf } from './envelope.js';
import type { Outcome } from './outcomes.js';
import { runSigned, runSignedGroup } from './signed_route.js';
import { parseAmend, parseCancel, parseCancelAfter, parseCancelAll, parseOrder } from './signed_requests.js';
import { isBodyError, type BodyError, type SignedRequest } from './signed_body.js';
import { orderAnswerBody, orderRecord } from './views.js';

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
  answer.okBody(orderAnswerBody(ctx.rm, order, with_fills ? o.fills : null, o.batch_id));
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
  runSigned(ctx, answer, parsed, kind); // the kind answers the accepted outcome: no closure per request
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
  protected transmit(_http_status: number, body: string | Uint8Array): void {
    this.json = bodyText(body);
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
 * One item of a POST /orders/batch body: its kind (the `kind` member) and its parsed request, or
 * why it is refused. Exported for the consent property test (test/da/consent_roundtrip.test.ts),
 * which runs items through exactly this code.
 */
export function parseBatchItem(ctx: GatewayContext, raw: unknown): { kind: OrderEntryKind; parsed: SignedRequest } | BodyError {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { code: 'INVALID_REQUEST', message: 'each request must be a JSON object' };
  }
  const fields = { ...(raw as Record<string, unknown>) };
  const name = fields.kind;
  const kind = typeof name === 'string' && Object.prototype.hasOwnProperty.call(BATCH_KINDS, name) ? BATCH_KINDS[name] : undefined;
  if (kind === undefined) return { code: 'INVALID_REQUEST', message: 'kind must be order, cancel, amend or cancel_all' };
  delete fields.kind;
  const parsed = kind.parse(ctx, fields);
  return isBodyError(parsed) ? parsed : { kind, parsed };
}

/**
 * `{"requests":[...]}`: each item parsed here, then the well-formed ones go to the engine as one
 * group (signed_route.ts `runSignedGroup`: verified and rate-limited each on its own, applied
 * contiguously in one batch). One answer, 200, `data` holding one result per item in the given
 * order. A malformed envelope (not an array, empty, too many items, other members) is a 400 for
 * the whole call.
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
    const item = parseBatchItem(ctx, raw);
    if ('code' in item) {
      a.error(item.code, item.message);
      return null;
    }
    return { ...item, answer: a };
  });
  const finish = (): void => {
    answer.okJson(`[${answers.map((a) => a.json).join(',')}]`);
  };
  const live = items.filter((x): x is BatchItem => x !== null);
  if (live.length === 0) return finish();
  runSignedGroup(ctx, answer, live, (k, o) => live[k].kind.answer(ctx, live[k].answer, o, live[k].parsed), finish);
}
