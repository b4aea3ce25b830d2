// The DA publisher, on the front thread: it reads the committed event stream through the matcher
// link's listeners (so it is off the matcher's hot path by construction: the matcher never waits
// for it), keeps the StateRootBuilder current, and at each committed batch >= 1 reads the batch's
// input records from the journal and submits the PublishedBatch to the DA store.
//
// Start and recovery: the link replays genesis and every journaled batch through the event stream
// before it serves; the publisher sees them like live batches. A batch the DA store already holds
// is not submitted again: its recomputed header is compared with the stored one, and a difference
// is reported loudly (the code that computes roots changed, or the store was altered).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { RingbookConfig } from '../config.js';
import type { EventFields } from '../gateway/read_model.js';
import { LmdbDaStore, type DaStore } from './da_store.js';
import { FillsTree } from './fills_tree.js';
import { JournalReader } from './journal_reader.js';
import type { BatchHeader, PublishedBatch } from './published.js';
import { StateRootBuilder, type BatchRoots } from './state_root.js';

export interface PublisherOptions {
  /** Asset symbols in index order (config). */
  assets: readonly string[];
  /** Null: roots are computed but nothing is published (no journal to read inputs from). */
  store: DaStore | null;
  journal: JournalReader | null;
  log?: (message: string) => void;
}

/** The link's listener API (MatcherLink). */
export interface EventSource {
  addEventListener(fn: (e: EventFields, seq: number) => void): void;
  addBatchListener(fn: (batch_id: number, time_ms: number) => void): void;
}

/** How many recent fills trees to keep built (proof requests cluster on recent batches). */
const TREES_CACHED = 16;

export class DaPublisher {
  private readonly builder: StateRootBuilder;
  private readonly options: PublisherOptions;
  private readonly log: (message: string) => void;
  private state_root: string | null = null;
  private batch_id = -1;
  /** Set when the builder failed: roots are no longer trustworthy, nothing more is published. */
  failure: string | null = null;
  published = 0;
  /** Recomputed batches the store already held (restart), and how many of them differed. */
  rechecked = 0;
  recheck_mismatches = 0;
  /** Time spent computing roots on the front thread (ms), for admin state and benches. */
  root_ms = 0;
  private readonly trees = new Map<number, FillsTree>();

  constructor(options: PublisherOptions) {
    this.options = options;
    this.builder = new StateRootBuilder(options.assets);
    this.log = options.log ?? ((m) => console.error(m));
  }

  get store(): DaStore | null {
    return this.options.store;
  }

  /** Hooks the publisher to the link; call before the link starts (genesis and replay count). */
  attach(link: EventSource): void {
    link.addEventListener((e) => this.onEvent(e));
    link.addBatchListener((id, time) => this.onBatch(id, time));
  }

  /** The state root after the last committed batch (null before genesis or after a failure). */
  stateRoot(): string | null {
    return this.failure === null ? this.state_root : null;
  }

  lastBatchId(): number {
    return this.batch_id;
  }

  onEvent(e: EventFields): void {
    if (this.failure !== null) return;
    try {
      this.builder.apply(e);
    } catch (err) {
      this.fail(err);
    }
  }

  onBatch(batch_id: number, time_ms: number): void {
    if (this.failure !== null) return;
    let roots: BatchRoots;
    const t0 = performance.now();
    try {
      roots = this.builder.endBatch();
    } catch (err) {
      this.fail(err);
      return;
    } finally {
      this.root_ms += performance.now() - t0;
    }
    const prev = this.state_root;
    this.state_root = roots.state_root;
    this.batch_id = batch_id;
    if (batch_id === 0 || prev === null) return;
    const { store, journal } = this.options;
    if (store === null || journal === null) return;
    try {
      this.publish(store, journal, batch_id, time_ms, prev, roots);
    } catch (err) {
      this.fail(err);
    }
  }

  private publish(store: DaStore, journal: JournalReader, batch_id: number, time_ms: number, prev: string, roots: BatchRoots): void {
    const existing = batch_id <= store.latest() ? store.get(batch_id) : undefined;
    if (existing === undefined && batch_id !== store.latest() + 1) {
      throw new Error(`DA store holds batches up to ${store.latest()}, cannot publish batch ${batch_id}`);
    }
    const raw = journal.get(batch_id);
    if (raw === undefined) throw new Error(`batch ${batch_id} committed but not in the journal`);
    const header: BatchHeader = {
      batch_id, prev_state_root: prev, state_root: roots.state_root, fills_root: roots.fills_root,
      input_hash: raw.input_hash, timestamp: time_ms,
    };
    if (existing !== undefined) {
      this.rechecked++;
      const h = existing.header;
      if (h.prev_state_root !== header.prev_state_root || h.state_root !== header.state_root ||
        h.fills_root !== header.fills_root || h.input_hash !== header.input_hash || h.timestamp !== header.timestamp) {
        this.recheck_mismatches++;
        this.log(`ringbook: DA: batch ${batch_id} recomputed on start differs from the published header: ` +
          `published ${JSON.stringify(h)}, recomputed ${JSON.stringify(header)}`);
      }
      return;
    }
    const batch: PublishedBatch = {
      header, inputs_hex: raw.inputs.toString('hex'), fills: roots.fills, state_diff: roots.state_diff,
    };
    this.published++;
    store.submit(batch).catch((err: unknown) => this.fail(err));
  }

  private fail(err: unknown): void {
    if (this.failure !== null) return;
    this.failure = err instanceof Error ? err.message : String(err);
    this.log(`ringbook: DA publisher stopped (state roots no longer published): ${this.failure}`);
  }

  /** The fills tree of a published batch (built on demand, a few kept). */
  fillsTree(batch: PublishedBatch): FillsTree {
    const id = batch.header.batch_id;
    let t = this.trees.get(id);
    if (t === undefined) {
      t = FillsTree.build(batch.fills);
      if (this.trees.size >= TREES_CACHED) this.trees.delete(this.trees.keys().next().value as number);
      this.trees.set(id, t);
    }
    return t;
  }

  async close(): Promise<void> {
    await this.options.store?.close();
    await this.options.journal?.close();
  }
}

/**
 * The server's publisher: DA store at `<data_dir>/da`, inputs read from the journal at
 * `journal_dir` (null: journal off, roots computed but nothing published).
 */
export function createDaPublisher(cfg: RingbookConfig, journal_dir: string | null): DaPublisher {
  let store: DaStore | null = null;
  let journal: JournalReader | null = null;
  if (journal_dir !== null) {
    const da_dir = path.resolve(cfg.server.data_dir, 'da');
    mkdirSync(da_dir, { recursive: true });
    store = LmdbDaStore.open(da_dir);
    journal = JournalReader.open(journal_dir);
  }
  return new DaPublisher({ assets: cfg.assets.map((a) => a.symbol), store, journal });
}
