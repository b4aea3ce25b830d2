// The front thread's side of the rings: it starts the matcher thread, writes requests to the
// request ring, pumps the event ring into the read model, and answers each request once the
// batch that holds it is committed (never before: an answer promises durability).
import { Worker } from 'node:worker_threads';
import type { EngineConfig } from '../engine/api.js';
import { RequestKind, type Request } from '../engine/types.js';
import type { JournalFault } from '../journal/journal.js';
import type { FromMatcher, MatcherWorkerData, SnapshotMessage, ToMatcher } from '../matcher/matcher_worker.js';
import type { PinResult } from '../matcher/pin_thread.js';
import { createRecordRing, RECORD_WORDS, RecordBuffer, viewsOfRing } from '../ring/records.js';
import { RequestWriter } from '../ring/request_records.js';
import { BatchField, EventCursor, EventReader, EventType, type EventFields } from '../ring/event_records.js';
import { consentSlotCount } from '../ring/consent.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import { consumeOnLoop, type LoopConsumer } from '../ring/ring_wake.js';
import { ReadModel, type ReadModelLimits } from '../read_model/read_model.js';
import type { BatchStages, FillView, OrderView, ReadModelObserver, TradeView } from '../read_model/views.js';
import { stampMs, type StageStamps } from './stage_timings.js';
import { ANSWER_SPIN_INFLIGHT_MAX, AnswerSpin } from './answer_spin.js';
import { componentLog, logSettings } from '../util/log.js';

const log = componentLog('matcher_link');

/** Logged at start when front.answer_spin_us > 0 but the front sleeps through Atomics.waitAsync. */
export const ANSWER_SPIN_WITHOUT_BELL = 'ringbook: front.answer_spin_us is set, but the front sleeps on the event ring through ' +
  'Atomics.waitAsync (RINGBOOK_LOOP_BELL=atomics, or native/build/loop_bell.node not built: make native), ' +
  'and the answer spin runs only on the loop bell: it is off';

export interface Outcome {
  accepted: boolean;
  code: number;
  reason: number;
  order_id: number;
  /** Fills the request's own order made as taker, in order. */
  fills: FillView[];
  /**
   * Orders this request changed (cancel-all, pause), in event order. Left empty for a place, a
   * cancel and an amend, whose answers read the order itself (orderUpdatesListed).
   */
  order_updates: number[];
  batch_id: number;
  time_ms: number;
}

/**
 * An outcome's lists before anything was added to them: shared by every pending request, frozen so
 * that a push anywhere but in the pump (which replaces them first) throws instead of leaking into
 * other requests' outcomes.
 */
const NO_FILLS = Object.freeze([]) as unknown as FillView[];
const NO_ORDER_UPDATES = Object.freeze([]) as unknown as number[];

/** Receives a request's committed outcome (called once, from the event pump). */
export type OutcomeCallback = (o: Outcome) => void;

interface Pending {
  resolve: OutcomeCallback;
  outcome: Outcome;
  /** Stage stamps (config diagnostics.stage_timings), else null. */
  stamps: StageStamps | null;
  /** performance.now() when it was written to the ring, for the answer spin (0 when it is off). */
  written_ms: number;
  /** Its kind once its ACCEPTED event was read, else -1. */
  kind: number;
}

/**
 * Whether an accepted request of `kind` (-1: not known yet) gets its changed orders listed in
 * `order_updates`: not for the kinds whose answers read the order itself, the bulk of the flow
 * (an array per place otherwise, ~3% of the front's bytes at max rate; issue 11).
 */
function orderUpdatesListed(kind: number): boolean {
  return kind !== RequestKind.PLACE && kind !== RequestKind.CANCEL && kind !== RequestKind.AMEND;
}

