// The cluster gateway's matcher backend (MatcherBackend, src/gateway/matcher_link_options.ts): the front
// writes verified requests into its request ring exactly as in the single process; this backend
// drains the ring into the replicated request stream (one message per event-loop turn), and feeds every committed batch of the
// event stream into the event ring, where the link's pump answers and updates the read model.
// A batch reaches the event stream only once JetStream stored it on a quorum of its replicas,
// so an answer given here is never for a batch that one failure can lose.
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { MatcherBackend, RecoveryInfo, StoreFaultListener } from '../gateway/matcher_link_options.js';
import type { JournalFault } from '../journal/journal.js';
import { RECORD_WORDS, viewsOfRing, type RecordViews } from '../ring/records.js';
import { groupFollowingAt, RequestReader, requestSeqAt } from '../ring/request_records.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import { SeqLogReader, type LogMessage } from './log_reader_seq.js';
import { EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT, readBatchHeader, RECORD_BYTES, REQUEST_SUBJECT, type BatchHeader } from './log_format.js';
import { MATCHER_STATUS_SUBJECT, readLeaderStatus, type LeaderStatus } from './matcher_status.js';
import { sendBatchRequest } from './batch_request.js';
import { encodeForcedShare, FORCED_SHARE_SUBJECT } from './settlement_poster.js';
import { componentLog } from '../util/log.js';

const log = componentLog('cluster');

export interface GatewayBackendOptions {
  /** This gateway's name: the first part of its request message ids. */
  gateway_id: string;
  /** One publish attempt waits this long for JetStream's acknowledgement. */
  publish_timeout_ms: number;
  /**
   * A request whose publish keeps failing (no stream quorum) is retried, with the same message
   * id, for this long; then it is given up and counted (its client times out unanswered).
   */
  publish_give_up_ms: number;
  /**
   * Most request records in one request stream message (RINGBOOK_REQUEST_MESSAGE_RECORDS_MAX):
   * the units of one turn share a message up to this; 1 sends every unit alone.
   */
  message_records_max: number;
  /**
   * The snapshot the read model was loaded from (gateway_snapshots.ts): the stream is read from the
   * sequence after `events_through`, whose batch must be `batch_id + 1`. null: from sequence 1.
   */
  resume: { batch_id: number; events_through: number } | null;
  /** Each batch as it is handed to the event ring, with its stream sequence (before its records: the read model cannot reach its commit first). */
  onBatch?: (h: BatchHeader, seq: number) => void;
}

/**
 * Batch messages fetched by sequence at once (requests in flight, messages held): the catch-up at
 * start reads the whole stream (bench/log_read.ts measured the window's effect).
 */
const EVENTS_FETCHED_MAX = 32;
/** Waits between publish retries: one NATS node's restart or a stream leader election. */
const RETRY_WAIT_MS = [50, 100, 250, 500, 1000];

export class JetStreamGatewayBackend implements MatcherBackend {
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  private readonly options: GatewayBackendOptions;
  private requests: SpscRing | null = null;
  private reader: RequestReader | null = null;
  private request_views: RecordViews | null = null;
  private reader_events: SeqLogReader | null = null;
  private publishes_in_flight = 0;
  private publishes_idle: (() => void) | null = null;
  /** Request stream messages acknowledged by the stream, and given up. */
  published = 0;
  duplicates = 0;
  given_up = 0;
  retried = 0;
  /** The last event stream sequence written into the event ring, and its batch (-1: none yet). */
  events_through = 0;
  batch_id = -1;
  /** Requests for a batch the connection refused (the link counts them, sent or not: /admin/state `batch_requests`); logged the first time. */
  private batch_requests_failed = 0;
  /** The leader's status messages (matcher_status.ts): its store fault, reported to the link. */
  private status_sub: Subscription | null = null;
  /** The store fault last reported to the link (null: none). */
  private store_fault: JournalFault | null = null;
  /** Status messages of another version or malformed, ignored (logged the first time). */
  status_ignored = 0;
  /** What start() read before it resolved (the link's `recovery`: GET /admin/state). */
  private started: RecoveryInfo | null = null;
  /**
   * A batch that does not follow the one before it (after a snapshot: the stream is not the one it
   * was taken of): the read model would be wrong, so the gateway stops, as a matcher does.
   */
  onFatal: (why: string) => void = (why) => {
    log.fatal(`ringbook gateway ${this.options.gateway_id}: ${why}`);
    process.exit(75);
  };

  constructor(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, options: GatewayBackendOptions) {
    this.nc = nc;
    this.js = js;
    this.jsm = jsm;
    this.options = options;
  }

