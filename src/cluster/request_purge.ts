// The leader's purge of the request stream (docs/scale-out.md, "Disk, restarts and trimming"):
// RB_REQUESTS below the request position of a batch the event stream committed more than the
// stream's de-duplication window (plus a margin) ago, at most every RINGBOOK_REQUEST_PURGE_EVERY_MS.
//
// Why it is safe:
// - Nothing reads a request twice: a new leader reads requests after the last batch's
//   Rb-Requests-Through only (matcher_role.ts lead()), and that position only grows along the one
//   history of the event stream. So every request at or below the position of a batch the stream
//   holds is consumed for good. The points purged at come from the matcher's status
//   (`requests_through`), which moves only when a batch is confirmed in the stream: a leader's
//   acknowledged publish, a standby's batch read from the stream, a snapshot the stream confirmed.
// - No retry of a purged message can be stored again: a gateway retries a publish for 30 s
//   (log_format.ts REQUEST_PUBLISH_GIVE_UP_MS), within the stream's duplicate window (2 min), and its message
//   was stored before the batch that consumed it was. nats-server 2.9.10 keeps the message ids
//   through a purge (tried standalone), but rebuilds its de-duplication table from the messages it
//   holds when it loads a stream (a node's restart): an id purged away can be forgotten there. A
//   point is used only once a whole window (and the margin) has passed since this matcher saw its
//   batch confirmed, which is after every one of its requests was stored, so every retry of them
//   is over by then. A window shorter than those 30 s (a stream the operator made or edited) breaks
//   that, and the de-duplication of the retries themselves, with or without a purge: the gateways
//   and matchers warn at their start (requestWindowWarning), and the leader when it reads a new one.
// - Only the leader purges, its lease checked right before the request (leadingNow: never as a
//   fenced or stepped-down leader). The safety above does not rest on it: it keeps one writer of
//   purges, so two matchers do not both spend a NATS request on it.
// - A failure (NATS down, the purge API not granted to the matcher's user) is logged when it
//   changes, shown in GET /status, and tried again at the next interval; never fatal.
import type { JetStreamManager } from '@nats-io/jetstream';
import { componentLog } from '../util/log.js';
import { DUPLICATE_WINDOW_MS, REQUEST_PUBLISH_GIVE_UP_MS, REQUEST_STREAM } from './log_format.js';

const log = componentLog('cluster');

/**
 * The margin on top of the stream's duplicate window, as a part of it (a quarter: 150 s at the
 * 2-minute window). It covers what the window alone does not: the window runs on nats-server's
 * clock from each message's store, the wait here on the matcher's from its batch's confirmation.
 * Proportional, so that a test stream with a 1 s window waits 1.25 s, not minutes.
 */
export const PURGE_DELAY_MARGIN_PARTS = 4;
/** Points (time, request position) are sampled this often at most (the purge interval if shorter). */
export const PURGE_SAMPLE_MS_MAX = 1_000;
/** Points kept at most: over it, every second one is dropped (the older ones stay as coarse as they need to be). */
export const PURGE_POINTS_MAX = 4_096;
/** The lowest sequence a purge is sent with (`seq: 1` purges the whole stream on nats-server 2.9; `seq: 0` is no sequence). */
export const PURGE_SEQ_MIN = 2;
/** A failure's text in /status and the log, at most (a NATS error can carry a long description). */
const ERROR_CHARS_MAX = 300;

/** How long after a batch's confirmation its request position may be purged below: the window plus PURGE_DELAY_MARGIN_PARTS. */
export function purgeDelayMs(duplicate_window_ms: number): number {
  return duplicate_window_ms + Math.ceil(duplicate_window_ms / PURGE_DELAY_MARGIN_PARTS);
}

/**
 * The warning for a request stream whose duplicate window is shorter than a gateway's publish
 * retries (REQUEST_PUBLISH_GIVE_UP_MS), or null. A publish whose first try was stored but not
 * acknowledged is retried; a retry later than the window is stored again, and the matchers read
 * that request twice. ensureStreams makes the stream with DUPLICATE_WINDOW_MS and leaves one that
 * exists as it is, so only a stream made or edited by hand can be this short.
 */
