// Reads a stream in order from a sequence on, through NATS node failures. An ordered consumer
// is one ephemeral R1 consumer on one node: when that node dies, the client sees missed
// heartbeats but (nats.js 3.4 against nats-server 2.9) keeps pulling from the vanished consumer.
// So after two missed heartbeats, or when the stream holds messages past the reader's position and
// none arrived for STALL_MS (a client reconnected to another node may not even notice missed
// heartbeats), this reader drops the consumer and makes a new one at the next sequence it has not
// yet handled, which is what an ordered consumer promises anyway: every message once, in order.
// Until a new consumer exists (also while an attempt to create one waits), the reader fetches the
// missing messages by sequence with direct gets (DIRECT.GET, any replica answers), polling for new
// ones: creating a consumer needs the cluster's meta leader, which may be the node that died
// (nats-server 2.9 takes seconds to elect another), and the cluster may first place the new
// consumer on the dead node.
//
// The matcher reads with this class; the gateways and DA roles read without consumers
// (log_reader_seq.ts, whose users have no consumer grant). The fetches by sequence are that
// file's SeqFetcher (a window in flight, deleted messages skipped as a consumer skips them). Until
// h29c (2026-11-29) this class kept its own one-at-a-time gets: with SeqFetcher here the
// frozen-leader case of test/cluster/lease_fence.test.ts had failed 3 of 6 runs, as that test's
// flaw fixed in 2debd5f makes it fail; 26 of 26 runs passed with the window since
// (docs/scale-out.md, "Readers without consumers", says why the window is safe here).
import type { ConsumerMessages, JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { componentLog } from '../util/log.js';
import { SeqFetcher, type LogMessage, type StreamLogReader } from './log_reader_seq.js';
import { CONSUMER_EXPIRES_MS } from './log_format.js';

export type { LogMessage } from './log_reader_seq.js';

const log = componentLog('cluster');

/** Missed idle heartbeats (each CONSUMER_EXPIRES_MS / 2) before the consumer is recreated. */
const HEARTBEATS_MISSED_MAX = 2;
/** Wait after a failed attempt to create the consumer (the fetches by sequence go on meanwhile). */
const CREATE_RETRY_MS_MIN = 100;
/** While no consumer exists, the stream is asked for its next message this often (a direct get each). */
const FETCH_POLL_MS = 10;
/**
 * Direct gets in flight at once while no consumer exists (a start's or a failover's catch-up; the
 * window starts at 1 and doubles while it comes back full). Held messages stay below either of
 * the matcher's consumer buffers (256 events, 4,096 requests), so memory is bounded as before.
 */
export const FETCH_WINDOW_MAX = 32;
/** No message for this long while the stream has more: the consumer is stuck (2 heartbeat periods). */
const STALL_MS = CONSUMER_EXPIRES_MS / 2;
/** How often the stall check asks the stream for its last sequence. */
const STALL_CHECK_MS = 250;
/** Creating a consumer may take this long before the attempt counts as failed. */
const OPEN_MS_MAX = 2 * CONSUMER_EXPIRES_MS;
/** Notifications logged per reader at most. */
const NOTES_LOGGED_MAX = 20;

export class LogReader implements StreamLogReader {
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  private readonly stream: string;
  private readonly label: string;
  private readonly handle: (m: LogMessage) => void | Promise<void>;
  private readonly max_messages: number;
  /** The fetches by sequence while no consumer exists; holds the reader's position. */
  private readonly fetcher: SeqFetcher;
  private messages: ConsumerMessages | null = null;
  private closed = false;
  private done: Promise<void> = Promise.resolve();
  /** Resolves when close() is called (ends the wait for a consumer being created). */
  private signal_closed: () => void = () => undefined;
  private readonly closed_signal = new Promise<void>((resolve) => {
    this.signal_closed = resolve;
  });
  private notes_logged = 0;
  recreated = 0;

  private last_message_ms = Date.now();
  private stall_timer: NodeJS.Timeout | null = null;
  private checking = false;
  /** Ends the current iteration (drop()). */
  private dropped: (() => void) | null = null;

  /**
   * `subject`: the one subject the stream stores (the fetches by sequence skip to its next message).
   * `fetch_window_max`: direct gets in flight at most while no consumer exists (FETCH_WINDOW_MAX).
   */
  constructor(js: JetStreamClient, jsm: JetStreamManager, stream: string, subject: string, from_seq: number, label: string,
    max_messages: number, handle: (m: LogMessage) => void | Promise<void>, fetch_window_max = FETCH_WINDOW_MAX) {
    this.js = js;
    this.jsm = jsm;
    this.stream = stream;
    this.label = label;
    this.max_messages = max_messages;
    this.handle = handle;
    // Direct gets only: no STREAM.MSG.GET (the matcher's user has no grant for it on the request
    // stream; a get that fails is asked again at the next poll, and the consumer covers the rest).
    this.fetcher = new SeqFetcher(jsm, stream, subject, from_seq, fetch_window_max, false, (m) => {
      this.last_message_ms = Date.now();
      return this.handle(m);
    }, (w) => this.note(w));
  }

  /** The next stream sequence to hand over. */
  get next_seq(): number {
    return this.fetcher.next_seq;
  }

  /** Gets sent while no consumer existed (a bench reads it). */
  get fetch_requests(): number {
    return this.fetcher.requests;
  }

  /** Starts reading (at once: messages are fetched by sequence until a consumer exists). The handler runs for each message, in order, awaited. */
  async start(): Promise<void> {
    this.done = this.run();
    this.stall_timer = setInterval(() => void this.checkStall(), STALL_CHECK_MS);
  }

  private async checkStall(): Promise<void> {
    if (this.checking || this.closed || Date.now() - this.last_message_ms < STALL_MS) return;
    this.checking = true;
    try {
      const last = (await this.jsm.streams.info(this.stream)).state.last_seq;
      const messages = this.messages;
      if (last >= this.next_seq && Date.now() - this.last_message_ms >= STALL_MS && messages !== null && !this.closed) {
        this.note(`${this.stream} consumer stalled at sequence ${this.next_seq} (stream at ${last}): recreating it`);
        this.last_message_ms = Date.now();
        this.drop(messages);
      }
    } catch {
      // The stream is electing a leader: check again later.
    } finally {
      this.checking = false;
    }
  }

  private note(what: string): void {
    if (this.notes_logged >= NOTES_LOGGED_MAX) return;
    this.notes_logged++;
    log.warn(`ringbook ${this.label}: ${what}`, { stream: this.stream });
  }

  /** Creates a consumer at next_seq (one attempt, bounded); false when it could not. */
  private async open(): Promise<boolean> {
    try {
      // Bounded: under an election the client's own create can wait without end.
      const messages = await withDeadline(OPEN_MS_MAX, async () => {
        const consumer = await this.js.consumers.get(this.stream, { opt_start_seq: this.next_seq });
        return consumer.consume({ max_messages: this.max_messages, expires: CONSUMER_EXPIRES_MS });
      }, (late) => this.drop(late));
      this.messages = messages;
      void (async () => {
        for await (const n of messages.status()) {
          if (n.type === 'heartbeats_missed' && n.count >= HEARTBEATS_MISSED_MAX) {
            this.note(`${this.stream} consumer missed ${n.count} heartbeats: recreating it at sequence ${this.next_seq}`);
            this.drop(messages);
            return;
          }
        }
      })().catch(() => undefined);
      return true;
    } catch (e) {
      if (!this.closed) this.note(`${this.stream} consumer not created yet (${String(e)}), fetching by sequence meanwhile`);
      return false;
    }
  }


  /**
   * Ends the iteration over a consumer at once (close() waits for the pull in flight, which a
   * consumer on a dead node never answers), then lets the client clean up in the background.
   */
  private drop(messages: ConsumerMessages): void {
    if (messages === this.messages) this.dropped?.();
    messages.stop();
    void messages.close().catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (!this.closed) {
      // No consumer: creating one needs the cluster's meta leader, which may be the node that
      // died; until it is elected again, keep handing over what the stream's replicas hold.
      while (this.messages === null) {
        // The attempt to create a consumer may wait its whole bound (OPEN_MS_MAX: 4 s) in an
        // election; the fetches by sequence go on meanwhile, or a leader matcher would read one
        // burst of requests per attempt (seen: a loaded run whose new leader answered ~1 order
        // per wallet per 4 s for the whole 12 s after a NATS node's kill).
        let opened: boolean | null = null;
        const opening = this.open().then((ok) => {
          opened = ok;
        });
        const from = this.next_seq;
        let fetch_error: string | null = null;
        while (opened === null && !this.closed) {
          const { error } = await this.fetcher.fetchAvailable(() => this.closed);
          if (error !== null) fetch_error ??= error;
          if (opened === null) await Promise.race([opening, new Promise((r) => setTimeout(r, FETCH_POLL_MS))]);
        }
        // close() does not wait for the attempt's bound: a consumer it makes after that is dropped.
        await Promise.race([opening, this.closed_signal]);
        if (this.closed) {
          void opening.then(() => {
            if (this.messages !== null) this.drop(this.messages);
          });
          return;
        }
        // One line per attempt, not per poll (a reader logs NOTES_LOGGED_MAX lines in all).
        if (fetch_error !== null) this.note(`${this.stream} ${fetch_error}`);
        if (this.next_seq > from) this.note(`${this.stream} messages ${from}..${this.next_seq - 1} fetched by sequence`);
        if (opened === false) await new Promise((r) => setTimeout(r, CREATE_RETRY_MS_MIN));
      }
      const messages = this.messages;
      // The iteration races a drop: a consumer on a dead node may never end its iterator.
      const dropped = new Promise<null>((resolve) => {
        this.dropped = () => resolve(null);
      });
      const it = messages[Symbol.asyncIterator]();
      try {
        for (;;) {
          const r = await Promise.race([it.next(), dropped]);
          if (r === null || r.done === true) break;
          const m = r.value;
          this.last_message_ms = Date.now();
          // A recreated consumer starts at next_seq; anything older is a repeat.
          if (m.seq < this.next_seq) continue;
          await this.handle(m);
          this.fetcher.next_seq = m.seq + 1;
          if (this.closed) break;
        }
      } catch (e) {
        this.note(`${this.stream} consumer ended (${String(e)})`);
      }
      this.dropped = null;
      this.messages = null;
      this.recreated++;
    }
  }

  /** Stops reading (the message being handled finishes first). */
  async close(): Promise<void> {
    this.closed = true;
    this.signal_closed();
    if (this.stall_timer !== null) clearInterval(this.stall_timer);
    if (this.messages !== null) this.drop(this.messages);
    else this.dropped?.();
    await this.done;
  }
}

/**
 * `work()` with a deadline: rejects after `ms`; a result that arrives later is handed to
 * `discard` (a consumer created after its caller gave up must not leak).
 */
function withDeadline<T>(ms: number, work: () => Promise<T>, discard: (late: T) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      reject(new Error(`no answer within ${ms} ms`));
    }, ms);
    work().then((v) => {
      clearTimeout(timer);
      if (expired) discard(v);
      else resolve(v);
    }, (e: unknown) => {
      clearTimeout(timer);
      if (!expired) reject(e);
    });
  });
}
