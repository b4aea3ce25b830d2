// Replies in the DECISIONS envelopes: `Answer`, the envelope of one answer whatever carries it.
// The uWS HTTP answer (`Reply`) is http_reply.ts; the route wrapper and the JSON body path are
// http_route.ts.
//
// Decisions:
// - Success: `{"ok":true,"data":...}`. Failure (form A): `{"ok":false,"error":"<CODE>",
//   "message":"<sentence>","request_id":"<id>"}`, HTTP status from CODE_HTTP_STATUS unless the
//   route overrides it. Rate limit (form C): HTTP 429, `Retry-After: <whole seconds, >= 1>`,
//   `{"ok":false,"data":null,"error":"<plain sentence>"}` (no request_id in the body; the header
//   carries it). Use `rateLimited()`, never `error('RATE_LIMITED', ...)`.
// - After an abort every reply method is a no-op that returns false (counted in
//   `ignored_after_abort`); the response is never touched again.
// - Only the first reply is written; later ones are ignored and counted in `double_reply_count`
//   (and the process-wide `doubleReplyTotal()`), so a route bug cannot crash uWS with a write to a
//   finished response; tests and metrics can watch the counters.
// - An unknown code name (or `OK`) passed to `error()` is a programming error: it is answered with
//   HTTP 500 and the given name.
// - Data that JSON.stringify cannot encode (bigint, cycles) is answered with 500 INTERNAL_ERROR
//   "the response could not be encoded" instead of throwing inside a uWS callback.
// - An answer owns the stage stamps of a signed request (stage_timings.ts) it holds, and gives
//   them back to the pool when it ends: its reply is written (answered, refused, or a throw turned
//   into 500) or the client aborted. A stage that writes them later takes them (detachStamps) and
//   gives them back itself or hands them back (holdStamps: at once to the pool if the answer has
//   ended meanwhile): signed_route.ts. Only a Reply counted in its exchange (countIn, which makes it
//   the response's abort owner) holds any: an abort is told to that one.
import { CODE_HTTP_STATUS, CODE_NAMES, type CodeValue } from '../engine/codes.js';
import { requestIdText } from './request_id.js';
import { releaseStamps, type StageStamps } from './stage_timings.js';
import { utf8Text } from '../util/json_text.js';

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
  private declare id_text: string | null;
  /** The number of a server-made id (request_id.ts nextRequestNumber), 0 for an id given as text. */
  protected declare readonly request_no: number;
  /** Replies attempted after the first one was written (each ignored). */
  double_reply_count = 0;
  /** Replies attempted after the client aborted (each ignored). */
  ignored_after_abort = 0;
  /** HTTP status written, 0 until a reply is written. */
  status = 0;
  /** The stage stamps this answer owns (holdStamps), else null. */
  private held_stamps: StageStamps | null = null;
  private written = false;

  /**
   * The rate-limit key of the client's IP (rate_limit.ts clientIpKey), read while the request is
   * live; null when the transport knows none (a group's items, in-process tests): no per-IP limit.
   */
  clientIp(): string | null {
    return null;
  }

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

