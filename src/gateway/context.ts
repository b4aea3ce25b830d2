// What every route handler needs, built once by the server; plus the few helpers routes share.
import { encodeConsent, type Consent } from '../ring/consent.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { RingbookConfig } from '../config/types.js';
import { parseHexStringInto } from '../auth/hex.js';
import { rememberedAddressInto } from '../auth/address_rows.js';
import { CODE_NAMES, REJECT_MESSAGES } from '../engine/codes.js';
import type { AdminTokenCheck } from './admin_auth.js';
import { ADMIN_TOKEN_HEADER } from './admin_auth.js';
import type { Answer } from './envelope.js';
import { failInternal, JsonBody } from './http_route.js';
import { Reply } from './http_reply.js';
import { readBody } from './http_body.js';
import type { MatcherLink } from './matcher_link.js';
import type { Outcome } from './outcomes.js';
import type { RateLimiter } from './rate_limit.js';
import { clientIpKey } from './rate_limit.js';
import { parseQuery, parseUintString } from './params.js';
import type { ReadModel } from '../read_model/read_model.js';
import type { AssetInfo } from './signed_body.js';
import { stampMs, takeStamps, type StageRecorder } from './stage_timings.js';
import { lastRequestNumber } from './request_id.js';
import type { ArrivalOrder } from './arrival_order.js';
import type { SignatureBatcher } from './signature_batcher.js';
import type { Metrics } from './metrics/metrics.js';
import type { Secp256k1Threads, VerifyPoolState } from '../auth/verify_pool_options.js';
import type { JournalState } from './journal_state.js';
import { componentLog } from '../util/log.js';

const log = componentLog('http');

export type LimiterName = keyof RingbookConfig['rate_limits'];

export interface GatewayContext {
  cfg: RingbookConfig;
  link: MatcherLink;
  rm: ReadModel;
  signatures: SignatureBatcher;
  limiters: Record<LimiterName, RateLimiter>;
  /** Per-IP budget of failed signature checks (failed_signatures.ts); null: none (in-process tests). */
  failed_signatures: RateLimiter | null;
  admin: AdminTokenCheck;
  operator_key: string;
  operator_address: string;
  assets: Map<string, AssetInfo>;
  started_ms: number;
  /** Exchanges (request in, reply not yet written) open now; a clean stop waits for zero. */
  open_exchanges: number;
  /** Set by a clean stop: requests arriving from then on are answered 503 at once. */
  closing: boolean;
  /** Keeps each wallet's signed requests in arrival order across signature checks. */
  arrival: ArrivalOrder;
  /** Per-stage latency rows of signed requests (config diagnostics.stage_timings), else null. */
  stages: StageRecorder | null;
  /** Prometheus metrics (config metrics.enabled), else null. */
  metrics: Metrics | null;
  /** One debug line per HTTP exchange (log level debug or trace), with its request id. */
  access_log: boolean;
  /** What the settlement chain link did (src/gateway/chain_link.ts); null when it is off. */
  settlement_status: (() => object) | null;
  /**
   * With a chain link: the last batch whose roots are posted on chain (-1 until the link read
   * it). POST /withdrawal-signature waits for it (docs/settlement.md). Null: no chain link.
   */
  settlement_posted_batch: (() => number) | null;
  /** Committed batches waiting for their state root (the DA thread's backlog); null: no DA thread. */
  da_backlog_batches: (() => number) | null;
  /** The secp256k1 library each signature-checking thread calls (VerifyPool.secp256k1Threads). */
  secp256k1_threads: () => Secp256k1Threads;
  /** The verify pool's workers, restarts and broken reason (VerifyPool.state): GET /health, /admin/state. */
  verify_pool: () => VerifyPoolState;
  /** The journal's writes (a cluster gateway: the leader matcher's store): ok, or failing since when and why (journal_state.ts); null without either. GET /health, /admin/state. */
  journal: () => JournalState | null;
  /** The journal's files' bytes (journal_state.ts journalBytes); null without a local journal (cluster gateway, pipeline tests). GET /admin/state. */
  journal_bytes: () => number | null;
}

/**
 * What a GET route needs of the context (reply bookkeeping, the per-IP limit): the
 * gateway's whole context, or the cluster DA role's few fields (src/cluster/da_role.ts).
 */
export type RouteBasics = Pick<GatewayContext, 'cfg' | 'metrics' | 'stages' | 'open_exchanges' | 'access_log' | 'closing'> & {
  limiters: Pick<GatewayContext['limiters'], 'gets_per_ip'>;
};

