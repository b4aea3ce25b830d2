// What every route handler needs, built once by the server; plus the few helpers routes share.
import { encodeConsent, type Consent } from '../ring/consent.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import type { RingbookConfig } from '../config.js';
import type { VerifyPool } from '../auth/verify_pool.js';
import { parseHexStringInto } from '../auth/hex.js';
import { CODE_NAMES, REJECT_MESSAGES } from '../engine/types.js';
import type { AdminTokenCheck } from './admin_auth.js';
import { ADMIN_TOKEN_HEADER } from './admin_auth.js';
import { readJsonBody, Reply, type Answer } from './envelope.js';
import { readBody } from './http_body.js';
import type { MatcherLink, Outcome } from './matcher_link.js';
import type { RateLimiter } from './rate_limit.js';
import { clientIpKey } from './rate_limit.js';
import { parseQuery, parseUintString } from './params.js';
import type { ReadModel } from '../read_model/read_model.js';
import type { AssetInfo } from './signed_requests.js';
import { stampMs, StageStamps, type StageRecorder } from './stage_timings.js';

export type LimiterName = keyof RingbookConfig['rate_limits'];

export interface GatewayContext {
  cfg: RingbookConfig;
  link: MatcherLink;
  rm: ReadModel;
  signatures: SignatureBatcher;
  limiters: Record<LimiterName, RateLimiter>;
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
  /** What the settlement chain link did (src/gateway/chain_link.ts); null when it is off. */
  settlement_status: (() => object) | null;
  /**
   * With a chain link: the last batch whose roots are posted on chain (-1 until the link read
   * it). POST /withdrawal-signature waits for it (docs/settlement.md). Null: no chain link.
   */
  settlement_posted_batch: (() => number) | null;
}

/**
 * Per-wallet arrival order. Signature checks can finish out of order (batches, the second
 * message form of an order, several pool threads); a market maker sending nonces 5, 6, 7 at once
 * must not see 6 reach the engine before 5 and get DUPLICATE_NONCE. Each signed request takes a
 * ticket on arrival; its continuation runs only after every earlier ticket of the same wallet.
 */
export class ArrivalOrder {
  private readonly queues = new Map<string, {
    next_ticket: number; next_release: number; ready: Map<number, (done: () => void) => void>;
    /** A continuation has run and not yet called its `done`: later tickets wait. */
    held: boolean;
    draining: boolean;
  }>();

  take(wallet: string): number {
    let q = this.queues.get(wallet);
    if (q === undefined) {
      q = { next_ticket: 0, next_release: 0, ready: new Map(), held: false, draining: false };
      this.queues.set(wallet, q);
    }
    return q.next_ticket++;
  }

  /** Runs `action` now if `ticket` is next for `wallet`, else when the earlier ones are done. */
  release(wallet: string, ticket: number, action: () => void): void {
    this.releaseHeld(wallet, ticket, (done) => {
      try {
        action();
      } finally {
        done();
      }
    });
  }

  /**
   * Like `release`, but the wallet's later tickets wait until `action` calls `done`. A batch
   * (POST /orders/batch) holds the queue of each of its wallets until its group is on the ring, so
   * a request that arrived after the batch never reaches the engine before it. Tickets of one
   * batch are all taken at its arrival, so the waits never form a cycle.
   */
  releaseHeld(wallet: string, ticket: number, action: (done: () => void) => void): void {
    const q = this.queues.get(wallet);
    if (q === undefined) throw new Error('arrival order: release without a ticket');
    q.ready.set(ticket, action);
    this.drain(wallet);
  }

