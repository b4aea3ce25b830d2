// The embedded DA layer: published batches kept locally and served over HTTP
// (docs/verifiability.md, "DA store"). LMDB at `<data_dir>/da`:
//   - database `batches`: key = batch id (uint32), value = msgpack record of the batch (its header's
//     roots and fills' addresses as bytes, its inputs, its state diff as src/da/state_diff.ts
//     encodeChanges bytes): src/da/da_record.ts, which also reads the older forms;
//   - database `order_fills`: key = [order_id, fill_id] (ordered-binary), value = batch id; one
//     row for the taker order and one for the maker order of every fill (for /orders/:id/da-proof).
// Writes are grouped (and asynchronous, unless opened with sync_commits: the DA worker's store,
// which commits on its own thread): one LMDB commit per DA_STORE_COMMIT_INTERVAL_MS holds every
// batch submitted meanwhile; a submitted batch is readable at once from a small in-memory map
// (da_store_pending.ts) through this handle until its commit is done. One commit at a time: while
// one is in flight the next group stays open (it keeps taking batches) and is committed as soon as
// that one is done, so a commit slower than the interval makes the next one larger, not a queue of
// one per interval. The DA store is not on the acknowledgement path: the journal is, and a batch a
// crash kept out of the store is published again at the restart.
// A commit that fails writes nothing of its group (and nothing after it: the ids stay contiguous);
// every submit of the group rejects with the error and every later submit is refused.
import { open, type Database, type RootDatabase } from 'lmdb';
import { checkNext, fillRows, type DaStore, type FillRef } from './da_store_contract.js';
import { PendingBatches } from './da_store_pending.js';
import type { PublishedBatch } from './published.js';
import { publishedOf, recordOf, type StoredRecord } from './da_record.js';
import { ArenaPool, type InputsArena } from './inputs_arena.js';
import { STALE_READER_SWEEP_MS, StaleReaderSweep } from '../journal/stale_readers.js';
import { APPEND_PUT, DA_STORE_IDLE_SYNC_MS, DA_STORE_LMDB_OPTIONS, IdleSync, syncEnvironment, type AppendingDb } from './da_store_sync.js';

export { DA_STORE_IDLE_SYNC_MS, DA_STORE_LMDB_OPTIONS } from './da_store_sync.js';
export { ARENA_BYTES_KEPT_MAX } from './inputs_arena.js';

/**
 * The DA store's writes are grouped into one LMDB commit per this many milliseconds (issue 11).
 * Each commit costs the disk ~7 block requests and two flushes (data pages, freelist and branch
 * pages, LMDB's meta page) whatever it holds, and they queue with the journal's commit, which
 * every answer waits for. Committing per DA post (every 5 ms) cost 561-568 block requests and
 * 78-82 fdatasyncs per 400 one-request batches; per 20 ms 135-142 and 21-22; per 50 ms 58-62 and
 * 10 (perf stat, docs/benchmarks.md "Issue 11, the tail at 1,000/s"). What waits longer is only
 * the published root (reported once its batch is readable) and the batch's place in `da/`, which
 * the journal covers: a batch a crash kept out of the store is published again at the restart.
 */
export const DA_STORE_COMMIT_INTERVAL_MS = 50;

interface CommitGroup {
  items: { id: number; stored: StoredRecord; rows: [number, number][] }[];
  done: Promise<void>;
  settle: (err: unknown) => void;
  /** The group's inputs, copied (each item's stored inputs are a view of it): see InputsArena. */
  arena: InputsArena;
}

export class LmdbDaStore implements DaStore {
  private readonly root: RootDatabase;
  private readonly batches: Database<StoredRecord, number>;
  private readonly order_fills: Database<number, [number, number]>;
  private last_id: number;
  /** Submitted, not yet committed: readable from here. */
  private readonly pending = new PendingBatches();
  /** The arenas the groups' input bytes are copied into. */
  private readonly arenas = new ArenaPool();
  /** Reader of a store another thread writes: every read starts from the newest snapshot. */
  private readonly reader: boolean;
  private readonly commit_interval_ms: number;
  /** Submitted batches waiting for the next commit (DA_STORE_COMMIT_INTERVAL_MS), and its timer. */
  private group: CommitGroup | null = null;
  private group_timer: NodeJS.Timeout | null = null;
  /** The open group's interval has passed (or written() asked): commit it once none is in flight. */
  private group_due = false;
  /** The commit in flight (settles, never rejects, once its group's outcome is known), or null. */
  private in_flight: Promise<void> | null = null;
  /** Last batch id LMDB holds (found at open, then each commit's last). */
  private committed_id: number;
  /** The first commit that failed: nothing more is written through this handle. */
  private failure: Error | null = null;
  private closing: Promise<void> | null = null;
  /** LMDB commits started by this handle (each: the disk's block requests and flushes). */
  commits = 0;
  /** Environment flushes (mdb_env_sync) this handle asked for: idle syncs, durableLatest, close. */
  env_syncs = 0;
  /** The flush after a quiet DA_STORE_IDLE_SYNC_MS (a writer's last commit durable). */
  private readonly idle_sync: IdleSync;

