// The journal: every batch's input records, keyed by batch id, in LMDB (what every reader uses),
// with a small write-ahead file in front of it (wal.ts). A batch is acknowledged only after its
// write is durable (see `append`).
//
// The acknowledgement path (issue 11, docs/operations.md "Durability settings"): `append` writes
// the batch into the write-ahead file with one device flush (whole pages inside a preallocated
// file, through an O_DSYNC descriptor) and returns; the matcher publishes the commit marker, then
// calls `afterAck`. The file is two regions (wal.ts); once the current one is full (512 one-page
// batches, ~0.5 s at 1,000 requests/s: wal_store.ts WAL_STORE_*, and `storeIdle` when the exchange
// is quiet), its batches are handed to the storer thread (wal_storer.ts, since h22j), which stores
// them into LMDB in one synchronous transaction (durable: `overlappingSync: false`, syncing on;
// the data's fdatasync, then the meta page through LMDB's O_DSYNC descriptor), while the next
// cycle fills the other region. An LMDB commit is two device flushes (~0.45 ms p50 here) and held
// the matcher ~3.8-6.2 ms per store when it ran there (docs/benchmarks.md "h22j"); the write-ahead
// record is one flush (~0.2 ms). Invariant: the write-ahead file's live cycles hold exactly the
// batches after LMDB's last durable one (and may repeat a few it has); a region is reused only
// after LMDB holds its batches durably (the matcher waits for the store otherwise);
// `Journal.open` stores them into LMDB before anything else (recovery), read-only users read them
// after LMDB's (`read_only`), and the DA thread's reader falls back to the file
// (src/da/journal_reader.ts).
//
// The matcher thread calls `append` and blocks there for the flush; the requests that arrive
// meanwhile wait in the request ring and form the next batch, so batching replaces lmdb-js's
// group commit. (The asynchronous `put` cost a hop to a libuv pool thread and back to the
// matcher's event loop per commit, ~90 µs of wake-ups and turns at 1,000 requests/s.)
//
// Each stored batch carries a CRC-32 of its records; replay recomputes it and checks that batch
// ids are contiguous, so a torn or altered tail is reported, never silently replayed. The batch
// format itself (header, CRC-32, records; encode and decode) is in journal_codec.ts; the
// write-ahead file's unstored batches (routing, stores into LMDB, recovery) are in wal_store.ts.
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { journalBatchesDb } from './journal_db.js';
import { RECORD_WORDS } from '../ring/records.js';
import { batchOf, checkHeader, copyChecked, decodeBatch, encodeBatch, JournalCorruption, type JournalBatch } from './journal_codec.js';
import { describeWriteError } from './journal_fault.js';
import { JournalReserve } from './reserve.js';
import type { WalSync } from './wal.js';
import { WalStore } from './wal_store.js';
import { StaleReaderSweep } from './stale_readers.js';
import type { StorerState } from './wal_storer_driver.js';

/** A write that failed (disk full, I/O error) and is being retried; null once writes succeed again. */
export interface JournalFault {
  batch_id: number;
  message: string;
}

export interface JournalOptions {
  /** Called when a write first fails (fault) and when the retried write succeeds (null). */
  onFault?: (fault: JournalFault | null) => void;
  /**
   * Test seam (issue 20): a control file read before each write. `write` fails the write before
   * LMDB sees it; `fsync` lets LMDB write and sync, then reports a failure (as an fsync error
   * leaves a write's durability unknown); `store` fails the store into LMDB after the
   * acknowledgement (the write-ahead record was written). Absent or empty: no fault. Never set in
   * production.
   */
  fault_file?: string | null;
  /**
   * Read only (the CLI's `journal inspect`, `replay`, `snapshot`): nothing is written; the
   * write-ahead file's batches that LMDB lacks are read after LMDB's, as the matcher will store
   * them at its next start.
   */
  read_only?: boolean;
  /**
   * Test seam (wal_async.test.ts), never set in production: called on the matcher's thread as a
   * counted wait for a store in flight (`store_waits`) begins, before it blocks, with the store's
   * last batch id; a test releases what holds the store up then, not after a guessed time.
   */
  onStoreWait?: (last_id: number) => void;
  /** Size of the write-ahead file (bytes; default WAL_BYTES_DEFAULT); 0: none, every batch to LMDB directly (benches). */
  wal_bytes?: number;
  /** How a write-ahead record is made durable (wal.ts WalSync; default 'dsync'). */
  wal_sync?: WalSync;
}

