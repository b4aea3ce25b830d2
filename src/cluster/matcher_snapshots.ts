// The cluster matcher's local engine snapshots (docs/scale-out.md, "Disk, restarts and
// trimming"): without them a matcher re-executes the event stream from sequence 1 at every start
// and after every fence (rebuild), so both grow with the exchange's history.
//
// Files: the single process's snapshot format (src/snapshot/snapshot_file.ts), engine part only
// (front = null), in <data_dir>/matcher, with the header's optional `cluster` positions (the
// event stream sequence of the batch, the request stream sequence consumed through).
//
// Written: at a batch the event stream has confirmed (a standby's re-executed batch that agreed
// with the published one; a leader's batch whose publish was acknowledged), every
// `every_batches`: the engine's columns are copied at the batch boundary into buffers kept from
// the last snapshot (src/matcher/engine_staging.ts; the engine moves on right after) with the
// zero balance leaves, and the snapshot writer thread (src/snapshot/writer_worker.ts, the single
// process's) walks and packs the copy and writes the file, one write at a time. The single
// process's rule (EngineStaging.takeDue, h31f): a snapshot due while the kept copy is still being
// read (one set here: no front part is wasted by a deferral) is deferred, counted in /status
// `snapshots_deferred`, and taken at the first confirmed batch after the writer freed the copy
// (before h31f it was passed over, and the next one came `every_batches` later). A copy taken while
// the previous file is still written waits for that write. `snapshot_capture_ms` in /status is
// the engine's whole pause for the last one: the copies, the zero balance leaves, the post to the
// writer thread (the single process's `capture_ms` counts the same: copies through post). The
// `keep` newest are kept; the role's stop ends the writer thread (close()).
//
// Read: at start and after a fence, the newest file whose digest holds, whose batch, time and
// state root are those of the stream's message at its sequence, and whose restored state tree
// has that root; else the next older, else none (the stream from sequence 1). Each file passed
// over is logged with why; a corrupt file is never fatal.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { EngineConfig } from '../engine/api.js';
import { ReplayExecutor, type ReplayOptions } from '../da/replay.js';
import { ADDRESS_BYTES } from '../matcher/registry.js';
import { listedAccount, type EngineColumns } from '../engine/canonical.js';
import { EngineStaging, releaseStaged, type StagedEngine } from '../matcher/engine_staging.js';
import { decodeEngine, type EngineSnapshot, snapshotFileName } from '../snapshot/snapshot_file.js';
import type { WriteJob } from '../snapshot/writer_worker.js';
import { componentLog } from '../util/log.js';
import type { BatchHeader } from './log_format.js';
import type { MatcherSnapshotSettings, MatcherStatus } from './matcher_options.js';
import { newestConfirmed, SnapshotWriterThread, type ReadBatchAt } from './stream_snapshots.js';

export { batchReader, type ReadBatchAt } from './stream_snapshots.js';

const log = componentLog('cluster');

/** Where a matcher resumes: the restored executor at `batch_id` and the stream positions after it. */
export interface ResumePoint {
  executor: ReplayExecutor;
  batch_id: number;
  batch_time_ms: number;
  state_root: string;
  events_through: number;
  requests_through: number;
}

export class MatcherSnapshots {
  private readonly settings: MatcherSnapshotSettings;
  private readonly node_id: string;
  private readonly status: MatcherStatus;
  private writing: Promise<void> | null = null;
  private readonly asset_count: number;
  /** The kept copies of the engine's columns: one set (a snapshot due while it is read is deferred). */
  private readonly staging = new EngineStaging(1);
  /** The snapshot writer thread, started at the first snapshot. */
  private readonly writer = new SnapshotWriterThread();
  /** After close(): no snapshot is taken (it would start a writer thread again). */
  private closed = false;

  constructor(settings: MatcherSnapshotSettings, node_id: string, status: MatcherStatus, asset_count: number) {
    this.settings = settings;
    this.asset_count = asset_count;
    this.node_id = node_id;
    this.status = status;
    if (settings.dir !== null) mkdirSync(settings.dir, { recursive: true });
  }

  /**
   * Batch `h` is confirmed in the event stream at `events_through` and `executor` has applied it
   * (nothing more): takes a snapshot if one is due, or was deferred, and the kept copy is free.
   */
  confirmed(h: BatchHeader, events_through: number, requests_through: number, state_root: string, executor: ReplayExecutor): void {
    const { dir, every_batches } = this.settings;
    if (dir === null || every_batches === 0 || h.batch_id === 0 || this.closed) return;
    const due = h.batch_id % every_batches === 0;
    // Nothing due and nothing deferred (nearly every batch): no clock read, no copy attempt.
    if (!due && this.staging.waiting_since === null) return;
    const t0 = performance.now();
    let job: WriteJob;
    try {
      // Copied now, at the batch boundary: the engine and the tree move on with the next batch.
      const staged = this.staging.takeDue(executor.matcher, due);
      if (staged === null) {
        if (due) this.deferred(h.batch_id);
        return;
      }
      try {
        const accounts = staged.addresses.length / ADDRESS_BYTES;
        const zero_balance_leaves = executor.builder.zeroBalanceLeaves(zeroBalancesOfColumns(staged.columns, accounts, this.asset_count));
        job = {
          header: {
            batch_id: h.batch_id, batch_time_ms: h.time_ms, state_root, zero_balance_leaves, created_ms: Date.now(), cluster: { events_through, requests_through },
          },
          engine: staged, front: null, file: path.join(dir, snapshotFileName(h.batch_id)), dir, keep: this.settings.keep,
        };
      } catch (e) {
        releaseStaged(staged);
        throw e;
      }
    } catch (e) {
      // A snapshot is an optimisation: its failure must not stop the batch that called it.
      log.error(`ringbook matcher ${this.node_id}: snapshot of batch ${h.batch_id} not taken: ${String(e)}`, undefined, { batch_id: h.batch_id });
      return;
    }
    const staged = job.engine as StagedEngine;
    // One write at a time: a copy taken while the last file is still written (its copy freed after
    // the walk) waits for it.
    const before = this.writing;
    const writing: Promise<void> = (before === null ? this.write(job) : before.then(() => this.write(job))).finally(() => {
      releaseStaged(staged);
      if (this.writing === writing) this.writing = null;
    });
    this.writing = writing;
    // After the post (write() posts before its first await; the writer thread's start too, at the
    // first snapshot), when no write is in flight: the engine's whole pause, not the copies alone.
    this.status.snapshot_capture_ms = Math.round(performance.now() - t0);
  }