  async start(requests: SpscRing, events: SpscRing, onStoreFault: StoreFaultListener): Promise<void> {
    this.followLeaderStatus(onStoreFault);
    this.requests = requests;
    this.request_views = viewsOfRing(requests);
    this.reader = new RequestReader(this.request_views);
    // Ready once the read model holds every batch committed before this start.
    const t0 = performance.now();
    const through = (await this.jsm.streams.info(EVENT_STREAM)).state.last_seq;
    const resume = this.options.resume;
    if (resume !== null) {
      this.events_through = resume.events_through;
      this.batch_id = resume.batch_id;
    }
    let read = 0;
    let caught_up: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => {
      caught_up = resolve;
    });
    if (through <= this.events_through) caught_up();
    const event_views = viewsOfRing(events);
    // Without a consumer: the gateway's NATS user needs no consumer grant (log_reader_seq.ts).
    const reader = new SeqLogReader(this.nc, this.jsm, EVENT_STREAM, EVENT_SUBJECT, EVENT_TIP_SUBJECT, this.events_through + 1,
      `gateway ${this.options.gateway_id}`, EVENTS_FETCHED_MAX, async (m) => {
        const h = readBatchHeader(m.headers, m.data.length);
        if (resume !== null && this.batch_id >= 0 && h.batch_id !== this.batch_id + 1) {
          this.onFatal(`event stream: batch ${h.batch_id} follows batch ${this.batch_id} (sequence ${m.seq}) after the snapshot of batch ` +
            `${resume.batch_id}: not the stream it was taken of; delete the gateway's snapshots (<data_dir>/gateway) to read it from sequence 1`);
          return;
        }
        this.options.onBatch?.(h, m.seq);
        await this.writeBatch(events, event_views, m, h);
        this.events_through = m.seq;
        if (m.seq <= through) read++;
        if (m.seq >= through) caught_up();
      });
    this.reader_events = reader;
    await reader.start();
    await ready;
    this.started = {
      snapshot_batch_id: resume?.batch_id ?? null, replayed_batches: read, batch_id: this.batch_id, replay_ms: performance.now() - t0,
      events_through: resume?.events_through ?? 0,
    };
  }

  recovery(): RecoveryInfo {
    return this.started ?? { snapshot_batch_id: null, replayed_batches: 0, batch_id: this.batch_id, replay_ms: 0, events_through: 0 };
  }

  /**
   * Reports the leader's store fault to the link as the matcher thread's journal_fault (one
   * handler: writes refused with 503, GET /health 503, /admin/state journal, the metrics), once
   * per change: set while the leader says its batch is not stored, cleared when a leader says
   * batches are stored again (the same leader, or a new one after a failover).
   */
  private followLeaderStatus(onStoreFault: StoreFaultListener): void {
    this.status_sub = this.nc.subscribe(MATCHER_STATUS_SUBJECT, {
      callback: (err, msg) => {
        if (err !== null) return;
        let status: LeaderStatus | null;
        try {
          status = readLeaderStatus(msg.headers);
        } catch (e) {
          if (this.status_ignored++ === 0) log.warn(`ringbook gateway: a malformed matcher status message ignored (${String(e)})`);
          return;
        }
        if (status === null) {
          if (this.status_ignored++ === 0) log.warn('ringbook gateway: a matcher status message of another version ignored (a newer matcher?)');
          return;
        }
        const was = this.store_fault;
        const now = status.store_fault;
        if (was === null ? now === null : now !== null && now.batch_id === was.batch_id) return;
        this.store_fault = now;
        onStoreFault(now);
      },
    });
  }

  /** Copies one batch's event records into the event ring (waiting for room, never dropping). */
  private async writeBatch(ring: SpscRing, views: RecordViews, m: LogMessage, h: BatchHeader): Promise<void> {
    this.batch_id = h.batch_id;
    const body = m.data;
    let at = h.input_records * RECORD_BYTES;
    while (at < body.length) {
      const n = ring.claimBatch((body.length - at) / RECORD_BYTES);
      if (n === 0) {
        await ring.waitForSpaceAsync(1000);
        if (ring.isClosed()) return;
        continue;
      }
      for (let i = 0; i < n; i++) {
        const o = ring.claimedSlotOffset(i);
        // The body is a view into the connection's buffer, unaligned in general: copy bytes.
        views.u8.set(body.subarray(at, at + RECORD_BYTES), o * 4);
        at += RECORD_BYTES;
      }
      ring.publishBatch(n);
    }
  }

  /**
   * Sends what the front published this event-loop turn (the link calls this once per turn), in
   * ring order: whole request units packed into messages of at most `message_records_max` records
   * (a unit is never split: one larger than that goes alone). Each message's id is
   * `<gateway>.<seq of its first request>`: the units of one gateway are numbered in one range and
   * every unit is in exactly one message, so a retried message is stored once (JetStream's
   * de-duplication) and no unit can be stored twice.
   */
  requestsPublished(): void {
    const ring = this.requests;
    const reader = this.reader;
    const views = this.request_views;
    if (ring === null || reader === null || views === null) return;
    const available = ring.available();
    const records_max = this.options.message_records_max;
    let i = 0;
    while (i < available) {
      const seq = requestSeqAt(views, ring.slotOffset(i));
      let end = i;
      // Whole units while the message has room (at least one).
      while (end < available) {
        const unit_end = this.unitEnd(ring, reader, end, available);
        if (end > i && unit_end - i > records_max) break;
        end = unit_end;
      }
      const bytes = new Uint8Array((end - i) * RECORD_BYTES);
      for (let k = i; k < end; k++) {
        const o = ring.slotOffset(k);
        bytes.set(views.u8.subarray(o * 4, (o + RECORD_WORDS) * 4), (k - i) * RECORD_BYTES);
      }
      this.publish(bytes, `${this.options.gateway_id}.${seq}`);
      i = end;
    }
    if (available > 0) ring.release(available);
  }

  /** The slot after the unit starting at slot `i`: the request, its consent slots, and the rest of its group with theirs. */
  private unitEnd(ring: SpscRing, reader: RequestReader, i: number, available: number): number {
    let following = groupFollowingAt(ring.i32, ring.slotOffset(i));
    let end = i + 1;
    for (;;) {
      while (end < available && reader.isConsent(ring.slotOffset(end))) end++;
      if (following === 0) break;
      if (end >= available) throw new Error('request ring: a group was published in part');
      end++;
      following--;
    }
    return end;
  }

  /**
   * Asks the leader matcher for a batch after the last one this gateway has (batch_request.ts): a
   * plain NATS message, not acknowledged; whoever needs the batch asks again if none comes.
   * Returns whether the connection took it.
   */
  requestBatch(): boolean {
    const failed = sendBatchRequest(this.nc, { gateway: this.options.gateway_id, after_batch_id: this.batch_id });
    if (failed === null) return true;
    if (this.batch_requests_failed++ === 0) {
      // A closed or draining connection (stopping).
      log.warn(`ringbook gateway: batch request not sent (${String(failed)})`);
    }
    return false;
  }

  /** The chain link's forced entries and their batches, to the cluster's root poster (settlement_poster.ts). */
  shareForced(from: number, batches: readonly number[]): void {
    try {
      this.nc.publish(FORCED_SHARE_SUBJECT, encodeForcedShare({ gateway: this.options.gateway_id, from, batches }));
    } catch (e) {
      // A closed or draining connection (stopping); the chain link shares again next round.
      log.warn(`ringbook gateway: forced share not sent (${String(e)})`);
    }
  }

  private publish(bytes: Uint8Array, msg_id: string): void {
    this.publishes_in_flight++;
    const give_up_at = Date.now() + this.options.publish_give_up_ms;
    const attempt = (tries: number): void => {
      this.js.publish(REQUEST_SUBJECT, bytes, { msgID: msg_id, timeout: this.options.publish_timeout_ms }).then((ack) => {
        if (ack.duplicate) this.duplicates++;
        this.published++;
        this.publishDone();
      }, (e: unknown) => {
        if (Date.now() >= give_up_at) {
          this.given_up++;
          if (this.given_up <= 10) log.error(`ringbook gateway: request ${msg_id} not stored after ${this.options.publish_give_up_ms} ms, given up`, e);
          this.publishDone();
          return;
        }
        if (tries === 0 && this.retried++ < 10) log.warn(`ringbook gateway: request ${msg_id} not stored yet (${String(e)}), retrying`);
        setTimeout(() => attempt(tries + 1), RETRY_WAIT_MS[Math.min(tries, RETRY_WAIT_MS.length - 1)]);
      });
    };
    attempt(0);
  }

  private publishDone(): void {
    this.publishes_in_flight--;
    if (this.publishes_in_flight === 0 && this.publishes_idle !== null) {
      this.publishes_idle();
      this.publishes_idle = null;
    }
  }

  async stop(): Promise<void> {
    this.requestsPublished();
    if (this.publishes_in_flight > 0) {
      await new Promise<void>((resolve) => {
        this.publishes_idle = resolve;
      });
    }
    await this.reader_events?.close();
    this.status_sub?.unsubscribe();
  }
}