/** First retry delay of a failed write, doubled up to JOURNAL_RETRY_MS_MAX. */
const JOURNAL_RETRY_MS_MIN = 50;
/** Longest wait between retries: a disk that frees space is noticed within a second. */
const JOURNAL_RETRY_MS_MAX = 1000;

export class Journal {
  private readonly root: RootDatabase;
  private readonly batches: Database<Buffer, number>;
  private last_batch_id: number;
  /** The write-ahead file and the batches it holds that LMDB lacks (wal_store.ts). */
  private readonly wal_store: WalStore;
  private readonly options: JournalOptions;
  /** The write being retried, else null (the matcher is held in `append` until it lands). */
  fault: JournalFault | null = null;
  /** Writes that failed and were retried, since open. */
  failed_writes = 0;
  /** Batches dropped at open after a gap (never acknowledged: see `dropAfterGap`). */
  readonly dropped_after_gap: number;
  /** Sleeps between retries (Atomics.wait on a word nobody notifies). */
  private readonly retry_sleeper = new Int32Array(new SharedArrayBuffer(4));
  /** Written zeros past LMDB's last page, so that commits do not grow the file (reserve.ts). */
  readonly reserve: JournalReserve;
  /** `readTransient`'s records buffer (8-byte aligned, grown to the largest batch read). */
  private transient = new Uint8Array(0);
  /** Frees the reader slots of dead processes (a killed `ringbook backup`), from the writer (stale_readers.ts). */
  private readonly reader_sweep: StaleReaderSweep;

  private constructor(dir: string, root: RootDatabase, batches: Database<Buffer, number>, options: JournalOptions) {
    this.root = root;
    this.batches = batches;
    this.options = options;
    this.reader_sweep = new StaleReaderSweep(root);
    this.reserve = new JournalReserve(path.join(dir, 'data.mdb'), () => {
      const stat = this.root.getStats() as { pageSize?: number; lastPageNumber?: number };
      const page_bytes = stat.pageSize ?? 4096;
      return { used_bytes: ((stat.lastPageNumber ?? 0) + 1) * page_bytes, page_bytes };
    });
    this.dropped_after_gap = this.dropAfterGap();
    let last = 0;
    for (const key of batches.getKeys({ reverse: true, limit: 1 })) last = key as number;
    // Opening it reads the write-ahead file's tail (and, writing, stores it into LMDB first).
    this.wal_store = new WalStore(dir, last, options, {
      batches,
      reserve: this.reserve,
      lastBatchId: () => this.last_batch_id,
      retried: (batch_id, write, failed) => this.retried(batch_id, write, failed),
      storedElsewhere: () => this.root.resetReadTxn(),
    });
    this.last_batch_id = this.wal_store.lastBatchId();
  }

  /** Reader slots of dead processes this journal's writer cleared, since open. */
  get stale_readers_cleared(): number {
    return this.reader_sweep.cleared;
  }

  /** LMDB commits that stored write-ahead batches, since open. */
  get stores(): number {
    return this.wal_store.stores;
  }

  /** Of them, on the storer thread (wal_storer.ts). */
  get stores_async(): number {
    return this.wal_store.stores_async;
  }

  /** This thread's own LMDB writes that waited for the storer thread's open (it starts at open: wal_storer_driver.ts `storer`). */
  get storer_open_waits(): number {
    return this.wal_store.storer_open_waits;
  }

  /** The storer thread: 'none' (read only, no write-ahead file, could not start), 'starting' (its LMDB open not over), 'ready'. */
  storerState(): StorerState {
    return this.wal_store.storerState();
  }

