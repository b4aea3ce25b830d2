// The front thread's side of the rings: it starts the matcher thread, writes requests to the
// request ring, pumps the event ring into the read model, and answers each request once the
// batch that holds it is committed (never before: an answer promises durability).
import { Worker } from 'node:worker_threads';
import type { EngineConfig } from '../engine/api.js';
import type { JournalFault } from '../journal/journal.js';
import type { JournalFaultEpisode } from './journal_state.js';
import type { FromMatcher, MatcherWorkerData, SnapshotMessage, ToMatcher } from '../matcher/matcher_worker.js';
import type { PinResult } from '../matcher/pin_thread.js';
import { createRecordRing, RECORD_WORDS } from '../ring/records.js';
import { RequestWriter } from '../ring/request_records.js';
import type { EventCursor, EventFields } from '../ring/event_records.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import type { LoopConsumer } from '../ring/ring_wake.js';
import { ReadModel, type ReadModelLimits } from '../read_model/read_model.js';
import type { BatchStages, ReadModelObserver } from '../read_model/views.js';
import { ObserverTape } from '../read_model/observer_tape.js';
import { AnswerSpin, answerSpinKeepAwake } from './answer_spin.js';
import { PendingAnswers, type Outcome, type OutcomeCallback } from './outcomes.js';
import { RequestSubmitter } from './request_submit.js';
import { pumpEvents } from './event_pump.js';
import { componentLog, logSettings } from '../util/log.js';

const log = componentLog('matcher_link');

/** Logged at start when front.answer_spin_us > 0 but the front sleeps through Atomics.waitAsync. */
export const ANSWER_SPIN_WITHOUT_BELL = 'ringbook: front.answer_spin_us is set, but the front sleeps on the event ring through ' +
  'Atomics.waitAsync (RINGBOOK_LOOP_BELL=atomics, or native/build/loop_bell.node not built: make native), ' +
  'and the answer spin runs only on the loop bell: it is off';