  private drain(wallet: string): void {
    const q = this.queues.get(wallet);
    if (q === undefined || q.draining) return;
    q.draining = true;
    while (!q.held) {
      const next = q.ready.get(q.next_release);
      if (next === undefined) break;
      q.ready.delete(q.next_release);
      q.next_release++;
      q.held = true;
      let called = false;
      const done = (): void => {
        if (called) return;
        called = true;
        q.held = false;
        this.drain(wallet);
      };
      try {
        next(done);
      } catch (e) {
        console.error('ringbook: request continuation failed:', e);
        done();
      }
    }
    q.draining = false;
    // A `done` that came while draining found `draining` set: go on for it.
    if (!q.held && q.ready.has(q.next_release)) return this.drain(wallet);
    if (!q.held && q.next_release === q.next_ticket) this.queues.delete(wallet);
  }

  /** Wallets with requests waiting (bounded by requests in flight). */
  get size(): number {
    return this.queues.size;
  }
}

/** A Reply counted in ctx.open_exchanges until it is written or aborted; null when closing. */
export function openExchange(ctx: GatewayContext, res: HttpResponse): Reply | null {
  const reply = new Reply(res);
  if (ctx.stages !== null) {
    reply.stamps = new StageStamps();
    reply.stamps.arrive = stampMs();
  }
  ctx.open_exchanges++;
  reply.onFinish(() => {
    ctx.open_exchanges--;
  });
  if (ctx.closing) {
    reply.error('SHUTTING_DOWN', 'the server is stopping; retry against its successor', 503, true);
    return null;
  }
  return reply;
}

/**
 * Collects signatures from one turn of the event loop and checks them in one pool call (the pool
 * splits it into tasks of ~100): one message post per batch instead of per request.
 */
export class SignatureBatcher {
  private readonly pool: VerifyPool;
  private readonly batch_max: number;
  private items: { message: string; signature_hex: string; expected_address: string }[] = [];
  /** Parallel to items: where to put the worker's start/end of the task (stage timings), or null. */
  private stamps: (StageStamps | null)[] = [];
  private any_stamps = false;
  /** Signatures queued or being checked. */
  pending = 0;
  private waiters: ((ok: boolean) => void)[] = [];
  private scheduled = false;
  verified = 0;

  constructor(pool: VerifyPool, batch_max: number) {
    this.pool = pool;
    this.batch_max = batch_max;
  }

  verify(message: string, signature_hex: string, expected_address: string, stamps: StageStamps | null = null): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      this.items.push({ message, signature_hex, expected_address });
      this.stamps.push(stamps);
      if (stamps !== null) this.any_stamps = true;
      this.pending++;
      this.waiters.push((ok) => {
        this.pending--;
        resolve(ok);
      });
      if (this.items.length >= this.batch_max) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * The message of `messages` that `address` signed (tried in order), or null: the journal keeps
   * it with the signature (consent on the record).
   */
  async verifyAny(messages: readonly string[], signature_hex: string, address: string, stamps: StageStamps | null = null): Promise<string | null> {
    for (const m of messages) {
      if (await this.verify(m, signature_hex, address, stamps)) return m;
    }
    return null;
  }

