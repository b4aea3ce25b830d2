// The cluster matcher (`ringbook start --role matcher`): one leader, any number of hot standbys,
// all running the same deterministic engine over the same batches (docs/scale-out.md).
//
// Every matcher follows the event stream from its first batch and re-executes each batch's
// input records with ReplayExecutor (the verifier's engine + state root builder), comparing its
// own events byte for byte and its state root with the published ones; a difference is an alarm
// (counted, logged, shown in /status). The matcher that takes the lease (lease.ts) stops
// following once it has applied the whole stream, then sequences: it consumes the request stream
// from the position after the last batch, cuts batches (number and time are its own, written in
// the batch message), applies them, and publishes each batch message with JetStream's
// expected-last-sequence set to the last one it applied (matcher_store.ts): if anyone else wrote
// in between, the publish fails and this matcher starts over as a standby (it applied a batch
// the log does not hold). It leads only while its lease is valid (lease.ts: its last confirmed
// renewal + TTL - margin): every batch, status message, batch request and /status answer checks
// that first (leadingNow), so a leader cut off from NATS stops before a standby can take the key.
// Starting, and starting over, resume from the newest local snapshot of a batch the stream
// confirms (matcher_snapshots.ts), else from genesis.
import { setTimeout as sleep } from 'node:timers/promises';
import { jetstream, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { connectCluster } from './nats_auth.js';
import { recordsOfBytes, ReplayExecutor } from '../da/replay.js';
import type { BatchRoots } from '../da/state_root.js';
import { bytesEqual } from '../da/hex.js';
import { RecordBuffer, type RecordViews } from '../ring/records.js';
import { LogReader, type LogMessage } from './log_reader.js';
import { componentLog } from '../util/log.js';
import { KvLease, leaseSafetyMarginMs } from './lease.js';
import {
  ensureStreams, EVENT_STREAM, EVENT_SUBJECT, LEASE_BUCKET, readBatchHeader, RECORD_BYTES, REQUEST_STREAM, REQUEST_SUBJECT, type BatchHeader,
} from './log_format.js';
import type { ClusterMatcherOptions, MatcherStatus } from './matcher_options.js';
import { LeaderStore, RETRY_WAIT_MS } from './matcher_store.js';
import { BatchRequests } from './batch_request.js';
import { batchReader, MatcherSnapshots } from './matcher_snapshots.js';
import { type RequestPurger, requestPurgeStatus, startRequestPurger } from './request_purge.js';

export type { ClusterMatcherOptions, MatcherRoleState, MatcherStatus } from './matcher_options.js';

/** One request stream message (whole request units, never split across batches): its stream sequence and records. */
interface RequestUnit {
  seq: number;
  data: Uint8Array;
}

/** Idle wait of the leader when no request arrives (a forced inclusion or dead-man switch may fall due). */
const IDLE_WAIT_MS_MAX = 100;
const log = componentLog('cluster');
/** Batch messages a standby pulls ahead of the one it re-executes. */
const EVENTS_PULLED_MAX = 256;
/** Request messages the leader pulls ahead (four batches of single requests at the default 1,024). */
const REQUESTS_PULLED_MAX = 4096;
/** Request units read and not yet in a batch, at most (16 batches of single requests). */
const UNITS_QUEUED_MAX = 16_384;


export class ClusterMatcher {
  private readonly options: ClusterMatcherOptions;
  private nc: NatsConnection | null = null;
  private js: JetStreamClient | null = null;
  private jsm: JetStreamManager | null = null;
  private lease: KvLease | null = null;
  /** Publishes the batches this matcher cuts as leader, and its status (matcher_store.ts); made once connected. */
  private leader_store: LeaderStore | null = null;
  private executor: ReplayExecutor;
  /** The event records of the batch being applied (ReplayExecutor's onRecord). */
  private readonly events = new RecordBuffer(1024);
  private follower: LogReader | null = null;
  private request_reader: LogReader | null = null;
  private readonly units: RequestUnit[] = [];
  private wake: (() => void) | null = null;
  private stopping = false;
  private lease_timer: NodeJS.Timeout | null = null;
  private lead_done: Promise<void> = Promise.resolve();
  private last_time_ms = 0;
  /** The gateways' requests for a batch: an empty one when none comes otherwise (batch_request.ts). */
  private readonly batch_requests = new BatchRequests();
  private readonly snapshots: MatcherSnapshots;
  /** The leader's purge of the request stream below what the stream's batches consumed (request_purge.ts). */
  private purger: RequestPurger | null = null;
  /** Times this matcher was fenced out and started over (rebuild). */
  rebuilds = 0;
  /** Called when this matcher must stop (lost the log or the lease while leading). */
  onFatal: (why: string) => void = (why) => {
    log.fatal(`ringbook matcher ${this.options.node_id}: ${why}`);
    process.exit(75);
  };
  readonly status: MatcherStatus;

  constructor(options: ClusterMatcherOptions) {
    this.options = options;
    this.executor = this.freshExecutor();
    this.status = {
      node_id: options.node_id, role: 'standby', batch_id: -1, state_root: '', events_through: 0, requests_through: 0,
      mismatches: 0, leader_since_ms: 0, batches_cut: 0, store_fault: null, batch_requests: this.batch_requests.counts,
      resumed_from_batch_id: -1, snapshots_written: 0, snapshot_batch_id: -1, snapshot_capture_ms: 0, snapshots_deferred: 0,
      requests_purge: requestPurgeStatus(options.request_purge_every_ms),
    };
    this.snapshots = new MatcherSnapshots(options.snapshots, options.node_id, this.status, options.engine_config.assets.length);
  }

  /** The engine at genesis, with the state root builder, collecting each batch's event records. */
  private freshExecutor(): ReplayExecutor {
    return new ReplayExecutor(this.options.engine_config, { onRecord: this.onRecord });
  }

  private readonly onRecord = (views: RecordViews, o: number): void => {
    this.events.push(views, o);
  };

  /**
   * At genesis (a start, a rebuild): resumes from the newest local snapshot the event stream
   * confirms, if any, so that follow() starts after it instead of at sequence 1.
   */
  private async resumeFromSnapshot(): Promise<void> {
    const s = this.status;
    if (s.batch_id !== -1) return;
    const r = await this.snapshots.resume(this.options.engine_config, this.onRecord, batchReader(this.jsm as JetStreamManager));
    s.resumed_from_batch_id = r === null ? -1 : r.batch_id;
    if (r === null) return;
    this.executor = r.executor;
    Object.assign(s, { batch_id: r.batch_id, state_root: r.state_root, events_through: r.events_through, requests_through: r.requests_through });
    this.last_time_ms = r.batch_time_ms;
  }

  /** Batch `h`, confirmed in the stream at `event_seq`, is applied: a snapshot may be due. */
  private confirmed(h: BatchHeader, event_seq: number, state_root: string): void {
    this.applied(h, event_seq, state_root);
    this.snapshots.confirmed(h, event_seq, this.status.requests_through, state_root, this.executor);
  }

  /**
   * Fenced out: another matcher wrote the batch this one applied, so this engine is ahead of the
   * log. Start over from genesis as a standby: the next follow() resumes from the newest
   * snapshot the stream confirms (all this matcher's snapshots are of confirmed batches), else
   * re-executes the stream from sequence 1.
   */
  private rebuild(why: string): void {
    log.error(`ringbook matcher ${this.options.node_id}: ${why}: rebuilding from the event stream as a standby`);
    this.status.role = 'standby';
    this.executor = this.freshExecutor();
    const s = this.status;
    s.batch_id = -1;
    s.state_root = '';
    s.events_through = 0;
    s.requests_through = 0;
    this.last_time_ms = 0;
    this.rebuilds++;
  }

  async start(): Promise<void> {
    const o = this.options;
    const nc = await connectCluster(o.nats_urls, o.nats_credentials, `ringbook-matcher-${o.node_id}`);
    this.nc = nc;
    this.jsm = await ensureStreams(nc, { replicas: o.replicas });
    this.js = jetstream(nc);
    this.leader_store = new LeaderStore(o, this.status, nc, this.js, this.jsm, {
      stopping: () => this.stopping,
      leading: () => this.leadingNow(),
      // Called for a batch whose publish was acknowledged (or found stored as its own): confirmed.
      applied: (h, event_seq, state_root) => this.confirmed(h, event_seq, state_root),
      rebuild: (why) => this.rebuild(why),
    });
    this.lease = await KvLease.open(nc, LEASE_BUCKET, o.node_id, o.lease_ttl_ms, o.replicas);
    this.batch_requests.listen(nc, { leading: () => this.leadingNow(), batchId: () => this.status.batch_id, wake: () => this.wake?.() });
    await this.follow();
    this.purger = startRequestPurger(o.node_id, this.jsm, this.status, () => this.leadingNow());
    this.lease_timer = setInterval(() => void this.leaseTick(), Math.max(10, Math.floor(o.lease_ttl_ms / 4)));
  }

  // ---------------------------------------------------------------- standby: follow the log

  private async follow(): Promise<void> {
    await this.resumeFromSnapshot();
    const reader = new LogReader(this.js as JetStreamClient, this.jsm as JetStreamManager, EVENT_STREAM, EVENT_SUBJECT, this.status.events_through + 1,
      `matcher ${this.options.node_id}`, EVENTS_PULLED_MAX, (m) => this.applyPublished(m));
    this.follower = reader;
    await reader.start();
  }

  /** Re-executes one published batch and compares it with what the leader published. */
  private applyPublished(m: LogMessage): void {
    const h = readBatchHeader(m.headers, m.data.length);
    const s = this.status;
    if (h.batch_id !== s.batch_id + 1) {
      this.onFatal(`event stream: batch ${h.batch_id} follows batch ${s.batch_id} (sequence ${m.seq})`);
      return;
    }
    const inputs = m.data.subarray(0, h.input_records * RECORD_BYTES);
    const roots = this.execute(h.batch_id, h.time_ms, inputs);
    const published_events = m.data.subarray(h.input_records * RECORD_BYTES);
    const own = this.eventBytes();
    const agreed = roots.state_root === h.state_root && roots.fills_root === h.fills_root && bytesEqual(own, published_events);
    if (!agreed) {
      s.mismatches++;
      log.error(`ringbook matcher ${this.options.node_id}: ALARM batch ${h.batch_id} re-executed differently: ` +
        `state root ${roots.state_root} vs published ${h.state_root} (leader ${h.leader}), ` +
        `fills root ${roots.fills_root} vs ${h.fills_root}, ${own.length / RECORD_BYTES} vs ${published_events.length / RECORD_BYTES} events`,
      undefined, { batch_id: h.batch_id });
    }
    // A batch that re-executed differently is never snapshotted: its state is not the stream's.
    if (agreed) this.confirmed(h, m.seq, roots.state_root);
    else this.applied(h, m.seq, roots.state_root);
  }

  private execute(batch_id: number, time_ms: number, inputs: Uint8Array): BatchRoots {
    this.events.clear();
    if (batch_id === 0) return this.executor.genesis();
    const { records, count } = recordsOfBytes(inputs);
    return this.executor.apply(batch_id, time_ms, records, count);
  }

  private eventBytes(): Uint8Array {
    return this.events.views.u8.subarray(0, this.events.count * RECORD_BYTES);
  }

  private applied(h: BatchHeader, event_seq: number, state_root: string): void {
    const s = this.status;
    s.batch_id = h.batch_id;
    s.state_root = state_root;
    s.events_through = event_seq;
    if (h.requests_through > 0) s.requests_through = h.requests_through;
    if (h.time_ms > this.last_time_ms) this.last_time_ms = h.time_ms;
  }

  // ---------------------------------------------------------------- the lease

  private leasing = false;
  /** lead() runs (from taking the lease until it follows the log again after stepping down). */
  private in_lead = false;

  /**
   * Whether this matcher leads now: it took the lease and its validity has not lapsed. A lapse
   * found here steps it down at once (this is called before every batch, status message and
   * /status answer), so nothing waits for the lease timer, whose renewal may hang on NATS.
   */
  leadingNow(): boolean {
    if (this.status.role !== 'leader') return false;
    const lease = this.lease as KvLease;
    if (lease.validNow()) return true;
    const o = this.options;
    this.stepDown(`lease renewal not confirmed for ${o.lease_ttl_ms - leaseSafetyMarginMs(o.lease_ttl_ms)} ms ` +
      `(TTL ${o.lease_ttl_ms} ms less the ${leaseSafetyMarginMs(o.lease_ttl_ms)} ms safety margin): the key may expire for the others`);
    lease.drop();
    return false;
  }

  /** The status, with the role as of now (GET /status of roles.ts). */
  statusNow(): MatcherStatus {
    this.leadingNow();
    return this.status;
  }

  private stepDown(why: string): void {
    log.warn(`ringbook matcher ${this.options.node_id}: ${why} at batch ${this.status.batch_id}: back to standby`);
    this.status.role = 'standby';
    this.wake?.();
    // lead() may be waiting for the request stream's consumer: stop that wait too.
    void this.request_reader?.close();
  }

  private async leaseTick(): Promise<void> {
    if (this.leasing || this.stopping) return;
    this.leasing = true;
    try {
      const lease = this.lease as KvLease;
      if (this.leadingNow()) {
        // A refusal ends leadership at once. A renewal NATS did not answer (the bucket electing a
        // leader after a node's death) does not extend the lease: leadingNow() steps down when its
        // validity lapses, before the key can expire for the standbys (before 2026-11-29 silence
        // "changed nothing", and a leader cut off from NATS led on beside the standby that took
        // the expired key).
        const renewed = await lease.renew();
        if (renewed === 'lost') this.stepDown('lease lost');
        else if (this.leadingNow()) (this.leader_store as LeaderStore).publishStatus();
      } else if (!this.in_lead && await lease.tryAcquire()) {
        if (!lease.validNow()) {
          // Created, but confirmed so late that the margin is spent: not led; the key expires.
          log.warn(`ringbook matcher ${this.options.node_id}: lease taken but confirmed too late to lead on it (${Math.round(lease.validForMs())} ms)`);
          lease.drop();
          return;
        }
        this.in_lead = true;
        this.status.role = 'leader';
        this.status.leader_since_ms = Date.now();
        log.info(`ringbook matcher ${this.options.node_id}: leader from batch ${this.status.batch_id}`, { batch_id: this.status.batch_id });
        this.lead_done = this.lead().then(() => {
          this.in_lead = false;
        }, (e: unknown) => this.onFatal(`leading failed: ${String(e)}`));
      }
    } finally {
      this.leasing = false;
    }
  }

  // ---------------------------------------------------------------- leader: sequence

  private async lead(): Promise<void> {
    this.batch_requests.reset();
    const jsm = this.jsm as JetStreamManager;
    const js = this.js as JetStreamClient;
    // Apply the whole stream first: the previous leader's last batches may still be in flight.
    const last = await this.untilDone(() => jsm.streams.info(EVENT_STREAM)).then((i) => i.state.last_seq);
    while (this.status.events_through < last && !this.stopping && this.leadingNow()) await sleep(2);
    await this.follower?.close();
    this.follower = null;
    if (this.status.batch_id < 0 && this.leadingNow()) await this.publishBatch(0, 0, new Uint8Array(0), 0);
    const requests = new LogReader(js, jsm, REQUEST_STREAM, REQUEST_SUBJECT, this.status.requests_through + 1, `matcher ${this.options.node_id}`,
      REQUESTS_PULLED_MAX, async (m) => {
        // Backpressure: the request stream holds what the leader has not taken yet.
        while (this.units.length >= UNITS_QUEUED_MAX && !this.stopping && this.leadingNow()) await sleep(1);
        this.units.push({ seq: m.seq, data: m.data });
        this.wake?.();
      });
    this.request_reader = requests;
    if (this.leadingNow()) await requests.start();
    while (!this.stopping && this.leadingNow()) {
      if (this.units.length === 0) {
        // An empty batch when a forced inclusion or dead-man switch falls due, or a gateway's request waits.
        const now = Date.now();
        const due = Math.min(this.executor.engine.nextDueMs() - now, this.batch_requests.dueInMs(now));
        if (due <= 0) {
          await this.cut();
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(due, IDLE_WAIT_MS_MAX));
          this.wake = () => {
            clearTimeout(timer);
            this.wake = null;
            resolve();
          };
        });
        continue;
      }
      await this.cut();
    }
    // Stepped down (or stopping): what this matcher applied is all in the log; follow it again.
    await requests.close();
    this.request_reader = null;
    this.units.length = 0;
    if (!this.stopping) await this.follow();
  }

  /** Runs `fn` until it succeeds (a NATS election answers with timeouts for a few seconds). */
  private async untilDone<T>(fn: () => Promise<T>): Promise<T> {
    for (let tries = 0; ; tries++) {
      try {
        return await fn();
      } catch (e) {
        if (this.stopping) throw e;
        await sleep(RETRY_WAIT_MS[Math.min(tries, RETRY_WAIT_MS.length - 1)]);
      }
    }
  }

  /** Takes the waiting request units (whole, up to batch_records_max records) as the next batch. */
  private async cut(): Promise<void> {
    // Nothing is taken or executed unless the lease is valid now (the loop's check may be a turn old).
    if (!this.leadingNow()) return;
    const max_bytes = this.options.batch_records_max * RECORD_BYTES;
    let bytes = 0;
    let n = 0;
    while (n < this.units.length && (n === 0 || bytes + this.units[n].data.length <= max_bytes)) {
      bytes += this.units[n].data.length;
      n++;
    }
    const taken = this.units.splice(0, n);
    const inputs = new Uint8Array(bytes);
    let at = 0;
    for (const u of taken) {
      inputs.set(u.data, at);
      at += u.data.length;
    }
    const now = Date.now();
    if (now > this.last_time_ms) this.last_time_ms = now;
    const through = taken.length > 0 ? taken[taken.length - 1].seq : this.status.requests_through;
    await this.publishBatch(this.status.batch_id + 1, this.last_time_ms, inputs, through);
    this.status.batches_cut++;
    this.batch_requests.batchCut(taken.length === 0, now);
  }

  /** Applies a batch, publishes it fenced on the last event sequence, and retries what failed in transit. */
  private async publishBatch(batch_id: number, time_ms: number, inputs: Uint8Array, requests_through: number): Promise<void> {
    const roots = this.execute(batch_id, time_ms, inputs);
    const events = this.eventBytes();
    const body = new Uint8Array(inputs.length + events.length);
    body.set(inputs, 0);
    body.set(events, inputs.length);
    const h: BatchHeader = {
      batch_id, time_ms, requests_through, input_records: inputs.length / RECORD_BYTES, state_root: roots.state_root,
      fills_root: roots.fills_root, leader: this.options.node_id,
    };
    const store = this.leader_store as LeaderStore;
    try {
      await store.store(batch_id, body, h, roots.state_root);
    } finally {
      // Stored, or no longer this leader's to store (fenced, stopping): no fault of this leader's.
      store.storeFault(batch_id, null, 0);
    }
  }

  /** Clean stop: finish the batch in flight, hand the lease over, close the connection. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.lease_timer !== null) clearInterval(this.lease_timer);
    this.wake?.();
    void this.request_reader?.close();
    await this.lead_done;
    await this.purger?.stop();
    await this.follower?.close();
    await this.lease?.release();
    await this.snapshots.idle();
    // Its writer thread (and that thread's hold on the kept copies) ends with the role, not with
    // the process: one that stops a role and goes on (tests, bench) kept it until exit.
    await this.snapshots.close();
    this.status.role = 'stopped';
    await this.nc?.drain();
  }
}
