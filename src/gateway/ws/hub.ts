// The WebSocket API (spec "Events", DECISIONS "WebSocket"): connections, their messages, the
// challenge auth, keepalive and limits. The subscription protocol is subscriptions.ts, order entry
// post.ts, cancel on disconnect disconnect_cancel.ts; the fan-out of committed events to
// subscribers is WsFanout (fanout.ts), which this hub owns.
//
// Decisions:
// - `GET /ws` upgrades on the same uWS app as the HTTP API. Every channel is a uWS topic named
//   exactly as the channel (`book:ETH-USDC`, `fills:0xabc...`), so fan-out is one
//   `app.publish(topic, message)` per message: each message is serialized once, whatever the
//   number of subscribers, and uWS copies it into the subscribers' buffers in C++.
// - The fan-out (`fanout`, WsFanout) observes the read model (ReadModelObserver: what it decoded
//   from each record of a committed batch, in order, then `batchCommitted`): nothing uncommitted
//   ever reaches a subscriber, and events go out in batch order. trade, fill, order_update and
//   balance_update are published as their events are read; book snapshots at the batch's commit,
//   at most one per market per batch and only for a market whose book changed in it (the read
//   model's `book_sequence` moved).
// - The fan-out keeps subscriber counters per market and per address (this hub moves them as
//   channels are subscribed), so an event nobody listens to costs a couple of array reads and is
//   never serialized.
// - `sequence` of a snapshot is the read model's `book_sequence`, the same number as
//   `GET /orderbook/:market_id`. It grows by one per committed batch that changed the book. A
//   subscriber receives the current book at subscribe time and then every later sequence: the
//   subscribe handler and the fan-out both run on this thread, never in the middle of a batch,
//   so there is neither a gap nor a duplicate. Snapshots carry up to `ws_book_depth_max` levels
//   per side (the whole book below that cap); the serialized snapshot is cached per sequence, so
//   a crowd subscribing at once costs one serialization.
// - Idle: a connection from which nothing (message, ping or pong frame) arrived for
//   `ws_idle_timeout_ms` is closed with code 4000. Auth timeout: fatal `error` AUTH_TIMEOUT, then
//   close code 4001 (auth.ts has the rules). A sweep timer checks these and backpressure.
// - Backpressure: uWS buffers at most `ws_backpressure_bytes_max` per connection
//   (`maxBackpressure`); a connection over it is a slow reader and is closed at once (forcefully,
//   no close frame: its buffer may never drain), from the send that hit the limit or from the
//   sweep. Others are not affected: a publish never waits for anybody.
// - Errors never close the connection, except the fatal AUTH_TIMEOUT; a frame larger than
//   `ws_message_bytes_max` is closed by uWS itself (close code 1009).
// - Connections per IP are capped (`ws_connections_per_ip_max`): the upgrade is refused with 429.
import type {
  HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t, WebSocket,
} from 'uWebSockets.js';
import type { GatewayContext } from '../context.js';
import { Reply } from '../http_reply.js';
import { clientIpKey } from '../rate_limit.js';
import { logCheckRejection } from '../signature_batcher.js';
import { AuthState, type AuthLimits, type AuthStep } from './auth.js';
import { cancelOnDisconnect, type DisconnectCancelStats } from './disconnect_cancel.js';
import { WsFanout, type FanoutStats } from './fanout.js';
import { HeldAnswers } from './held_answers.js';
import { abandonPosts, runPost } from './post.js';
import {
  authSuccessMessage, cancelOnDisconnectReply, challengeReply, errorMessage, parseClientMessage, pongMessage,
  type Channel,
} from './messages.js';
import { Subscriptions } from './subscriptions.js';
import { componentLog } from '../../util/log.js';

const log = componentLog('ws');

export interface WsLimits extends AuthLimits {
  message_bytes_max: number;
  subscriptions_per_connection_max: number;
  channels_per_message_max: number;
  connections_per_ip_max: number;
  backpressure_bytes_max: number;
  idle_timeout_ms: number;
  book_depth_max: number;
}