  /**
   * Waits until the storer thread's open of LMDB is over (the matcher's start: the thread names
   * itself before it opens LMDB, matcher_worker.ts); bounded, a thread not up by then is given up.
   */
  awaitStorerOpen(): void {
    this.wal_store.awaitStorerOpen();
  }

  /** Waits for a store in flight before a region of the write-ahead file could be reused (or LMDB written), since open. */
  get store_waits(): number {
    return this.wal_store.store_waits;
  }

  /** Their total time (ms). */
  get store_wait_ms(): number {
    return this.wal_store.store_wait_ms;
  }

  /** Opens (creating it when absent, unless `read_only`) the journal in `dir`. */
  static open(dir: string, options: JournalOptions = {}): Journal {
    const root = open({ path: dir, overlappingSync: false, noSync: false, compression: false, mapSize: 64 * 1024 * 1024 * 1024 });
    const batches = root.openDB<Buffer, number>(journalBatchesDb());
    return new Journal(dir, root, batches, options);
  }

  /**
   * A journal written by an older build (asynchronous group commits) could hold a gap: when one
   * write failed (disk full), a later one could still land, and a kill before the retry succeeded
   * left the gap. Answers go out in batch order only once every earlier batch is durable, so
   * nothing after a gap was ever acknowledged (nor published to the DA store, which follows the
   * commits): those batches are deleted here and the journal continues from the gap. Synchronous
   * appends (one at a time, each durable before the next) cannot leave one.
   */
  private dropAfterGap(): number {
    let expected = -1;
    let missing = 0;
    const tail: number[] = [];
    for (const key of this.batches.getKeys()) {
      const k = key as number;
      if (tail.length === 0 && expected >= 0 && k !== expected) missing = expected;
      if (missing > 0) tail.push(k);
      expected = k + 1;
    }
    if (tail.length === 0) return 0;
    console.error(`ringbook: journal: batch ${missing} is missing (a write failed before the process stopped); ` +
      `the ${tail.length} batches after it (${tail[0]}..${tail[tail.length - 1]}) were never acknowledged and are dropped`);
    this.batches.transactionSync(() => {
      for (const k of tail) this.batches.removeSync(k);
    });
    return tail.length;
  }

  lastBatchId(): number {
    return this.last_batch_id;
  }

  /** The oldest batch still held (batches below it were trimmed after a snapshot); 0 when empty. */
  firstBatchId(): number {
    for (const key of this.batches.getKeys({ limit: 1 })) return key as number;
    const unstored = this.wal_store.batches();
    return unstored.length > 0 ? unstored[0].batch_id : 0;
  }

  /**
   * The matcher resumes after a snapshot at `batch_id`: the next append is `batch_id + 1`. A
   * journal trimmed through the snapshot may be empty; one that ends before the snapshot (or
   * leaves a gap after it) cannot continue it.
   */
  resumeAfter(batch_id: number): void {
    const first = this.firstBatchId();
    if (this.last_batch_id === 0) {
      this.last_batch_id = batch_id;
      // An empty LMDB: the write-ahead file's first cycle continues the snapshot (readWalTail).
      this.wal_store.restart(batch_id);
      return;
    }
    if (this.last_batch_id < batch_id || first > batch_id + 1) {
      throw new JournalCorruption(`journal holds batches ${first}..${this.last_batch_id}, it cannot continue a snapshot at batch ${batch_id}`);
    }
  }

  /**
   * Deletes batches 1..`batch_id` (retention after a snapshot; never the newest batch, so the
   * journal always knows where it is), durably, in one transaction. Returns how many.
   */
  trimThrough(batch_id: number): number {
    // LMDB's newest batch must stay: store the write-ahead file's batches first.
    this.wal_store.storeUnstored();
    const through = Math.min(batch_id, this.last_batch_id - 1);
    if (through < 1) return 0;
    const keys: number[] = [];
    for (const key of this.batches.getKeys({ end: through + 1 })) keys.push(key as number);
    if (keys.length === 0) return 0;
    // The trimmed pages are reused only once no reader can see them: a dead reader's slot goes first.
    this.sweepReaders(Date.now());
    this.batches.transactionSync(() => {
      for (const key of keys) this.batches.removeSync(key);
    });
    return keys.length;
  }