export interface MatcherLinkOptions {
  engine_config: EngineConfig;
  request_ring_slots: number;
  event_ring_slots: number;
  batch_requests_max: number;
  read_model: ReadModelLimits;
  /** LMDB journal directory (null: no durability, pipeline tests only). */
  journal_dir: string | null;
  /** Test seam of the journal (src/journal/journal.ts JournalOptions.fault_file). */
  journal_fault_file?: string | null;
  /** Resume the matcher from this snapshot's engine part (the read model is restored by the caller). */
  snapshot?: { batch_id: number; engine: Uint8Array } | null;
  /** The matcher captures a snapshot after every this many live batches (0 or absent: on request only). */
  snapshot_every_batches?: number;
  /** Added to the sequencer's clock (a testing aid; 0 or absent live). */
  clock_offset_ms?: number;
  /** The matcher stamps each batch's start, applied and durable times (stage timings). */
  stamp_batches?: boolean;
  /** Pin the matcher thread to this CPU (config matcher.cpu; null: no pinning). */
  cpu?: number | null;
  /**
   * Runs on this thread once the matcher thread is started and before any event is read: the
   * read model's restore from a snapshot overlaps the matcher's own restore.
   */
  beforeEvents?: () => void;
  /**
   * Where the matcher runs: absent, a thread of this process (the single-process mode, journaled);
   * present, elsewhere (the cluster gateway, src/cluster/: the backend carries the request ring's
   * records to the replicated request log and writes the event stream's committed batches into
   * the event ring, which this link reads exactly as it reads the local matcher's).
   */
  backend?: MatcherBackend;
  /**
   * How the front sleeps on the event ring: 'bell' (default: the loop bell when built,
   * RINGBOOK_LOOP_BELL permitting; src/ring/ring_wake.ts) or 'atomics' (Atomics.waitAsync).
   */
  event_ring_wake?: 'bell' | 'atomics';
  /**
   * With the loop bell: while requests written to the matcher wait for their commit, the front
   * keeps its event loop turning instead of sleeping on the event ring, until the oldest of them
   * was written this long (µs) ago (config front.answer_spin_us; 0 or absent: it sleeps at once).
   * See answer_spin.ts.
   */
  answer_spin_us?: number;
  /**
   * First request seq is seq_base + 1. Gateways of one cluster share the event stream, so each
   * numbers its requests in its own range (events carry the seq back; a float64, exact to 2^53).
   */
  seq_base?: number;
}

/** A matcher outside this process, reached through the two rings (the cluster gateway's). */
export interface MatcherBackend {
  /**
   * Takes over the matcher's ends of the rings: drains `requests` when told (requestsPublished)
   * and writes each committed batch's event records, BATCH_BEGIN to BATCH_COMMITTED, into
   * `events`. Resolves once the events committed so far are in the ring.
   */
  start(requests: SpscRing, events: SpscRing): Promise<void>;
  /** The front published records to the request ring. */
  requestsPublished(): void;
  /** Clean stop: the request ring is closed; send what it holds, then stop writing events. */
  stop(): Promise<void>;
}

/** What the matcher reported when it was ready. */
export interface RecoveryInfo {
  /** The snapshot the matcher resumed from (null: genesis). */
  snapshot_batch_id: number | null;
  /** Journal batches replayed after it. */
  replayed_batches: number;
  /** Last batch applied at start: batches after it are live. */
  batch_id: number;
  replay_ms: number;
}

export type { SnapshotMessage };

export class MatcherLink {
  readonly read_model: ReadModel;
  private readonly options: MatcherLinkOptions;
  private request_ring: SpscRing | null = null;
  private event_ring: SpscRing | null = null;
  private writer: RequestWriter | null = null;
  private worker: Worker | null = null;
  private next_seq: number;
  private readonly pending = new Map<number, Pending>();
  private batch_seqs: number[] = [];
  private pump_done: Promise<void> = Promise.resolve();
  /** The event pump's consumer (ring_wake.ts), once started. */
  private pump_consumer: LoopConsumer | null = null;
  /** Whether the front sleeps on the event ring's loop bell (else Atomics.waitAsync). */
  event_ring_bell = false;
  private stopping = false;
  private readonly batch_listeners: ((batch_id: number, time_ms: number) => void)[] = [];
  private readonly batch_stage_listeners: ((requests: number, stages: BatchStages) => void)[] = [];
  /** Requests of the batch being read (each has one ACCEPTED or REJECTED event). */
  private batch_requests = 0;
  private readonly event_listeners: ((e: EventFields, seq: number) => void)[] = [];
  /** The HTTP answers: the last of the read model's observers (consumers()). */
  private readonly answers: ReadModelObserver;

  /**
   * Adds a listener called after each committed batch was applied and its answers released (the
   * DA thread's flush, snapshots).
   */
  addBatchListener(fn: (batch_id: number, time_ms: number) => void): void {
    this.batch_listeners.push(fn);
  }

