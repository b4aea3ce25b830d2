// The cluster leader's store of its batches (matcher_role.ts cuts and applies them): each batch
// message is published to the event stream fenced on the last sequence the leader applied
// (JetStream's expected-last-sequence) and retried while NATS does not store it; a fence or a
// duplicate answer is told apart from the leader's own earlier attempt (its acknowledgement lost)
// by reading what the stream holds. A batch not stored for store_fault_after_ms is the leader's
// store fault, sent to every gateway in the leader's status message (matcher_status.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { componentLog } from '../util/log.js';
import { isWrongLastSequence } from './lease.js';
import { describeWriteError, injectedFault } from '../journal/journal_fault.js';
import { leaderStatusHeaders, MATCHER_STATUS_SUBJECT } from './matcher_status.js';
import { batchHeaders, batchMessageId, EVENT_STREAM, EVENT_SUBJECT, readBatchHeader, type BatchHeader } from './log_format.js';
import type { ClusterMatcherOptions, MatcherStatus } from './matcher_options.js';

const log = componentLog('cluster');
/** Waits between publish retries (a NATS node restarting, a stream leader election). */
export const RETRY_WAIT_MS = [20, 50, 100, 250, 500];
/** One publish attempt waits this long for its acknowledgement. */
const PUBLISH_TIMEOUT_MS = 2_000;

/** What the store asks of its matcher. */
export interface LeaderStoreHost {
  /** Whether the matcher is stopping (a failed publish is then thrown, not retried). */
  readonly stopping: () => boolean;
  /** Whether it still leads (its lease valid now, lease.ts): no attempt is sent otherwise. */
  readonly leading: () => boolean;
  /** Batch `h` is in the event stream at `event_seq` with this state root. */
  readonly applied: (h: BatchHeader, event_seq: number, state_root: string) => void;
  /** Fenced out: the stream holds another leader's batch where this one's was to be. */
  readonly rebuild: (why: string) => void;
}

/** One per matcher, made once it is connected; used while it leads (and its status by the lease's ticks). */
export class LeaderStore {
  private readonly options: ClusterMatcherOptions;
  private readonly status: MatcherStatus;
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  private readonly host: LeaderStoreHost;

  constructor(
    options: ClusterMatcherOptions, status: MatcherStatus, nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager,
    host: LeaderStoreHost,
  ) {
    this.options = options;
    this.status = status;
    this.nc = nc;
    this.js = js;
    this.jsm = jsm;
    this.host = host;
  }

  /**
   * Publishes batch `batch_id` (`body`: its input and event records; `h` its header), fenced on
   * the last event sequence this matcher applied, until it is stored (then host.applied), found to
   * be another leader's (host.rebuild), or the matcher stops (thrown).
   */
  async store(batch_id: number, body: Uint8Array, h: BatchHeader, state_root: string): Promise<void> {
    const js = this.js;
    const expected = this.status.events_through;
    const first_try_ms = Date.now();
    for (let tries = 0; ; tries++) {
      // Stopping or not, no attempt goes out on a lapsed lease.
      if (!this.host.leading()) {
        await this.unsure(batch_id, expected, h, state_root, tries);
        return;
      }
      try {
        const injected = this.options.fault_file === null ? null : injectedFault(this.options.fault_file);
        if (injected === 'write') throw new Error('injected write failure (test seam)');
        const ack = await js.publish(EVENT_SUBJECT, body, {
          msgID: batchMessageId(batch_id), expect: { lastSequence: expected }, headers: batchHeaders(h), timeout: PUBLISH_TIMEOUT_MS,
        });
        // Stored, but reported as failed: the retry finds its own batch (the duplicate check below).
        if (injected === 'fsync') throw new Error('injected failure after the store (test seam)');
        if (ack.duplicate) {
          // JetStream checks the message id before the expected last sequence: a duplicate ack
          // means some batch <batch_id> is stored, ours (an earlier attempt whose ack was lost) or
          // another leader's (after a lease overlap), which this leader must never take for its
          // own (seen: a leader that did answered nothing more, its engine off the log).
          const stored = await this.storedAt(ack.seq);
          if (stored === null || !this.isOwn(stored, batch_id, state_root)) {
            this.host.rebuild(`batch ${batch_id}: the event stream holds another leader's batch ${batch_id} (sequence ${ack.seq})`);
            return;
          }
        }
        this.host.applied(h, ack.seq, state_root);
        return;
      } catch (e) {
        if (isWrongLastSequence(e)) {
          // Our own earlier attempt may have been stored with its acknowledgement lost.
          const stored = await this.storedAt(expected + 1);
          if (stored !== null && this.isOwn(stored, batch_id, state_root)) {
            this.host.applied(h, expected + 1, state_root);
            return;
          }
          this.host.rebuild(`batch ${batch_id}: the event stream moved past sequence ${expected} under this leader`);
          return;
        }
        if (this.host.stopping()) throw e;
        if (tries === 0 || tries % 50 === 0) log.warn(`ringbook matcher ${this.options.node_id}: batch ${batch_id} not stored yet (${String(e)}), retrying`);
        this.storeFault(batch_id, e, first_try_ms);
        await sleep(RETRY_WAIT_MS[Math.min(tries, RETRY_WAIT_MS.length - 1)]);
      }
    }
  }