/**
 * A Reply counted in ctx.open_exchanges until it is written or aborted; null when closing.
 * `stamped`: the route runs a signed request (postRoute's `stamped` routes), whose stage stamps
 * start here, owned by the Reply (envelope.ts: given back when it ends); only the signed path
 * writes and reads them (signed_route.ts), so other routes take none.
 */
export function openExchange(ctx: RouteBasics, res: HttpResponse, stamped = false): Reply | null {
  const reply = new Reply(res);
  reply.countIn(ctx);
  if (ctx.closing) {
    // Answered here: no stamps taken (no signed path follows).
    reply.error('SHUTTING_DOWN', 'the server is stopping; retry against its successor', 503, true);
    return null;
  }
  // Stamped for the stage rows (diagnostics.stage_timings) and the metrics' stage histograms;
  // SIGUSR2's recording off stops both (bench/load.ts measures instrumentation on against none).
  if (stamped && (ctx.metrics === null ? ctx.stages !== null : ctx.metrics.recording)) {
    const stamps = takeStamps();
    stamps.arrive = stampMs();
    stamps.request_no = lastRequestNumber(); // the Reply just drew its id (nothing drew one since)
    reply.holdStamps(stamps); // counted above: the Reply hears of an abort and gives them back
  }
  return reply;
}

/** The request's query parameters; null after answering INVALID_REQUEST for a malformed query. */
export function queryParams(reply: Answer, text: string): Map<string, string> | null {
  const q = parseQuery(text);
  if (!q.ok) {
    reply.error('INVALID_REQUEST', q.message);
    return null;
  }
  return q.value;
}

/**
 * An integer query or path parameter in [min, max]; `fallback` when absent. Answers
 * INVALID_REQUEST (naming the parameter) and returns null when it is malformed or out of range.
 */
export function uintParam(reply: Answer, text: string | undefined, name: string, fallback: number, min: number, max: number): number | null {
  if (text === undefined) return fallback;
  const v = parseUintString(text, name, { min, max });
  if (!v.ok) {
    reply.error('INVALID_REQUEST', v.message);
    return null;
  }
  return v.value;
}

/** Answers an engine rejection (or acceptance via `onAccepted`) with the right code and status. */
export function replyRejected(reply: Answer, outcome: Outcome): void {
  reply.error(CODE_NAMES[outcome.code] ?? 'INTERNAL_ERROR', REJECT_MESSAGES[outcome.reason] ?? 'rejected');
}

/** The ring was full: nothing was sent to the engine, the client may retry. */
export function replyOverloaded(reply: Answer): void {
  reply.error('OVERLOADED', 'the engine is at capacity (request ring full); retry shortly', 503);
}

/** Per-IP limit for GET routes; returns false (and answers 429) when over it. */
export function allowGet(ctx: RouteBasics, reply: Answer, ip: string): boolean {
  const d = ctx.limiters.gets_per_ip.take(ip);
  if (d.allowed) return true;
  reply.rateLimited(d.retry_after_s, `Too many requests from this IP: the limit is ${ctx.cfg.rate_limits.gets_per_ip} GET requests per minute.`);
  return false;
}

export function allowWallet(ctx: GatewayContext, reply: Answer, name: LimiterName, address: string): boolean {
  const d = ctx.limiters[name].take(address);
  if (d.allowed) return true;
  const what = name.replace(/_per_wallet$/, '');
  reply.rateLimited(d.retry_after_s, `Too many ${what} from this wallet: the limit is ${ctx.cfg.rate_limits[name]} per minute.`);
  return false;
}

export type Handler = (res: HttpResponse, req: HttpRequest) => void;

/**
 * The query-string limits (params.ts: names once, at most 32 parameters, 2,048 characters) on
 * every route, also those that read no parameter; false after answering INVALID_REQUEST.
 */
export function queryWithinLimits(reply: Answer, req: HttpRequest): boolean {
  const query = req.getQuery();
  return query === undefined || query.length === 0 || queryParams(reply, query) !== null;
}

/** Registers a GET route and its HEAD twin (the same answer without the body, RFC 9110 9.3.2). */
export function getAndHead(app: TemplatedApp, pattern: string, handler: Handler): void {
  app.get(pattern, handler);
  app.head(pattern, handler);
}

/** Marks the reply of a HEAD request (no body is written); call before anything is answered. */
export function markHead(reply: Reply, req: HttpRequest): void {
  if (req.getMethod() === 'head') reply.head = true;
}