  /** Commit on the calling thread (transactionSync) instead of lmdb-js's pool threads: see open(). */
  private readonly sync_commits: boolean;
  /** A killed `ringbook backup`'s reader slot, freed by the writer (src/journal/stale_readers.ts). */
  private readonly reader_sweep: StaleReaderSweep;

  private constructor(root: RootDatabase, reader: boolean, commit_interval_ms: number, sync_commits: boolean, idle_sync_ms: number, reader_sweep_ms: number) {
    this.root = root;
    this.idle_sync = new IdleSync(idle_sync_ms, () => this.syncEnv());
    this.reader = reader;
    this.commit_interval_ms = commit_interval_ms;
    this.sync_commits = sync_commits;
    this.reader_sweep = new StaleReaderSweep(root, reader_sweep_ms);
    this.batches = root.openDB<StoredRecord, number>({ name: 'batches', encoding: 'msgpack', keyEncoding: 'uint32' });
    this.order_fills = root.openDB<number, [number, number]>({ name: 'order_fills', encoding: 'msgpack', keyEncoding: 'ordered-binary' });
    let last = 0;
    for (const key of this.batches.getKeys({ reverse: true, limit: 1 })) last = key as number;
    this.last_id = last;
    this.committed_id = last;
  }

  /**
   * `commit_interval_ms`: writes submitted within it share one commit (0: at the end of the current
   * turn). `sync_commits`: each commit runs on the calling thread (lmdb-js `transactionSync`), which
   * waits for it; for a thread with nothing else to do meanwhile (the DA worker). lmdb-js's
   * asynchronous commit hands the write to one libuv pool thread and its sync to another and
   * wakes the caller's event loop when done: ~14-15 context switches per commit against ~6-7
   * synchronously, and ~250 µs more CPU (docs/benchmarks.md, "fixed costs per batch at light
   * load"). The same commit either way (DA_STORE_LMDB_OPTIONS); a failure takes the same path.
   * `reader_sweep_ms`: at most one check for dead processes' reader slots per this many ms of
   * commits (STALE_READER_SWEEP_MS; tests: 0, a check at every commit).
   */
  static open(dir: string, opts: {
    reader?: boolean; commit_interval_ms?: number; sync_commits?: boolean; idle_sync_ms?: number; durable_commits?: boolean; reader_sweep_ms?: number;
  } = {}): LmdbDaStore {
    // durable_commits (benches only): lmdb-js's defaults as before DA_STORE_LMDB_OPTIONS, each commit durable when it returns.
    const env = opts.durable_commits === true ? { compression: false } : DA_STORE_LMDB_OPTIONS;
    return new LmdbDaStore(
      open({ path: dir, ...env }), opts.reader === true, opts.commit_interval_ms ?? DA_STORE_COMMIT_INTERVAL_MS,
      opts.sync_commits === true, opts.idle_sync_ms ?? DA_STORE_IDLE_SYNC_MS, opts.reader_sweep_ms ?? STALE_READER_SWEEP_MS,
    );
  }

  /** Reader slots of dead processes this handle's commits cleared, since open. */
  get stale_readers_cleared(): number {
    return this.reader_sweep.cleared;
  }

  /** One environment flush (mdb_env_sync, on lmdb-js's pool thread): every commit so far durable. */
  private syncEnv(): Promise<void> {
    this.env_syncs++;
    return syncEnvironment(this.root);
  }

  /**
   * The last batch that a crash can no longer undo: the last batch committed (a reader: the newest
   * LMDB holds) read first, then the environment flushed. For whoever deletes what only the DA
   * store would then hold (the journal's trim: src/snapshot/coordinator.ts). latest() may include
   * the last commit, which noMetaSync leaves undoable until the next flush.
   */
  async durableLatest(): Promise<number> {
    const last = this.reader ? this.latest() : this.committed_id;
    await this.syncEnv();
    return last;
  }