export function requestWindowWarning(duplicate_window_ms: number, publish_give_up_ms: number = REQUEST_PUBLISH_GIVE_UP_MS): string | null {
  if (duplicate_window_ms >= publish_give_up_ms) return null;
  return `request stream ${REQUEST_STREAM} has a duplicate window of ${duplicate_window_ms} ms, shorter than the ${publish_give_up_ms} ms ` +
    'a gateway retries a request publish: a retry after the window (its first try stored, the acknowledgement lost) is stored ' +
    `a second time and the matchers read the request twice; set the window to at least ${publish_give_up_ms} ms ` +
    `(the roles create it with ${DUPLICATE_WINDOW_MS} ms: nats stream edit ${REQUEST_STREAM} --dupe-window 2m)`;
}

/**
 * Reads the request stream's window and logs requestWindowWarning's warning if it has one; a
 * failed read is left to the role's own use of the stream (never fatal here). `who`: the role
 * and node, for the log line. Returns the warning logged, or null.
 */
export async function warnShortRequestWindow(target: Pick<PurgeTarget, 'info'>, who: string): Promise<string | null> {
  let window_ms: number;
  try {
    window_ms = (await target.info()).duplicate_window_ms;
  } catch {
    return null;
  }
  const warning = requestWindowWarning(window_ms);
  if (warning !== null) log.warn(`ringbook ${who}: ${warning}`, { duplicate_window_ms: window_ms });
  return warning;
}

/** The purge's part of a matcher's GET /status (`requests_purge`). */
export interface RequestPurgeStatus {
  /** RINGBOOK_REQUEST_PURGE_EVERY_MS (0: off). */
  every_ms: number;
  /** The wait after a batch's confirmation, from the stream's duplicate window as last read (0: not read yet). */
  delay_ms: number;
  /** The last request stream sequence this matcher purged through (the stream keeps the one after it and on); 0: none. */
  purged_through: number;
  /** Purges this matcher sent that JetStream acknowledged. */
  purges: number;
  /** When the last one was acknowledged (epoch ms; 0: never). */
  last_purge_ms: number;
  /** Why the last attempt failed, or null once one succeeds again. */
  last_error: string | null;
}

export function requestPurgeStatus(every_ms: number): RequestPurgeStatus {
  return { every_ms, delay_ms: 0, purged_through: 0, purges: 0, last_purge_ms: 0, last_error: null };
}

/** What the purger reads of the request stream and how it purges it (the JetStream manager; a fake in unit tests). */
export interface PurgeTarget {
  /** The stream's duplicate window (ms), its first and last sequence, and when it was created (its identity). */
  info(): Promise<{ duplicate_window_ms: number; first_seq: number; last_seq: number; created: string }>;
  /** Removes every message below `seq` (keeps `seq` and after); returns how many went. */
  purgeBelow(seq: number): Promise<number>;
}

/** The request stream through a JetStream manager: `jsm.streams.purge(REQUEST_STREAM, { seq })`. */
export function requestStreamTarget(jsm: JetStreamManager): PurgeTarget {
  return {
    info: async () => {
      const i = await jsm.streams.info(REQUEST_STREAM);
      // JetStream gives the window in nanoseconds.
      return {
        duplicate_window_ms: Math.floor(i.config.duplicate_window / 1_000_000), first_seq: i.state.first_seq, last_seq: i.state.last_seq,
        created: i.created,
      };
    },
    purgeBelow: async (seq) => (await jsm.streams.purge(REQUEST_STREAM, { seq })).purged,
  };
}

/** What the purger asks of its matcher. */
export interface RequestPurgeHost {
  /** Whether it leads now (its lease valid: matcher_role.ts leadingNow). */
  readonly leading: () => boolean;
  /** The request position of the last batch it applied that the event stream holds (`requests_through`). */
  readonly requestsThrough: () => number;
  /** A monotonic clock (ms). */
  readonly now: () => number;
}

