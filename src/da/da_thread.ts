// The DA publisher in its own worker thread (the server's default). The front thread only packs
// each committed event (type and the numeric fields the state root reads; addresses of ACCOUNT
// events and FORCE_INCLUDE client order ids aside: src/da/event_packing.ts) into a Float64Array
// and posts it once per event-loop turn; the worker (src/da/da_worker.ts) runs DaPublisherCore
// over the stream: state roots, fills, journal reads, DA store writes. So the hashing does not compete with HTTP on the front thread.
//
// Consequences: publication lags the answers a little. A client that has its answer may have
// to wait for its batch to appear under /da (the worker reports each root back, and
// GET /admin/state shows `state_root` with `state_root_batch_id`). Events are posted in commit
// order, whole batches per message, so the worker sees exactly the stream the front applied.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { RingbookConfig } from '../config/types.js';
import { EventPacker, PackedRing } from './event_packing.js';
import { LmdbDaStore } from './da_store.js';
import { FillsTreeCache } from './fills_cache.js';
import type { FillsTree } from './fills_tree.js';
import type { PublishedBatch } from './published.js';
import type {
  DaPublisher, DaRestore, DaThreadOptions, DaWorkerData, EventSource, FromWorker, RestoreReport,
} from './da_interfaces.js';
import { JournalReader } from './journal_reader.js';
import { DaPublisherCore } from './publisher.js';
import { componentLog, logSettings } from '../util/log.js';

const log = componentLog('da');

export { PACKED_STRIDE, type PackedEvents } from './event_packing.js';

const CLOSE_WAIT_MS = 30_000;
/**
 * The front posts the packed events to the DA worker at most this often (ms), not once per
 * event-loop turn: each message costs the DA worker a wake-up, a journal read snapshot, a DA store
 * commit (the worker commits once per message: da_worker.ts) and a root message back to the
 * front, and the front a timer, whatever the number of batches in it. At 1,000 requests/s the
 * matcher cuts one batch per request; 5 ms (until 2026-11-27) bundled ~5 batches per message, 50
 * ~50 (issue 11, branch h11l: docs/benchmarks.md). The lag before a batch shows under /da stays
 * what it was (<= ~50 ms): the store committed every DA_STORE_COMMIT_INTERVAL_MS (50) before, and
 * a root is reported only once its batch is committed. Roots are still one per journal batch.
 */
export const DA_POST_INTERVAL_MS = 50;

export class DaThreadPublisher implements DaPublisher {
  readonly store: LmdbDaStore | null;
  private readonly worker: Worker;
  private readonly packer: EventPacker;
  private scheduled = false;
  /** Messages posted to the worker, and the worker's DA store commits at its last report (threadCounts). */
  private messages_posted = 0;
  private store_commits = 0;
  private root: string | null = null;
  private root_batch = -1;
  /** The worker's rootKnownBatchId() at start: the backlog counts the batches posted after it. */
  private root_known_batch = -1;
  private failure: string | null = null;
  private readonly trees = new FillsTreeCache();
  private closed_signal: (() => void) | null = null;
  /** Highest batch id posted to the worker (lag = posted - stateRootBatchId()). */
  get posted_batch_id(): number {
    return this.packer.packed_batch_id;
  }
  /** Published headers that differed from the ones recomputed on start (0 in a healthy server). */
  recheck_mismatches = 0;
  onRootTimes: ((root_ms: readonly number[]) => void) | null = null;
  private readonly restored: Promise<RestoreReport | null>;
  private settleRestore: ((m: Extract<FromWorker, { type: 'restored' }>) => void) | null = null;

