// Writes snapshots on the front thread (docs/operations.md, "Snapshots"). A snapshot at batch N
// joins three things taken at the same batch boundary:
// - the engine part, copied by the matcher between batches N and N+1 into buffers it keeps
//   (src/matcher/engine_staging.ts, two sets) and posted (MatcherLink.onSnapshot). A periodic one
//   due while both sets are still being read is deferred: the matcher says so (the front drops or
//   skips its part for N, counted in `deferred`) and takes it at the first batch after a set is
//   free, as an on-demand one (h31f);
// - the front part: the read model and market data right after batch N's commit marker was
//   applied (every N that is a multiple of `every_batches` is captured when it commits; for an
//   on-demand snapshot the front learns N from the engine part and captures when its read model
//   reaches N, or at once if it is there; a read model already past N cannot be used and the
//   snapshot is dropped, which the caller sees);
// - the published state root of batch N (read from the DA store once the DA thread reached N).
// Then the writer thread (src/snapshot/writer_worker.ts) walks and packs the engine's copy, packs
// the front's columns, writes the file atomically and keeps the `keep` newest; with
// `journal.trim` the matcher is then asked to delete journal batches through the oldest kept
// snapshot that the DA store holds. The matcher only copies its columns; the front only exports
// its read model into columns. A staged copy dropped here (its snapshot missed) is released, so
// the matcher's next snapshot can use the buffers again.
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { durableThrough, type DaStore } from '../da/da_store_contract.js';
import type { SnapshotMessage, SnapshotNews } from '../matcher/matcher_worker.js';

/** What the coordinator needs of the matcher link (gateway/matcher_link.ts). */
export interface SnapshotSource {
  /** Receives each engine snapshot the matcher captured, and each it deferred. */
  onSnapshot: ((m: SnapshotNews) => void) | null;
  requestSnapshot(): void;
  /** The front has (or will have, at the batch's commit) its part of an on-demand snapshot. */
  snapshotCaptured(): void;
  trimJournal(through_batch_id: number): void;
}
import type { ReadModel } from '../read_model/read_model.js';
import type { MarketData } from '../marketdata/market_data.js';
import { exportFront, frontBuffers, type FrontState } from './front_state.js';
import { releaseStaged } from '../matcher/engine_staging.js';
import { snapshotFileName } from './snapshot_file.js';
import type { WriteDone, WriteJob, WriterData } from './writer_worker.js';
import { componentLog, logSettings } from '../util/log.js';
import type { ThreadPriority } from '../util/thread_priority.js';

const log = componentLog('snapshot');

export interface SnapshotResult {
  batch_id: number;
  file: string;
  bytes: number;
  state_root: string | null;
  /**
   * Matcher: its whole pause, the copies of its columns through the post of them to the front (a
   * cluster matcher's snapshot_capture_ms counts the same). pack_ms: 0 since h31f (the matcher
   * packed a snapshot due while both kept sets were read; it now defers it).
   */
  capture_ms: number;
  pack_ms: number;
  /** Front thread: export of the read model into columns (the front's whole pause). */
  front_ms: number;
  /** Writer thread: walking and packing a staged engine copy, packing the front part, encoding the file with its digest. */
  encode_ms: number;
  /** From both parts present to the file written: the DA root, the writer thread, the disk. */
  write_ms: number;
}

export interface CoordinatorOptions {
  dir: string;
  every_batches: number;
  keep: number;
  trim_journal: boolean;
  link: SnapshotSource;
  rm: ReadModel;
  md: MarketData;
  da: { store: DaStore | null; stateRootBatchId(): number; stateRoot(): string | null };
  log?: (m: string) => void;
  /** The writer thread's scheduling priority (config threads.background; absent: left as it is). */
  priority?: ThreadPriority | null;
  /** Test seam (RINGBOOK_TEST_SNAPSHOT_HOLD_FILE), null in production: writer_worker.ts WriterData.hold_file. */
  hold_file?: string | null;
}

/**
 * A snapshot that could not be made consistent because the flow moved on (the read model passed
 * the captured batch, or a part never came): nothing is wrong, a retry takes a later batch.
 */
