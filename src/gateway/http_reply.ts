// The answer on a uWS HTTP response (`Reply`, the one concrete Answer of the HTTP routes; the
// envelope itself is envelope.ts), and the request accounting hook it reports to.
//
// Decisions (the envelope's are in envelope.ts):
// - Every reply carries `X-Request-Id` (the same id as the form A body) and
//   `Content-Type: application/json`, and is written inside `res.cork()`, so it is correct both in
//   the synchronous part of a route handler and from a later callback (engine answer, timer).
// - A Reply registers the abort watch (http_abort.ts) in its constructor; construct it
//   synchronously in the route handler.
import { performance } from 'node:perf_hooks';
import type { HttpResponse } from 'uWebSockets.js';
import { Answer, type Header } from './envelope.js';
import { setAbortOwner, watchAbort, type AbortOwner, type AbortWatch } from './http_abort.js';
import { nextRequestNumber } from './request_id.js';
import { APPLICATION_JSON, CONTENT_LENGTH, CONTENT_TYPE, replyHead, STATUS_LINE_BYTES, statusLine, X_REQUEST_ID } from './reply_head.js';
import { componentLog } from '../util/log.js';
import { clientIpKey } from './rate_limit.js';

const log = componentLog('http');

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

/** Where HTTP exchanges are counted while open (the gateway's context). */
export interface ExchangeCounter {
  open_exchanges: number;
  /** One debug line per exchange when it ends. */
  access_log: boolean;
}

/** An answer on a uWS HTTP response. */
export class Reply extends Answer implements AbortOwner {
  declare readonly res: HttpResponse;
  private declare readonly watch: AbortWatch;
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

  /** The client aborted (http_abort.ts AbortOwner). */
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

  override clientIp(): string | null {
    return this.aborted ? null : clientIpKey(this.res);
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