  private flush(): void {
    this.scheduled = false;
    if (this.items.length === 0) return;
    const items = this.items;
    const waiters = this.waiters;
    const stamps = this.stamps;
    const times_ms = this.any_stamps ? new Float64Array(2 * items.length) : undefined;
    this.items = [];
    this.waiters = [];
    this.stamps = [];
    this.any_stamps = false;
    this.verified += items.length;
    this.pool.verifyBatch(items, times_ms).then(
      (verdicts) => {
        if (times_ms !== undefined) {
          for (let i = 0; i < stamps.length; i++) {
            const s = stamps[i];
            if (s === null) continue;
            s.verify_start = times_ms[2 * i];
            s.verify_end = times_ms[2 * i + 1];
          }
        }
        for (let i = 0; i < waiters.length; i++) waiters[i](verdicts[i] === 1);
      },
      (err: unknown) => {
        console.error('ringbook: verify pool failed:', err);
        for (const w of waiters) w(false);
      },
    );
  }
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
export function allowGet(ctx: GatewayContext, reply: Answer, ip: string): boolean {
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
export function getRoute(ctx: GatewayContext, fn: (reply: Reply, req: HttpRequest) => void): Handler {
  return (res, req) => {
    const reply = openExchange(ctx, res);
    if (reply === null) return;
    markHead(reply, req);
    if (!queryWithinLimits(reply, req) || !allowGet(ctx, reply, clientIpKey(res))) return;
    try {
      fn(reply, req);
    } catch (e) {
      console.error('ringbook: GET handler failed:', e);
      reply.error('INTERNAL_ERROR', 'unexpected server error');
    }
  };
}

/** A POST route with a JSON object body; `admin` routes check X-Admin-Token first. */
export function postRoute(
  ctx: GatewayContext,
  opts: { admin: boolean; unauthorized?: string },
  fn: (reply: Reply, body: Record<string, unknown>, params: string[]) => void,
  param_count = 0,
): Handler {
  return (res, req) => {
    const reply = openExchange(ctx, res);
    if (reply === null) return;
    const params: string[] = [];
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
    readJsonBody(reply, ctx.cfg.limits.http_body_bytes_max, req.getHeader('content-length'), (body) => {
      if (query_checked !== null && !query_checked.ok) {
        reply.error('INVALID_REQUEST', query_checked.message);
        return;
      }
      try {
        fn(reply, body, params);
      } catch (e) {
        console.error('ringbook: POST handler failed:', e);
        reply.error('INTERNAL_ERROR', 'unexpected server error');
      }
    }, ctx.cfg.limits.http_body_drain_bytes_max);
  };
}

/**
 * The frame of every signed request: its place in the wallet's arrival order is taken now, the
 * signature checks run (in the verify pool), and `then` runs with their result in arrival order
 * (unless the client has gone). A failing check answers INTERNAL_ERROR.
 */
export function afterVerification<T>(
  ctx: GatewayContext, reply: Answer, address: string, checks: Promise<T>, then: (result: T) => void,
): void {
  const ticket = ctx.arrival.take(address);
  checks.then((result) => ctx.arrival.release(address, ticket, () => {
    if (!reply.done) then(result);
  }), (e: unknown) => ctx.arrival.release(address, ticket, () => {
    console.error('ringbook: signature check failed:', e);
    reply.error('INTERNAL_ERROR', 'signature verification failed unexpectedly');
  }));
}

const SUBMIT_ADDRESS = new Uint8Array(20);

/** Submits to the matcher and answers OVERLOADED when the ring is full. */
export function submit(
  ctx: GatewayContext, reply: Answer, request: Parameters<MatcherLink['submit']>[0], address_hex: string,
  onOutcome: (o: Outcome) => void,
  /** REFER (or a FORCE_INCLUDE carrying one): the referrer's lowercase address. */
  referrer_hex: string | null = null,
  /** Signed requests: who asked for it (src/ring/consent.ts), journaled and published with it. */
  consent: Consent | null = null,
): void {
  if (ctx.link.journal_fault !== null) {
    reply.error('OVERLOADED', 'the journal cannot write (disk full or I/O error): writes are refused until it can; reads are served', 503);
    return;
  }
  // Scratch bytes: the ring write copies them at once (no allocation per request).
  if (!parseHexStringInto(address_hex, 2, 20, SUBMIT_ADDRESS, 0)) {
    reply.error('INVALID_REQUEST', 'address must be 0x followed by 40 hex digits');
    return;
  }
  const referrer = referrer_hex === null ? null : Buffer.from(referrer_hex.slice(2), 'hex');
  const p = ctx.link.submit(request, SUBMIT_ADDRESS, address_hex, referrer, consent === null ? null : encodeConsent(consent), reply.stamps);
  if (p === null) {
    replyOverloaded(reply);
    return;
  }
  p.then(onOutcome, (e: unknown) => {
    console.error('ringbook: request failed:', e);
    reply.error('INTERNAL_ERROR', 'unexpected engine failure');
  });
}