export type { Outcome, OutcomeCallback };

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
  private worker: Worker | null = null;
  /** The request ring's writing side: submit, submitWith, submitGroup (request_submit.ts). */
  readonly requests: RequestSubmitter;
  /** The written requests waiting for their answers, and their outcomes. */
  private readonly pending: PendingAnswers;
  private pump_done: Promise<void> = Promise.resolve();
  /** The event pump's consumer (ring_wake.ts), once started. */
  private pump_consumer: LoopConsumer | null = null;
  /** Whether the front sleeps on the event ring's loop bell (else Atomics.waitAsync). */
  event_ring_bell = false;
  private stopping = false;
  private readonly batch_listeners: ((batch_id: number, time_ms: number) => void)[] = [];
  private readonly batch_stage_listeners: ((requests: number, stages: BatchStages) => void)[] = [];
  private readonly event_listeners: ((e: EventFields, seq: number) => void)[] = [];
  /**
   * The read model's other observers (consumers()): the tape records what the read model tells them
   * while it applies a batch, and replays it to them once the batch's answers went out.
   */
  private readonly tape: ObserverTape;
  /** The commit marker of the batch being dispatched, as the answers observer saw it (its listeners run after the tape's replay). */
  private readonly commit_seen = { seen: false, batch_id: 0, time_ms: 0, requests: 0, stages: null as BatchStages | null };

  /**
   * Adds a listener called after each committed batch was applied, its answers released and its
   * events heard by every other consumer (the DA thread's flush, snapshots).
   */
  addBatchListener(fn: (batch_id: number, time_ms: number) => void): void {
    this.batch_listeners.push(fn);
  }

  /**
   * Adds a listener of each committed batch's request count and stage stamps (metrics), called once its
   * answers went out and its events were heard. `stages` is reused: read it during the call.
   */
  addBatchStagesListener(fn: (requests: number, stages: BatchStages) => void): void {
    this.batch_stage_listeners.push(fn);
  }

  /**
   * Adds a reader of the raw committed records, each batch's in order, called once the batch's
   * answers went out (the DA packer: the state root is computed from the records themselves, not
   * from the front's view).
   */
  addEventListener(fn: (e: EventFields, seq: number) => void): void {
    this.event_listeners.push(fn);
  }

  /**
   * Declares the read model's observers besides the HTTP answers, in the order each decoded event
   * reaches them. They hear a batch after its answers went out (ObserverTape), in the same
   * synchronous turn: see dispatchBatch.
   */
  consumers(observers: readonly ReadModelObserver[]): void {
    this.tape.observe(observers);
  }

  listener_errors = 0;
  replayed_batches = 0;
  recovery: RecoveryInfo | null = null;
  /**
   * A journal write failing and being retried (disk full, I/O error), else null. While set the
   * gateway refuses new writes with 503; what is in flight is answered once it is durable.
   */
  journal_fault: JournalFault | null = null;
  /** When `journal_fault` was set (epoch ms), 0 while none; the last fault and how many (GET /health, /admin/state `journal`). */
  journal_fault_since_ms = 0;
  journal_last_fault: JournalFaultEpisode | null = null;
  journal_faults = 0;
  /** What pinning the matcher thread did (config matcher.cpu), null when not asked. */
  pin: PinResult | null = null;
  /** Receives each engine snapshot the matcher captured (src/snapshot/coordinator.ts). */
  onSnapshot: ((m: SnapshotMessage) => void) | null = null;

  constructor(options: MatcherLinkOptions) {
    this.options = options;
    const spin_us = options.answer_spin_us ?? 0;
    this.spin = spin_us > 0 ? new AnswerSpin(spin_us) : null;
    this.read_model = new ReadModel(options.engine_config.assets, options.read_model);
    this.read_model.onObserverError = (e) => this.listenerFailed(e);
    this.pending = new PendingAnswers((e) => this.listenerFailed(e), (batch_id, time_ms, stages) => this.release(batch_id, time_ms, stages));
    this.tape = new ObserverTape((e) => this.listenerFailed(e));
    this.requests = new RequestSubmitter(this.pending, this.read_model.account_by_address, options.seq_base ?? 0,
      options.backend !== undefined, this.spin !== null, () => {
        options.backend?.requestsPublished();
        // The answer spin starts with the wait: a pump asleep on the bell would see the commit only
        // through the bell's ring and a wake-up of this thread (ring_wake.ts rouse).
        if (this.spin !== null) this.pump_consumer?.rouse();
      });
    this.read_model.observe([this.pending.observer, this.tape]);
  }

  async start(): Promise<void> {
    const requests = createRecordRing(this.options.request_ring_slots);
    const events = createRecordRing(this.options.event_ring_slots);
    this.request_ring = requests;
    this.event_ring = events;
    this.requests.attach(new RequestWriter(requests));
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
      this.journal_faults++;
      this.journal_last_fault = { ...fault, since_ms: this.journal_fault_since_ms, recovered_ms: null };
      log.error(`ringbook: journal write of batch ${fault.batch_id} failed (${fault.message}): ` +
        'refusing new writes with 503 OVERLOADED and retrying; reads are served; nothing is acknowledged until it is durable');
    } else if (fault === null && this.journal_fault !== null) {
      log.warn(`ringbook: journal writes succeed again after ${Date.now() - this.journal_fault_since_ms} ms: accepting writes`);
      if (this.journal_last_fault !== null) this.journal_last_fault.recovered_ms = Date.now();
      this.journal_fault_since_ms = 0;
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

  /** Reads the event ring (event_pump.ts): each committed batch reaches `dispatchBatch`. */
  private pump(events: SpscRing): Promise<void> {
    const spin = this.spin === null ? undefined : answerSpinKeepAwake(this.spin, this.pending, this.requests.seq_next, () => this.requests.seq_next);
    const consumer = pumpEvents(events, (fields, records) => this.dispatchBatch(fields, records), this.options.event_ring_wake ?? 'bell', spin);
    this.event_ring_bell = consumer.bell;
    this.pump_consumer = consumer;
    // consumeOnLoop asks keepAwake on the bell only: say so rather than run without the spin silently.
    if (this.spin !== null && !consumer.bell) log.warn(ANSWER_SPIN_WITHOUT_BELL, { answer_spin_us: this.options.answer_spin_us });
    return consumer.done;
  }

  /** The answer spin (config front.answer_spin_us > 0), else null. */
  private readonly spin: AnswerSpin | null;
  /** Loop turns the answer spin kept (0 when it is off, or the front does not sleep on the loop bell). */
  get answer_spin_turns(): number {
    return this.spin === null ? 0 : this.spin.turns;
  }

  /**
   * A failing listener (WebSocket fan-out, DA) must never stop the event stream: every answer
   * waits on it. Counted, and the first few logged.
   */
  private listenerFailed(e: unknown): void {
    this.listener_errors++;
    if (this.listener_errors <= 10) log.error('ringbook: event stream listener failed', e);
  }

  /**
   * One committed (durable) batch, in one synchronous turn, answers first:
   *   1. the read model applies each record; the answers observer collects the outcomes and, at
   *      the commit marker, writes the answers (release); the tape records what the read model
   *      tells the other observers;
   *   2. the raw records reach the event listeners (the DA packer);
   *   3. the tape is replayed to the other observers (market data, the WebSocket fan-out);
   *   4. the batch's stage and batch listeners (metrics, the DA flush, snapshots).
   * Read-your-writes holds: the model holds the batch before any answer is written, and the
   * front reads no new request before this turn ends. So an answer waits for the read model's
   * work on its batch only, not for every consumer's (issue 11).
   */
  private dispatchBatch(fields: EventCursor, records: number): void {
    for (let k = 0; k < records; k++) {
      fields.o = k * RECORD_WORDS;
      this.read_model.apply(fields, fields.seq());
    }
    const listeners = this.event_listeners;
    if (listeners.length > 0) {
      for (let k = 0; k < records; k++) {
        fields.o = k * RECORD_WORDS;
        const seq = fields.seq();
        for (let i = 0; i < listeners.length; i++) {
          try {
            listeners[i](fields, seq);
          } catch (e) {
            this.listenerFailed(e);
          }
        }
      }
    }
    this.tape.replay();
    const c = this.commit_seen;
    if (!c.seen) throw new Error('event stream: a committed batch without its commit marker');
    c.seen = false;
    this.batchDone(c.batch_id, c.time_ms, c.requests, c.stages as BatchStages);
  }

  /** The batch is durable (its commit marker, in dispatchBatch's first pass): its answers go out. */
  private release(batch_id: number, time_ms: number, stages: BatchStages): void {
    const c = this.commit_seen;
    c.seen = true;
    c.batch_id = batch_id;
    c.time_ms = time_ms;
    // The read model's own object: unchanged until its next commit marker, after batchDone.
    c.stages = stages;
    c.requests = this.pending.release(batch_id, time_ms, stages);
  }

  /** Every consumer has the batch: the stage and batch listeners run. */
  private batchDone(batch_id: number, time_ms: number, requests: number, stages: BatchStages): void {
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
    this.requests.stop();
    const backend = this.options.backend;
    if (backend !== undefined && this.request_ring !== null && this.event_ring !== null) {
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
    this.request_ring.close();
    await stopped;
    await this.pump_done;
    await worker.terminate();
  }
}