  constructor(options: DaThreadOptions) {
    this.restored = new Promise<RestoreReport | null>((resolve, reject) => {
      this.settleRestore = (m) => (m.error === null ? resolve(m.report) : reject(new Error(m.error)));
    });
    const ring = new PackedRing();
    this.packer = new EventPacker(ring);
    this.worker = new Worker(new URL('./da_worker.js', import.meta.url), { workerData: { ...options, events_ring: ring.buffer } satisfies DaWorkerData });
    this.worker.on('message', (m: FromWorker) => {
      if (m.type === 'restored') {
        // Resumed from a snapshot: its root (checked against the published one) is the current
        // root until the worker reports a newer one, as in the in-thread core.
        if (m.report !== null && this.root_batch < m.report.batch_id) {
          this.root = m.report.state_root;
          this.root_batch = m.report.batch_id;
        }
        this.root_known_batch = m.root_known_batch_id;
        this.settleRestore?.(m);
      } else if (m.type === 'root') {
        this.root = m.state_root;
        this.root_batch = m.batch_id;
        this.recheck_mismatches = m.recheck_mismatches;
        this.store_commits = m.store_commits;
        if (m.failure !== null) this.failure = m.failure;
        if (this.onRootTimes) this.onRootTimes(m.root_ms);
      } else if (m.type === 'closed' && this.closed_signal) {
        this.closed_signal();
      }
    });
    this.worker.on('error', (e) => {
      this.failure = `DA worker failed: ${e instanceof Error ? e.message : String(e)}`;
      this.settleRestore?.({ type: 'restored', report: null, error: this.failure, root_known_batch_id: -1 });
      log.error(`ringbook: ${this.failure}`, e);
    });
    this.worker.on('exit', () => {
      if (this.closed_signal) this.closed_signal();
    });
    this.store = options.da_dir === null ? null : LmdbDaStore.open(options.da_dir, { reader: true });
  }

  attach(link: EventSource): void {
    link.addEventListener((e) => this.packer.pack(e));
    link.addBatchListener(() => this.schedule());
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setTimeout(() => this.flush(), DA_POST_INTERVAL_MS);
  }

  /** Posts what was packed (whole batches: events reach the listeners a batch at a time). */
  private flush(): void {
    this.scheduled = false;
    const msg = this.packer.take();
    if (msg === null) return;
    this.messages_posted++;
    this.worker.postMessage(msg, msg.events === null ? [] : [msg.events.buffer]);
  }

  stateRoot(): string | null {
    return this.failure === null ? this.root : null;
  }

  threadCounts(): { messages_posted: number; store_commits: number } {
    return { messages_posted: this.messages_posted, store_commits: this.store_commits };
  }

  ready(): Promise<RestoreReport | null> {
    return this.restored;
  }

  stateRootBatchId(): number {
    return this.root_batch;
  }

  rootKnownBatchId(): number {
    return Math.max(this.root_batch, this.root_known_batch);
  }

  backlogBatches(): number {
    // Before genesis all are -1; the packer counts batches as the link delivers them. After a
    // restart the replayed batches up to root_known_batch already have their roots (published, or
    // the snapshot's): counting them from -1 until the worker's first report made a journal of
    // >= limits.da_backlog_batches_max batches refuse writes right after start.
    return Math.max(0, this.posted_batch_id - this.rootKnownBatchId());
  }

  fillsTree(batch: PublishedBatch): FillsTree {
    return this.trees.get(batch);
  }

  /** Posts the rest, lets the worker finish (every posted batch published), then closes. */
  async close(): Promise<void> {
    this.flush();
    const closed = new Promise<void>((resolve) => {
      this.closed_signal = resolve;
    });
    this.worker.postMessage({ type: 'close' });
    const timer = setTimeout(() => this.closed_signal?.(), CLOSE_WAIT_MS);
    await closed;
    clearTimeout(timer);
    await this.worker.terminate();
    await this.store?.close();
  }
}

/**
 * The server's publisher: a worker thread (src/da/da_thread.ts) with the DA store at
 * `<data_dir>/da` and the journal at `journal_dir` (null: journal off, roots computed but
 * nothing published). `in_thread: true` runs the core on the calling thread instead.
 */
export function createDaPublisher(cfg: RingbookConfig, journal_dir: string | null, opts: { in_thread?: boolean; restore?: DaRestore | null } = {}): DaPublisher {
  const assets = cfg.assets.map((a) => a.symbol);
  const da_dir = journal_dir === null ? null : path.resolve(cfg.server.data_dir, 'da');
  if (da_dir !== null) mkdirSync(da_dir, { recursive: true });
  if (opts.in_thread === true) {
    const core = new DaPublisherCore({
      assets,
      store: da_dir === null ? null : LmdbDaStore.open(da_dir),
      journal: journal_dir === null ? null : JournalReader.open(journal_dir),
    });
    if (opts.restore) core.restore_report = core.restore(opts.restore);
    return core;
  }
  return new DaThreadPublisher({ assets, da_dir, journal_dir, restore: opts.restore ?? null, log: logSettings(), priority: cfg.threads.background });
}