export function wsLimitsOf(cfg: GatewayContext['cfg']): WsLimits {
  const l = cfg.limits;
  return {
    message_bytes_max: l.ws_message_bytes_max,
    subscriptions_per_connection_max: l.ws_subscriptions_per_connection_max,
    channels_per_message_max: l.ws_channels_per_message_max,
    connections_per_ip_max: l.ws_connections_per_ip_max,
    backpressure_bytes_max: l.ws_backpressure_bytes_max,
    idle_timeout_ms: l.ws_idle_timeout_ms,
    book_depth_max: l.ws_book_depth_max,
    challenge_ttl_ms: l.ws_challenge_ttl_ms,
    auth_grace_ms: l.ws_auth_grace_ms,
    auth_failures_max: l.ws_auth_failures_max,
  };
}

/** Close codes the server uses (4000-4999 is the application range). */
export const CLOSE_IDLE = 4000;
export const CLOSE_AUTH_TIMEOUT = 4001;
export const CLOSE_SERVER_STOPPING = 1001;

/** Per-connection state (the uWS user data). */
export interface Conn {
  id: number;
  ip: string;
  ws: WebSocket<Conn> | null;
  channels: Map<string, Channel>;
  auth: AuthState;
  last_seen_ms: number;
  closed: boolean;
  /** Opted into cancel_on_disconnect (authenticated connections only): its close cancels the address's orders. */
  cancel_on_disconnect: boolean;
  /** `post` requests waiting for their answers (ws/post.ts). */
  posts: Set<() => void>;
  /** Messages held to go out in one write with this turn's other answers (held_answers.ts). */
  held: string[];
}

/** uWS send status: the message was dropped because the connection is over maxBackpressure. */
const SEND_DROPPED = 2;

export interface WsStats extends FanoutStats, DisconnectCancelStats {
  connections: number;
  /** Connections closed for backpressure (slow readers). */
  dropped_slow: number;
  closed_idle: number;
  closed_auth_timeout: number;
  refused_ip_limit: number;
  /** Client messages received (every frame handed to the message handler). */
  received: number;
}

export class WsHub {
  private readonly app: TemplatedApp;
  private readonly ctx: GatewayContext;
  /** Publishes what the read model decodes (an observer of it: gateway/server.ts). */
  readonly fanout: WsFanout;
  readonly limits: WsLimits;
  private readonly subscriptions: Subscriptions<Conn>;
  private readonly conns = new Set<Conn>();
  private readonly per_ip = new Map<string, number>();
  private next_id = 1;
  private sweep_timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Post answers held per connection, each connection's written together (held_answers.ts). */
  private readonly held = new HeldAnswers<Conn>((c, messages) => this.writeHeld(c, messages));

  readonly stats: WsStats = {
    connections: 0, published: 0, delivered: 0, dropped_slow: 0, closed_idle: 0, closed_auth_timeout: 0,
    disconnect_cancels: 0, disconnect_cancels_lost: 0,
    refused_ip_limit: 0, subscriptions: 0, received: 0,
  };

  constructor(app: TemplatedApp, ctx: GatewayContext, limits: WsLimits = wsLimitsOf(ctx.cfg)) {
    this.app = app;
    this.ctx = ctx;
    this.limits = limits;
    this.fanout = new WsFanout(app, ctx.rm, limits.book_depth_max, this.stats);
    this.subscriptions = new Subscriptions(this.fanout, limits, (id) => ctx.rm.marketIndex(id), (c, message) => this.send(c, message));
  }

  /** Registers `GET /ws` and starts the sweep timer. */
  register(): void {
    const l = this.limits;
    this.app.ws<Conn>('/ws', {
      maxPayloadLength: l.message_bytes_max,
      maxBackpressure: l.backpressure_bytes_max,
      // The typings say number; the binding reads a boolean.
      closeOnBackpressureLimit: true as unknown as number,
      idleTimeout: 0,
      sendPingsAutomatically: false,
      maxLifetime: 0,
      upgrade: (res, req, context) => this.upgrade(res, req, context),
      open: (ws) => this.open(ws),
      message: (ws, data) => {
        this.stats.received++;
        try {
          this.message(ws, data);
        } catch (e) {
          // A bug must not take the server down (uWS rethrows into the process).
          log.error('ringbook: ws message handler failed', e);
        }
      },
      ping: (ws) => {
        ws.getUserData().last_seen_ms = Date.now();
      },
      pong: (ws) => {
        ws.getUserData().last_seen_ms = Date.now();
      },
      close: (ws) => this.closed(ws),
    });
    const shortest = Math.min(l.idle_timeout_ms, l.auth_grace_ms, l.challenge_ttl_ms);
    const period = Math.max(20, Math.min(1000, Math.floor(shortest / 4)));
    this.sweep_timer = setInterval(() => this.sweep(), period);
    this.sweep_timer.unref();
  }

