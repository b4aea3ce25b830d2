// The DA publisher in its own worker thread (the server's default). The front thread only packs
// each committed event (type and the numeric fields the state root reads; addresses of ACCOUNT
// events aside) into a Float64Array and posts it once per event-loop turn; the worker
// (src/da/da_worker.ts) runs DaPublisherCore over the stream: state roots, fills, journal reads,
// DA store writes. So the hashing does not compete with HTTP on the front thread.
//
// Consequences: publication lags the answers a little. A client that has its answer may have
// to wait for its batch to appear under /da (the worker reports each root back, and
// GET /admin/state shows `state_root` with `state_root_batch_id`). Events are posted in commit
// order, whole batches per message, so the worker sees exactly the stream the front applied.
import { Worker } from 'node:worker_threads';
import { EventType } from '../ring/records.js';
import type { EventFields } from '../gateway/read_model.js';
import { LmdbDaStore } from './da_store.js';
import { FillsTreeCache } from './fills_cache.js';
import type { FillsTree } from './fills_tree.js';
import type { PublishedBatch } from './published.js';
import type { DaPublisher, DaRestore, EventSource, RestoreReport } from './publisher.js';

export interface DaThreadOptions {
  assets: readonly string[];
  /** DA store directory (null: nothing is published). */
  da_dir: string | null;
  journal_dir: string | null;
  /** Resume the state root from this snapshot instead of genesis (checked in the worker). */
  restore: DaRestore | null;
}

/** Doubles per packed event: type, then fields 0..12. */
export const PACKED_STRIDE = 14;

/** Fields the state root reads, per event type (the rest are not copied). */
function fieldCount(type: number): number {
  switch (type) {
    case EventType.BALANCE: return 4;
    case EventType.BATCH_BEGIN:
    case EventType.BATCH_COMMITTED: return 3;
    case EventType.FEES: return 2;
    case EventType.CREDIT: return 3;
    case EventType.ACCOUNT: return 1;
    default: return 13;
  }
}

export interface PackedEvents {
  type: 'events';
  events: Float64Array;
  count: number;
  /** [event index, address hex] of ACCOUNT events. */
  addresses: [number, string][];
}

export type FromWorker =
  | { type: 'root'; batch_id: number; state_root: string | null; failure: string | null; recheck_mismatches: number }
  | { type: 'restored'; report: RestoreReport | null; error: string | null }
  | { type: 'closed' };

const CLOSE_WAIT_MS = 30_000;

export class DaThreadPublisher implements DaPublisher {
  readonly store: LmdbDaStore | null;
  private readonly worker: Worker;
  private buf = new Float64Array(PACKED_STRIDE * 4096);
  private n = 0;
  private addresses: [number, string][] = [];
  private scheduled = false;
  private root: string | null = null;
  private root_batch = -1;
  private failure: string | null = null;
  private readonly trees = new FillsTreeCache();
  private closed_signal: (() => void) | null = null;
  /** Highest batch id posted to the worker (lag = posted - stateRootBatchId()). */
  posted_batch_id = -1;
  /** Published headers that differed from the ones recomputed on start (0 in a healthy server). */
  recheck_mismatches = 0;
  private readonly restored: Promise<RestoreReport | null>;
  private settleRestore: ((m: Extract<FromWorker, { type: 'restored' }>) => void) | null = null;

  constructor(options: DaThreadOptions) {
    this.restored = new Promise<RestoreReport | null>((resolve, reject) => {
      this.settleRestore = (m) => (m.error === null ? resolve(m.report) : reject(new Error(m.error)));
    });
    this.worker = new Worker(new URL('./da_worker.js', import.meta.url), { workerData: options });
    this.worker.on('message', (m: FromWorker) => {
      if (m.type === 'restored') {
        this.settleRestore?.(m);
      } else if (m.type === 'root') {
        this.root = m.state_root;
        this.root_batch = m.batch_id;
        this.recheck_mismatches = m.recheck_mismatches;
        if (m.failure !== null) this.failure = m.failure;
      } else if (m.type === 'closed' && this.closed_signal) {
        this.closed_signal();
      }
    });
    this.worker.on('error', (e) => {
      this.failure = `DA worker failed: ${e instanceof Error ? e.message : String(e)}`;
      this.settleRestore?.({ type: 'restored', report: null, error: this.failure });
      console.error(`ringbook: ${this.failure}`);
    });
    this.worker.on('exit', () => {
      if (this.closed_signal) this.closed_signal();
    });
    this.store = options.da_dir === null ? null : LmdbDaStore.open(options.da_dir, { reader: true });
  }

  attach(link: EventSource): void {
    link.addEventListener((e) => this.pack(e));
    link.addBatchListener(() => this.schedule());
  }

  private pack(e: EventFields): void {
    const type = e.type();
    if (type === EventType.REJECTED) return;
    if ((this.n + 1) * PACKED_STRIDE > this.buf.length) {
      const grown = new Float64Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    const b = this.buf;
    const at = this.n * PACKED_STRIDE;
    b[at] = type;
    const count = fieldCount(type);
    for (let k = 0; k < count; k++) b[at + 1 + k] = e.field(k);
    if (type === EventType.ACCOUNT) this.addresses.push([this.n, e.addressHex()]);
    else if (type === EventType.BATCH_COMMITTED) this.posted_batch_id = b[at + 1];
    this.n++;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Posts what was packed (whole batches: events reach the listeners a batch at a time). */
  private flush(): void {
    this.scheduled = false;
    if (this.n === 0) return;
    const events = this.buf.slice(0, this.n * PACKED_STRIDE);
    const msg: PackedEvents = { type: 'events', events, count: this.n, addresses: this.addresses };
    this.worker.postMessage(msg, [events.buffer]);
    this.n = 0;
    this.addresses = [];
  }

  stateRoot(): string | null {
    return this.failure === null ? this.root : null;
  }

  ready(): Promise<RestoreReport | null> {
    return this.restored;
  }

  stateRootBatchId(): number {
    return this.root_batch;
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
