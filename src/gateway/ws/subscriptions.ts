// The subscription protocol of the WebSocket API (spec "Events", DECISIONS "WebSocket"):
// `subscribe` and `unsubscribe` of a connection, answered with `subscribed`/`unsubscribed` and at
// most one error frame. The channel names are uWS topics (hub.ts); the fan-out (fanout.ts) keeps
// the subscriber counts this moves and serializes the book snapshot a new book subscriber gets.
import type { WebSocket } from 'uWebSockets.js';
import type { WsFanout } from './fanout.js';
import {
  errorMessage, parseChannel, Refusals, subscribedMessage, unsubscribedMessage, type Channel,
} from './messages.js';

/** What the subscription protocol needs from its connection. */
export interface SubscriberConnection {
  readonly ws: WebSocket<unknown> | null;
  readonly closed: boolean;
  /** The channels subscribed, by name. */
  readonly channels: Map<string, Channel>;
  /** The authenticated address (private channels are its own only), or null. */
  readonly auth: { readonly address: string | null };
}

export interface SubscriptionLimits {
  subscriptions_per_connection_max: number;
  channels_per_message_max: number;
}

export class Subscriptions<C extends SubscriberConnection> {
  private readonly fanout: WsFanout;
  private readonly limits: SubscriptionLimits;
  private readonly marketIndex: (id: string) => number;
  /** Sends one message on the connection (which may drop it for backpressure: `closed` then). */
  private readonly send: (c: C, message: string) => void;

  constructor(fanout: WsFanout, limits: SubscriptionLimits, marketIndex: (id: string) => number, send: (c: C, message: string) => void) {
    this.fanout = fanout;
    this.limits = limits;
    this.marketIndex = marketIndex;
    this.send = send;
  }

  subscribe(c: C, channels: unknown[], request_id: string | null): void {
    const ws = c.ws;
    if (ws === null || this.tooManyChannels(c, channels, request_id)) return;
    const accepted: string[] = [];
    const books: number[] = [];
    const seen = new Set<string>();
    const refused = new Refusals();
    for (const ch of this.parsed(channels, refused)) {
      if (seen.has(ch.name)) continue;
      seen.add(ch.name);
      if (ch.private) {
        const own = c.auth.address;
        if (own === null) {
          refused.add('UNAUTHORIZED', `channel ${ch.name} is private: authenticate first (request_challenge, then auth)`);
          continue;
        }
        if (own !== ch.address) {
          refused.add('UNAUTHORIZED', `channel ${ch.name} belongs to another address; this connection is authenticated as ${own}`);
          continue;
        }
      }
      if (!c.channels.has(ch.name)) {
        if (c.channels.size >= this.limits.subscriptions_per_connection_max) {
          refused.add('INVALID_REQUEST', `cannot subscribe to ${ch.name}: at most ${this.limits.subscriptions_per_connection_max} channels per connection`);
          continue;
        }
        c.channels.set(ch.name, ch);
        ws.subscribe(ch.name);
        this.fanout.count(ch, 1);
      }
      accepted.push(ch.name);
      if (ch.kind === 'book' || ch.kind === 'book_delta') books.push(ch.market);
    }
    if (refused.code !== null) this.send(c, errorMessage(refused.code, refused.sentence(channels.length), request_id));
    // A send can find the connection over its backpressure limit and drop it.
    if (c.closed) return;
    if (accepted.length > 0) this.send(c, subscribedMessage(accepted, request_id));
    for (const m of books) {
      if (c.closed) return;
      this.send(c, this.fanout.snapshot(m));
    }
  }

  unsubscribe(c: C, channels: unknown[], request_id: string | null): void {
    const ws = c.ws;
    if (ws === null || this.tooManyChannels(c, channels, request_id)) return;
    const done: string[] = [];
    const refused = new Refusals();
    for (const ch of this.parsed(channels, refused)) {
      const had = c.channels.get(ch.name);
      if (had !== undefined) {
        c.channels.delete(ch.name);
        ws.unsubscribe(ch.name);
        this.fanout.count(had, -1);
      }
      if (!done.includes(ch.name)) done.push(ch.name);
    }
    if (refused.code !== null) this.send(c, errorMessage(refused.code, refused.sentence(channels.length), request_id));
    if (c.closed) return;
    if (done.length > 0) this.send(c, unsubscribedMessage(done, request_id));
  }

  /**
   * The channels of a subscribe/unsubscribe that parse, in order; each one that does not is refused
   * as INVALID_REQUEST when the walk reaches it (lazily: refusals keep the message's order, and
   * the first one's code is the frame's).
   */
  private *parsed(channels: unknown[], refused: Refusals): Generator<Channel> {
    for (const text of channels) {
      const ch = parseChannel(text, this.marketIndex);
      if (typeof ch === 'string') refused.add('INVALID_REQUEST', ch);
      else yield ch;
    }
  }

  /** A closed connection's channels leave the fan-out's counts (uWS drops its topics itself). */
  dropAll(c: C): void {
    for (const ch of c.channels.values()) this.fanout.count(ch, -1);
    c.channels.clear();
  }

  /**
   * One `subscribe`/`unsubscribe` is answered with at most one error frame, whatever the number of
   * channels it names (one frame per refused channel let 1,100 names bring back 146 KB, issue 20),
   * and a message naming more than limits.ws_channels_per_message_max channels is refused whole.
   */
  private tooManyChannels(c: C, channels: unknown[], request_id: string | null): boolean {
    const max = this.limits.channels_per_message_max;
    if (channels.length <= max) return false;
    this.send(c, errorMessage('INVALID_REQUEST', `at most ${max} channels per message, got ${channels.length}; nothing was changed`, request_id));
    return true;
  }
}