export class SnapshotMissedError extends Error {}

interface Pending {
  engine: SnapshotMessage | null;
  front: { state: FrontState; zero_balance_leaves: [number, number][]; ms: number } | null;
}

/** Snapshots waiting for a part; older ones are dropped past this (a part that never came). */
const PENDING_MAX = 4;
/** How long a snapshot waits for the DA thread to publish its batch before it is written without its root. */
const ROOT_WAIT_MS_MAX = 30_000;

export class SnapshotCoordinator {
  private readonly o: CoordinatorOptions;
  private readonly pending = new Map<number, Pending>();
  private waiters: { resolve: (r: SnapshotResult) => void; reject: (e: Error) => void }[] = [];
  /** On-demand requests waiting for the snapshot of a given batch. */
  private readonly batch_waiters = new Map<number, { resolve: (r: SnapshotResult) => void; reject: (e: Error) => void }[]>();
  private writing: Promise<void> = Promise.resolve();
  private readonly log: (m: string) => void;
  private readonly writer: Worker;
  private writer_done: ((d: WriteDone) => void) | null = null;
  /** Commits up to this batch were replayed at start (no snapshot is taken of them). */
  private readonly live_after: number;
  last: SnapshotResult | null = null;
  written = 0;
  dropped = 0;
  /** Snapshots due that the matcher deferred (both its kept sets still being read): taken later. */
  deferred = 0;
  /** Periodic batches whose snapshot the matcher deferred before their commit reached the read model: not captured. */
  private readonly skipped = new Set<number>();

  constructor(o: CoordinatorOptions, live_after: number) {
    this.o = o;
    this.live_after = live_after;
    this.log = o.log ?? ((m) => log.error(m));
    mkdirSync(o.dir, { recursive: true });
    o.link.onSnapshot = (m) => this.onEngine(m);
    this.writer = new Worker(new URL('./writer_worker.js', import.meta.url), { workerData: { priority: o.priority ?? null, log: logSettings(), hold_file: o.hold_file ?? null } satisfies WriterData });
    this.writer.on('message', (d: WriteDone) => this.writer_done?.(d));
    this.writer.on('error', (e) => this.writer_done?.({ ok: false, error: `snapshot writer failed: ${e.message}` }));
    // It must not keep the process alive on its own (a clean stop ends the other threads).
    this.writer.unref();
  }

  /**
   * Ends the writer thread at once: a write it interrupts leaves only a temporary file (deleted
   * at the next start), never a partial snapshot.
   */
  async close(): Promise<void> {
    await this.writer.terminate();
  }

  /** Batch listener: after batch `batch_id`'s commit was applied to the read model. */
  onBatchCommitted(batch_id: number): void {
    const p = this.pending.get(batch_id);
    // Replayed batches are not snapshotted periodically (the matcher does not capture them).
    const periodic = batch_id > this.live_after && this.o.every_batches > 0 && batch_id % this.o.every_batches === 0 &&
      !this.skipped.delete(batch_id);
    if ((periodic || p !== undefined) && (p === undefined || p.front === null)) this.captureFront(batch_id);
    if (this.pending.has(batch_id)) this.maybeWrite(batch_id);
  }

  /** On demand: asks the matcher for its state now; resolves when that snapshot is written. */
  take(): Promise<SnapshotResult> {
    return new Promise<SnapshotResult>((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.o.link.requestSnapshot();
    });
  }

  private entry(batch_id: number): Pending {
    let p = this.pending.get(batch_id);
    if (p === undefined) {
      p = { engine: null, front: null };
      this.pending.set(batch_id, p);
      while (this.pending.size > PENDING_MAX) {
        const oldest = Math.min(...this.pending.keys());
        releaseEngine(this.pending.get(oldest)?.engine ?? null);
        this.pending.delete(oldest);
        this.dropped++;
        this.log(`ringbook: snapshot at batch ${oldest} dropped (a part never arrived)`);
        for (const w of this.batch_waiters.get(oldest) ?? []) w.reject(new SnapshotMissedError(`snapshot at batch ${oldest} dropped; retry`));
        this.batch_waiters.delete(oldest);
      }
    }
    return p;
  }