  /**
   * Writes one batch and returns once it is durable on disk: in the write-ahead file (one flush),
   * or, for a batch larger than that file or without one, in LMDB directly (after every batch the
   * file holds). Calls must come in batch order (ids contiguous). A failing write (full disk, I/O
   * error) is retried here until it lands: the caller is held, `onFault` tells the front (which
   * refuses new writes meanwhile), and nothing of this batch is acknowledged early. The same
   * bytes are written again at the same place, so a write that did land before its error was
   * reported is simply rewritten.
   */
  append(batch_id: number, time_ms: number, records: Int32Array, count: number): void {
    if (batch_id !== this.last_batch_id + 1) {
      throw new JournalCorruption(`append of batch ${batch_id} after ${this.last_batch_id}`);
    }
    this.wal_store.append(batch_id, encodeBatch(batch_id, time_ms, records, count));
    this.last_batch_id = batch_id;
    // The batch's own time (the matcher read the clock once for it): no clock read of its own here.
    this.sweepReaders(time_ms);
  }

  /**
   * The reader sweep, never while the storer thread is still opening LMDB: like this thread's own
   * LMDB writes (awaitStorerOpen), no LMDB call here may overlap that open (fresh-clone CI of
   * 7caac54 lost a vitest worker process in test/journal/wal_async's crash copies, a check at the
   * first append racing the storer's open, the sweep being the one LMDB call there not held back).
   */
  private sweepReaders(now_ms: number): void {
    if (this.wal_store.storerState() === 'starting') return;
    this.reader_sweep.maybe(now_ms);
  }

  /** After the batch's commit marker is out: see WalStore.afterAck. Returns whether it stored. */
  afterAck(): boolean {
    return this.wal_store.afterAck();
  }

  /** The matcher with no request waiting: see WalStore.storeIdle. Returns whether it stored. */
  storeIdle(now_ms = Date.now()): boolean {
    return this.wal_store.storeIdle(now_ms);
  }

  /** When the last batch was written into the write-ahead file (Date.now(); `storeIdle`'s quiet clock). */
  lastAppendMs(): number {
    return this.wal_store.lastAppendMs();
  }

  /** Batches acknowledged (durable in the write-ahead file) and not yet in LMDB. */
  unstoredBatches(): number {
    return this.wal_store.unstoredBatches();
  }

  /** Stores the write-ahead file's batches into LMDB: see WalStore.storeUnstored. */
  storeUnstored(): void {
    this.wal_store.storeUnstored();
  }

  /** Waits for the store on the storer thread, if one is in flight: see WalStore.awaitStore. */
  awaitStore(): void {
    this.wal_store.awaitStore();
  }

  /**
   * Runs `write` until it succeeds, holding the caller; faults reported as batch `batch_id`'s.
   * `failed`: the same write already failed elsewhere (the storer thread), reported as the first
   * attempt's failure.
   */
  private retried(batch_id: number, write: () => void, failed?: unknown): void {
    let delay_ms = JOURNAL_RETRY_MS_MIN;
    for (let first = failed !== undefined; ; first = false) {
      try {
        if (first) throw failed;
        write();
        break;
      } catch (e) {
        this.failed_writes++;
        if (this.fault === null) {
          this.fault = { batch_id, message: describeWriteError(e) };
          this.options.onFault?.(this.fault);
        }
        Atomics.wait(this.retry_sleeper, 0, 0, delay_ms);
        delay_ms = Math.min(JOURNAL_RETRY_MS_MAX, delay_ms * 2);
      }
    }
    if (this.fault !== null) {
      this.fault = null;
      this.options.onFault?.(null);
    }
  }

