// Replies in the DECISIONS envelopes, one `Reply` per uWS response.
//
// Decisions:
// - Success: `{"ok":true,"data":...}`. Failure (form A): `{"ok":false,"error":"<CODE>",
//   "message":"<sentence>","request_id":"<id>"}`, HTTP status from CODE_HTTP_STATUS unless the
//   route overrides it. Rate limit (form C): HTTP 429, `Retry-After: <whole seconds, >= 1>`,
//   `{"ok":false,"data":null,"error":"<plain sentence>"}` (no request_id in the body; the header
//   carries it). Use `rateLimited()`, never `error('RATE_LIMITED', ...)`.
// - Every reply carries `X-Request-Id` (the same id as the form A body) and
//   `Content-Type: application/json`, and is written inside `res.cork()`, so it is correct both in
//   the synchronous part of a route handler and from a later callback (engine answer, timer).
// - A Reply registers the abort watch (http_body.ts) in its constructor; construct it
//   synchronously in the route handler. After an abort every reply method is a no-op that returns
//   false (counted in `ignored_after_abort`); the response is never touched again.
// - Only the first reply is written; later ones are ignored and counted in `double_reply_count`
//   (and the process-wide `doubleReplyTotal()`), so a route bug cannot crash uWS with a write to a
//   finished response; tests and metrics can watch the counters.
// - An unknown code name (or `OK`) passed to `error()` is a programming error: it is answered with
//   HTTP 500 and the given name.
// - Data that JSON.stringify cannot encode (bigint, cycles) is answered with 500 INTERNAL_ERROR
//   "the response could not be encoded" instead of throwing inside a uWS callback.
// - A body over the limit is answered with 400 INVALID_REQUEST (DECISIONS: "body too large" is
//   INVALID_REQUEST, not 413). Up to `limits.http_body_drain_bytes_max` the rest of the body is
//   read and dropped before the answer, so the client reads it on a connection still in step;
//   beyond that the answer goes at once and the connection is closed, so no client can make the
//   server drain an unbounded body. (Answering and closing while the client still sends made the
//   kernel reset the socket and the answer was lost: 20 of 20 1 MiB bodies, issue 20.)
// - An answer owns the stage stamps of a signed request (stage_timings.ts) it holds, and gives
//   them back to the pool when it ends: its reply is written (answered, refused, or a throw turned
//   into 500) or the client aborted. A stage that writes them later takes them (detachStamps) and
//   gives them back itself or hands them back (holdStamps: at once to the pool if the answer has
//   ended meanwhile): signed_route.ts. Only a Reply counted in its exchange (countIn, which makes it
//   the response's abort owner) holds any: an abort is told to that one.
// - uWS hands an exception thrown in a route handler or body callback to `uncaughtException`
//   (which ends the process by default), and a handler that throws before an abort handler is
//   attached makes uWS terminate the process outright. `route()` wraps a handler so the Reply (and
//   its abort handler) exists before any route code runs, and a throw (or a rejected promise)
//   becomes 500 INTERNAL_ERROR "internal error" (no details leak) plus a report to the error
//   reporter (default: the `http` component's error log with the request id; replace with `setRouteErrorReporter`).
//   `readJsonBody` does the same for its callback.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { CODE_HTTP_STATUS, CODE_NAMES, type CodeValue } from '../engine/codes.js';
import { parseJsonObject, readBody, setAbortOwner, watchAbort, type AbortOwner, type AbortWatch } from './http_body.js';
import { nextRequestNumber, requestIdText } from './request_id.js';
import { APPLICATION_JSON, CONTENT_LENGTH, CONTENT_TYPE, replyHead, STATUS_LINE_BYTES, statusLine, X_REQUEST_ID } from './reply_head.js';
import { releaseStamps, type StageStamps } from './stage_timings.js';
import { componentLog } from '../util/log.js';
import { utf8Text } from '../util/json_text.js';

export { STATUS_TEXT, statusLine } from './reply_head.js';

const log = componentLog('http');