  /** Reader mode: renew the read snapshot (lmdb-js keeps one per event-loop turn). */
  private refresh(): void {
    if (!this.reader) return;
    this.root.resetReadTxn();
    let last = 0;
    for (const key of this.batches.getKeys({ reverse: true, limit: 1 })) last = key as number;
    this.last_id = last;
  }

  latest(): number {
    this.refresh();
    return this.last_id;
  }

  submit(batch: PublishedBatch, inputs?: Uint8Array): Promise<void> {
    // Everything that can throw (the checks, the batch's getters, its fill rows, the arena's
    // allocation) comes before the store changes: a refused batch leaves no trace (no empty
    // group whose timer would then find no batch, no id counted without its batch).
    let stored: StoredRecord;
    let rows: [number, number][];
    try {
      if (this.reader) throw new Error('DA store: this handle only reads');
      if (this.closing !== null) throw new Error('DA store: closed');
      if (this.failure !== null) throw new Error(`DA store: an earlier commit failed, nothing more is written: ${this.failure.message}`);
      checkNext(this, batch);
      rows = fillRows(batch);
      const bytes = inputs ?? Buffer.from(batch.inputs_hex, 'hex');
      const state_diff = batch.state_diff_bytes ?? batch.state_diff ?? [];
      stored = recordOf(batch, this.copyInputs(bytes), state_diff);
    } catch (e) {
      return Promise.reject(e);
    }
    const id = batch.header.batch_id;
    const group = this.group ?? this.openGroup();
    this.last_id = id;
    this.pending.add(id, stored, rows);
    group.items.push({ id, stored, rows });
    return group.done;
  }

  /**
   * A copy of `bytes` in the open group's arena, or (no group open) in the arena the next group
   * takes: the group opens only once its first batch is built.
   */
  private copyInputs(bytes: Uint8Array): Uint8Array {
    if (this.group !== null) return this.group.arena.copy(bytes);
    return this.arenas.copyForNext(bytes);
  }

  /** A new open group (with the arena its first batch was copied into) and its timer. */
  private openGroup(): CommitGroup {
    let settle!: (err: unknown) => void;
    const done = new Promise<void>((resolve, reject) => {
      settle = (err) => (err === null ? resolve() : reject(err));
    });
    const arena = this.arenas.take();
    const group: CommitGroup = (this.group = { items: [], done, settle, arena });
    this.group_due = false;
    if (this.commit_interval_ms > 0) {
      this.group_timer = setTimeout(() => this.commitDue(), this.commit_interval_ms);
      // The wait must not keep a process alive (or a stop waiting): close() and written() commit
      // what waits, and the journal holds every batch a process ending without them leaves out.
      this.group_timer.unref();
    } else queueMicrotask(() => this.commitDue());
    return group;
  }

  /** The open group is due (its interval passed, or written() asked): commit it when none is in flight. */
  private commitDue(): void {
    if (this.group_timer !== null) clearTimeout(this.group_timer);
    this.group_timer = null;
    if (this.group === null) return;
    this.group_due = true;
    this.startCommit();
  }

  /**
   * Writes the open group in one transaction, if it is due and no commit is in flight; each
   * submit's promise settles with it. One commit at a time: a group that falls due while one is
   * in flight stays open (and keeps taking batches) until that one is done, then goes at once, so
   * a slow commit (a synced or busy disk) makes the next commit larger, never a queue of commits.
   * After a failed commit nothing is written (a later group would leave a gap in the ids): the
   * open group is rejected.
   */
  private startCommit(): void {
    if (this.group === null || !this.group_due || this.in_flight !== null) return;
    const group = this.takeOpenGroup();
    const [first, last] = idRange(group);
    this.commits++;
    this.reader_sweep.maybe();
    let write: Promise<unknown>;
    try {
      if (this.sync_commits) {
        this.root.transactionSync(() => this.putGroup(group.items));
        write = Promise.resolve();
      } else {
        write = this.root.transaction(() => this.putGroup(group.items));
      }
    } catch (e) {
      write = Promise.reject(e); // (a closed environment throws at once): the same failure path
    }
    this.in_flight = write.then(() => {
      for (const { id, rows } of group.items) this.pending.forget(id, rows);
      this.committed_id = last;
      this.idle_sync.arm();
      this.arenas.release(group.arena);
      group.settle(null);
    }, (e: unknown) => {
      const err = new Error(`DA store: the commit of batches ${first}..${last} failed: ${e instanceof Error ? e.message : String(e)}`);
      this.failed(err);
      group.settle(err);
      this.rejectOpenGroup();
    }).then(() => {
      this.in_flight = null;
      this.startCommit();
    });
  }