/** A GET (and HEAD) route: reply object, query limits, per-IP limit, then the handler (synchronous reads only). */
export function getRoute(ctx: RouteBasics, fn: (reply: Reply, req: HttpRequest) => void): Handler {
  return (res, req) => {
    const reply = openExchange(ctx, res);
    if (reply === null) return;
    markHead(reply, req);
    if (!queryWithinLimits(reply, req) || !allowGet(ctx, reply, clientIpKey(res))) return;
    try {
      fn(reply, req);
    } catch (e) {
      log.error('ringbook: GET handler failed', e, { request_id: reply.request_id });
      reply.error('INTERNAL_ERROR', 'unexpected server error');
    }
  };
}

/** The path parameters of a route that has none (frozen: shared by every request of such routes). */
const NO_PARAMS = Object.freeze([]) as unknown as string[];

/**
 * A POST route with a JSON object body; `admin` routes check X-Admin-Token first. `stamped`: the
 * route runs one signed request through runSigned (signed_route.ts), which stamps its stages; the
 * Reply owns the pooled stamps and gives them back however the request ends (its body, its query,
 * a throw). No other route takes any (an unsigned POST such as /withdrawal-signature, an open
 * /deposit, /force-include and /orders/batch read none).
 */
export function postRoute(
  ctx: GatewayContext,
  opts: { admin: boolean; unauthorized?: string; stamped?: boolean },
  fn: (reply: Reply, body: Record<string, unknown>, params: string[]) => void,
  param_count = 0,
): Handler {
  const stamped = opts.stamped === true && !opts.admin;
  return (res, req) => {
    const reply = openExchange(ctx, res, stamped);
    if (reply === null) return;
    // Most POST routes take no path parameter: they share one empty list (an array per request otherwise).
    const params: string[] = param_count === 0 ? NO_PARAMS : [];
    for (let i = 0; i < param_count; i++) params.push(req.getParameter(i) ?? '');
    if (opts.admin && !ctx.admin.check(req.getHeader(ADMIN_TOKEN_HEADER))) {
      // The body is not wanted: dropped (within the drain bound) so the 401 reaches the client.
      const message = opts.unauthorized ?? 'missing or wrong X-Admin-Token';
      readBody(reply.res, 0, () => reply.error('UNAUTHORIZED', message, 401), (kind) => {
        if (kind !== 'aborted') reply.error('UNAUTHORIZED', message, 401, kind === 'too_large');
      }, req.getHeader('content-length'), ctx.cfg.limits.http_body_drain_bytes_max);
      return;
    }
    // Judged once the body is in, so the answer comes on a connection still in step.
    const query = req.getQuery();
    const query_checked = query === undefined || query.length === 0 ? null : parseQuery(query);
    new PostBody(reply, ctx.cfg.limits.http_body_bytes_max, fn, params, query_checked)
      .read(req.getHeader('content-length'), ctx.cfg.limits.http_body_drain_bytes_max);
  };
}

/**
 * One POST exchange's body path (postRoute): the body reader's sink, the JSON parse and the route
 * call in one object per request, where closures over the handler's variables made five (issue 11).
 */
class PostBody extends JsonBody {
  private declare readonly fn: (reply: Reply, body: Record<string, unknown>, params: string[]) => void;
  private declare readonly params: string[];
  private declare readonly query_checked: ReturnType<typeof parseQuery> | null;
  constructor(
    reply: Reply,
    limit_bytes: number,
    fn: (reply: Reply, body: Record<string, unknown>, params: string[]) => void,
    params: string[],
    query_checked: ReturnType<typeof parseQuery> | null,
  ) {
    super(reply, limit_bytes);
    this.fn = fn;
    this.params = params;
    this.query_checked = query_checked;
  }

  protected jsonObject(body: Record<string, unknown>): void {
    const reply = this.reply;
    const query_checked = this.query_checked;
    if (query_checked !== null && !query_checked.ok) {
      reply.error('INVALID_REQUEST', query_checked.message);
      return;
    }
    try {
      this.fn(reply, body, this.params);
    } catch (e) {
      log.error('ringbook: POST handler failed', e, { request_id: reply.request_id });
      reply.error('INTERNAL_ERROR', 'unexpected server error');
    }
  }
}

const SUBMIT_ADDRESS = new Uint8Array(20);
const SUBMIT_ADDRESS_WORDS = new Int32Array(SUBMIT_ADDRESS.buffer, SUBMIT_ADDRESS.byteOffset, 5);

