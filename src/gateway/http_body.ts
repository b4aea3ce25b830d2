// Request bodies on the uWS front thread: bounded body collection (the bytes; their JSON parse is
// json_object.ts, the abort tracking http_abort.ts).
//
// Decisions:
// - Bodies are limited to `limit_bytes` (the routes pass `limits.http_body_bytes_max`, 16 KiB by
//   default, config/sections.ts). A body over the limit is INVALID_REQUEST with HTTP 400 ("body
//   too large"), per DECISIONS (not 413). Up to `drain_bytes_max` the rest of it is read and
//   dropped first; a body declared or sent beyond that is refused at once and the connection is
//   closed after the reply, so a client cannot make the server drain an unbounded body (see
//   `readJsonBody` in http_route.ts).
// - A Content-Length beyond the drain bound is refused before a single byte is read. A body that
//   arrives whole in one chunk (an order's ~300 bytes nearly always does) is not copied: onDone gets a
//   view of uWS's chunk (a JSON body's parse reads the chunk itself, http_route.ts), readable during onDone only, since uWS neuters (empties) the ArrayBuffer
//   when the onData callback returns. Otherwise each chunk is copied: into a buffer preallocated
//   once from a Content-Length at or under the limit, or (no Content-Length) into a chunk list
//   concatenated once. Either way the work is linear in the body size and the count is checked on
//   every chunk, so memory never exceeds the limit plus one chunk.
import type { HttpResponse } from 'uWebSockets.js';
import { watchAbort, type AbortOwner, type AbortState } from './http_abort.js';

// The parser's old home: bench/signed_parse.ts loads `parseJsonObject` from this file's path in
// every build it compares (the frozen ones predate json_object.ts), so it stays reachable here.
export { parseJsonObject } from './json_object.js';

/**
 * `too_large`: over the limit and not drained (the reply must close the connection);
 * `too_large_drained`: over the limit, but the whole body arrived and was discarded within the
 * drain bound, so the connection is still in step and the reply can keep it open; `aborted`.
 */
export type BodyErrorKind = 'too_large' | 'too_large_drained' | 'aborted';

/**
 * Parses a Content-Length header value: the length, -1 when absent or not plain digits (uWS itself
 * refuses malformed framing; the byte count is enforced on every chunk anyway), or Infinity when
 * the digits are too many to be a sane length.
 */
export function parseContentLength(header: string | undefined): number {
  if (header === undefined || header.length === 0) return -1;
  for (let i = 0; i < header.length; i++) {
    const c = header.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
  }
  if (header.length > 15) return Infinity;
  return Number(header);
}

/**
 * Collects the request body of `res`, then calls exactly one of `onDone(body)` or `onError(kind)`,
 * exactly once:
 * - over `limit_bytes`: with `drain_bytes_max` above the limit, the rest of the body is read and
 *   dropped, and `onError('too_large_drained')` comes with its last byte (the client reads the
 *   answer on a connection still in step); a body (declared or sent) beyond `drain_bytes_max` is
 *   `onError('too_large')` at once (synchronously, before readBody returns, when
 *   `content_length` already says so), and the reply must close the connection. The response is
 *   still usable either way (see `readJsonBody` in http_route.ts for the standard 400 reply).
 * - `onError('aborted')` when the client went away first; the response must not be touched after.
 * - `onDone(body)` with the whole body once the last chunk arrived, readable during the call only:
 *   copy what must outlive it (a body that came in one chunk is a view of uWS's chunk, which uWS
 *   empties when onDone returns).
 *
 * Call it synchronously inside the route handler, at most once per response, and pass
 * `req.getHeader('content-length')` as `content_length` to refuse oversized bodies up front and
 * allocate the buffer once.
 */
export function readBody(
  res: HttpResponse,
  limit_bytes: number,
  onDone: (body: Buffer) => void,
  onError: (kind: BodyErrorKind) => void,
  content_length?: string,
  drain_bytes_max = 0,
): void {
  new CallbackBodyReader(onDone, onError).readBody(res, limit_bytes, content_length, drain_bytes_max);
}

/**
 * readBody as a class: `bodyDone` and `bodyError` are its onDone and onError, and the reader's
 * state is the instance's fields, so a route's one object per request (http_route.ts JsonBody,
 * context.ts postRoute) carries the whole body path: one closure per body (uWS's onData) where
 * closures over readBody's variables made four (issue 11). Start it with `readBody`, once.
 */
export abstract class BodyReader implements AbortOwner {
  private finished = false;
  private prealloc: Buffer | null = null;
  private filled = 0;
  private chunks: Buffer[] | null = null;
  private total = 0;
  private limit_bytes = 0;
  private drain_bytes_max = 0;
  private declared = -1;
  private draining = false;

