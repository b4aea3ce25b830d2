// WebSocket client for Ringbook (docs/api.md "WebSocket"): challenge authentication, channel
// subscriptions kept across reconnects (exponential backoff), keepalive pings, order books kept in
// sync (BookSync, book_sync.ts), and order entry with `post` (answers correlated by id,
// ws_requests.ts). The messages and channel names are ws_messages.ts, re-exported here.
import { BookSync } from './book_sync.js';
import { RingbookError } from './errors.js';
import type { FetchLike } from './http.js';
import { RingbookClient } from './rest.js';
import type { Signer } from './wallet.js';
import type {
  BalanceUpdateMessage, BookDeltaMessage, BookSnapshotMessage, BookView, FillMessage, OrderUpdateMessage, PostResponse, SocketState,
  TradeMessage, WebSocketConstructor, WebSocketLike,
} from './ws_messages.js';
import { WsRequests, type RequestKind } from './ws_requests.js';

export * from './ws_messages.js';

export interface RingbookSocketOptions {
  /** `http://host:port`, `ws://host:port` or `ws://host:port/ws`. */
  url: string;
  /** Authenticates with the challenge flow on every (re)connect when given. */
  wallet?: Signer;
  /** Channels to hold from the start (e.g. `book:ETH-USDC`, `orders:<address>`). */
  channels?: string[];
  /** WebSocket constructor (browsers: `WebSocket`); default: the `ws` package, loaded on demand. */
  WebSocket?: WebSocketConstructor;
  /** For HTTP book re-fetches (default global fetch). */
  fetch?: FetchLike;
  /** Base URL of the HTTP API (default: derived from `url`). */
  http_url?: string;
  /** Keepalive ping period (default 30 s; the server closes after 60 s of silence). */
  ping_interval_ms?: number;
  /** Reconnect automatically (default true). */
  reconnect?: boolean;
  /** Backoff: first delay (default 250 ms), doubled up to max_backoff_ms (default 10 s), with jitter. */
  min_backoff_ms?: number;
  max_backoff_ms?: number;
  /** Test hook: return true to drop an incoming book snapshot as if it had been lost. */
  dropSnapshot?: (msg: BookSnapshotMessage) => boolean;
  /** Test hook: return true to drop an incoming book delta as if it had been lost. */
  dropDelta?: (msg: BookDeltaMessage) => boolean;
}

type Listener<T> = (v: T) => void;