  private captureFront(batch_id: number): void {
    const t0 = performance.now();
    const rm = this.o.rm;
    if (rm.batch_id !== batch_id) throw new Error(`snapshot: read model at batch ${rm.batch_id}, not ${batch_id}`);
    const state = exportFront(rm, this.o.md);
    this.entry(batch_id).front = { state, zero_balance_leaves: rm.zeroBalanceLeaves(), ms: performance.now() - t0 };
  }

  private onEngine(m: SnapshotNews): void {
    if (m.type === 'snapshot_deferred') {
      this.onDeferred(m.batch_id, m.on_demand);
      return;
    }
    this.onEngineMessage(m);
    // The matcher holds its next batch after an on-demand capture until the front has its part.
    if (m.on_demand) this.o.link.snapshotCaptured();
  }

  /**
   * The matcher deferred the snapshot due at `n` (both kept sets still being read: writes behind a
   * slow disk or DA thread). A periodic one's front part is dropped, or not taken when its commit
   * comes; the matcher's later copy (on demand, at its batch then) gets a front part of its own.
   * On-demand waiters wait for that copy.
   */
  private onDeferred(n: number, on_demand: boolean): void {
    this.deferred++;
    log.warn(`ringbook: snapshot at batch ${n} deferred: the matcher's two kept copies are still being written; ` +
      'it is taken at the first batch after one is free', { batch_id: n });
    if (on_demand) return;
    const p = this.pending.get(n);
    if (p === undefined) {
      if (this.o.rm.batch_id < n) this.skipped.add(n);
    } else if (p.engine === null) {
      this.pending.delete(n);
    }
  }

  private onEngineMessage(m: SnapshotMessage): void {
    const n = m.batch_id;
    const rm = this.o.rm;
    const waiters = this.waiters;
    this.waiters = [];
    const p = this.entry(n);
    p.engine = m;
    if (p.front === null) {
      if (rm.batch_id === n) {
        this.captureFront(n);
      } else if (rm.batch_id > n) {
        // The read model already moved past the batch the matcher captured (rare: a request
        // raced the capture); this snapshot cannot be made consistent.
        this.pending.delete(n);
        this.dropped++;
        releaseEngine(m);
        for (const w of waiters) w.reject(new SnapshotMissedError(`snapshot at batch ${n} missed: the read model is at batch ${rm.batch_id}; retry`));
        return;
      }
    }
    this.maybeWrite(n, waiters);
  }