  /**
   * Adds a listener of each committed batch's request count and stage stamps (metrics), called once its
   * answers went out. `stages` is reused: read it during the call.
   */
  addBatchStagesListener(fn: (requests: number, stages: BatchStages) => void): void {
    this.batch_stage_listeners.push(fn);
  }

  /**
   * Adds a reader of the raw committed records, called before the read model applies each (the
   * DA packer: the state root is computed from the records themselves, not from the front's view).
   */
  addEventListener(fn: (e: EventFields, seq: number) => void): void {
    this.event_listeners.push(fn);
  }

  /**
   * Declares the read model's observers, in the order each decoded event reaches them; the HTTP
   * answers always come last (an answer may go out once everything else has seen its batch).
   */
  consumers(observers: readonly ReadModelObserver[]): void {
    this.read_model.observe([...observers, this.answers]);
  }

  ring_full_count = 0;
  listener_errors = 0;
  private flush_scheduled = false;
  /** Stamped requests written since the last flush (stage timings only). */
  private unflushed_stamps: StageStamps[] = [];
  /**
   * Publishes the requests written since the last flush at once (at most one wake-up of the
   * matcher per flush, not per request). Run as a microtask, so the requests of one run of
   * callbacks go together: the verdicts of one verify batch (delivered in one callback), a POST
   * /orders/batch group, one uWS handler's writes. A setImmediate here cost a lone request at
   * 1,000/s a whole extra event-loop turn (an epoll_pwait, the timer and immediate queues) between
   * its verdict and the matcher (issue 11). With a cluster backend (one NATS message per flush)
   * the flush stays once per event-loop turn (setImmediate), as gateway_backend.ts expects.
   */
  private readonly flush_requests = (): void => {
    this.flush_scheduled = false;
    // Stamped just before the publish: the matcher may start the batch before flush() returns.
    if (this.unflushed_stamps.length > 0) {
      const now = stampMs();
      for (const s of this.unflushed_stamps) s.published = now;
      this.unflushed_stamps = [];
    }
    this.writer?.flush();
    this.options.backend?.requestsPublished();
    // The answer spin starts with the wait: a pump asleep on the bell would see the commit only
    // through the bell's ring and a wake-up of this thread (ring_wake.ts rouse).
    if (this.spin !== null) this.pump_consumer?.rouse();
  };
  replayed_batches = 0;
  recovery: RecoveryInfo | null = null;
  /**
   * A journal write failing and being retried (disk full, I/O error), else null. While set the
   * gateway refuses new writes with 503; what is in flight is answered once it is durable.
   */
  journal_fault: JournalFault | null = null;
  private journal_fault_since_ms = 0;
  /** What pinning the matcher thread did (config matcher.cpu), null when not asked. */
  pin: PinResult | null = null;
  /** Receives each engine snapshot the matcher captured (src/snapshot/coordinator.ts). */
  onSnapshot: ((m: SnapshotMessage) => void) | null = null;

  constructor(options: MatcherLinkOptions) {
    this.options = options;
    this.next_seq = (options.seq_base ?? 0) + 1;
    this.spin_oldest_seq = this.next_seq;
    const spin_us = options.answer_spin_us ?? 0;
    this.spin = spin_us > 0 ? new AnswerSpin(spin_us) : null;
    this.read_model = new ReadModel(options.engine_config.assets, options.read_model);
    this.read_model.onObserverError = (e) => this.listenerFailed(e);
    this.answers = this.answerObserver();
    this.consumers([]);
  }