export class RingbookSocket {
  readonly ws_url: string;
  readonly http: RingbookClient;
  /** Counters for monitoring and tests. */
  readonly stats = {
    connects: 0, reconnects: 0, resyncs: 0, stale_dropped: 0, gaps: 0, pings_sent: 0, deltas_applied: 0, checksum_mismatches: 0,
  };
  #opts: RingbookSocketOptions;
  #ws: WebSocketLike | null = null;
  #state: SocketState = 'idle';
  #channels = new Set<string>();
  #cancel_on_disconnect = false;
  readonly #books: BookSync;
  readonly #requests = new WsRequests();
  #ping_timer: ReturnType<typeof setInterval> | null = null;
  #reconnect_timer: ReturnType<typeof setTimeout> | null = null;
  #backoff_ms: number;
  #last_rx = 0;
  #authenticated: string | null = null;
  #listeners = {
    book: new Set<Listener<BookView>>(),
    trade: new Set<Listener<TradeMessage>>(),
    fill: new Set<Listener<FillMessage>>(),
    order: new Set<Listener<OrderUpdateMessage>>(),
    balance: new Set<Listener<BalanceUpdateMessage>>(),
    error: new Set<Listener<RingbookError | Error>>(),
    state: new Set<Listener<SocketState>>(),
  };
  #connecting: Promise<void> | null = null;

  constructor(opts: RingbookSocketOptions) {
    this.#opts = opts;
    const u = new URL(opts.url);
    const proto = u.protocol === 'https:' || u.protocol === 'wss:' ? 'wss:' : 'ws:';
    this.ws_url = `${proto}//${u.host}/ws`;
    const http_url = opts.http_url ?? `${proto === 'wss:' ? 'https:' : 'http:'}//${u.host}`;
    this.http = new RingbookClient({ base_url: http_url, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
    this.#books = new BookSync({
      stats: this.stats, fetchBook: (market_id) => this.http.orderbook(market_id),
      onBook: (view) => this.#emit('book', view), onError: (e) => this.#emit('error', e),
      ...(opts.dropSnapshot ? { dropSnapshot: opts.dropSnapshot } : {}), ...(opts.dropDelta ? { dropDelta: opts.dropDelta } : {}),
    });
    for (const c of opts.channels ?? []) this.#channels.add(c);
    this.#backoff_ms = opts.min_backoff_ms ?? 250;
  }

  get state(): SocketState {
    return this.#state;
  }

  /** The authenticated address on the current connection, or null. */
  get authenticated(): string | null {
    return this.#authenticated;
  }

  get channels(): string[] {
    return [...this.#channels];
  }

  /** The synchronized book of a market (after a `book:<market>` subscription). */
  book(market_id: string): BookView | undefined {
    return this.#books.book(market_id);
  }

  onBook(cb: Listener<BookView>): () => void {
    return this.#on('book', cb);
  }
  onTrade(cb: Listener<TradeMessage>): () => void {
    return this.#on('trade', cb);
  }
  onFill(cb: Listener<FillMessage>): () => void {
    return this.#on('fill', cb);
  }
  onOrder(cb: Listener<OrderUpdateMessage>): () => void {
    return this.#on('order', cb);
  }
  onBalance(cb: Listener<BalanceUpdateMessage>): () => void {
    return this.#on('balance', cb);
  }
  onError(cb: Listener<RingbookError | Error>): () => void {
    return this.#on('error', cb);
  }
  onState(cb: Listener<SocketState>): () => void {
    return this.#on('state', cb);
  }

  #on<K extends keyof RingbookSocket['_listenerTypes']>(k: K, cb: Listener<RingbookSocket['_listenerTypes'][K]>): () => void {
    const set = this.#listeners[k] as Set<Listener<RingbookSocket['_listenerTypes'][K]>>;
    set.add(cb);
    return () => set.delete(cb);
  }
  /** Type-level map only. */
  declare readonly _listenerTypes: {
    book: BookView;
    trade: TradeMessage;
    fill: FillMessage;
    order: OrderUpdateMessage;
    balance: BalanceUpdateMessage;
    error: RingbookError | Error;
    state: SocketState;
  };

  #emit<K extends keyof RingbookSocket['_listenerTypes']>(k: K, v: RingbookSocket['_listenerTypes'][K]): void {
    for (const cb of this.#listeners[k] as Set<Listener<RingbookSocket['_listenerTypes'][K]>>) {
      try {
        cb(v);
      } catch (e) {
        if (k !== 'error') this.#emit('error', e as Error);
      }
    }
  }

  #setState(s: SocketState): void {
    if (this.#state === s) return;
    this.#state = s;
    this.#emit('state', s);
  }

  // ------------------------------------------------------------------ lifecycle

  /** Opens the connection, authenticates (with a wallet) and subscribes the held channels. */
  connect(): Promise<void> {
    if (this.#state === 'open') return Promise.resolve();
    if (this.#connecting) return this.#connecting;
    this.#connecting = this.#open().finally(() => {
      this.#connecting = null;
    });
    return this.#connecting;
  }

  async #open(): Promise<void> {
    this.#setState(this.stats.connects === 0 ? 'connecting' : 'reconnecting');
    const Ctor = this.#opts.WebSocket ?? ((await import('ws')).default as unknown as WebSocketConstructor);
    const ws = new Ctor(this.ws_url);
    this.#ws = ws;
    this.#authenticated = null;
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      // The socket's own error as the cause (the `ws` package's ErrorEvent.error: code ECONNREFUSED
      // and so on), so a caller can tell a server that is not there (the CLI names the URL it tried).
      ws.onerror = (ev: any) => reject(new Error(`websocket error: ${ev?.message ?? 'connect failed'}`, { cause: ev?.error }));
      ws.onclose = (ev) => reject(new Error(`websocket closed during connect (${ev.code})`));
    }).catch((e) => {
      this.#ws = null;
      if (this.#state !== 'closed') this.#scheduleReconnect();
      throw e;
    });
    ws.onmessage = (ev) => this.#onMessage(ev.data);
    ws.onerror = () => {
      // onclose follows
    };
    ws.onclose = (ev) => this.#onClose(ws, ev.code);
    this.#last_rx = Date.now();
    this.stats.connects++;
    if (this.stats.connects > 1) this.stats.reconnects++;
    this.#startPing();
    try {
      if (this.#opts.wallet) await this.#authenticate();
      // A reconnect opts in again: the opt-in belongs to the connection, not the address.
      if (this.#cancel_on_disconnect) await this.#send('cancel_on_disconnect', { enabled: true });
      for (const c of this.#channels) this.#books.markFresh(c);
      if (this.#channels.size > 0) await this.#send('subscribe', { channels: [...this.#channels] }).catch((e) => this.#emit('error', e));
    } catch (e) {
      ws.close();
      throw e;
    }
    this.#backoff_ms = this.#opts.min_backoff_ms ?? 250;
    this.#setState('open');
  }

  /** Closes for good (no reconnect). */
  close(): void {
    this.#setState('closed');
    if (this.#reconnect_timer) clearTimeout(this.#reconnect_timer);
    this.#reconnect_timer = null;
    this.#stopPing();
    const ws = this.#ws;
    this.#ws = null;
    if (ws) ws.close(1000, 'client close');
    this.#requests.failAll(new Error('socket closed'));
  }

  #onClose(ws: WebSocketLike, _code: number): void {
    if (this.#ws !== ws) return;
    this.#ws = null;
    this.#authenticated = null;
    this.#stopPing();
    this.#requests.failAll(new Error('connection lost'));
    if (this.#state === 'closed') return;
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#opts.reconnect === false || this.#state === 'closed' || this.#reconnect_timer) return;
    this.#setState('reconnecting');
    const max = this.#opts.max_backoff_ms ?? 10_000;
    const delay = Math.min(max, this.#backoff_ms) * (0.75 + Math.random() * 0.5);
    this.#backoff_ms = Math.min(max, this.#backoff_ms * 2);
    this.#reconnect_timer = setTimeout(() => {
      this.#reconnect_timer = null;
      this.connect().catch((e) => this.#emit('error', e));
    }, delay);
  }

  #startPing(): void {
    this.#stopPing();
    const every = this.#opts.ping_interval_ms ?? 30_000;
    this.#ping_timer = setInterval(() => {
      const ws = this.#ws;
      if (!ws) return;
      if (Date.now() - this.#last_rx > every * 2.5) {
        // Nothing heard (not even a pong): the link is dead; close and reconnect.
        ws.close(4000, 'keepalive timeout');
        this.#onClose(ws, 4000);
        return;
      }
      this.stats.pings_sent++;
      this.#send('ping', {}).catch(() => {});
    }, every);
    (this.#ping_timer as any).unref?.();
  }

  #stopPing(): void {
    if (this.#ping_timer) clearInterval(this.#ping_timer);
    this.#ping_timer = null;
  }

  // ------------------------------------------------------------------ requests

  #send(type: RequestKind | 'request_challenge', fields: Record<string, unknown>): Promise<any> {
    const ws = this.#ws;
    if (!ws) return Promise.reject(new Error('not connected'));
    return this.#requests.send(ws, type, fields);
  }

  async #authenticate(): Promise<void> {
    const w = this.#opts.wallet!;
    const ch = await this.#send('request_challenge', { address: w.address });
    const signature = await w.signMessage(`Ringbook Exchange\nNonce: ${ch.nonce}`);
    const ok = await this.#send('auth', { address: w.address, signature });
    this.#authenticated = String(ok.address);
  }

  /** Subscribes (and remembers for reconnects). Resolves with the channels the server accepted; rejects if it refused all. */
  async subscribe(channels: string[]): Promise<string[]> {
    for (const c of channels) this.#channels.add(c);
    if (!this.#ws || this.#state !== 'open') {
      await this.connect();
      return channels;
    }
    for (const c of channels) this.#books.markFresh(c);
    try {
      const r = await this.#send('subscribe', { channels });
      return r.channels as string[];
    } catch (e) {
      if (e instanceof RingbookError) for (const c of channels) this.#channels.delete(c); // all refused
      throw e;
    }
  }

  async unsubscribe(channels: string[]): Promise<string[]> {
    for (const c of channels) this.#channels.delete(c);
    if (!this.#ws) return channels;
    const r = await this.#send('unsubscribe', { channels });
    return r.channels as string[];
  }

  /**
   * Opts this (authenticated) connection into cancel on disconnect: when it closes for any reason,
   * the server cancels every resting order of the wallet's address within one second (reason
   * `disconnect`). Kept across reconnects. Needs the `wallet` option.
   */
  async cancelOnDisconnect(enabled = true): Promise<void> {
    if (!this.#opts.wallet) throw new Error('cancelOnDisconnect needs the wallet option (an authenticated connection)');
    this.#cancel_on_disconnect = enabled;
    if (!this.#ws || this.#state !== 'open') {
      await this.connect();
      return;
    }
    await this.#send('cancel_on_disconnect', { enabled });
  }

  /**
   * Order entry over this connection (`post`): `path` is an order-entry path (`/orders`,
   * `/orders/cancel`, `/orders/amend`, `/orders/cancel-all`, `/orders/batch`, `/orders/cancel-after`) and `body` its signed
   * HTTP body (the SDK's `orderBody` etc.). Resolves with the HTTP status and body the server
   * answered (errors and 429 included); rejects only when the connection is lost first.
   */
  post(path: string, body: Record<string, unknown>): Promise<PostResponse> {
    const ws = this.#ws;
    if (!ws) return Promise.reject(new Error('not connected'));
    return this.#requests.post(ws, path, body);
  }

  /** Round trip: resolves with the server time of the `pong`. */
  async ping(): Promise<string> {
    const r = await this.#send('ping', {});
    return r.timestamp as string;
  }

  // ------------------------------------------------------------------ incoming

  #onMessage(data: unknown): void {
    this.#last_rx = Date.now();
    let text: string;
    if (typeof data === 'string') text = data;
    else if (data instanceof ArrayBuffer) text = new TextDecoder().decode(data);
    else if (ArrayBuffer.isView(data)) text = new TextDecoder().decode(data as Uint8Array);
    else text = String(data);
    let msg: any;
    try {
      msg = JSON.parse(text);
    } catch {
      this.#emit('error', new Error('unparseable frame from server'));
      return;
    }
    switch (msg.type) {
      case 'book_snapshot':
        this.#books.snapshot(msg as BookSnapshotMessage);
        return;
      case 'book_delta':
        this.#books.delta(msg as BookDeltaMessage);
        return;
      case 'response':
        this.#requests.response(msg);
        return;
      case 'trade':
        this.#emit('trade', msg);
        return;
      case 'fill':
        this.#emit('fill', msg);
        return;
      case 'order_update':
        this.#emit('order', msg);
        return;
      case 'balance_update':
        this.#emit('balance', msg);
        return;
      case 'challenge':
      case 'auth_success':
      case 'subscribed':
      case 'unsubscribed':
      case 'cancel_on_disconnect':
      case 'pong':
        this.#requests.answer(msg);
        return;
      case 'error':
        this.#requests.error(msg, (err) => this.#emit('error', err));
        return;
      default:
        return;
    }
  }

  /** Re-fetches a book over HTTP and keeps it when newer than the one applied. */
  resync(market_id: string): Promise<BookView | undefined> {
    return this.#books.resync(market_id);
  }
}
