// The edges of an HTTP route: the wrapper that makes the Reply before any route code runs and
// turns a throw into 500, and the standard POST-body path (read, size limit, JSON object). The
// envelope is envelope.ts, the HTTP answer http_reply.ts.
//
// Decisions:
// - A body over the limit is answered with 400 INVALID_REQUEST (DECISIONS: "body too large" is
//   INVALID_REQUEST, not 413). Up to `limits.http_body_drain_bytes_max` the rest of the body is
//   read and dropped before the answer, so the client reads it on a connection still in step;
//   beyond that the answer goes at once and the connection is closed, so no client can make the
//   server drain an unbounded body. (Answering and closing while the client still sends made the
//   kernel reset the socket and the answer was lost: 20 of 20 1 MiB bodies, issue 20.)
// - uWS hands an exception thrown in a route handler or body callback to `uncaughtException`
//   (which ends the process by default), and a handler that throws before an abort handler is
//   attached makes uWS terminate the process outright. `route()` wraps a handler so the Reply (and
//   its abort handler) exists before any route code runs, and a throw (or a rejected promise)
//   becomes 500 INTERNAL_ERROR "internal error" (no details leak) plus a report to the error
//   reporter (default: the `http` component's error log with the request id; replace with `setRouteErrorReporter`).
//   `readJsonBody` does the same for its callback.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Answer } from './envelope.js';
import { BodyReader, type BodyErrorKind } from './http_body.js';
import { parseJsonObject, type JsonObjectResult } from './json_object.js';
import { Reply } from './http_reply.js';
import { componentLog } from '../util/log.js';

const log = componentLog('http');

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
  new CallbackJsonBody(reply, limit_bytes, onObject).read(content_length, drain_bytes_max);
}

/**
 * readJsonBody as a class: a subclass's `jsonObject` is its callback, and the instance is also the
 * body reader (http_body.ts BodyReader), so a route's one object per request carries the whole
 * POST-body path (postRoute in context.ts: one closure per request, uWS's onData; issue 11).
 * Start it with `read`.
 */
export abstract class JsonBody extends BodyReader {
  declare readonly reply: Reply;
  private declare readonly json_limit_bytes: number;
  constructor(reply: Reply, json_limit_bytes: number) {
    super();
    this.reply = reply;
    this.json_limit_bytes = json_limit_bytes;
  }

  /** The body, a JSON object; a throw becomes 500 INTERNAL_ERROR (failInternal). */
  protected abstract jsonObject(value: Record<string, unknown>): void;

  /** Reads the body (readJsonBody's contract); call synchronously in the route handler. */
  read(content_length: string | undefined, drain_bytes_max = 0): void {
    this.readBody(this.reply.res, this.json_limit_bytes, content_length, drain_bytes_max);
  }

  bodyDone(body: Buffer): void {
    this.parsed(parseJsonObject(body));
  }
  /** A body in one chunk: parsed from uWS's ArrayBuffer as it is (no Buffer view per body; issue 11, branch h21f). */
  override chunkDone(chunk: ArrayBuffer): void {
    this.parsed(parseJsonObject(chunk));
  }
  private parsed(parsed: JsonObjectResult): void {
    if (!parsed.ok) {
      this.reply.error('INVALID_REQUEST', parsed.message);
      return;
    }
    try {
      this.jsonObject(parsed.value);
    } catch (err) {
      failInternal(this.reply, err);
    }
  }

  bodyError(kind: BodyErrorKind): void {
    if (kind === 'too_large') this.reply.error('INVALID_REQUEST', bodyTooLargeMessage(this.json_limit_bytes), 400, true);
    else if (kind === 'too_large_drained') this.reply.error('INVALID_REQUEST', bodyTooLargeMessage(this.json_limit_bytes), 400);
  }
}

class CallbackJsonBody extends JsonBody {
  private declare readonly onObject: (value: Record<string, unknown>) => void;
  constructor(reply: Reply, limit_bytes: number, onObject: (value: Record<string, unknown>) => void) {
    super(reply, limit_bytes);
    this.onObject = onObject;
  }
  protected jsonObject(value: Record<string, unknown>): void {
    this.onObject(value);
  }
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