  /** After a failed commit: the group submitted meanwhile is not written. */
  private rejectOpenGroup(): void {
    if (this.group === null || this.failure === null) return;
    const group = this.takeOpenGroup();
    const [first, last] = idRange(group);
    group.settle(new Error(`DA store: batches ${first}..${last} not written: an earlier commit failed: ${this.failure.message}`));
  }

  /** The open group, taken: no group is open, due or timed after this. */
  private takeOpenGroup(): CommitGroup {
    const group = this.group as CommitGroup;
    this.group = null;
    this.group_due = false;
    if (this.group_timer !== null) clearTimeout(this.group_timer);
    this.group_timer = null;
    return group;
  }

  /** Bytes of the committed groups' arenas kept for later groups (tests: at most 2 x ARENA_BYTES_KEPT_MAX). */
  arenaBytesKept(): number {
    return this.arenas.bytesKept();
  }

  /** The group's puts (inside the transaction). */
  private putGroup(items: CommitGroup['items']): void {
    let i = 0;
    try {
      for (; i < items.length; i++) {
        // APPEND_PUT: ids only grow (checkNext), so LMDB fills each leaf page instead of splitting it in half.
        void (this.batches as unknown as AppendingDb<StoredRecord>).put(items[i].id, items[i].stored, APPEND_PUT);
        for (const [order_id, fill_id] of items[i].rows) void this.order_fills.put([order_id, fill_id], items[i].id);
      }
    } catch (e) {
      // lmdb-js commits what a callback wrote before it threw: take this group's writes back, so
      // no batch of it is half there (seen: a batch msgpack cannot encode after one it could).
      for (let k = 0; k <= i && k < items.length; k++) {
        void this.batches.remove(items[k].id);
        for (const [order_id, fill_id] of items[k].rows) void this.order_fills.remove([order_id, fill_id]);
      }
      throw e;
    }
  }

  /** A commit failed: no uncommitted batch stays readable or counted, nothing more is written. */
  private failed(e: Error): void {
    this.failure ??= e;
    this.pending.clear();
    this.last_id = this.committed_id;
  }

  get(id: number): PublishedBatch | undefined {
    if (!Number.isInteger(id) || id < 1 || id > 0xffffffff) return undefined;
    // A pending batch is read from its stored form too (hex made now: its arena is reused once
    // the batch is committed).
    const p = this.pending.get(id);
    if (p !== undefined) return publishedOf(p);
    if (this.reader && id > this.last_id) this.refresh();
    const s = this.batches.get(id);
    if (s === undefined) return undefined;
    return publishedOf(s);
  }

  fillsOfOrder(order_id: number): FillRef[] {
    this.refresh();
    const out: FillRef[] = [];
    const seen = new Set<number>();
    for (const { key, value } of this.order_fills.getRange({ start: [order_id], end: [order_id + 1] })) {
      const k = key as [number, number];
      if (k[0] !== order_id) continue;
      out.push({ fill_id: k[1], batch_id: value });
      seen.add(k[1]);
    }
    for (const r of this.pending.fillsOf(order_id)) if (!seen.has(r.fill_id)) out.push(r);
    out.sort((a, b) => a.fill_id - b.fill_id);
    return out;
  }

  /**
   * Commits what is waiting now (after the commit in flight, if any); resolves once every batch
   * submitted so far is committed or its commit failed (never rejects: the failure is the submits').
   */
  written(): Promise<void> {
    const group = this.group;
    if (group !== null) {
      this.commitDue();
      return group.done.then(() => undefined, () => undefined);
    }
    return this.in_flight ?? Promise.resolve();
  }

  /** Commits what waits, flushes the environment (a writer: its last commit durable), closes. */
  close(): Promise<void> {
    this.closing ??= this.written().then(async () => {
      await this.idle_sync.stop();
      if (!this.reader && this.commits > 0) await this.syncEnv();
    }).finally(() => this.root.close());
    return this.closing;
  }
}

/** The first and last batch id of a group (its items are in id order). */
function idRange(group: CommitGroup): [number, number] {
  return [group.items[0].id, group.items[group.items.length - 1].id];
}
