// The cluster matcher's options and the status it reports (GET /status of `ringbook start --role
// matcher`, the tests' cluster helpers). The matcher itself is matcher_role.ts.
import type { EngineConfig } from '../engine/api.js';
import type { JournalFault } from '../journal/journal.js';
import type { BatchRequestCounts } from './batch_request.js';
import type { NatsCredentials } from './nats_auth.js';
import type { RequestPurgeStatus } from './request_purge.js';

/** The matcher role's local engine snapshots (matcher_snapshots.ts; RINGBOOK_MATCHER_SNAPSHOT_EVERY_BATCHES). */
export interface MatcherSnapshotSettings {
  /** Where the files go (<data_dir>/matcher); null: no snapshots written or read. */
  dir: string | null;
  /** A snapshot at every batch id that is a multiple of this (0: none written; existing ones are still read). */
  every_batches: number;
  /** The newest files kept. */
  keep: number;
}

export interface ClusterMatcherOptions {
  nats_urls: string[];
  nats_credentials: NatsCredentials;
  /** This matcher's name (the lease value; logged). */
  node_id: string;
  engine_config: EngineConfig;
  replicas: number;
  /** The lease's time to live; renewed every quarter of it. A dead leader is replaced after about this. */
  lease_ttl_ms: number;
  /** Most request records in one batch (a batch message holds them and their events). */
  batch_records_max: number;
  /**
   * A batch the event stream has not stored for this long (its publish retried) is a store fault:
   * the leader says so in its status message and every gateway refuses writes with 503 until the
   * batch is stored. Shorter stretches are a NATS node's election, which retries ride out.
   */
  store_fault_after_ms: number;
  /** Test seam, as the single process's journal (src/journal/journal.ts fault_file); null in production. */
  fault_file: string | null;
  /** Local engine snapshots (matcher_snapshots.ts): where, how often, how many kept. */
  snapshots: MatcherSnapshotSettings;
  /** The leader purges the request stream below what it consumed at most this often (request_purge.ts); 0: never. */
  request_purge_every_ms: number;
}

export type MatcherRoleState = 'standby' | 'leader' | 'stopped';

export interface MatcherStatus {
  node_id: string;
  role: MatcherRoleState;
  /** The last batch applied (-1: none yet; 0 is genesis). */
  batch_id: number;
  state_root: string;
  /** Event stream sequence of that batch; request stream sequence it consumed through. */
  events_through: number;
  requests_through: number;
  /** Batches whose re-execution disagreed with the published events or roots (an alarm each). */
  mismatches: number;
  /** When this matcher became leader (epoch ms; 0 never). */
  leader_since_ms: number;
  batches_cut: number;
  /** The leader's batch the event stream has not stored for store_fault_after_ms (retried), and why; else null. */
  store_fault: JournalFault | null;
  /** The gateways' requests for a batch (batch_request.ts) this matcher heard, and what it did. */
  batch_requests: BatchRequestCounts;
  /**
   * The snapshot batch the last (re)start resumed from, after checking it against the event
   * stream (matcher_snapshots.ts); -1: it re-executed the stream from sequence 1.
   */
  resumed_from_batch_id: number;
  /**
   * Snapshots written since start, the last one's batch (-1: none), and the engine's whole pause
   * for the last one taken (ms): the copies of its columns, the zero balance leaves, the post to
   * the writer thread (matcher_snapshots.ts confirmed(); the write runs after, on that thread).
   */
  snapshots_written: number;
  snapshot_batch_id: number;
  snapshot_capture_ms: number;
  /** Snapshots due while the kept copy was still being read: deferred to the first confirmed batch after (h31f). */
  snapshots_deferred: number;
  /** The leader's purge of the request stream below what the matchers consumed (request_purge.ts). */
  requests_purge: RequestPurgeStatus;
}