  private deferred(batch_id: number): void {
    this.status.snapshots_deferred = this.staging.deferred;
    log.warn(`ringbook matcher ${this.node_id}: snapshot of batch ${batch_id} deferred: the previous copy is still being written; ` +
      'it is taken at the first confirmed batch after', { batch_id });
  }

  private async write(job: WriteJob): Promise<void> {
    const batch_id = job.header.batch_id;
    try {
      const done = await this.writer.write(job);
      this.status.snapshots_written++;
      this.status.snapshot_batch_id = batch_id;
      log.info(`ringbook matcher ${this.node_id}: snapshot of batch ${batch_id} written (${done.bytes} bytes; ` +
        `walk and pack ${Math.round(done.engine_ms)} ms on the writer thread)`, { batch_id });
    } catch (e) {
      // The disk's trouble is not the exchange's: the matcher goes on, a restart replays more.
      log.error(`ringbook matcher ${this.node_id}: snapshot of batch ${batch_id} not written: ${String(e)}`, undefined, { batch_id });
    }
  }

  /** Ends the writer thread (after idle(); a write it interrupts leaves only a temporary file). */
  async close(): Promise<void> {
    this.closed = true;
    await this.writer.close();
  }

  /** Waits for the write in flight, if any (a clean stop). */
  async idle(): Promise<void> {
    await this.writing;
  }

  /**
   * The newest local snapshot that the event stream confirms, restored (`onRecord`: the
   * executor's record consumer); null: none (follow the stream from sequence 1).
   */
  async resume(engine_config: EngineConfig, onRecord: ReplayOptions['onRecord'], readBatchAt: ReadBatchAt): Promise<ResumePoint | null> {
    const dir = this.settings.dir;
    if (dir === null) return null;
    const r = await newestConfirmed(dir, `matcher ${this.node_id}`, readBatchAt, async ({ snapshot: f }): Promise<ReplayExecutor | string> => {
      const e = decodeEngine(f.engine);
      const executor = new ReplayExecutor(engine_config, {
        onRecord,
        restore: { batch_id: f.batch_id, canonical: e.canonical, addresses: e.addresses, zero_balance_leaves: f.zero_balance_leaves },
      });
      const root = executor.builder.stateRoot();
      return root === f.state_root ? executor : `its state rebuilds to root ${root}, not the published ${f.state_root}`;
    });
    if (r === null) return null;
    const { snapshot: f, header: h } = r.confirmed;
    log.info(`ringbook matcher ${this.node_id}: resuming from snapshot of batch ${f.batch_id} (event stream sequence ${f.cluster.events_through})`,
      { batch_id: f.batch_id });
    return {
      executor: r.value, batch_id: f.batch_id, batch_time_ms: h.time_ms, state_root: f.state_root, events_through: f.cluster.events_through,
      requests_through: h.requests_through,
    };
  }
}

/**
 * The (account, asset) pairs whose balance is zero in `state`: every asset of an account the
 * canonical state leaves out (it lists only accounts with a balance or a nonce), the zero ones of
 * the others. Only these can be zero balance leaves.
 */
export function zeroBalances(state: EngineSnapshot, asset_count: number): [number, number][] {
  const out: [number, number][] = [];
  const listed = new Set<number>();
  for (const a of state.canonical.accounts) {
    listed.add(a.account);
    a.balances.forEach(([available, locked], asset) => {
      if (available === 0 && locked === 0) out.push([a.account, asset]);
    });
  }
  const accounts = state.addresses.length / ADDRESS_BYTES;
  for (let id = 0; id < accounts; id++) {
    if (listed.has(id)) continue;
    for (let asset = 0; asset < asset_count; asset++) out.push([id, asset]);
  }
  return out;
}

/**
 * zeroBalances from the engine's columns (a staged copy, before the writer thread walks it):
 * the same pairs in the same order, the accounts listed being canonical.ts's (listedAccount).
 */
export function zeroBalancesOfColumns(c: EngineColumns, accounts: number, asset_count: number): [number, number][] {
  const out: [number, number][] = [];
  const a = c.asset_count;
  for (let acct = 0; acct < c.account_high; acct++) {
    if (!listedAccount(c, acct)) continue;
    for (let asset = 0; asset < a; asset++) {
      if (c.available[acct * a + asset] === 0 && c.locked[acct * a + asset] === 0) out.push([acct, asset]);
    }
  }
  for (let id = 0; id < accounts; id++) {
    if (id < c.account_high && listedAccount(c, id)) continue;
    for (let asset = 0; asset < asset_count; asset++) out.push([id, asset]);
  }
  return out;
}