  /** Closes every connection and stops the timer (server stop). */
  close(): void {
    this.stopped = true;
    if (this.sweep_timer !== null) clearInterval(this.sweep_timer);
    this.sweep_timer = null;
    for (const c of [...this.conns]) {
      if (!c.closed && c.ws !== null) c.ws.end(CLOSE_SERVER_STOPPING, 'server stopping');
    }
  }

  // -------------------------------------------------------------------------------------------
  // Connections

  private upgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const ip = clientIpKey(res);
    const key = req.getHeader('sec-websocket-key');
    const protocol = req.getHeader('sec-websocket-protocol');
    const extensions = req.getHeader('sec-websocket-extensions');
    if (this.stopped) {
      new Reply(res).error('INTERNAL_ERROR', 'the server is stopping', 503);
      return;
    }
    const n = this.per_ip.get(ip) ?? 0;
    if (n >= this.limits.connections_per_ip_max) {
      this.stats.refused_ip_limit++;
      new Reply(res).rateLimited(1, `Too many WebSocket connections from this IP: the limit is ${this.limits.connections_per_ip_max}.`);
      return;
    }
    const conn: Conn = {
      id: this.next_id++, ip, ws: null, channels: new Map(), auth: new AuthState(this.limits),
      last_seen_ms: Date.now(), closed: false, cancel_on_disconnect: false, posts: new Set(), held: [],
    };
    res.upgrade(conn, key, protocol, extensions, context);
  }

  private open(ws: WebSocket<Conn>): void {
    const c = ws.getUserData();
    c.ws = ws;
    c.last_seen_ms = Date.now();
    this.conns.add(c);
    this.per_ip.set(c.ip, (this.per_ip.get(c.ip) ?? 0) + 1);
    this.stats.connections = this.conns.size;
  }

  private closed(ws: WebSocket<Conn>): void {
    const c = ws.getUserData();
    if (c.closed) return;
    c.closed = true;
    c.ws = null;
    this.conns.delete(c);
    const n = (this.per_ip.get(c.ip) ?? 1) - 1;
    if (n <= 0) this.per_ip.delete(c.ip);
    else this.per_ip.set(c.ip, n);
    this.subscriptions.dropAll(c);
    abandonPosts(c);
    this.stats.connections = this.conns.size;
    if (c.cancel_on_disconnect && c.auth.address !== null) cancelOnDisconnect(this.ctx.link, c.auth.address, Date.now(), this.stats);
  }

  /** Sends one message (behind the connection's held answers, if any); a connection over its backpressure limit is dropped. */
  private send(c: Conn, message: string): void {
    if (c.closed || c.ws === null) return;
    if (this.held.behind(c, message)) return;
    if (c.ws.send(message, false, false) === SEND_DROPPED) this.dropSlow(c);
  }

  /** A post's answer: held, to go out with the connection's other answers of this batch or turn. */
  private answer(c: Conn, message: string): void {
    if (c.closed || c.ws === null) return;
    this.held.hold(c, message);
  }

  /** Writes the batch's (or turn's) end: every held answer, each connection's in one corked write. */
  flushAnswers(): void {
    this.held.flush();
  }

  private writeHeld(c: Conn, messages: readonly string[]): void {
    const ws = c.ws;
    if (c.closed || ws === null) return;
    if (messages.length === 1) {
      this.send(c, messages[0]);
      return;
    }
    ws.cork(() => {
      for (let i = 0; i < messages.length && !c.closed; i++) this.send(c, messages[i]);
    });
  }

  private dropSlow(c: Conn): void {
    if (c.closed || c.ws === null) return;
    this.stats.dropped_slow++;
    c.ws.close();
  }

  private fatal(c: Conn, message: string, request_id: string | null): void {
    if (c.closed || c.ws === null) return;
    this.stats.closed_auth_timeout++;
    const ws = c.ws;
    ws.cork(() => {
      this.send(c, errorMessage('AUTH_TIMEOUT', message, request_id));
      if (!c.closed) ws.end(CLOSE_AUTH_TIMEOUT, 'AUTH_TIMEOUT');
    });
  }

  private sweep(): void {
    const now = Date.now();
    const l = this.limits;
    for (const c of this.conns) {
      const ws = c.ws;
      if (c.closed || ws === null) continue;
      if (ws.getBufferedAmount() > l.backpressure_bytes_max) {
        this.dropSlow(c);
      } else if (now - c.last_seen_ms > l.idle_timeout_ms) {
        this.stats.closed_idle++;
        ws.end(CLOSE_IDLE, 'idle timeout');
      } else if (c.auth.expired(now)) {
        this.fatal(c, c.auth.timeoutSentence(), null);
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Client messages

  private message(ws: WebSocket<Conn>, data: ArrayBuffer): void {
    const c = ws.getUserData();
    const now = Date.now();
    c.last_seen_ms = now;
    const parsed = parseClientMessage(data);
    if (!parsed.ok) {
      this.send(c, errorMessage('INVALID_REQUEST', parsed.message, parsed.request_id));
      return;
    }
    const m = parsed.message;
    switch (m.type) {
      case 'ping':
        this.send(c, pongMessage(now, m.request_id));
        return;
      case 'post':
        runPost(this.ctx, c, m.id, m.path, m.body, (message) => this.answer(c, message));
        return;
      case 'subscribe':
        this.subscriptions.subscribe(c, m.channels, m.request_id);
        return;
      case 'unsubscribe':
        this.subscriptions.unsubscribe(c, m.channels, m.request_id);
        return;
      case 'request_challenge':
        this.authStep(c, c.auth.requestChallenge(m.address, now), m.request_id);
        return;
      case 'auth':
        this.authStep(c, c.auth.auth(m.address, m.signature, now), m.request_id);
        return;
      case 'cancel_on_disconnect':
        if (c.auth.address === null) {
          this.send(c, errorMessage('UNAUTHORIZED', 'cancel_on_disconnect needs an authenticated connection (request_challenge, then auth)', m.request_id));
          return;
        }
        c.cancel_on_disconnect = m.enabled;
        this.send(c, cancelOnDisconnectReply(m.enabled, m.request_id));
        return;
    }
  }

  private authStep(c: Conn, step: AuthStep, request_id: string | null): void {
    switch (step.kind) {
      case 'challenge':
        this.send(c, challengeReply(step.nonce, step.expires_ms, request_id));
        return;
      case 'error':
        this.send(c, errorMessage(step.code, step.message, request_id));
        return;
      case 'fatal':
        this.fatal(c, step.message, request_id);
        return;
      case 'verify': {
        const done = (ok: boolean): void => {
          if (c.closed || c.ws === null) return;
          const next = c.auth.verified(step.address, ok, Date.now());
          c.ws.cork(() => {
            if (next === null) this.send(c, authSuccessMessage(step.address, request_id));
            else this.authStep(c, next, request_id);
          });
        };
        this.ctx.signatures.verify(step.message, step.signature, step.address).then(done, (e: unknown) => {
          // Logged as the HTTP path's are: the pool's failure once per change of its state, not per attempt.
          logCheckRejection(log, 'ringbook: ws auth verify failed', e);
          if (c.closed || c.ws === null) return;
          // Not the client's failure (a worker died with the check, or the pool is broken).
          const next = c.auth.unchecked(Date.now());
          c.ws.cork(() => this.authStep(c, next, request_id));
        });
        return;
      }
    }
  }
}

/** Registers the WebSocket API on `app`; hook the returned hub to the matcher link. */
export function registerWebSocket(app: TemplatedApp, ctx: GatewayContext): WsHub {
  const hub = new WsHub(app, ctx);
  hub.register();
  // A batch's answers go out before its market data is published (held_answers.ts).
  ctx.link.addAnswersWrittenListener(() => hub.flushAnswers());
  return hub;
}
