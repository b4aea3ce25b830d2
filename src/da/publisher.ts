// The DA publisher: it reads the committed event stream (the matcher link's listeners: off the
// matcher's hot path by construction, the matcher never waits for it), keeps the
// StateRootBuilder current, and at each committed batch >= 1 reads the batch's input records from
// the journal and submits the PublishedBatch to the DA store.
//
// `DaPublisherCore` does that wherever it runs. The server runs it in its own worker thread
// (`src/da/da_thread.ts`): the front thread only packs the committed events and posts them, so the
// hashing (the bulk of the cost) does not compete with HTTP on the front thread.
//
// `DaPublisher` and the types around it are in src/da/da_interfaces.ts; `createDaPublisher` (which
// picks the thread or the core) is in da_thread.ts.
//
// Start and recovery: the link replays genesis and every journaled batch through the event stream
// before it serves; the publisher sees them like live batches. A batch the DA store already holds
// is not submitted again: its recomputed header is compared with the stored one, and a difference
// is reported loudly (the code that computes roots changed, or the store was altered).
import type { DaStore } from './da_store_contract.js';
import type { FillLeaf, FillsTree } from './fills_tree.js';
import { FillsTreeCache } from './fills_cache.js';
import type { EventFields } from '../ring/event_records.js';
import type { BatchInputSource, DaPublisher, DaRestore, EventSource, RestoreReport } from './da_interfaces.js';
import { inputsHex, type BatchHeader, type PublishedBatch } from './published.js';
import { StateRootBuilder, type BatchRoots, type LeafChange } from './state_root.js';
import { leavesFromCanonical } from './canonical_leaves.js';
import { addressesHex, decodeEngine } from '../matcher/engine_snapshot.js';
import { componentLog } from '../util/log.js';

const DA_LOG = componentLog('da');

export interface PublisherOptions {
  /** Asset symbols in index order (config). */
  assets: readonly string[];
  /** Null: roots are computed but nothing is published (no journal to read inputs from). */
  store: DaStore | null;
  /** Each committed batch's inputs: the journal (single process) or the event stream (cluster DA role). */
  journal: BatchInputSource | null;
  log?: (message: string) => void;
}

export class DaPublisherCore implements DaPublisher {
  private readonly builder: StateRootBuilder;
  private readonly options: PublisherOptions;
  private readonly log: (message: string) => void;
  private state_root: string | null = null;
  private batch_id = -1;
  /** Set when the builder failed: roots are no longer trustworthy, nothing more is published. */
  failure: string | null = null;
  published = 0;
  /**
   * Batches the store already held when they were replayed on start (their roots are taken from
   * the store, and only the last one is recomputed and compared), and how many comparisons failed.
   */
  rechecked = 0;
  recheck_mismatches = 0;
  /** Time spent computing roots on the front thread (ms), for admin state and benches. */
  root_ms = 0;
  private readonly trees = new FillsTreeCache();
  /**
   * Batches below this id are already published and will be replayed on start: their roots are
   * not recomputed one by one (skipBatch), only once at this batch, which is compared with its
   * published header. 0: nothing to skip.
   */
  private readonly skip_below: number;

  constructor(options: PublisherOptions) {
    this.options = options;
    // No revert copies: fraud proofs are the verifier's, which keeps its own builder.
    this.builder = new StateRootBuilder(options.assets, { keep_revert: false });
    this.log = options.log ?? ((m) => DA_LOG.error(m));
    const published = options.store?.latest() ?? 0;
    const journaled = options.journal?.lastBatchId() ?? 0;
    this.skip_below = Math.min(published, journaled);
  }

  /**
   * The last batch whose state root is known before any event arrives: the batch of the snapshot
   * it resumed from, or the last batch whose root the replay takes from the DA store without
   * computing it (skip_below - 1: batch skip_below itself is stored too, but its root is
   * recomputed, once for every skipped batch, and compared with its published header, so it
   * still awaits its root); -1 when neither (a fresh start). The batches after it are the ones
   * the replay must compute: the DA thread's backlog right after a restart is counted from here,
   * not from -1 (da_thread.ts backlogBatches; test/da/publisher_restart.test.ts).
   */
  rootKnownBatchId(): number {
    return Math.max(this.batch_id, this.skip_below >= 2 ? this.skip_below - 1 : -1);
  }

  get store(): DaStore | null {
    return this.options.store;
  }

  /**
   * Starts the builder from a snapshot instead of genesis (before any event): its leaves from the
   * canonical state, their root compared with the published root of the snapshot's batch.
   * Throws on a difference.
   */
  restore(r: DaRestore): RestoreReport {
    try {
      return this.restoreChecked(r);
    } catch (e) {
      // Never publish roots over a builder that did not start where the store says it should.
      this.fail(e);
      throw e;
    }
  }

