// The head of an HTTP reply (http_reply.ts Reply): status lines, the header names as bytes, and
// the status line, X-Request-Id and Content-Type written in one uWS call.
import { requestIdLength, writeRequestId } from './request_id.js';

/** Reason phrases for the status line. Statuses not listed get a generic phrase by class. */
export const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The status line for `status`, e.g. `429 Too Many Requests`. */
export function statusLine(status: number): string {
  return STATUS_LINES.get(status) ?? makeStatusLine(status);
}

function makeStatusLine(status: number): string {
  const text = STATUS_TEXT[status];
  if (text !== undefined) return `${status} ${text}`;
  if (status >= 500) return `${status} Server Error`;
  if (status >= 400) return `${status} Client Error`;
  return `${status} Status`;
}

// Pre-built reply bytes: every reply writes these, and uWS copies a string's UTF-8 on each call
// but takes a byte array as it is (the front's `send` was 15% of its time, issue 11).
const STATUS_LINES = new Map<number, string>(Object.keys(STATUS_TEXT).map((k) => [Number(k), makeStatusLine(Number(k))]));
export const STATUS_LINE_BYTES = new Map<number, Uint8Array>([...STATUS_LINES].map(([k, v]) => [k, Buffer.from(v, 'latin1')]));
export const X_REQUEST_ID = Buffer.from('X-Request-Id', 'latin1');
export const CONTENT_TYPE = Buffer.from('Content-Type', 'latin1');
export const APPLICATION_JSON = Buffer.from('application/json', 'latin1');
export const CONTENT_LENGTH = Buffer.from('Content-Length', 'latin1');

/**
 * A reply's head in one uWS call: uWS writes `HTTP/1.1 `, the status it is given and CRLF, so a
 * "status" of `200 OK\r\nX-Request-Id: <id>\r\nContent-Type: application/json` puts on the wire
 * exactly the bytes of writeStatus + two writeHeader calls (test/server/reply_head.test.ts reads
 * them raw), with one call into uWS instead of three and the id's bytes written from its number
 * (no id string). Built in one reused buffer: uWS copies it into the socket's cork buffer at once.
 */
const HEAD_BYTES_MAX = 256;
const head_buffer = Buffer.alloc(HEAD_BYTES_MAX);
/** head_buffer's views by length (an id grows a digit at a time: a handful of lengths ever). */
const head_views: (Uint8Array | undefined)[] = [];
/** Per status: the status line then `\r\nX-Request-Id: `. */
const HEAD_STARTS = new Map<number, Uint8Array>([...STATUS_LINES].map(([k, v]) => [k, Buffer.from(`${v}\r\nX-Request-Id: `, 'latin1')]));
const HEAD_END = Buffer.from('\r\nContent-Type: application/json', 'latin1');

/** The head of a reply with `http_status` and server-made request number `request_no`; null: a status without a prebuilt start. */
export function replyHead(http_status: number, request_no: number): Uint8Array | null {
  const start = HEAD_STARTS.get(http_status);
  if (start === undefined) return null;
  const length = start.length + requestIdLength(request_no) + HEAD_END.length;
  if (length > HEAD_BYTES_MAX) return null;
  head_buffer.set(start, 0);
  head_buffer.set(HEAD_END, writeRequestId(request_no, head_buffer, start.length));
  let view = head_views[length];
  if (view === undefined) head_views[length] = view = head_buffer.subarray(0, length);
  return view;
}
