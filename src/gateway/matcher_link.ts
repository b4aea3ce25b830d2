// The front thread's side of the rings: it starts the matcher thread, writes requests to the
// request ring, pumps the event ring into the read model, and answers each request once the
// batch that holds it is committed (never before: an answer promises durability).
// One class in two files: MatcherLinkEvents (matcher_link_events.ts) is the event side (the read
// model, the pending answers and the request submitter, the pump and each committed batch's
// dispatch); MatcherLink, here, extends it with the matcher thread: its start and recovery, the
// messages to it (snapshots, journal trim, memory), journal faults and the clean stop. Keep
// MatcherLink the chain's only concrete class (matcher_link_events.ts says why). Its options and
// the cluster's MatcherBackend are in matcher_link_options.ts.
import { Worker } from 'node:worker_threads';
import type { JournalFault } from '../journal/journal.js';
import type { JournalFaultEpisode } from './journal_state.js';
import type { FromMatcher, MatcherWorkerData, SnapshotNews, ToMatcher } from '../matcher/matcher_worker.js';
import type { PinResult } from '../matcher/pin_thread.js';
import { createRecordRing } from '../ring/records.js';
import { RequestWriter } from '../ring/request_records.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import { MatcherLinkEvents } from './matcher_link_events.js';
import type { RecoveryInfo } from './matcher_link_options.js';
import { componentLog, logSettings } from '../util/log.js';

const log = componentLog('matcher_link');

export class MatcherLink extends MatcherLinkEvents {
  private request_ring: SpscRing | null = null;
  private event_ring: SpscRing | null = null;
  private worker: Worker | null = null;
  private pump_done: Promise<void> = Promise.resolve();
  private stopping = false;
  replayed_batches = 0;
  recovery: RecoveryInfo | null = null;
  /**
   * A journal write failing and being retried (disk full, I/O error), else null. While set the
   * gateway refuses new writes with 503; what is in flight is answered once it is durable.
   */
  journal_fault: JournalFault | null = null;
  /**
   * The last stretch of failing writes (while `journal_fault` is set: the current one, its
   * `since_ms` when it began) and how many (GET /health, /admin/state `journal`).
   */
  journal_last_fault: JournalFaultEpisode | null = null;
  journal_faults = 0;
  /**
   * Asks for a batch (requestBatch) handed to the matcher, and those its connection refused (a
   * cluster gateway's closed or draining NATS connection; never in a single process): GET
   * /admin/state `batch_requests`, where a test sees that an ask went out (or did not repeat).
   */
  batch_requests = { sent: 0, failed: 0 };
  /** What pinning the matcher thread did (config matcher.cpu), null when not asked. */
  pin: PinResult | null = null;
  /** Receives each engine snapshot the matcher captured or deferred (src/snapshot/coordinator.ts). */
  onSnapshot: ((m: SnapshotNews) => void) | null = null;

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
      await backend.start(requests, events, (fault) => this.journalFault(fault));
      this.recovery = backend.recovery?.() ?? null;
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
      if ((m.type === 'snapshot' || m.type === 'snapshot_deferred') && this.onSnapshot !== null) this.onSnapshot(m);
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
      this.journal_faults++;
      this.journal_last_fault = { ...fault, since_ms: Date.now(), recovered_ms: null };
      log.error(`ringbook: journal write of batch ${fault.batch_id} failed (${fault.message}): ` +
        'refusing new writes with 503 OVERLOADED and retrying; reads are served; nothing is acknowledged until it is durable');
    } else if (fault === null && this.journal_fault !== null && this.journal_last_fault !== null) {
      const now_ms = Date.now();
      log.warn(`ringbook: journal writes succeed again after ${now_ms - this.journal_last_fault.since_ms} ms: accepting writes`);
      this.journal_last_fault.recovered_ms = now_ms;
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

  /**
   * Asks the matcher for a batch soon: an empty one when nothing else comes (the chain link's
   * refused forced entries need a batch whose roots carry their count). With a cluster backend
   * the backend asks the leader matcher over NATS (src/cluster/batch_request.ts), which may lose
   * it in a failover: the chain link asks again each round while the count waits.
   */
  requestBatch(): void {
    const backend = this.options.backend;
    let sent = true;
    if (backend !== undefined) sent = backend.requestBatch();
    else this.toMatcher({ type: 'batch' });
    if (sent) this.batch_requests.sent++;
    else this.batch_requests.failed++;
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
