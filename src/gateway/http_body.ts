// Request bodies on the uWS front thread: abort tracking, bounded body collection, and a strict
// JSON-object parser.
//
// Decisions:
// - uWS allows one onAborted handler per response, but both the body reader and the reply helper
//   (http_reply.ts) need to know about aborts. `watchAbort(res)` registers the single onAborted
//   handler the first time it is called for a response and tells the Reply, then the body reader
//   (objects with `clientAborted`, no closures per request); every
//   gateway module goes through it, and route code must not call `res.onAborted` itself.
// - Bodies are limited to `limit_bytes` (DEFAULT_BODY_LIMIT_BYTES, 64 KiB, unless a route passes
//   another). A body over the limit is INVALID_REQUEST with HTTP 400 ("body too large"), per
//   DECISIONS (not 413), and the connection is closed after that reply so a client cannot make
//   the server drain an unbounded body (see `readJsonBody` in http_route.ts).
// - A Content-Length over the limit is refused before a single byte is read. A body that arrives
//   whole in one chunk (an order's ~300 bytes nearly always does) is not copied: onDone gets a
//   view of uWS's chunk, readable during onDone only, since uWS neuters (empties) the ArrayBuffer
//   when the onData callback returns. Otherwise each chunk is copied: into a buffer preallocated
//   once from a Content-Length at or under the limit, or (no Content-Length) into a chunk list
//   concatenated once. Either way the work is linear in the body size and the count is checked on
//   every chunk, so memory never exceeds the limit plus one chunk.
// - JSON bodies must be UTF-8 (invalid sequences are refused rather than replaced by U+FFFD), a
//   JSON object at the top level, at most 32 levels deep, without the keys `__proto__`,
//   `constructor` or `prototype` at any depth, and without a number literal that is not an
//   integer but rounds to one as a float (e.g. `1.0000000000000001` or `1e-400`): DECISIONS says
//   values are never silently rounded, and after JSON.parse the difference is invisible.
import type { HttpResponse } from 'uWebSockets.js';

/** Default request body limit (bytes). Orders and cancels are well under 1 KiB. */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;
/** Deepest nesting a JSON body may have (the top-level object counts as level 1). */
export const JSON_MAX_DEPTH = 32;
/** Keys refused at any depth of a JSON body. */
export const FORBIDDEN_JSON_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The forbidden keys' lengths and first chars: a key that matches neither is not one of them, and
 * needs no Set probe (a signed order's ten members probed the Set ten times, ~650 instructions per
 * body; with this filter none of them does; issue 11, branch h17f). Derived from the Set, so a key
 * added there is filtered right.
 */
const FORBIDDEN_KEY_LENGTHS = new Uint8Array(64);
const FORBIDDEN_KEY_FIRSTS = new Uint8Array(128);
for (const k of FORBIDDEN_JSON_KEYS) {
  if (k.length >= FORBIDDEN_KEY_LENGTHS.length || k.charCodeAt(0) >= FORBIDDEN_KEY_FIRSTS.length) throw new Error(`forbidden key ${k} outside the filter's tables`);
  FORBIDDEN_KEY_LENGTHS[k.length] = 1;
  FORBIDDEN_KEY_FIRSTS[k.charCodeAt(0)] = 1;
}

/** Whether `k` is a forbidden key (the filter first, then the Set). */
function forbiddenKey(k: string): boolean {
  const n = k.length;
  if (n >= FORBIDDEN_KEY_LENGTHS.length || FORBIDDEN_KEY_LENGTHS[n] === 0) return false;
  const c = k.charCodeAt(0);
  if (c >= FORBIDDEN_KEY_FIRSTS.length || FORBIDDEN_KEY_FIRSTS[c] === 0) return false;
  return FORBIDDEN_JSON_KEYS.has(k);
}

// ---------------------------------------------------------------------------------------------
// Abort tracking

/** The abort state of one response. `aborted` turns true once, when uWS reports the abort. */
export interface AbortWatch {
  readonly aborted: boolean;
}

interface AbortState {
  aborted: boolean;
  /** The response's Reply (http_reply.ts), told first; no closure per request for it. */
  owner: AbortOwner | null;
  /** The response's body reader (BodyReader), told second; no closure for it either. */
  reader: AbortOwner | null;
}

/** What the response's Reply and its body reader are told when the client aborts. */
export interface AbortOwner {
  clientAborted(): void;
}

/**
 * The state lives on the response object itself under a private symbol (uWS responses are plain
 * JS objects that take properties; its own examples set `res.aborted`): a WeakMap entry per
 * request was an ephemeron for the garbage collector to trace on every request (issue 11).
 */
const ABORT_STATE = Symbol('ringbook.abort_state');
type WatchedResponse = HttpResponse & { [ABORT_STATE]?: AbortState };

/**
 * Registers the response's onAborted handler (once per response) and returns its abort state.
 * Must be called synchronously in the route handler, before anything asynchronous.
 */
export function watchAbort(res: HttpResponse): AbortWatch {
  const watched = res as WatchedResponse;
  let state = watched[ABORT_STATE];
  if (state === undefined) {
    const created: AbortState = { aborted: false, owner: null, reader: null };
    state = created;
    watched[ABORT_STATE] = created;
    res.onAborted(() => {
      created.aborted = true;
      const owner = created.owner;
      const reader = created.reader;
      created.owner = null;
      created.reader = null;
      owner?.clientAborted();
      reader?.clientAborted();
    });
  }
  return state;
}