  async start(): Promise<void> {
    const requests = createRecordRing(this.options.request_ring_slots);
    const events = createRecordRing(this.options.event_ring_slots);
    this.request_ring = requests;
    this.event_ring = events;
    this.writer = new RequestWriter(requests);
    const backend = this.options.backend;
    if (backend !== undefined) {
      this.options.beforeEvents?.();
      this.pump_done = this.pump(events);
      await backend.start(requests, events);
      return;
    }
    const data: MatcherWorkerData = {
      engine_config: this.options.engine_config,
      request_sab: requests.sab,
      event_sab: events.sab,
      batch_requests_max: this.options.batch_requests_max,
      journal_dir: this.options.journal_dir,
      journal_fault_file: this.options.journal_fault_file ?? null,
      snapshot: this.options.snapshot ?? null,
      snapshot_every_batches: this.options.snapshot_every_batches ?? 0,
      clock_offset_ms: this.options.clock_offset_ms ?? 0,
      stamp_batches: this.options.stamp_batches ?? false,
      cpu: this.options.cpu ?? null,
      log: logSettings(),
    };
    const worker = new Worker(new URL('../matcher/matcher_worker.js', import.meta.url), { workerData: data });
    this.worker = worker;
    try {
      this.options.beforeEvents?.();
      // The pump must run before 'ready': recovery replays the journal through the event ring.
      this.pump_done = this.pump(events);
    } catch (e) {
      // The pump throws synchronously when its wake-up cannot be had (RINGBOOK_LOOP_BELL=native
      // without the module, the bell's open failing): stop the matcher thread, nobody else will.
      this.worker = null;
      await worker.terminate();
      throw e;
    }
    worker.on('message', (m: FromMatcher) => {
      if (m.type === 'snapshot' && this.onSnapshot !== null) this.onSnapshot(m);
      else if (m.type === 'trimmed') {
        log.info(`ringbook: journal trimmed through batch ${m.through_batch_id} (${m.deleted} batches deleted)`,
          { through_batch_id: m.through_batch_id, deleted: m.deleted });
      }
      else if (m.type === 'journal_fault') this.journalFault(m.fault);
    });
    const ready = await new Promise<Extract<FromMatcher, { type: 'ready' }>>((resolve, reject) => {
      const onMessage = (m: FromMatcher): void => {
        if (m.type === 'ready') {
          worker.off('error', reject);
          worker.off('exit', onExit);
          resolve(m);
        }
      };
      const onExit = (code: number): void => reject(new Error(`matcher thread exited with code ${code} during start`));
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.once('exit', onExit);
    });
    this.replayed_batches = ready.replayed_batches;
    this.pin = ready.pin;
    if (ready.pin !== null) {
      if (ready.pin.pinned) log.info(`ringbook: matcher thread ${ready.pin.message}`);
      else log.error(`ringbook: matcher thread ${ready.pin.message} (config matcher.cpu); running unpinned`);
    }
    this.recovery = {
      snapshot_batch_id: ready.snapshot_batch_id, replayed_batches: ready.replayed_batches, batch_id: ready.batch_id,
      replay_ms: ready.replay_ms,
    };
    worker.on('error', (e) => {
      log.fatal('ringbook: matcher thread failed', e);
      process.exit(70);
    });
    worker.on('exit', (code) => {
      if (!this.stopping) {
        log.fatal(`ringbook: matcher thread exited (code ${code})`, undefined, { code });
        process.exit(70);
      }
    });
  }

  private journalFault(fault: JournalFault | null): void {
    if (fault !== null && this.journal_fault === null) {
      this.journal_fault_since_ms = Date.now();
      log.error(`ringbook: journal write of batch ${fault.batch_id} failed (${fault.message}): ` +
        'refusing new writes with 503 OVERLOADED and retrying; reads are served; nothing is acknowledged until it is durable');
    } else if (fault === null && this.journal_fault !== null) {
      log.warn(`ringbook: journal writes succeed again after ${Date.now() - this.journal_fault_since_ms} ms: accepting writes`);
    }
    this.journal_fault = fault;
  }

  /** Asks the matcher for a snapshot of its state now (it arrives through `onSnapshot`). */
  requestSnapshot(): void {
    this.toMatcher({ type: 'snapshot' });
  }

  /** The front holds its part of an on-demand snapshot: the matcher may go on (matcher_worker.ts). */
  snapshotCaptured(): void {
    this.toMatcher({ type: 'snapshot_captured' });
  }

  /** Asks the matcher to delete journal batches 1..`through_batch_id` (retention after a snapshot). */
  trimJournal(through_batch_id: number): void {
    this.toMatcher({ type: 'trim', through_batch_id });
  }

  /** Passes a memory question (util/thread_memory.ts) to the matcher, which answers on the channel. */
  askMemory(ask: number): void {
    this.toMatcher({ type: 'memory', ask });
  }

  /**
   * The matcher reads its messages between batches and sleeps on the request ring, not in its
   * event loop: wake it if it sleeps, so the message is read now.
   */
  private toMatcher(m: ToMatcher): void {
    if (this.worker === null) return;
    this.worker.postMessage(m);
    this.request_ring?.wakeConsumer();
  }

  /** Ring depths for admin state. */
  depths(): { request_ring: number; event_ring: number } {
    return { request_ring: this.request_ring?.depth() ?? 0, event_ring: this.event_ring?.depth() ?? 0 };
  }