  private restoreChecked(r: DaRestore): RestoreReport {
    const t0 = performance.now();
    const engine = decodeEngine(r.engine);
    const leaves = leavesFromCanonical({
      canonical: engine.canonical, addresses: addressesHex(engine.addresses), zero_balance_leaves: r.zero_balance_leaves,
      assets: this.options.assets,
    });
    const root = this.builder.restore(leaves, r.batch_id);
    if (r.expected_root !== null && root !== r.expected_root) {
      throw new Error(`snapshot at batch ${r.batch_id}: its state gives root ${root}, the published root is ${r.expected_root}`);
    }
    this.state_root = root;
    this.batch_id = r.batch_id;
    return { batch_id: r.batch_id, state_root: root, expected_root: r.expected_root, leaves: leaves.entries.length, ms: performance.now() - t0 };
  }

  restore_report: RestoreReport | null = null;

  ready(): Promise<RestoreReport | null> {
    return Promise.resolve(this.restore_report);
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

  stateRootBatchId(): number {
    return this.batch_id;
  }

  /** Publishes in the caller's thread: a batch has its root before the caller moves on. */
  backlogBatches(): number {
    return 0;
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
    if (batch_id >= 1 && batch_id < this.skip_below) {
      const h = this.options.store?.get(batch_id)?.header;
      if (h === undefined) {
        this.fail(new Error(`published batch ${batch_id} missing from the DA store`));
        return;
      }
      this.builder.skipBatch();
      this.state_root = h.state_root;
      this.batch_id = batch_id;
      this.rechecked++;
      return;
    }
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

  private publish(store: DaStore, journal: BatchInputSource, batch_id: number, time_ms: number, prev: string, roots: BatchRoots): void {
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
    // The inputs go to the store as bytes (it copies what it keeps): no hex unless someone reads
    // it. The bytes are the journal reader's reused buffer: this hex is right only during submit
    // (the stores serve their own copies afterwards).
    const batch = new SubmittedBatch(header, roots, raw.inputs);
    this.published++;
    const submitted = store.submit(batch, raw.inputs);
    // The LMDB store answers every batch of a commit group with the group's one promise: one
    // handler per group, not a promise and a reaction per batch.
    if (submitted === this.last_submitted) return;
    this.last_submitted = submitted;
    this.last_submit = submitted.catch((err: unknown) => {
      this.fail(err);
      // The store's commit failed: this batch (and any after it) is not published; the root
      // belongs to the last batch the store holds (and stateRoot() is null from now on).
      this.batch_id = Math.min(this.batch_id, store.latest());
    });
  }

  private last_submit: Promise<void> = Promise.resolve();
  /** The store's promise behind last_submit. */
  private last_submitted: Promise<void> | null = null;

  /**
   * Resolves once every batch published so far is in the store: a root is reported only then,
   * so whoever sees it can also read its batch (GET /da/batches).
   */
  settled(): Promise<void> {
    return this.last_submit;
  }

  /**
   * What the DA thread reports after a message: the root and the batch reached now, once every
   * batch so far is in the store (settled). If a store commit (or anything else) failed by then:
   * no root, the failure, and the last batch the store holds: a batch whose commit failed is
   * never reported published.
   */
  async rootReport(): Promise<{ batch_id: number; state_root: string | null; failure: string | null }> {
    const batch_id = this.batch_id;
    const state_root = this.stateRoot();
    await this.settled();
    if (this.failure === null) return { batch_id, state_root, failure: null };
    return { batch_id: Math.min(batch_id, this.batch_id), state_root: null, failure: this.failure };
  }

  private fail(err: unknown): void {
    if (this.failure !== null) return;
    this.failure = err instanceof Error ? err.message : String(err);
    this.log(`ringbook: DA publisher stopped (state roots no longer published): ${this.failure}`);
  }

  fillsTree(batch: PublishedBatch): FillsTree {
    return this.trees.get(batch);
  }

  async close(): Promise<void> {
    await this.options.store?.close();
    await this.options.journal?.close();
  }
}

/**
 * A batch as the publisher submits it: the inputs' hex made from `inputs` on its first read only
 * (hex-encoding every batch's inputs was ~4% of the DA worker, and the LMDB store takes the bytes;
 * `inputs` is the journal reader's reused buffer, so the hex is right only during submit), and the
 * diff in both forms on demand (the LMDB store takes the bytes, a reader of this handle the
 * objects). Getters on a class, not accessors defined on each batch object: defining one on an
 * object literal turned every batch into a dictionary-mode object (V8's map migration and
 * normalization per batch, ~1.5% of the DA thread at one request per batch).
 */
class SubmittedBatch implements PublishedBatch {
  private hex: string | null = null;

  constructor(readonly header: BatchHeader, private readonly roots: BatchRoots, private readonly inputs: Uint8Array) {}

  get fills(): FillLeaf[] {
    return this.roots.fills;
  }

  get inputs_hex(): string {
    return (this.hex ??= inputsHex(this.inputs));
  }

  get state_diff(): LeafChange[] {
    return this.roots.state_diff;
  }

  get state_diff_bytes(): Uint8Array {
    return this.roots.state_diff_bytes;
  }
}