/** The HTTP status of an error code name (500 for a name that is not an error code). */
export function httpStatusOf(code_name: string): number {
  const index = CODE_NAMES.indexOf(code_name);
  if (index <= 0) return 500;
  return CODE_HTTP_STATUS[index];
}

export type Header = readonly [name: string, value: string];

/** A success body is OK_BODY_PREFIX, the data's JSON, OK_BODY_SUFFIX (DECISIONS envelope). */
export const OK_BODY_PREFIX = '{"ok":true,"data":';
export const OK_BODY_SUFFIX = '}';

/** A body handed to `transmit` as text (bytes from okBody read out). */
export function bodyText(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : utf8Text(body);
}

/**
 * Request accounting (src/metrics/): which route the handler running now serves, and a hook
 * called once per HTTP exchange when its reply is written or the client aborts (status 0).
 * Both stay unset when metrics are off.
 */
export const exchanges = {
  /** Set by the metrics' route wrapper around each handler call; '' outside one. */
  route: '',
  finished: null as ((route: string, status: number) => void) | null,
};

let double_reply_total = 0;

/** Second (or later) replies ignored since process start, across all Reply objects. */
export function doubleReplyTotal(): number {
  return double_reply_total;
}

/**
 * The envelope of one answer, whatever carries it: an HTTP response (Reply), a WebSocket
 * `response` (src/gateway/ws/post.ts) or one item of POST /orders/batch (src/gateway/batch.ts).
 * Route code answers through this class only, so the body is byte for byte the same on every
 * transport (DECISIONS "Order entry over WebSocket").
 */
export abstract class Answer {
  /** The id's text once made (Reply makes it only when something reads `request_id`). */
  private id_text: string | null;
  /** The number of a server-made id (request_id.ts nextRequestNumber), 0 for an id given as text. */
  protected readonly request_no: number;
  /** Replies attempted after the first one was written (each ignored). */
  double_reply_count = 0;
  /** Replies attempted after the client aborted (each ignored). */
  ignored_after_abort = 0;
  /** HTTP status written, 0 until a reply is written. */
  status = 0;
  /** The stage stamps this answer owns (holdStamps), else null. */
  private held_stamps: StageStamps | null = null;
  private written = false;

  /** `request_id`: the id's text, or the number of a server-made one (its text is made when read). */
  constructor(request_id: string | number) {
    this.id_text = typeof request_id === 'string' ? request_id : null;
    this.request_no = typeof request_id === 'number' ? request_id : 0;
  }

  /** The request's id (X-Request-Id, form A bodies, logs). */
  get request_id(): string {
    return this.id_text ??= requestIdText(this.request_no);
  }

  /** True once the client went away; nothing may be written any more. */
  abstract get aborted(): boolean;

  /**
   * Writes the answer to the transport (called once, after the envelope checks). `body` is the
   * JSON text, or its UTF-8 bytes (okBody: valid during the call only; bodyText reads them out).
   */
  protected abstract transmit(http_status: number, body: string | Uint8Array, headers: readonly Header[] | undefined, close_connection: boolean): void;

  /**
   * The pipeline stage stamps of a signed request (stage_timings.ts) while this answer owns them,
   * else null: none taken, given back, or handed to a stage (detachStamps).
   */
  get stamps(): StageStamps | null {
    return this.held_stamps;
  }

  /**
   * Takes ownership of `s`: given back to the pool when this answer ends (a reply written, or the
   * client aborted), whatever the route did meanwhile (refused, threw, went on). At once when it
   * has already ended (a stage hands them back after the client went away). Throws when it holds
   * stamps already: overwriting them would lose those to the GC (counted outstanding for good),
   * an owner bug, not a state to carry on from.
   */
  holdStamps(s: StageStamps): void {
    if (this.held_stamps !== null) {
      throw new Error(`answer ${this.request_id}: holdStamps while it holds stamps already (one owner at a time)`);
    }
    if (this.done) releaseStamps(s);
    else this.held_stamps = s;
  }