  inflight(): number {
    return this.pending.size;
  }

  /**
   * Sends one request to the matcher. Returns null when the request ring is full
   * (backpressure: the caller answers with a clear error; nothing was sent).
   */
  submit(request: Request, address: Uint8Array, address_hex: string, referrer: Uint8Array | null = null,
    consent: Uint8Array | null = null, stamps: StageStamps | null = null, signer: Uint8Array | null = null): Promise<Outcome> | null {
    let resolve!: OutcomeCallback;
    const p = new Promise<Outcome>((r) => {
      resolve = r;
    });
    return this.submitWith(request, address, address_hex, referrer, consent, stamps, signer, resolve) ? p : null;
  }

  /**
   * submit() with a callback instead of a promise (the signed path: no promise and no extra
   * microtask per request, issue 11). False when the ring is full (nothing was sent, `done` is
   * never called). `done` runs inside the event pump: a throw in it is counted and logged
   * (listener_errors) and the batch's other answers still go out.
   */
  submitWith(request: Request, address: Uint8Array, address_hex: string, referrer: Uint8Array | null,
    consent: Uint8Array | null, stamps: StageStamps | null, signer: Uint8Array | null, done: OutcomeCallback): boolean {
    if (this.writer === null || this.stopping) return false;
    return this.write(this.writer, request, address, address_hex, referrer, consent, stamps, 0, signer, done);
  }

  /**
   * Sends `items` as one group (POST /orders/batch): written back to back and published together,
   * marked so the matcher applies them contiguously in one batch. All or nothing: null when the
   * ring has no room for the whole group (nothing was sent).
   */
  submitGroup(
    items: readonly { request: Request; address: Uint8Array; address_hex: string; consent: Uint8Array | null; signer?: Uint8Array | null }[],
  ): Promise<Outcome>[] | null {
    const writer = this.writer;
    if (writer === null || this.stopping) return null;
    let slots = 0;
    for (const it of items) slots += 1 + (it.consent === null ? 0 : consentSlotCount(it.consent.length));
    if (writer.freeSlots() < slots) {
      this.ring_full_count++;
      return null;
    }
    const out: Promise<Outcome>[] = [];
    for (let k = 0; k < items.length; k++) {
      const it = items[k];
      let resolve!: OutcomeCallback;
      const p = new Promise<Outcome>((r) => {
        resolve = r;
      });
      if (!this.write(writer, it.request, it.address, it.address_hex, null, it.consent, null, items.length - 1 - k, it.signer ?? null, resolve)) {
        throw new Error('request ring: room for the group was checked');
      }
      out.push(p);
    }
    return out;
  }

  /** Writes one request to the ring; false (nothing written, `done` never called) when it is full. */
  private write(
    writer: RequestWriter, request: Request, address: Uint8Array, address_hex: string, referrer: Uint8Array | null,
    consent: Uint8Array | null, stamps: StageStamps | null, group_following: number, signer: Uint8Array | null,
    done: OutcomeCallback,
  ): boolean {
    const seq = this.next_seq++;
    const hint = this.read_model.account_by_address.get(address_hex) ?? 0;
    if (!writer.tryWrite(seq, address, hint, request, referrer, consent, group_following, signer)) {
      this.ring_full_count++;
      return false;
    }
    if (stamps !== null) this.unflushed_stamps.push(stamps);
    if (!this.flush_scheduled) {
      this.flush_scheduled = true;
      // A cluster backend sends one NATS message per flush: it keeps one flush per turn.
      if (this.options.backend === undefined) queueMicrotask(this.flush_requests);
      else setImmediate(this.flush_requests);
    }
    this.pending.set(seq, {
      resolve: done,
      // The shared empty lists until the request's first fill or order update: most requests have
      // neither (two arrays per request otherwise; issue 11, branch h11z).
      outcome: { accepted: false, code: 0, reason: 0, order_id: 0, fills: NO_FILLS, order_updates: NO_ORDER_UPDATES, batch_id: 0, time_ms: 0 },
      stamps,
      written_ms: this.spin === null ? 0 : performance.now(),
      kind: -1,
    });
    return true;
  }

