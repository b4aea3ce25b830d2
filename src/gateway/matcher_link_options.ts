// What MatcherLink (matcher_link.ts) is told and what it reports: its options, the interface of
// a matcher outside this process (the cluster gateway's backend), and what the matcher reported
// when it was ready.
import type { EngineConfig } from '../engine/api.js';
import type { JournalFault } from '../journal/journal.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import type { ReadModel, ReadModelLimits } from '../read_model/read_model.js';
import type { MarketData } from '../marketdata/market_data.js';
import type { FrontState } from '../snapshot/front_state.js';

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

/**
 * What a matcher outside this process reports of its durable writes (the cluster's leader: the
 * event stream does not store its batch), handled as the matcher thread's journal_fault message.
 */
export type StoreFaultListener = (fault: JournalFault | null) => void;

/** A matcher outside this process, reached through the two rings (the cluster gateway's). */
export interface MatcherBackend {
  /**
   * Takes over the matcher's ends of the rings: drains `requests` when told (requestsPublished)
   * and writes each committed batch's event records, BATCH_BEGIN to BATCH_COMMITTED, into
   * `events`. Resolves once the events committed so far are in the ring.
   */
  start(requests: SpscRing, events: SpscRing, onStoreFault: StoreFaultListener): Promise<void>;
  /** The front published records to the request ring. */
  requestsPublished(): void;
  /**
   * Asks the matcher for a batch soon (MatcherLink.requestBatch): an empty one when nothing else
   * comes. Best effort: a request that reaches no matcher is lost, and the caller asks again.
   * Returns whether it was sent (false: the connection refused it, closed or draining).
   */
  requestBatch(): boolean;
  /**
   * Tells the cluster's settlement root poster that forced-inclusion queue entries `from`,
   * `from + 1`, ... were taken in by `batches[0]`, `batches[1]`, ... (the chain link's shares,
   * src/cluster/settlement_poster.ts). Best effort: repeated each round until counted on chain.
   */
  shareForced(from: number, batches: readonly number[]): void;
  /** Clean stop: the request ring is closed; send what it holds, then stop writing events. */
  stop(): Promise<void>;
  /** Where it started from and what it read before start() resolved (the link's `recovery`). */
  recovery?(): RecoveryInfo;
}

/**
 * A cluster gateway's snapshots of its read model and market data (src/cluster/gateway_snapshots.ts):
 * the state it resumes from, imported before the first event, and the batches committed after.
 */
export interface FrontSnapshots {
  /** What to import (null: the event stream from sequence 1). */
  readonly resume_front: FrontState | null;
  /** Before the first event, after the import: what the snapshots are taken of and when. */
  attach(rm: ReadModel, md: MarketData, onBatchCommitted: (fn: (batch_id: number) => void) => void): void;
}

/** What the matcher reported when it was ready. */
export interface RecoveryInfo {
  /** The snapshot the matcher resumed from (null: genesis; a cluster gateway: the event stream from sequence 1). */
  snapshot_batch_id: number | null;
  /** Journal batches replayed after it (a cluster gateway: event stream batches read before it served). */
  replayed_batches: number;
  /** Last batch applied at start: batches after it are live. */
  batch_id: number;
  replay_ms: number;
  /** A cluster gateway only: the event stream sequence of the snapshot's batch (0: none), read from the next. */
  events_through?: number;
}