  /**
   * Hands the stamps to the caller (a stage that writes them later: the verify stage, the matcher
   * link), who gives them back or hands them back with holdStamps; null when this answer has none.
   */
  detachStamps(): StageStamps | null {
    const s = this.held_stamps;
    this.held_stamps = null;
    return s;
  }

  /** This answer ended: its stamps go back to the pool (a no-op without). */
  protected endStamps(): void {
    const s = this.held_stamps;
    if (s === null) return;
    this.held_stamps = null;
    releaseStamps(s);
  }

  /** True once a reply was written. */
  get sent(): boolean {
    return this.written;
  }

  /** True when no reply can be written any more (sent or aborted). */
  get done(): boolean {
    return this.written || this.aborted;
  }

  /**
   * `{"ok":true,"data":<data>}` with the whole body already written as UTF-8 bytes (OK_BODY_PREFIX,
   * the data's JSON, OK_BODY_SUFFIX), read during this call only. An HTTP reply hands the bytes to
   * uWS as they are; the other transports read them out as a string.
   */
  okBody(body: Uint8Array, http_status = 200): boolean {
    if (!this.canWrite()) return false;
    return this.send(http_status, body);
  }

  /** `{"ok":true,"data":<data>}`; `undefined` data is sent as null. */
  ok(data: unknown, http_status = 200): boolean {
    if (!this.canWrite()) return false;
    let json: string | undefined;
    try {
      json = JSON.stringify(data);
    } catch {
      return this.error('INTERNAL_ERROR', 'the response could not be encoded');
    }
    return this.send(http_status, `${OK_BODY_PREFIX}${json ?? 'null'}${OK_BODY_SUFFIX}`);
  }

  /** Like `ok()`, with `data_json` already serialized (must be valid JSON). */
  okJson(data_json: string, http_status = 200): boolean {
    if (!this.canWrite()) return false;
    return this.send(http_status, `${OK_BODY_PREFIX}${data_json}${OK_BODY_SUFFIX}`);
  }

  /**
   * Form A: `{"ok":false,"error":"<CODE>","message":"...","request_id":"<id>"}` with the code's
   * HTTP status (or `http_status`). `code` is a code name (`'INVALID_REQUEST'`) or a `Code` value.
   * `close_connection` closes the connection after the reply.
   */
  error(code: string | CodeValue, message: string, http_status?: number, close_connection = false): boolean {
    if (!this.canWrite()) return false;
    const name = typeof code === 'number' ? (CODE_NAMES[code] ?? 'INTERNAL_ERROR') : code;
    const status = http_status ?? httpStatusOf(name);
    const body = JSON.stringify({ ok: false, error: name, message, request_id: this.request_id });
    return this.send(status, body, undefined, close_connection);
  }

  /** Form C with HTTP 429 and `Retry-After` (whole seconds, rounded up, at least 1). */
  rateLimited(retry_after_s: number, sentence: string): boolean {
    if (!this.canWrite()) return false;
    const seconds = Number.isFinite(retry_after_s) ? Math.max(1, Math.ceil(retry_after_s)) : 1;
    const body = JSON.stringify({ ok: false, data: null, error: sentence });
    return this.send(429, body, [['Retry-After', String(seconds)]]);
  }

  /**
   * The primitive: writes status, body and the extra headers, once. Returns true when this call
   * wrote the reply.
   */
  send(http_status: number, body: string | Uint8Array, headers?: readonly Header[], close_connection = false): boolean {
    if (!this.canWrite()) return false;
    this.written = true;
    this.status = http_status;
    // Before the write: nothing reads the stamps from here on, and a throwing write keeps none.
    this.endStamps();
    this.transmit(http_status, body, headers, close_connection);
    return true;
  }

  private canWrite(): boolean {
    if (this.aborted) {
      this.ignored_after_abort++;
      return false;
    }
    if (this.written) {
      this.double_reply_count++;
      double_reply_total++;
      return false;
    }
    return true;
  }
}