  /**
   * Reads the event ring. A batch's events are copied aside until its commit marker arrives
   * (batches commit in order, but batch N+1's events may precede N's marker); only then do they
   * reach the read model and the waiting requests, so nothing uncommitted is ever shown. The
   * front sleeps between batches on the ring's loop bell when it is built (src/ring/ring_wake.ts:
   * the matcher's wake-up calls `drain` straight from this loop), else in Atomics.waitAsync.
   */
  private pump(events: SpscRing): Promise<void> {
    const ring_views = viewsOfRing(events);
    const reader = new EventReader(ring_views);
    const fields = new EventCursor(reader);
    const open_batches: { id: number; buffer: RecordBuffer }[] = [];
    const spare: RecordBuffer[] = [];
    const drain = (): void => {
      const n = events.available();
      for (let i = 0; i < n; i++) {
        const o = events.slotOffset(i);
        const type = reader.type(o);
        if (type === EventType.BATCH_BEGIN) {
          const buffer = spare.pop() ?? new RecordBuffer(256);
          buffer.clear();
          open_batches.push({ id: reader.field(o, BatchField.BATCH_ID), buffer });
          buffer.push(ring_views, o);
        } else if (type === EventType.BATCH_COMMITTED) {
          const id = reader.field(o, BatchField.BATCH_ID);
          const b = open_batches.shift();
          if (b === undefined || b.id !== id) throw new Error(`event stream: commit of batch ${id} out of order`);
          b.buffer.push(ring_views, o);
          reader.setViews(b.buffer.views);
          for (let k = 0; k < b.buffer.count; k++) this.dispatch(fields, k * RECORD_WORDS);
          reader.setViews(ring_views);
          spare.push(b.buffer);
        } else {
          const b = open_batches[open_batches.length - 1];
          if (b === undefined) throw new Error('event stream: event outside a batch');
          b.buffer.push(ring_views, o);
        }
      }
      if (n > 0) events.release(n);
    };
    const consumer = consumeOnLoop(events, drain, this.options.event_ring_wake ?? 'bell', this.answerSpin());
    this.event_ring_bell = consumer.bell;
    this.pump_consumer = consumer;
    // consumeOnLoop asks keepAwake on the bell only: say so rather than run without the spin silently.
    if (this.spin !== null && !consumer.bell) log.warn(ANSWER_SPIN_WITHOUT_BELL, { answer_spin_us: this.options.answer_spin_us });
    return consumer.done;
  }

  /** The answer spin (config front.answer_spin_us > 0), else null. */
  private readonly spin: AnswerSpin | null;
  /** No request below this seq waits (answered, or never written): where the oldest waiting one is looked for. */
  private spin_oldest_seq: number;

  /** Loop turns the answer spin kept (0 when it is off, or the front does not sleep on the loop bell). */
  get answer_spin_turns(): number {
    return this.spin === null ? 0 : this.spin.turns;
  }

  /**
   * The event pump's keepAwake (ring_wake.ts; answer_spin.ts decides), or undefined when
   * answer_spin_us is 0. The oldest waiting request is the lowest waiting seq (seqs rise with
   * each write): the scan passes each seq once in the link's life, so it costs O(1) per request.
   */
  private answerSpin(): (() => boolean) | undefined {
    const spin = this.spin;
    if (spin === null) return undefined;
    return () => {
      const waiting = this.pending.size;
      let oldest_written_ms = 0;
      if (waiting > 0 && waiting <= ANSWER_SPIN_INFLIGHT_MAX) {
        let p = this.pending.get(this.spin_oldest_seq);
        while (p === undefined && this.spin_oldest_seq < this.next_seq) p = this.pending.get(++this.spin_oldest_seq);
        if (p !== undefined) oldest_written_ms = p.written_ms;
      }
      return spin.keepAwake(performance.now(), waiting, oldest_written_ms);
    };
  }

  /**
   * A failing listener (WebSocket fan-out, DA) must never stop the event stream: every answer
   * waits on it. Counted, and the first few logged.
   */
  private listenerFailed(e: unknown): void {
    this.listener_errors++;
    if (this.listener_errors <= 10) log.error('ringbook: event stream listener failed', e);
  }

  private dispatch(fields: EventCursor, o: number): void {
    fields.o = o;
    const seq = fields.seq();
    for (let i = 0; i < this.event_listeners.length; i++) {
      try {
        this.event_listeners[i](fields, seq);
      } catch (e) {
        this.listenerFailed(e);
      }
    }
    this.read_model.apply(fields, seq);
  }

