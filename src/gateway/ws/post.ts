// Order entry over the WebSocket (DECISIONS "Order entry over WebSocket"):
// `{"type":"post","id":"<1-64 chars>","path":"/orders","body":{..}}` is answered on the same
// connection by `{"type":"response","id":"<same>","status":<HTTP status>,"body":<the HTTP body>}`.
//
// Decisions:
// - The request runs through exactly the route code of HTTP (order_entry.ts `runOrderEntry`) with
//   an Answer whose transport is this connection: same validation, signatures, per-wallet rate
//   limits (the same limiters) and codes, and the same body text, byte for byte (form A errors
//   carry their own request_id; a 429 is form C). Only the HTTP headers have no counterpart
//   (Retry-After: the sentence names the limit).
// - No WebSocket auth is needed: the body is signed.
// - Each connection may have `limits.ws_posts_in_flight_max` posts waiting for their answers; one
//   more is answered at once with status 429 (form C), so one socket cannot queue unbounded work
//   in the verify pool and the matcher.
// - A post counts as an open exchange (a clean stop waits for its answer); after the stop began it
//   is answered 503 SHUTTING_DOWN, as HTTP is.
// - An unknown path answers status 404 NOT_FOUND; a body that is not a JSON object 400, as HTTP.
// - The paths are order_entry.ts's: /orders, /orders/cancel, /orders/amend, /orders/cancel-all,
//   /orders/batch, /orders/cancel-after.
import type { GatewayContext } from '../context.js';
import { Answer, bodyText, type Header } from '../envelope.js';
import { runOrderEntry } from '../order_entry.js';
import { nextRequestId } from '../request_id.js';
import { componentLog } from '../../util/log.js';

const log = componentLog('ws');

/** What a post needs from its connection. */
export interface PostConnection {
  /** Posts sent and not yet answered: each one's end-of-exchange callback. */
  readonly posts: Set<() => void>;
  readonly closed: boolean;
  /** The client's rate-limit key (rate_limit.ts clientIpKey), read at the upgrade. */
  readonly ip: string;
}

/** `{"type":"response","id":..,"status":..,"body":..}` with `body_json` inserted verbatim. */
export function responseMessage(id: string, status: number, body_json: string): string {
  return `{"type":"response","id":${JSON.stringify(id)},"status":${status},"body":${body_json}}`;
}

/** An answer written as a `response` message on the connection that posted the request. */
class WsPostAnswer extends Answer {
  private declare readonly conn: PostConnection;
  private declare readonly id: string;
  private declare readonly write: (message: string) => void;
  private declare readonly onDone: () => void;
  constructor(conn: PostConnection, id: string, write: (message: string) => void, onDone: () => void) {
    super(nextRequestId());
    this.conn = conn;
    this.id = id;
    this.write = write;
    this.onDone = onDone;
  }

  get aborted(): boolean {
    return this.conn.closed;
  }

  override clientIp(): string {
    return this.conn.ip;
  }

  protected transmit(http_status: number, body: string | Uint8Array, _headers: readonly Header[] | undefined): void {
    this.write(responseMessage(this.id, http_status, bodyText(body)));
    this.onDone();
  }
}

/**
 * Runs one `post` from `conn`: `write` sends a message on it. `body` is the message's `body`
 * member as parsed (anything); `path` its `path`.
 */
export function runPost(
  ctx: GatewayContext, conn: PostConnection, id: string, path: unknown, body: unknown, write: (message: string) => void,
): void {
  const finish = (): void => {
    if (conn.posts.delete(finish)) ctx.open_exchanges--;
  };
  conn.posts.add(finish);
  ctx.open_exchanges++;
  const answer = new WsPostAnswer(conn, id, write, finish);
  const max = ctx.cfg.limits.ws_posts_in_flight_max;
  try {
    if (ctx.closing) {
      answer.error('SHUTTING_DOWN', 'the server is stopping; retry against its successor', 503);
    } else if (conn.posts.size > max) {
      answer.rateLimited(1, `Too many requests in flight on this connection: the limit is ${max}.`);
    } else if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      answer.error('INVALID_REQUEST', 'body must be a JSON object');
    } else if (typeof path !== 'string' || !runOrderEntry(ctx, answer, path, body as Record<string, unknown>)) {
      answer.error('NOT_FOUND', `no route POST ${typeof path === 'string' ? path.slice(0, 100) : String(path)}`);
    }
  } catch (e) {
    log.error('ringbook: ws post failed', e, { request_id: answer.request_id });
    answer.error('INTERNAL_ERROR', 'unexpected server error');
  }
}

/**
 * The connection closed: its posts still in flight will never be answered (their Answer is
 * aborted), so their exchanges end now. The requests themselves go on: what reached the engine is
 * applied, as for an HTTP client that hung up.
 */
export function abandonPosts(conn: PostConnection): void {
  for (const finish of [...conn.posts]) finish();
}