  /**
   * The lease lapsed with batch `batch_id` applied but not known stored (`tries` attempts sent):
   * no further attempt goes out. If the stream holds it as this leader's, it is applied; else this
   * engine may be ahead of the log (or an attempt may still land), so the matcher starts over from
   * the log, which holds whatever landed.
   */
  private async unsure(batch_id: number, expected: number, h: BatchHeader, state_root: string, tries: number): Promise<void> {
    const stored = tries === 0 ? null : await this.storedAt(expected + 1);
    if (stored !== null && this.isOwn(stored, batch_id, state_root)) {
      this.host.applied(h, expected + 1, state_root);
      return;
    }
    this.host.rebuild(`batch ${batch_id}: the lease lapsed before the event stream confirmed it (${tries} attempts)`);
  }

  /**
   * Follows the leader's store fault: set once batch `batch_id` has failed to be stored for
   * store_fault_after_ms since `first_try_ms` (`e` its last error), cleared with `e` null. Each
   * change is logged and published at once (the gateways refuse writes from then on).
   */
  storeFault(batch_id: number, e: unknown, first_try_ms: number): void {
    const s = this.status;
    if (e === null) {
      if (s.store_fault === null) return;
      log.warn(`ringbook matcher ${this.options.node_id}: batch ${s.store_fault.batch_id} is stored: the event stream takes batches again`);
      s.store_fault = null;
    } else {
      if (s.store_fault !== null || Date.now() - first_try_ms < this.options.store_fault_after_ms) return;
      s.store_fault = { batch_id, message: describeWriteError(e) };
      log.error(`ringbook matcher ${this.options.node_id}: batch ${batch_id} not stored for ${Date.now() - first_try_ms} ms ` +
        `(${s.store_fault.message}): the gateways refuse writes with 503 until it is; retrying`);
    }
    this.publishStatus();
  }

  /** The leader's status message to every gateway (matcher_status.ts); only the leader sends one. */
  publishStatus(): void {
    const s = this.status;
    if (!this.host.leading()) return;
    try {
      this.nc.publish(MATCHER_STATUS_SUBJECT, new Uint8Array(0), {
        headers: leaderStatusHeaders({ leader: this.options.node_id, batch_id: s.batch_id, store_fault: s.store_fault }),
      });
    } catch (e) {
      // A closed or draining connection (stopping): the next renewal sends it again, if any.
      log.warn(`ringbook matcher ${this.options.node_id}: status message not sent (${String(e)})`);
    }
  }

  /** The header of the event stream's message at `seq` (null when there is none or it could not be read). */
  private async storedAt(seq: number): Promise<BatchHeader | null> {
    const m = await this.jsm.streams.getMessage(EVENT_STREAM, { seq }).catch(() => null);
    if (m === null) return null;
    return readBatchHeader(m.header, m.data.length);
  }

  /** Whether a stored batch header is this leader's batch `batch_id` with this root. */
  private isOwn(stored: BatchHeader, batch_id: number, state_root: string): boolean {
    return stored.batch_id === batch_id && stored.state_root === state_root && stored.leader === this.options.node_id;
  }
}