/** Where HTTP exchanges are counted while open (the gateway's context). */
export interface ExchangeCounter {
  open_exchanges: number;
  /** One debug line per exchange when it ends. */
  access_log: boolean;
}

/** An answer on a uWS HTTP response. */
export class Reply extends Answer implements AbortOwner {
  readonly res: HttpResponse;
  private readonly watch: AbortWatch;
  /** The route label of the handler that made this reply (request accounting). */
  readonly route: string = exchanges.route;
  private accounted = false;

  /** Construct synchronously inside the route handler: it registers the abort watch. */
  constructor(res: HttpResponse, request_id: string | number = nextRequestNumber()) {
    super(request_id);
    this.res = res;
    this.watch = watchAbort(res);
  }

  /**
   * A HEAD request: the reply is the status line and headers the GET would get, with
   * `Content-Length` of its body but no body (a body would break the framing of the next answer).
   */
  head = false;

  private counter: ExchangeCounter | null = null;
  /** performance.now() when counted with an access log, else 0. */
  private counted_ms = 0;

  /**
   * Counts this exchange in `counter.open_exchanges` until it ends (the reply was written or the
   * client aborted), so a clean stop can wait for every one of them; with `counter.access_log`,
   * one debug line when it ends. No closure per request (the front's per-request garbage, issue 11).
   */
  countIn(counter: ExchangeCounter): void {
    this.counter = counter;
    counter.open_exchanges++;
    if (counter.access_log) this.counted_ms = performance.now();
    setAbortOwner(this.res, this);
  }

  /** The client aborted (http_body.ts AbortOwner). */
  clientAborted(): void {
    this.endStamps();
    this.finished();
  }

  private finished(): void {
    if (!this.accounted) {
      this.accounted = true;
      exchanges.finished?.(this.route, this.status);
    }
    const counter = this.counter;
    if (counter === null) return;
    this.counter = null;
    counter.open_exchanges--;
    if (counter.access_log) {
      log.debug('request', {
        request_id: this.request_id, route: this.route, status: this.status,
        duration_us: Math.round((performance.now() - this.counted_ms) * 1000),
      });
    }
  }

  /** True once the client aborted; the response must not be touched any more. */
  get aborted(): boolean {
    return this.watch.aborted;
  }

  /** Status line, `X-Request-Id`, `Content-Type: application/json`, the extra headers and the body, corked. */
  protected transmit(http_status: number, body: string | Uint8Array, headers: readonly Header[] | undefined, close_connection: boolean): void {
    // The corked write reads its arguments from `corked` (uWS runs the callback before cork returns):
    // one module-level callback instead of a closure per answer (issue 11, branch h11z).
    corked.reply = this;
    corked.http_status = http_status;
    corked.body = body;
    corked.headers = headers;
    corked.close_connection = close_connection;
    try {
      this.res.cork(writeCorked);
    } finally {
      corked.reply = null;
      corked.body = '';
      corked.headers = undefined;
    }
    this.finished();
  }