  /** The whole body (readBody's onDone): readable during the call only. */
  abstract bodyDone(body: Buffer): void;
  /**
   * The whole body when it came in one chunk: uWS's own ArrayBuffer, readable during the call only
   * (uWS empties it when onData returns). bodyDone with a view of it, unless a subclass reads the
   * chunk as it is (http_route.ts JsonBody: its parse takes the ArrayBuffer, no Buffer per body).
   */
  chunkDone(chunk: ArrayBuffer): void {
    this.bodyDone(Buffer.from(chunk));
  }
  /** readBody's onError. */
  abstract bodyError(kind: BodyErrorKind): void;

  /** Starts reading the body of `res` (readBody's contract); call synchronously in the route handler, once. */
  readBody(res: HttpResponse, limit_bytes: number, content_length?: string, drain_bytes_max = 0): void {
    if (!Number.isSafeInteger(limit_bytes) || limit_bytes < 0) {
      throw new RangeError(`limit_bytes must be a non-negative safe integer, got ${limit_bytes}`);
    }
    this.limit_bytes = limit_bytes;
    this.drain_bytes_max = drain_bytes_max;
    const state = watchAbort(res) as AbortState;
    if (state.aborted) {
      this.finished = true;
      this.bodyError('aborted');
      return;
    }
    const declared = parseContentLength(content_length);
    this.declared = declared;
    // Over the limit but within the drain bound: the rest is read and dropped, then answered.
    if (declared > limit_bytes) {
      if (declared > drain_bytes_max) {
        this.finished = true;
        this.bodyError('too_large');
        return;
      }
      this.draining = true;
    }
    // Told of an abort after the Reply (the state's owner), as the listener closure it replaces
    // was (a response has one body reader).
    state.reader = this;
    // A bound method, not an arrow function (a closure and its context): ~50 bytes less per body.
    res.onData(this.data.bind(this));
  }

  clientAborted(): void {
    if (this.finished) return;
    this.finished = true;
    this.prealloc = null;
    this.chunks = null;
    this.bodyError('aborted');
  }

  private data(chunk: ArrayBuffer, is_last: boolean): void {
    if (this.finished) return;
    const n = chunk.byteLength;
    const limit_bytes = this.limit_bytes;
    if (is_last && this.total === 0 && n > 0 && n <= limit_bytes && !this.draining) {
      // The whole body in one chunk (an order's ~300 bytes nearly always is): read in place, no
      // copy and no body buffer per request; valid during chunkDone only (uWS empties the chunk).
      this.finished = true;
      this.chunkDone(chunk);
      return;
    }
    if (this.declared >= 0 && !this.draining && this.prealloc === null && this.chunks === null) this.prealloc = Buffer.allocUnsafe(this.declared);
    this.total += n;
    if (this.total > limit_bytes && !this.draining) {
      this.prealloc = null;
      this.chunks = null;
      this.draining = true;
    }
    if (this.draining) {
      if (this.total > this.drain_bytes_max) {
        this.finished = true;
        this.bodyError('too_large');
      } else if (is_last) {
        this.finished = true;
        this.bodyError('too_large_drained');
      }
      return;
    }
    if (n > 0) {
      const bytes = new Uint8Array(chunk);
      const prealloc = this.prealloc;
      if (prealloc !== null && this.chunks === null && this.filled + n <= prealloc.length) {
        prealloc.set(bytes, this.filled);
        this.filled += n;
      } else {
        let chunks = this.chunks;
        if (chunks === null) {
          // No Content-Length, or more bytes than it announced: switch to a chunk list.
          chunks = [];
          if (prealloc !== null && this.filled > 0) chunks.push(prealloc.subarray(0, this.filled));
          this.prealloc = null;
          this.chunks = chunks;
        }
        chunks.push(Buffer.copyBytesFrom(bytes));
      }
    }
    if (!is_last) return;
    this.finished = true;
    let body: Buffer;
    const chunks = this.chunks;
    const prealloc = this.prealloc;
    if (chunks !== null) {
      body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.total);
    } else if (prealloc !== null) {
      body = this.filled === prealloc.length ? prealloc : prealloc.subarray(0, this.filled);
    } else {
      body = Buffer.alloc(0);
    }
    this.prealloc = null;
    this.chunks = null;
    this.bodyDone(body);
  }
}

class CallbackBodyReader extends BodyReader {
  private declare readonly onDone: (body: Buffer) => void;
  private declare readonly onError: (kind: BodyErrorKind) => void;
  constructor(onDone: (body: Buffer) => void, onError: (kind: BodyErrorKind) => void) {
    super();
    this.onDone = onDone;
    this.onError = onError;
  }
  bodyDone(body: Buffer): void {
    this.onDone(body);
  }
  bodyError(kind: BodyErrorKind): void {
    this.onError(kind);
  }
}