  /**
   * The answer path: each waiting request's outcome collected from what the read model decoded,
   * released when its batch commits (then the batch listeners run).
   */
  private answerObserver(): ReadModelObserver {
    const pendingOf = (seq: number): Pending | undefined => (seq === 0 ? undefined : this.pending.get(seq));
    return {
      batchBegin: () => {},
      accepted: (seq: number, kind: number, _account: number, order_id: number) => {
        this.batch_requests++;
        const p = pendingOf(seq);
        if (p === undefined) return;
        p.kind = kind;
        p.outcome.accepted = true;
        p.outcome.order_id = order_id;
        this.batch_seqs.push(seq);
      },
      rejected: (seq: number, code: number, reason: number) => {
        this.batch_requests++;
        const p = pendingOf(seq);
        if (p === undefined) return;
        p.outcome.accepted = false;
        p.outcome.code = code;
        p.outcome.reason = reason;
        this.batch_seqs.push(seq);
      },
      orderUpdate: (seq: number, o: OrderView) => {
        const p = pendingOf(seq);
        if (p === undefined || !orderUpdatesListed(p.kind)) return;
        if (p.outcome.order_updates === NO_ORDER_UPDATES) p.outcome.order_updates = [];
        p.outcome.order_updates.push(o.order_id);
      },
      fill: (seq: number, t: TradeView) => {
        const p = pendingOf(seq);
        if (p === undefined || t.taker_order_id !== p.outcome.order_id) return;
        if (p.outcome.fills === NO_FILLS) p.outcome.fills = [];
        p.outcome.fills.push({
          fill_id: t.fill_id, order_id: t.taker_order_id, market: t.market, side: t.taker_side, price: t.price,
          quantity: t.quantity, fee: t.taker_fee, is_maker: false, batch_id: t.batch_id, time_ms: t.time_ms,
        });
      },
      balance: () => {},
      batchCommitted: (batch_id: number, time_ms: number, _changed: ReadonlySet<number>, stages: BatchStages) =>
        this.release(batch_id, time_ms, stages),
    };
  }

  /** The batch is durable: its answers go out, then the batch listeners run. */
  private release(batch_id: number, time_ms: number, stages: BatchStages): void {
    for (const s of this.batch_seqs) {
      const p = this.pending.get(s);
      if (p === undefined) continue;
      this.pending.delete(s);
      p.outcome.batch_id = batch_id;
      p.outcome.time_ms = time_ms;
      if (p.stamps !== null) {
        // The matcher's batch stamps (0 unless it stamps batches: MatcherWorkerData.stamp_batches).
        p.stamps.batch_start = stages.started_ms;
        p.stamps.applied = stages.applied_ms;
        p.stamps.durable = stages.durable_ms;
      }
      try {
        p.resolve(p.outcome);
      } catch (e) {
        this.listenerFailed(e);
      }
    }
    this.batch_seqs = [];
    const requests = this.batch_requests;
    this.batch_requests = 0;
    // Batch 0 (genesis: markets and fees) is not journaled: no commit to report. Whether it came
    // before the metrics bound depended on the matcher thread's start, so under load the metrics'
    // batch count ran one above their journal commits (test/server/metrics.test.ts).
    const stage_listeners = batch_id === 0 ? 0 : this.batch_stage_listeners.length;
    for (let i = 0; i < stage_listeners; i++) {
      try {
        this.batch_stage_listeners[i](requests, stages);
      } catch (e) {
        this.listenerFailed(e);
      }
    }
    for (let i = 0; i < this.batch_listeners.length; i++) {
      try {
        this.batch_listeners[i](batch_id, time_ms);
      } catch (e) {
        this.listenerFailed(e);
      }
    }
  }

  /**
   * Clean stop: no new requests; the matcher applies everything already in the ring, its
   * batches commit and every waiting request is answered; then the threads end.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    const backend = this.options.backend;
    if (backend !== undefined && this.request_ring !== null && this.event_ring !== null) {
      this.writer?.flush();
      this.request_ring.close();
      await backend.stop();
      this.event_ring.close();
      await this.pump_done;
      return;
    }
    if (this.request_ring === null || this.worker === null) return;
    const worker = this.worker;
    const stopped = new Promise<void>((resolve) => {
      worker.on('message', (m: { type: string }) => {
        if (m.type === 'stopped') resolve();
      });
      worker.once('exit', () => resolve());
    });
    this.writer?.flush();
    this.request_ring.close();
    await stopped;
    await this.pump_done;
    await worker.terminate();
  }
}
