// The WebSocket client's requests in flight (ws.ts): each control request carries a
// `request_id` and each `post` an `id`; the server's answer frame names it, and this settles the
// caller's promise. A lost connection rejects every request still waiting.
import { errorFromCode, RingbookError } from './errors.js';
import type { PostResponse, WebSocketLike } from './ws_messages.js';

export type RequestKind = 'challenge' | 'auth' | 'subscribe' | 'unsubscribe' | 'ping' | 'cancel_on_disconnect';

interface Pending {
  resolve: (v: any) => void;
  reject: (e: Error) => void;
  kind: RequestKind;
  channels?: string[];
  errors: RingbookError[];
}

/** The server's `error` frame as the SDK's error class of its code. */
function wsErr(msg: any): RingbookError {
  return errorFromCode({
    code: typeof msg.code === 'string' ? msg.code : 'INTERNAL_ERROR',
    message: typeof msg.message === 'string' ? msg.message : String(msg.code),
    status: 0,
    request_id: typeof msg.request_id === 'string' ? msg.request_id : null,
  });
}

export class WsRequests {
  #pending = new Map<string, Pending>();
  #posts = new Map<string, { resolve: (r: PostResponse) => void; reject: (e: Error) => void }>();
  #seq = 0;

  /** Sends a control request on `ws`; resolves with the server's answer frame. */
  send(ws: WebSocketLike, type: RequestKind | 'request_challenge', fields: Record<string, unknown>): Promise<any> {
    const request_id = `sdk-${++this.#seq}`;
    const kind: RequestKind = type === 'request_challenge' ? 'challenge' : type;
    return new Promise((resolve, reject) => {
      const p: Pending = { resolve, reject, kind, errors: [] };
      if (Array.isArray(fields.channels)) p.channels = fields.channels as string[];
      this.#pending.set(request_id, p);
      ws.send(JSON.stringify({ type, ...fields, request_id }));
    });
  }

  /** Sends an order-entry `post`; resolves with the HTTP status and body the server answered. */
  post(ws: WebSocketLike, path: string, body: Record<string, unknown>): Promise<PostResponse> {
    const id = `post-${++this.#seq}`;
    return new Promise((resolve, reject) => {
      this.#posts.set(id, { resolve, reject });
      ws.send(JSON.stringify({ type: 'post', id, path, body }));
    });
  }

  /** A `response` frame: settles its post (unknown ids are ignored). */
  response(msg: any): void {
    const post = typeof msg.id === 'string' ? this.#posts.get(msg.id) : undefined;
    if (post) {
      this.#posts.delete(msg.id);
      post.resolve({ status: msg.status, body: msg.body });
    }
  }

  /** A positive answer (`challenge`, `subscribed`, `pong`, ...): settles its request. */
  answer(msg: any): void {
    const rid = typeof msg.request_id === 'string' ? msg.request_id : null;
    const p = rid ? this.#pending.get(rid) : undefined;
    if (p) {
      this.#pending.delete(rid!);
      p.resolve(msg);
    }
  }

  /**
   * An `error` frame: rejects its request, or hands the error to `emit` when it belongs to none,
   * or when it refuses one channel of a subscribe that named more (`subscribed` may follow).
   */
  error(msg: any, emit: (e: RingbookError) => void): void {
    const err = wsErr(msg);
    const rid = typeof msg.request_id === 'string' ? msg.request_id : null;
    const p = rid ? this.#pending.get(rid) : undefined;
    if (!p) {
      emit(err);
      return;
    }
    if (p.kind === 'subscribe' && p.channels && p.errors.length + 1 < p.channels.length) {
      p.errors.push(err); // more channels in this request: `subscribed` may follow
      emit(err);
      return;
    }
    this.#pending.delete(rid!);
    p.reject(err);
  }

  /** Rejects every request still waiting (the connection is gone). */
  failAll(e: Error): void {
    for (const p of this.#pending.values()) p.reject(e);
    this.#pending.clear();
    for (const p of this.#posts.values()) p.reject(e);
    this.#posts.clear();
  }
}