  /** The corked part of transmit (writeCorked): the status line, headers and body. */
  writeNow(http_status: number, body: string | Uint8Array, headers: readonly Header[] | undefined, close_connection: boolean): void {
    const res = this.res;
    const head = this.request_no > 0 ? replyHead(http_status, this.request_no) : null;
    if (head !== null) {
      res.writeStatus(head);
    } else {
      res.writeStatus(STATUS_LINE_BYTES.get(http_status) ?? statusLine(http_status));
      res.writeHeader(X_REQUEST_ID, this.request_id);
      res.writeHeader(CONTENT_TYPE, APPLICATION_JSON);
    }
    if (headers !== undefined) for (const [name, value] of headers) res.writeHeader(name, value);
    if (this.head) {
      // uWS 20.30's endWithoutBody(length) sends nothing at all: the length header is written
      // here and endWithoutBody() called bare (a HEAD request has no body, nothing to cut off).
      res.writeHeader(CONTENT_LENGTH, String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
      res.endWithoutBody();
    } else {
      res.end(body, close_connection);
    }
  }
}

/** The answer being written by Reply.transmit, for writeCorked (set and cleared around one cork call). */
const corked: {
  reply: Reply | null; http_status: number; body: string | Uint8Array; headers: readonly Header[] | undefined; close_connection: boolean;
} = { reply: null, http_status: 0, body: '', headers: undefined, close_connection: false };

function writeCorked(): void {
  corked.reply?.writeNow(corked.http_status, corked.body, corked.headers, corked.close_connection);
}

/** The sentence of the INVALID_REQUEST reply to an oversized body. */
export function bodyTooLargeMessage(limit_bytes: number): string {
  return `body too large: the limit is ${limit_bytes} bytes`;
}

/**
 * The standard POST-body path: reads the body of `reply.res` (at most `limit_bytes`), parses it as
 * a JSON object and calls `onObject` with it. Failures are answered here:
 * - over the limit: 400 INVALID_REQUEST "body too large: the limit is N bytes"; a body within
 *   `drain_bytes_max` is read to its end and dropped first, so the answer arrives on an open
 *   connection; a larger one is answered at once and the connection closed (uWS shuts the socket
 *   down and closes it: a client still sending may see a TCP reset instead of the answer);
 * - not a JSON object (malformed, not UTF-8, array, forbidden key, ...): 400 INVALID_REQUEST with
 *   the parser's sentence;
 * - aborted: nothing (the response is gone).
 * Call synchronously in the route handler with `req.getHeader('content-length')`.
 */
export function readJsonBody(
  reply: Reply,
  limit_bytes: number,
  content_length: string | undefined,
  onObject: (value: Record<string, unknown>) => void,
  drain_bytes_max = 0,
): void {
  readBody(
    reply.res,
    limit_bytes,
    (body) => {
      const parsed = parseJsonObject(body);
      if (!parsed.ok) {
        reply.error('INVALID_REQUEST', parsed.message);
        return;
      }
      try {
        onObject(parsed.value);
      } catch (err) {
        failInternal(reply, err);
      }
    },
    (kind) => {
      if (kind === 'too_large') reply.error('INVALID_REQUEST', bodyTooLargeMessage(limit_bytes), 400, true);
      else if (kind === 'too_large_drained') reply.error('INVALID_REQUEST', bodyTooLargeMessage(limit_bytes), 400);
    },
    content_length,
    drain_bytes_max,
  );
}

// ---------------------------------------------------------------------------------------------
// Route wrapper

export type RouteErrorReporter = (err: unknown, request_id: string) => void;

let report_route_error: RouteErrorReporter = (err, request_id) => {
  log.error(`[gateway] request ${request_id} failed`, err, { request_id });
};

/** Replaces the reporter of exceptions thrown by route code (logging, metrics). */
export function setRouteErrorReporter(reporter: RouteErrorReporter): void {
  report_route_error = reporter;
}

/** Reports `err` and answers 500 INTERNAL_ERROR if nothing was answered yet. */
export function failInternal(reply: Answer, err: unknown): void {
  report_route_error(err, reply.request_id);
  if (!reply.done) reply.error('INTERNAL_ERROR', 'internal error');
}

export type RouteHandler = (reply: Reply, req: HttpRequest) => void | Promise<void>;

/**
 * A uWS route handler that creates the Reply (abort watch included) first, then runs `handler`;
 * a synchronous throw or a rejected promise becomes 500 INTERNAL_ERROR. `req` is only valid
 * during the synchronous part of the handler (uWS stack-allocates it): read headers, parameters
 * and the query before any await.
 */
export function route(handler: RouteHandler): (res: HttpResponse, req: HttpRequest) => void {
  return (res, req) => {
    const reply = new Reply(res);
    try {
      const result = handler(reply, req);
      if (result !== undefined) result.catch((err: unknown) => failInternal(reply, err));
    } catch (err) {
      failInternal(reply, err);
    }
  };
}
