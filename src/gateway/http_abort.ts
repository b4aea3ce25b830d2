// Abort tracking of uWS responses on the front thread: one onAborted handler per response, which
// tells the response's Reply (http_reply.ts) and then its body reader (http_body.ts).
//
// Decisions:
// - uWS allows one onAborted handler per response, but both the body reader and the reply helper
//   (http_reply.ts) need to know about aborts. `watchAbort(res)` registers the single onAborted
//   handler the first time it is called for a response and tells the Reply, then the body reader
//   (objects with `clientAborted`, no closures per request); every
//   gateway module goes through it, and route code must not call `res.onAborted` itself.
import type { HttpResponse } from 'uWebSockets.js';

/** The abort state of one response. `aborted` turns true once, when uWS reports the abort. */
export interface AbortWatch {
  readonly aborted: boolean;
}

/**
 * The whole state behind an AbortWatch: exported for the body reader (http_body.ts BodyReader),
 * which sets `reader`; everything else holds the read-only AbortWatch.
 */
export interface AbortState {
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