  private maybeWrite(n: number, waiters: { resolve: (r: SnapshotResult) => void; reject: (e: Error) => void }[] = []): void {
    if (waiters.length > 0) this.batch_waiters.set(n, [...(this.batch_waiters.get(n) ?? []), ...waiters]);
    const p = this.pending.get(n);
    if (p === undefined || p.engine === null || p.front === null) return;
    this.pending.delete(n);
    const engine = p.engine;
    const front = p.front;
    const mine = this.batch_waiters.get(n) ?? [];
    this.batch_waiters.delete(n);
    // One write at a time, in batch order.
    this.writing = this.writing.then(() => this.write(engine, front)).finally(() => releaseEngine(engine)).then(
      (r) => {
        for (const w of mine) w.resolve(r);
      },
      (e: unknown) => {
        this.log(`ringbook: snapshot at batch ${n} not written: ${(e as Error).message}`);
        for (const w of mine) w.reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  }

  private async rootOf(n: number): Promise<string | null> {
    const da = this.o.da;
    const deadline = Date.now() + ROOT_WAIT_MS_MAX;
    while (da.stateRootBatchId() < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const header = n > 0 ? da.store?.get(n)?.header : undefined;
    if (header !== undefined) return header.state_root;
    return da.stateRootBatchId() === n ? da.stateRoot() : null;
  }

  private async write(engine: SnapshotMessage, front: NonNullable<Pending['front']>): Promise<SnapshotResult> {
    const t0 = performance.now();
    const n = engine.batch_id;
    const state_root = await this.rootOf(n);
    // The file only once the DA store holds its batch durably. A snapshot ahead of the store is
    // passed over at start (recovery.ts: the batches up to it could no longer be published), and
    // the writer's prune below keeps only the `keep` newest: with `keep` 1 an ahead snapshot
    // would replace the only usable one while the journal is already trimmed (through the older
    // one), and a crash then (an OS crash or power loss can undo the store's last commit:
    // da_store_sync.ts) left a data dir no start could use. One environment flush per snapshot.
    if (!(await durableThrough(this.o.da.store, n, Date.now() + ROOT_WAIT_MS_MAX))) {
      this.dropped++;
      throw new SnapshotMissedError(`the DA store does not hold batch ${n} durably after ${ROOT_WAIT_MS_MAX} ms ` +
        `(a snapshot ahead of it could not be used at start, and would replace one that can)`);
    }
    const file = path.join(this.o.dir, snapshotFileName(n));
    const job: WriteJob = {
      header: { batch_id: n, batch_time_ms: engine.batch_time_ms, state_root, zero_balance_leaves: front.zero_balance_leaves, created_ms: Date.now() },
      engine: engine.engine, front: front.state, file, dir: this.o.dir, keep: this.o.keep,
    };
    const done = await new Promise<WriteDone>((resolve) => {
      this.writer_done = resolve;
      // A staged copy's arrays are shared (the matcher keeps them): not transferred. The writer
      // frees it after its walk; if it failed before, maybeWrite does.
      this.writer.postMessage(job, frontBuffers(front.state));
    });
    this.writer_done = null;
    if (!done.ok) throw new Error(done.error);
    const kept = done.kept;
    const capture_ms = await matcherPauseMs(engine);
    const r: SnapshotResult = {
      batch_id: n, file, bytes: done.bytes, state_root, capture_ms, pack_ms: 0,
      front_ms: front.ms, encode_ms: done.engine_ms + done.pack_ms, write_ms: performance.now() - t0,
    };
    this.last = r;
    this.written++;
    log.info(`ringbook: snapshot at batch ${n} written (${(r.bytes / 1e6).toFixed(1)} MB; matcher paused ` +
      `${Math.round(r.capture_ms + r.pack_ms)} ms, front ${Math.round(r.front_ms)} ms)`, { batch_id: n, file, bytes: r.bytes });
    if (this.o.trim_journal && kept.length >= this.o.keep) {
      // Through the oldest kept snapshot, and only what the DA store already holds durably (the
      // DA thread reads inputs from the journal to publish them; its newest commit may not have
      // reached the disk yet: src/da/da_store_sync.ts). durableThrough above found batch n
      // durable, so n bounds it without a second flush (no store: nothing is trimmed, as before).
      const through = this.o.da.store === null ? 0 : Math.min(kept[kept.length - 1].batch_id, n);
      if (through > 0) this.o.link.trimJournal(through);
    }
    return r;
  }
}

// lib ES2022 does not declare Atomics.waitAsync; Node >= 16 has it.
type WaitAsyncFn = (array: Int32Array, index: number, value: number, timeout_ms?: number) =>
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsyncFn }).waitAsync;
/** Longest wait for the matcher's pause word (it is stored right after the post: only a preempted thread is late). */
const PAUSE_WAIT_MS_MAX = 1_000;

/**
 * The matcher's whole pause for `m` (ms): it stores it right after its post, so it is there long
 * before the file is written, unless the matcher thread was preempted in between (a loaded
 * machine: seen here): waited for then; never stored in time, the copies alone.
 */
async function matcherPauseMs(m: SnapshotMessage): Promise<number> {
  const w = waitAsync(m.pause_us, 0, 0, PAUSE_WAIT_MS_MAX);
  if (w.async) await w.value;
  const us = Atomics.load(m.pause_us, 0);
  return us === 0 ? m.copy_ms : us / 1000;
}

/** Frees a dropped or written snapshot's staged copy for the matcher's next one. */
function releaseEngine(m: SnapshotMessage | null): void {
  if (m !== null) releaseStaged(m.engine);
}