/**
 * Answers 503 OVERLOADED and returns true when writes are refused for now: the journal cannot
 * write, or the DA thread has `limits.da_backlog_batches_max` committed batches waiting for their
 * state root (backpressure: without it the DA thread's queue would grow without end under a load
 * that never lets up). Reads are served either way.
 */
export function refuseWrite(ctx: Pick<GatewayContext, 'link' | 'cfg' | 'da_backlog_batches'>, reply: Answer): boolean {
  const refusal = writeRefusal(ctx);
  if (refusal !== null) reply.error('OVERLOADED', refusal, 503);
  return refusal !== null;
}

/** Why writes are refused now (refuseWrite's 503 OVERLOADED message), or null: one decision a group's items all share. */
export function writeRefusal(ctx: Pick<GatewayContext, 'link' | 'cfg' | 'da_backlog_batches'>): string | null {
  if (ctx.link.journal_fault !== null) return 'the journal cannot write (disk full or I/O error): writes are refused until it can; reads are served';
  const backlog = ctx.da_backlog_batches === null ? 0 : ctx.da_backlog_batches();
  if (backlog >= ctx.cfg.limits.da_backlog_batches_max) {
    return `${backlog} committed batch${backlog === 1 ? '' : 'es'} await their state root (limits.da_backlog_batches_max ${ctx.cfg.limits.da_backlog_batches_max}): writes are refused until the roots catch up; reads are served; retry shortly`;
  }
  return null;
}

/** Submits to the matcher and answers OVERLOADED when the ring is full. */
export function submit(
  ctx: GatewayContext, reply: Answer, request: Parameters<MatcherLink['requests']['submit']>[0], address_hex: string,
  onOutcome: (o: Outcome) => void,
  /** REFER (or a FORCE_INCLUDE carrying one): the referrer's lowercase address. */
  referrer_hex: string | null = null,
  /**
   * Signed requests: who asked for it (src/ring/consent.ts), journaled and published with it; or
   * its encoded blob (copied into the ring before this returns).
   */
  consent: Consent | Uint8Array | null = null,
  /** An agent signed it for the user (src/gateway/agent_signer.ts): its lowercase address. */
  signer_hex: string | null = null,
): void {
  // A throw while answering is answered 500 (and logged), like a route's.
  const done = (o: Outcome): void => {
    try {
      onOutcome(o);
    } catch (e) {
      failInternal(reply, e);
    }
  };
  submitWithDone(ctx, reply, request, address_hex, done, referrer_hex, consent, signer_hex);
}

/**
 * submit() whose `done` is given to the matcher link as it is: `done` must not throw (it runs in
 * the event pump; signed_route.ts's catches what answering throws itself, so the signed path needs
 * no wrapper closure per request). A callback, not a promise: one closure per request instead of
 * a promise, its reactions and a microtask (issue 11). The reply's stage stamps go to the link with
 * the request (its figures from the ring write on): the link owns them from then on and gives them
 * back once `done` returned (outcomes.ts PendingAnswers.release); refused, the reply keeps them.
 * `outcome_read_once`: `done` reads the outcome during its call only (PendingAnswers.add may then
 * reuse the object for a later request).
 */
export function submitWithDone(
  ctx: GatewayContext, reply: Answer, request: Parameters<MatcherLink['requests']['submit']>[0], address_hex: string,
  done: (o: Outcome) => void, referrer_hex: string | null, consent: Consent | Uint8Array | null, signer_hex: string | null,
  outcome_read_once = false,
): void {
  if (refuseWrite(ctx, reply)) return;
  // Scratch bytes: the ring write copies them at once (no allocation per request).
  // A parsed request's address is in the front's address rows (address_rows.ts, filled by its
  // check): its bytes are copied from there; any other text is decoded here.
  if (!rememberedAddressInto(address_hex, SUBMIT_ADDRESS_WORDS) && !parseHexStringInto(address_hex, 2, 20, SUBMIT_ADDRESS, 0)) {
    reply.error('INVALID_REQUEST', 'address must be 0x followed by 40 hex digits');
    return;
  }
  const referrer = referrer_hex === null ? null : Buffer.from(referrer_hex.slice(2), 'hex');
  const signer = signer_hex === null ? null : Buffer.from(signer_hex.slice(2), 'hex');
  if (!ctx.link.requests.submitWith(request, SUBMIT_ADDRESS, address_hex, referrer, consent === null || consent instanceof Uint8Array ? consent : encodeConsent(consent), reply.stamps, signer, done, outcome_read_once)) {
    replyOverloaded(reply);
    return;
  }
  reply.detachStamps(); // the link's now
}