  /** Batches from `from` (inclusive) in order, each checked (hash, contiguity). */
  *read(from = 1): Generator<JournalBatch> {
    let expected = from;
    for (const { key, value } of this.batches.getRange({ start: from })) {
      if (key !== expected) throw new JournalCorruption(`batch ${expected} missing (next stored is ${key})`);
      yield decodeBatch(value, expected);
      expected++;
    }
    for (const b of this.wal_store.unstoredFrom(expected)) {
      yield decodeBatch(b.value, expected);
      expected++;
    }
  }

  /**
   * The same batches with the same checks as `read` (header, CRC-32 of the records, contiguity),
   * for a consumer that is done with each batch before it asks for the next: the matcher's replay
   * on start (and `ringbook replay`, `ringbook journal inspect`). Each batch's `records` are a
   * view into one buffer that this journal reuses, overwritten by the next batch: keep nothing of
   * them across iterations.
   *
   * Why (issue 15, docs/benchmarks.md "recovery"): `read` gets each ~200 KB value through
   * lmdb-js's range iterator, which hands out a fresh zero-filled Buffer per value, then copies the
   * records into a second fresh array (8-byte aligned: the request reader's f64 view needs it;
   * they sit at byte 36 of the value). Here each value is copied by lmdb-js into its reused read
   * buffer (`getBinaryFast`) and the records into this reused aligned buffer: the same two copies
   * and one CRC pass, but over warm memory, with no allocation, zero fill, page faults or
   * garbage of ~0.4 GB per million requests.
   */
  *readTransient(from = 1): Generator<JournalBatch> {
    let id = from;
    const tail = this.wal_store.batches();
    for (;;) {
      let value: Uint8Array | undefined = this.batches.getBinaryFast(id);
      if (value === undefined && tail.length > 0 && id >= tail[0].batch_id && id <= tail[tail.length - 1].batch_id) {
        value = tail[id - tail[0].batch_id].value;
      }
      if (value === undefined) break;
      const buf = Buffer.from(value.buffer, value.byteOffset, value.length);
      const count = checkHeader(buf, id);
      const bytes = count * RECORD_WORDS * 4;
      if (this.transient.length < bytes) this.transient = new Uint8Array(Math.max(bytes, this.transient.length * 2));
      const into = this.transient.subarray(0, bytes);
      copyChecked(buf, id, into);
      yield batchOf(buf, id, count, new Int32Array(into.buffer, 0, count * RECORD_WORDS));
      id++;
    }
    // Read to the end: the buffer is not needed by live batches (which the matcher copies itself).
    this.transient = new Uint8Array(0);
    // A stored batch past the first missing id is a gap (`read` reports it as it meets it).
    for (const key of this.batches.getKeys({ start: id, limit: 1 })) {
      throw new JournalCorruption(`batch ${id} missing (next stored is ${String(key)})`);
    }
  }

  /** Bytes the journal occupies (LMDB's used pages). */
  sizeBytes(): number {
    const stat = this.root.getStats() as { pageSize?: number; treeBranchPageCount?: number; treeLeafPageCount?: number; overflowPages?: number };
    const pages = (stat.treeBranchPageCount ?? 0) + (stat.treeLeafPageCount ?? 0) + (stat.overflowPages ?? 0);
    return pages * (stat.pageSize ?? 4096);
  }

  /**
   * Between batches (the matcher thread): tops up the zeros ahead of LMDB's last page when they
   * run low (`idle`: no request is waiting). Returns whether it wrote (at most 256 KB into the
   * page cache, no sync: reserve.ts).
   */
  reserveAhead(idle: boolean): boolean {
    // It writes at the end of LMDB's file, where a commit on the storer thread may be writing.
    if (this.wal_store.storeInFlight()) return false;
    return this.reserve.reserveAhead(idle);
  }

  /**
   * Stores what the write-ahead file holds (after the store in flight; one attempt: if it fails,
   * the file keeps it and the next open stores it), then closes.
   */
  async close(): Promise<void> {
    await this.wal_store.close();
    this.reserve.close();
    await this.root.close();
  }
}
