// Reads a stream in order without a consumer: message n, n+1, ... fetched by sequence (direct
// get, any replica answers; STREAM.MSG.GET, the stream leader, where direct gets go unanswered).
// A user allowed to create a consumer on a stream may point a push consumer's delivery subject at
// another stream's subject, and nats-server 2.9 delivers there without checking that user's publish
// permissions (upstream nats-server#8274): so the gateway's and the DA role's users get no consumer
// grants at all (config/nats-authorization.conf) and read with this class. The matcher, the
// log's writer, keeps its consumers (log_reader.ts), whose fallback while it has none is this
// file's SeqFetcher: one implementation of the in-order hand-over by sequence.
//
// New messages are noticed by a wake-up hint: the event stream republishes each stored message's
// headers (no body) to EVENT_TIP_SUBJECT (log_format.ts), which needs only a plain subscription.
// A hint carries nothing the reader trusts: it ends a wait early and may widen the next window of
// fetches, and the data always comes from the stream by sequence. Hints lost (a reconnect, a
// stream made before it republished) are covered by polling with a bounded backoff.
import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import type { MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';
import { componentLog } from '../util/log.js';

const log = componentLog('cluster');

/** One stored message, from a consumer or fetched by sequence. */
export interface LogMessage {
  seq: number;
  data: Uint8Array;
  headers: MsgHdrs | undefined;
}

export type LogHandler = (m: LogMessage) => void | Promise<void>;

/** What the roles use of a reader, with or without consumers. */
export interface StreamLogReader {
  /** The next stream sequence to hand over. */
  readonly next_seq: number;
  start(): Promise<void>;
  /** Stops reading (the message being handled finishes first). */
  close(): Promise<void>;
}

/** After direct gets failed and a STREAM.MSG.GET answered, direct gets are tried again this much later. */
const DIRECT_RETRY_MS = 10_000;
/**
 * Without hints (a stream made before it republished), the first wait after a round that found
 * nothing new; doubled per empty round up to POLL_MS_MAX. While hints arrive the reader waits
 * for the next one (or POLL_MS_MAX): a re-poll after each message cost the cluster bench's four
 * gateways ~1 more request per batch each, +50% NATS CPU per order.
 */
const POLL_MS_MIN = 1;
/** Hints count as arriving while the last one is at most this old. */
const HINTS_FRESH_MS = 10_000;
/** Longest wait between polls (a lost hint delays a message by this at most). */
const POLL_MS_MAX = 100;
/** Wait after a handler's failure before the message is handed over again. */
const HANDLER_RETRY_MS = 100;
/** Notifications logged per reader at most. */
const NOTES_LOGGED_MAX = 20;

/** The stream header a republished message carries: the sequence it was stored at. */
const H_SEQUENCE = 'Nats-Sequence';

/**
 * Hands over a stream's messages in order from `next_seq` on, fetched by sequence, a window of
 * requests in flight at once (at most `window_max`: memory is bounded by that many messages).
 * Each request asks for the first message at or after its sequence (`next_by_subj`), so deleted or
 * purged messages are skipped as a consumer skips them, never waited for.
 */
export class SeqFetcher {
  next_seq: number;
  /** Highest sequence the stream is said to hold (a hint): widens the next window up to it. */
  known_last = 0;
  /** Messages handed over; gets sent (a bench reads both). */
  handed = 0;
  requests = 0;
  /** Of those, STREAM.MSG.GET after a replica lagged behind a hint. */
  leader_gets = 0;
  private streak = 1;
  private direct = true;
  private direct_retry_at_ms = 0;
  private readonly jsm: JetStreamManager;
  private readonly stream: string;
  private readonly subject: string;
  private readonly window_max: number;
  private readonly msg_get_fallback: boolean;
  /** False: the stream has no allow_direct (made before it was set): STREAM.MSG.GET only. */
  allow_direct = true;
  private readonly handle: LogHandler;
  private readonly note: (what: string) => void;

  /**
   * `msg_get_fallback`: when a direct get fails, ask the stream leader (STREAM.MSG.GET) and keep
   * doing so for DIRECT_RETRY_MS (a stream made without allow_direct, or one whose allow_direct was
   * set by an update: nats-server 2.9.10 accepts that update but left direct gets unanswered in
   * our test); also where a replica lags behind `known_last`. Needs that API subject granted (the
   * matcher's user has it on RB_EVENTS only, and its consumers cover what direct gets miss).
   */
  constructor(jsm: JetStreamManager, stream: string, subject: string, from_seq: number, window_max: number, msg_get_fallback: boolean,
    handle: LogHandler, note: (what: string) => void) {
    this.jsm = jsm;
    this.stream = stream;
    this.subject = subject;
    this.next_seq = from_seq;
    this.window_max = Math.max(1, window_max);
    this.msg_get_fallback = msg_get_fallback;
    this.handle = handle;
    this.note = note;
  }

  /** The first stored message at or after `seq`; null when the answering replica holds none. */
  private async get(seq: number): Promise<StoredMsg | null> {
    const q = { seq, next_by_subj: this.subject };
    this.requests++;
    if (!this.allow_direct) return this.jsm.streams.getMessage(this.stream, q);
    if (!this.direct && Date.now() >= this.direct_retry_at_ms) this.direct = true;
    if (!this.direct) return this.jsm.streams.getMessage(this.stream, q);
    try {
      return await this.jsm.direct.getMessage(this.stream, q);
    } catch (e) {
      if (!this.msg_get_fallback) throw e;
      const m = await this.jsm.streams.getMessage(this.stream, q);
      if (this.direct) this.note(`${this.stream}: direct gets fail (${String(e)}), reading through the stream leader (STREAM.MSG.GET)`);
      this.direct = false;
      this.direct_retry_at_ms = Date.now() + DIRECT_RETRY_MS;
      return m;
    }
  }

  /**
   * Hands over every message the stream holds past next_seq, in order, awaiting the handler for
   * each; returns how many, and the error of a fetch that failed (asked again next round). A
   * handler's error is thrown.
   */
  async fetchAvailable(closed: () => boolean, hinted = false): Promise<{ handed: number; error: string | null }> {
    let handed = 0;
    while (!closed()) {
      const first = this.next_seq;
      // `hinted`: hints announce every new message, so no request goes past the last one announced
      // (a probe past it answers "none" nearly always: +1-2 requests per message); else the window
      // grows while it comes back full (a catch-up whose end nobody announced).
      const announced = this.known_last - first + 1;
      if (hinted && announced <= 0 && handed > 0) break;
      const n = Math.min(this.window_max, Math.max(1, hinted ? announced : Math.max(this.streak, announced)));
      const gets: Promise<StoredMsg | null>[] = [];
      for (let i = 0; i < n; i++) {
        const g = this.get(first + i);
        // Answers after the window ended (a gap, an error) are never looked at.
        g.catch(() => undefined);
        gets.push(g);
      }
      for (let i = 0; i < n; i++) {
        let m: StoredMsg | null;
        try {
          m = await gets[i];
          // The stream said it holds this one (a hint, its info) but the replica that answered
          // has not applied it yet (nats-server prefers the client's own node, which may be a
          // follower learning the commit only from the leader's next append): ask the leader.
          if (m === null && first + i <= this.known_last && this.msg_get_fallback && this.allow_direct) {
            this.requests++;
            this.leader_gets++;
            const q = { seq: first + i, next_by_subj: this.subject };
            m = await this.jsm.streams.getMessage(this.stream, q);
          }
        } catch (e) {
          this.streak = 1;
          return { handed, error: `message ${first + i} not fetched (${String(e)})` };
        }
        if (m === null) {
          // Nothing at or after first + i (on that replica): a hint that said more was wrong or early.
          this.streak = 1;
          this.known_last = Math.min(this.known_last, this.next_seq - 1);
          return { handed, error: null };
        }
        // The answer to request s is the first message at or after s, and s <= next_seq here (each
        // answer moved next_seq past its own request): no message lies between next_seq and m.seq.
        // An answer below next_seq was handed over already (a gap made two requests answer alike).
        if (m.seq < this.next_seq) continue;
        if (closed()) return { handed, error: null };
        await this.handle({ seq: m.seq, data: m.data, headers: m.header });
        this.next_seq = m.seq + 1;
        handed++;
        this.handed++;
      }
      this.streak = Math.min(this.window_max, this.streak * 2);
    }
    return { handed, error: null };
  }
}

/** A stream read by sequence only: needs DIRECT.GET (and STREAM.MSG.GET) on it, no consumer grant. */
export class SeqLogReader implements StreamLogReader {
  private readonly nc: NatsConnection;
  private readonly jsm: JetStreamManager;
  private readonly stream: string;
  private readonly tip_subject: string | null;
  private readonly label: string;
  private readonly fetcher: SeqFetcher;
  private sub: Subscription | null = null;
  private closed = false;
  private done: Promise<void> = Promise.resolve();
  /** A hint arrived since the last wait: the next wait ends at once. */
  private hinted = false;
  private wake: (() => void) | null = null;
  private notes_logged = 0;
  private last_hint_ms = 0;
  hints = 0;

  /**
   * `tip_subject`: where the stream republishes its messages' headers (null: poll only).
   * `window_max`: fetches in flight at most (and messages held at once).
   */
  constructor(nc: NatsConnection, jsm: JetStreamManager, stream: string, subject: string, tip_subject: string | null, from_seq: number,
    label: string, window_max: number, handle: LogHandler) {
    this.nc = nc;
    this.jsm = jsm;
    this.stream = stream;
    this.tip_subject = tip_subject;
    this.label = label;
    this.fetcher = new SeqFetcher(jsm, stream, subject, from_seq, window_max, true, handle, (w) => this.note(w));
  }

  get next_seq(): number {
    return this.fetcher.next_seq;
  }

  /** Messages handed over and gets sent so far. */
  get counts(): { handed: number; requests: number; leader_gets: number } {
    return { handed: this.fetcher.handed, requests: this.fetcher.requests, leader_gets: this.fetcher.leader_gets };
  }

  /** Starts reading at once; the handler runs for each message, in order, awaited. */
  async start(): Promise<void> {
    if (this.tip_subject !== null) {
      this.sub = this.nc.subscribe(this.tip_subject, {
        callback: (err, msg) => {
          if (err !== null) return;
          this.hints++;
          this.last_hint_ms = Date.now();
          const seq = Number(msg.headers?.get(H_SEQUENCE));
          // Only a window's width: a forged or stale value costs at most one window of gets.
          if (Number.isSafeInteger(seq) && seq > this.fetcher.known_last) this.fetcher.known_last = seq;
          this.hinted = true;
          this.wake?.();
        },
      });
    }
    this.done = this.run();
  }

  private note(what: string): void {
    if (this.notes_logged >= NOTES_LOGGED_MAX) return;
    this.notes_logged++;
    log.warn(`ringbook ${this.label}: ${what}`, { stream: this.stream });
  }

  /** Waits `ms`, or less when a hint arrives or the reader closes. */
  private wait(ms: number): Promise<void> {
    if (this.hinted || this.closed) {
      this.hinted = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = null;
        this.hinted = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  private async run(): Promise<void> {
    // The stream's settings and length, once (the stream leader answers; without one the reader
    // starts with direct gets and a narrow window, both corrected as it goes).
    try {
      const info = await this.jsm.streams.info(this.stream);
      this.fetcher.allow_direct = info.config.allow_direct === true;
      this.fetcher.known_last = Math.max(this.fetcher.known_last, info.state.last_seq);
    } catch (e) {
      this.note(`${this.stream} not looked up (${String(e)}): reading with direct gets`);
    }
    let idle_ms = POLL_MS_MIN;
    let last_error: string | null = null;
    while (!this.closed) {
      let r: { handed: number; error: string | null };
      try {
        r = await this.fetcher.fetchAvailable(() => this.closed, Date.now() - this.last_hint_ms <= HINTS_FRESH_MS);
      } catch (e) {
        // The handler failed: the same message is handed over again (as a consumer redelivers it).
        this.note(`${this.stream} message ${this.fetcher.next_seq} not handled (${String(e)}), retrying`);
        await this.wait(HANDLER_RETRY_MS);
        continue;
      }
      // One line per distinct error (an election fails many fetches alike).
      if (r.error !== null && r.error !== last_error) this.note(`${this.stream} ${r.error}`);
      last_error = r.error;
      // A round ends when the stream holds nothing further (or a fetch failed): wait for a hint or
      // the next poll, soon after messages came (a replica answering may lag its hint by a few ms).
      if (r.handed > 0) idle_ms = POLL_MS_MIN;
      const hints_fresh = Date.now() - this.last_hint_ms <= HINTS_FRESH_MS;
      await this.wait(hints_fresh && r.error === null ? POLL_MS_MAX : idle_ms);
      idle_ms = Math.min(POLL_MS_MAX, idle_ms * 2);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.sub?.unsubscribe();
    this.sub = null;
    this.wake?.();
    await this.done;
  }
}