/**
 * Tells `owner` (the response's Reply: one per response) when the response is aborted, before its
 * body reader (at once if it already was). The response must not be touched from it or after it.
 */
export function setAbortOwner(res: HttpResponse, owner: AbortOwner): void {
  const state = watchAbort(res) as AbortState;
  if (state.aborted) owner.clientAborted();
  else state.owner = owner;
}

// ---------------------------------------------------------------------------------------------
// Body collection

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
      // copy and no body buffer per request; valid during bodyDone only (uWS empties the chunk).
      this.finished = true;
      this.bodyDone(Buffer.from(chunk, 0, n));
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

// ---------------------------------------------------------------------------------------------
// JSON bodies

export type JsonObjectResult = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a request body that must be a JSON object. Failure messages are sentences fit for the
 * `message` of an INVALID_REQUEST reply.
 */
export function parseJsonObject(body: Buffer): JsonObjectResult {
  if (body.length === 0) return { ok: false, message: 'body is empty; a JSON object is required' };
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    return { ok: false, message: 'body is not valid UTF-8' };
  }
  const scan = scanNeeded(text) ? scanJsonText(text) : null;
  if (scan !== null) return { ok: false, message: scan };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: 'body is not valid JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, message: 'body must be a JSON object' };
  }
  const keys = checkKeys(value);
  if (keys !== null) return { ok: false, message: keys };
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * Whether scanJsonText could refuse `text`; false only when it surely would not, found with a few
 * native searches instead of its char-by-char pass (~4,800 instructions for a signed order's body,
 * a tenth of the front's parse path: bench/signed_parse.ts; issue 11, branch h17f):
 * - it refuses nesting deeper than JSON_MAX_DEPTH, which needs more than that many '{' and '['
 *   (counted here in strings too: a bound, never fewer than the scan's);
 * - it refuses a number literal whose exact value is not an integer but whose float is. Without a
 *   '.', such a literal has no fraction digits, so its exponent must be negative: it holds "e-" or
 *   "E-". A text with neither '.' nor those two holds no literal the scan refuses.
 */
function scanNeeded(text: string): boolean {
  if (text.indexOf('.') >= 0 || text.indexOf('e-') >= 0 || text.indexOf('E-') >= 0) return true;
  let opens = 0;
  for (let at = text.indexOf('{'); at >= 0; at = text.indexOf('{', at + 1)) {
    if (++opens > JSON_MAX_DEPTH) return true;
  }
  for (let at = text.indexOf('['); at >= 0; at = text.indexOf('[', at + 1)) {
    if (++opens > JSON_MAX_DEPTH) return true;
  }
  return false;
}

/**
 * One pass over the raw text outside string literals: refuses nesting deeper than JSON_MAX_DEPTH
 * (before JSON.parse builds anything) and number literals that are not integers but parse to one.
 * Malformed text is left for JSON.parse to refuse.
 */
function scanJsonText(text: string): string | null {
  let depth = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Jump to the closing quote: the next '"' preceded by an even number of backslashes.
      let j = i + 1;
      for (;;) {
        j = text.indexOf('"', j);
        if (j < 0) return null; // unterminated string: JSON.parse refuses it
        let k = j - 1;
        let backslashes = 0;
        while (text.charCodeAt(k) === 0x5c) {
          backslashes++;
          k--;
        }
        if ((backslashes & 1) === 0) break;
        j++;
      }
      i = j + 1;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > JSON_MAX_DEPTH) return `body nests deeper than ${JSON_MAX_DEPTH} levels`;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
      i++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      const start = i;
      let fractional = false;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d >= 0x30 && d <= 0x39) i++;
        else if (d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === 0x2d) {
          fractional = true;
          i++;
        } else break;
      }
      if (fractional) {
        const literal = text.slice(start, i);
        if (roundsToIntegerInexactly(literal)) {
          const shown = literal.length > 40 ? `${literal.slice(0, 40)}...` : literal;
          return `number ${shown} is not an integer but rounds to one; integers must be sent as plain digits`;
        }
      }
    } else {
      i++;
    }
  }
  return null;
}

const NUMBER_LITERAL = /^-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;

/** True when the JSON number literal's exact decimal value is not an integer but its float is. */
function roundsToIntegerInexactly(literal: string): boolean {
  const m = NUMBER_LITERAL.exec(literal);
  if (m === null) return false; // not a valid literal: JSON.parse refuses it
  if (!Number.isInteger(Number(literal))) return false;
  const frac = m[2] ?? '';
  let digits = m[1] + frac;
  let trailing = 0;
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 0x30) {
    end--;
    trailing++;
  }
  digits = digits.slice(0, end);
  if (/^0*$/.test(digits)) return false; // zero
  const exponent = m[3] === undefined ? 0 : Number(m[3]);
  return exponent - frac.length + trailing < 0;
}

/** Walks the parsed value (iteratively) for forbidden keys. */
function checkKeys(root: object): string | null {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const v = stack.pop() as object;
    if (Array.isArray(v)) {
      for (const x of v) if (x !== null && typeof x === 'object') stack.push(x as object);
    } else {
      const record = v as Record<string, unknown>;
      // for-in over a parsed object walks its map's key cache; Object.keys built an array per body.
      for (const k in record) {
        if (!Object.prototype.hasOwnProperty.call(record, k)) continue;
        if (forbiddenKey(k)) return `body contains the forbidden key "${k}"`;
        const x = record[k];
        if (x !== null && typeof x === 'object') stack.push(x as object);
      }
    }
  }
  return null;
}
