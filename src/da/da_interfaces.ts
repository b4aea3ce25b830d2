// The DA publisher's interfaces, apart from both implementations (DaPublisherCore in
// publisher.ts, DaThreadPublisher in da_thread.ts) and the worker thread's messages, so that
// neither implementation imports the other for its types.
import type { EventFields } from '../ring/event_records.js';
import type { DaStore } from './da_store_contract.js';
import type { FillsTree } from './fills_tree.js';
import type { PublishedBatch } from './published.js';
import type { ThreadPriority } from '../util/thread_priority.js';
import type { LogSettings } from '../util/log.js';

export interface RawJournalBatch {
  batch_id: number;
  time_ms: number;
  count: number;
  /** The records' bytes (JournalReader: valid until this thread's next LMDB read of any database, see JournalReader.get). */
  inputs: Buffer;
  /** 0x hex, as stored. */
  input_hash: string;
}

/**
 * Where the publisher reads a committed batch's input records: the journal in the single process
 * (JournalReader), the event stream's batch message in the cluster's DA role (src/cluster/da_role.ts).
 */
export interface BatchInputSource {
  /** The batch's inputs, or undefined when this source does not hold it. */
  get(batch_id: number): RawJournalBatch | undefined;
  /** The last batch the source holds (0: none); with the store's latest, what start may skip. */
  lastBatchId(): number;
  close(): Promise<void>;
}

/** The link's listener API (MatcherLink). */
export interface EventSource {
  addEventListener(fn: (e: EventFields, seq: number) => void): void;
  addBatchListener(fn: (batch_id: number, time_ms: number) => void): void;
}

/** What the server and the routes use (in-thread core or the worker-thread publisher). */
export interface DaPublisher {
  /** The DA store to read published batches from (null: nothing is published). */
  readonly store: DaStore | null;
  /** Hooks the publisher to the link; call before the link starts (genesis and replay count). */
  attach(link: EventSource): void;
  /** State root after the last batch the publisher finished (null before genesis or after a failure). */
  stateRoot(): string | null;
  /**
   * Resolves once the publisher is ready for the event stream: at once, or, resuming from a
   * snapshot, when its leaves are loaded and their root checked against the published one
   * (rejects on a difference: the server must not run on a state whose root it cannot vouch for).
   */
  ready(): Promise<RestoreReport | null>;
  /** Published headers that differed from the ones recomputed on start (0 in a healthy server). */
  readonly recheck_mismatches: number;
  /** The batch `stateRoot()` belongs to (-1 before genesis). */
  stateRootBatchId(): number;
  /**
   * The last batch whose root is known: reported, or, right after a restart and before the first
   * report, published before it (the snapshot's, or the replay's from the DA store); -1 on a fresh
   * start until genesis is rooted. The DA lag (metrics) is counted from it.
   */
  rootKnownBatchId(): number;
  /**
   * Committed batches handed to the publisher whose root it has not reported yet (0 when it
   * publishes in the caller's thread). The gateway refuses new writes while this reaches
   * config `limits.da_backlog_batches_max`: the DA thread runs at a lower priority
   * (`threads.background`), so without a bound a load that never lets up would grow its queue
   * of posted events without end.
   */
  backlogBatches(): number;
  /**
   * The DA thread's hand-overs (null for the in-thread core): messages the front posted (at most
   * one per DA_POST_INTERVAL_MS, each carrying every batch committed meanwhile) and the DA store
   * commits the worker started (at most one per message), as of its last root report.
   */
  threadCounts?(): { messages_posted: number; store_commits: number } | null;
  /** Receives the state-root time of each batch (ms) as the DA thread reports them (metrics); the in-thread core never calls it. */
  onRootTimes?: ((root_ms: readonly number[]) => void) | null;
  /** The fills tree of a published batch (built on demand, a few kept). */
  fillsTree(batch: PublishedBatch): FillsTree;
  close(): Promise<void>;
}

/** What resuming from a snapshot found (src/da/canonical_leaves.ts builds the leaves). */
export interface RestoreReport {
  batch_id: number;
  state_root: string;
  /** The published root of the batch (null when unknown: then nothing was compared). */
  expected_root: string | null;
  leaves: number;
  ms: number;
}

/** The snapshot the DA thread resumes from: the engine part (bytes) and what the front adds. */
export interface DaRestore {
  batch_id: number;
  engine: Uint8Array;
  zero_balance_leaves: [number, number][];
  expected_root: string | null;
}

export interface DaThreadOptions {
  assets: readonly string[];
  /** DA store directory (null: nothing is published). */
  da_dir: string | null;
  journal_dir: string | null;
  /** Resume the state root from this snapshot instead of genesis (checked in the worker). */
  restore: DaRestore | null;
  /** The worker's log settings (the front's: src/util/log.ts). */
  log: LogSettings;
  /** The worker's own scheduling priority (config threads.background; null: left as it is). */
  priority: ThreadPriority | null;
}

/** What the DA worker starts with: its options and the events ring it shares with the front (event_packing.ts). */
export interface DaWorkerData extends DaThreadOptions {
  events_ring: SharedArrayBuffer;
}

/** What the DA worker thread (da_worker.ts) posts back to DaThreadPublisher. */
export type FromWorker =
  | {
    type: 'root'; batch_id: number; state_root: string | null; failure: string | null; recheck_mismatches: number;
    /** DA store commits the worker started so far (LmdbDaStore.commits; 0 without a store). */
    store_commits: number;
    /** Milliseconds each batch of the message took to compute its state root (metrics), in order. */
    root_ms: number[];
  }
  | {
    type: 'restored'; report: RestoreReport | null; error: string | null;
    /** DaPublisherCore.rootKnownBatchId() once restored: the backlog is counted from this batch. */
    root_known_batch_id: number;
  }
  | { type: 'closed' };