/** Permission refusals say so in nats-server's words ("Permissions Violation for Publish to ..."). */
function isPermissionError(text: string): boolean {
  return /permissions violation/i.test(text);
}

/** A failure as one line for /status and the log; a missing grant says which and where to add it. */
export function describePurgeError(e: unknown): string {
  const text = (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').trim();
  const said = isPermissionError(text)
    ? `${text}: the matcher's NATS user needs publish permission on $JS.API.STREAM.PURGE.${REQUEST_STREAM} ` +
      '(config/nats-authorization.conf); the request stream is not purged meanwhile'
    : text;
  return said.length > ERROR_CHARS_MAX ? said.slice(0, ERROR_CHARS_MAX) : said;
}

interface Point {
  /** When this matcher saw the position (host.now()); its batch was confirmed at or before. */
  at_ms: number;
  requests_through: number;
}

/**
 * One per matcher. It samples the matcher's request position every PURGE_SAMPLE_MS_MAX (standby
 * or leader: a new leader may purge at once below what it saw confirmed long enough ago), and
 * while it leads, every `every_ms`, purges below the newest point older than the delay.
 */
export class RequestPurger {
  readonly status: RequestPurgeStatus;
  private readonly node_id: string;
  private readonly target: PurgeTarget;
  private readonly host: RequestPurgeHost;
  /** Oldest first, positions strictly growing. */
  private points: Point[] = [];
  private timer: NodeJS.Timeout | null = null;
  private last_attempt_ms = Number.NEGATIVE_INFINITY;
  private in_flight: Promise<void> | null = null;
  /** The request stream's creation time at the first read: another one is another stream. */
  private stream_created: string | null = null;
  /** Why this matcher purges no more (its positions are of another stream); null while it may. */
  private halted: string | null = null;
  /** The stream's duplicate window as last read (a change is checked again: noteWindow). */
  private window_seen_ms: number | null = null;

  constructor(every_ms: number, node_id: string, target: PurgeTarget, host: RequestPurgeHost, status: RequestPurgeStatus = requestPurgeStatus(every_ms)) {
    this.status = status;
    this.status.every_ms = every_ms;
    this.node_id = node_id;
    this.target = target;
    this.host = host;
  }

  /** Starts sampling and purging (nothing when the setting is 0). */
  start(): void {
    const every = this.status.every_ms;
    if (every === 0 || this.timer !== null) return;
    this.timer = setInterval(() => void this.tick(), Math.min(PURGE_SAMPLE_MS_MAX, every));
    this.timer.unref();
  }

  /**
   * Reads the stream's duplicate window and warns when it is too short (requestWindowWarning): at
   * the matcher's start. Returns the warning logged now, or null (none, said before, or unread).
   */
  async checkWindow(): Promise<string | null> {
    try {
      return this.noteWindow((await this.target.info()).duplicate_window_ms);
    } catch {
      return null; // the purge's own reads report failures, and its next read checks the window
    }
  }

  /** Warns once per window value read that is shorter than the gateways' retries (an operator's edit comes later too). */
  private noteWindow(duplicate_window_ms: number): string | null {
    if (duplicate_window_ms === this.window_seen_ms) return null;
    this.window_seen_ms = duplicate_window_ms;
    const warning = requestWindowWarning(duplicate_window_ms);
    if (warning !== null) log.warn(`ringbook matcher ${this.node_id}: ${warning}`, { duplicate_window_ms });
    return warning;
  }

  /** Stops the timer and waits for a purge in flight. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.in_flight;
  }

  /** One sample, and a purge attempt when one is due and this matcher leads. Returns when the attempt is done. */
  async tick(): Promise<void> {
    this.sample();
    if (this.in_flight !== null || this.status.every_ms === 0) return;
    if (this.host.now() - this.last_attempt_ms < this.status.every_ms || !this.host.leading()) return;
    this.last_attempt_ms = this.host.now();
    this.in_flight = this.attempt().finally(() => {
      this.in_flight = null;
    });
    await this.in_flight;
  }

  private sample(): void {
    const through = this.host.requestsThrough();
    const last = this.points[this.points.length - 1];
    // Positions only grow along the stream's history; a lower one (a start-over replaying it) adds nothing.
    if (through <= 0 || (last !== undefined && through <= last.requests_through)) return;
    this.points.push({ at_ms: this.host.now(), requests_through: through });
    if (this.points.length > PURGE_POINTS_MAX) this.points = this.points.filter((_, i) => i % 2 === 1 || i === this.points.length - 1);
  }

  private async attempt(): Promise<void> {
    const s = this.status;
    try {
      if (this.halted !== null) throw new Error(this.halted);
      const info = await this.target.info();
      if (this.stream_created === null) this.stream_created = info.created;
      if (info.created !== this.stream_created) {
        // Recreated under this matcher: every position it noted is of the old stream, and a purge
        // at one of them would remove requests of the new stream that no batch consumed.
        this.points = [];
        this.halted = `the request stream was recreated (created ${info.created}, was ${this.stream_created}): ` +
          'no purge until this matcher restarts';
        throw new Error(this.halted);
      }
      this.noteWindow(info.duplicate_window_ms);
      s.delay_ms = purgeDelayMs(info.duplicate_window_ms);
      const old_enough = this.host.now() - s.delay_ms;
      let k = -1;
      while (k + 1 < this.points.length && this.points[k + 1].at_ms <= old_enough) k++;
      if (k < 0) return this.succeeded();
      const point = this.points[k];
      // The older points are of no further use: this one purges below all of theirs.
      this.points.splice(0, k);
      const through = point.requests_through;
      if (through > info.last_seq) {
        // A position the stream never reached: a purge there would remove requests not consumed
        // and move the stream's sequence past its last. Not expected (a batch's position is a
        // message of the stream): skipped, and said.
        throw new Error(`batch position ${through} is past the request stream's last sequence ${info.last_seq}: not purged`);
      }
      // Kept from `through` itself (as the operator's `nats stream purge --seq`), one message to
      // spare. Never below PURGE_SEQ_MIN: nats-server 2.9.10 takes a purge with `seq: 1` as one
      // without a sequence and removes every message (filestore PurgeEx; tried: 5 of 5 gone).
      if (through < PURGE_SEQ_MIN || through <= info.first_seq) return this.succeeded();
      // The lease is checked right before the request: a fenced or stepped-down leader sends none.
      if (!this.host.leading()) return;
      const purged = await this.target.purgeBelow(through);
      s.purged_through = through - 1;
      s.purges++;
      s.last_purge_ms = Date.now();
      log.info(`ringbook matcher ${this.node_id}: request stream ${REQUEST_STREAM} purged below sequence ${through} ` +
        `(${purged} messages; a batch confirmed over ${s.delay_ms} ms ago consumed through it)`, { requests_purged_through: through - 1 });
      this.succeeded();
    } catch (e) {
      const said = describePurgeError(e);
      if (said !== s.last_error) {
        log.warn(`ringbook matcher ${this.node_id}: request stream ${REQUEST_STREAM} not purged (${said}); ` +
          `tried again every ${s.every_ms} ms`);
      }
      s.last_error = said;
    }
  }

  private succeeded(): void {
    if (this.status.last_error === null) return;
    log.info(`ringbook matcher ${this.node_id}: request stream purge works again`);
    this.status.last_error = null;
  }
}

/**
 * A matcher's purger over the request stream, started: its points are the matcher's
 * `requests_through`, its status the matcher's `requests_purge` (every_ms set there).
 */
export function startRequestPurger(node_id: string, jsm: JetStreamManager,
  status: { requests_through: number; requests_purge: RequestPurgeStatus }, leading: () => boolean): RequestPurger {
  const purger = new RequestPurger(status.requests_purge.every_ms, node_id, requestStreamTarget(jsm), {
    leading, requestsThrough: () => status.requests_through, now: () => performance.now(),
  }, status.requests_purge);
  void purger.checkWindow();
  purger.start();
  return purger;
}
