// The event side of MatcherLink (matcher_link.ts has the whole link's header): the read model,
// the requests waiting for their answers and the submitter that writes them, the pump of the event
// ring, and the dispatch of each committed batch, answers first, then the other consumers and the
// batch listeners. The matcher thread's start, messages and stop are MatcherLink's own
// (matcher_link.ts). One class in two files, as SpscRing is in four (src/ring/spsc_ring_core.ts):
// MatcherLink extends this part, and an object has every method. Protected, not private, where
// MatcherLink uses them: `options` and `pump` (its start). Keep MatcherLink the chain's only
// concrete class: a second one would make the calls of the answer path (dispatchBatch, release,
// batchDone on every committed batch) polymorphic in V8.
import type { EventCursor, EventFields } from '../ring/event_records.js';
import { RECORD_WORDS } from '../ring/records.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import type { LoopConsumer } from '../ring/ring_wake.js';
import { ReadModel } from '../read_model/read_model.js';
import type { BatchStages, ReadModelObserver } from '../read_model/views.js';
import { ObserverTape } from '../read_model/observer_tape.js';
import { AnswerSpin, answerSpinKeepAwake } from './answer_spin.js';
import type { MatcherLinkOptions } from './matcher_link_options.js';
import { PendingAnswers } from './outcomes.js';
import { RequestSubmitter } from './request_submit.js';
import { pumpEvents } from './event_pump.js';
import { componentLog } from '../util/log.js';

const log = componentLog('matcher_link');

/** Logged at start when front.answer_spin_us > 0 but the front sleeps through Atomics.waitAsync. */
export const ANSWER_SPIN_WITHOUT_BELL = 'ringbook: front.answer_spin_us is set, but the front sleeps on the event ring through ' +
  'Atomics.waitAsync (RINGBOOK_LOOP_BELL=atomics, or native/build/loop_bell.node not built: make native), ' +
  'and the answer spin runs only on the loop bell: it is off';

export abstract class MatcherLinkEvents {
  declare readonly read_model: ReadModel;
  protected declare readonly options: MatcherLinkOptions;
  /** The request ring's writing side: submit, submitWith, submitGroup (request_submit.ts). */
  declare readonly requests: RequestSubmitter;
  /** The written requests waiting for their answers, and their outcomes. */
  private declare readonly pending: PendingAnswers;
  /** The event pump's consumer (ring_wake.ts), once started. */
  private pump_consumer: LoopConsumer | null = null;
  /** Whether the front sleeps on the event ring's loop bell (else Atomics.waitAsync). */
  event_ring_bell = false;
  private readonly batch_listeners: ((batch_id: number, time_ms: number) => void)[] = [];
  private readonly batch_stage_listeners: ((requests: number, stages: BatchStages) => void)[] = [];
  private readonly event_listeners: ((e: EventFields, seq: number) => void)[] = [];
  private readonly answers_written_listeners: (() => void)[] = [];
  /**
   * The read model's other observers (consumers()): the tape records what the read model tells them
   * while it applies a batch, and replays it to them once the batch's answers went out.
   */
  private declare readonly tape: ObserverTape;
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
   * Adds a listener called once each committed batch's answers were handed to their transports,
   * before any other consumer hears the batch (the WebSocket hub writes the answers it held,
   * each connection's together: ws/held_answers.ts).
   */
  addAnswersWrittenListener(fn: () => void): void {
    this.answers_written_listeners.push(fn);
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

  inflight(): number {
    return this.pending.size;
  }

  /** Reads the event ring (event_pump.ts): each committed batch reaches `dispatchBatch`. */
  protected pump(events: SpscRing): Promise<void> {
    const spin = this.spin === null ? undefined : answerSpinKeepAwake(this.spin, this.pending, this.requests.seq_next, () => this.requests.seq_next);
    const consumer = pumpEvents(events, (fields, records) => this.dispatchBatch(fields, records), this.options.event_ring_wake ?? 'bell', spin);
    this.event_ring_bell = consumer.bell;
    this.pump_consumer = consumer;
    // consumeOnLoop asks keepAwake on the bell only: say so rather than run without the spin silently.
    if (this.spin !== null && !consumer.bell) log.warn(ANSWER_SPIN_WITHOUT_BELL, { answer_spin_us: this.options.answer_spin_us });
    return consumer.done;
  }

  /** The answer spin (config front.answer_spin_us > 0), else null. */
  private declare readonly spin: AnswerSpin | null;
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
    for (let i = 0; i < this.answers_written_listeners.length; i++) {
      try {
        this.answers_written_listeners[i]();
      } catch (e) {
        this.listenerFailed(e);
      }
    }
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
}
