// The write-ahead file's side of the journal (journal.ts owns one WalStore): which batches the
// file holds and LMDB lacks (the unstored ones), when they are stored into LMDB, and the
// recovery of the file's tail at open. The acknowledgement path and its invariant are described
// at the top of journal.ts; the file itself is wal.ts; the storer thread is driven from here by
// wal_storer_driver.ts (start, open wait, waits, giving it up), its protocol is wal_storer.ts's;
// one attempt of each write is wal_store_writes.ts's.
//
// Stores off the matcher (h22j, docs/benchmarks.md "h22j"). The file is two regions. The matcher
// appends into the current region's cycle; once it is full, `afterAck` (or `append`, for a batch
// that does not fit) hands the region's batches to the storer thread and starts the next cycle in
// the other region, and goes on while LMDB commits them. Its completion is looked at (one atomic
// load) at each `afterAck`, `storeIdle` and region switch. Rules:
// - a region is reused only after the store of its batches completed durably: a switch that comes
//   first waits for it (`awaitStore`, counted in `store_waits` / `store_wait_ms`);
// - a store that failed on the storer is reported (`onFault`, counted in `failed_writes`) and
//   retried on the matcher's thread, holding it until it lands, as every store did before h22j;
// - the journal's other writes to LMDB (a batch too large for the file, a trim, close) and the
//   reserve's top-ups (reserve.ts: they write at LMDB's end) wait until no store is in flight;
// - without the thread (it could not start) every store is the synchronous one on this thread.
import type { Database } from 'lmdb';
import { JournalCorruption } from './journal_codec.js';
import { describeWriteError } from './journal_fault.js';
import type { JournalReserve } from './reserve.js';
import { readWalTail, WalWriter, WAL_BYTES_DEFAULT, WAL_REGIONS, type WalBatch, type WalSync } from './wal.js';
import { StorerDriver, type StorerState } from './wal_storer_driver.js';
import { putOnce, storeOnce, walOnce } from './wal_store_writes.js';

/**
 * The write-ahead batches go to LMDB once their records fill a region of the file, half of it
 * (2 MB of the default 4 MB: 512 one-page records, ~0.5 s at 1,000 requests/s), or once
 * WAL_STORE_BYTES of batches wait. Why so rarely (issue 11, docs/benchmarks.md "h21j"): a store
 * costs its two device flushes and a fixed part whatever it holds (~0.65-1.4 ms of CPU for 64
 * one-request batches, ~1.4-2.4 ms for 512: 10-22 against 3-5 µs per batch); since h22j that is
 * the storer thread's, beside the matcher, and a region's store has the other region's fill time
 * (~0.5 s at 1,000/s) to complete before the matcher would have to wait for it.
 */
export const WAL_STORE_FILL_DENOMINATOR = WAL_REGIONS; // a region is the file's share a store takes: one number, wal.ts's
/** ... or this many bytes of batches (a quarter of the default file). */
export const WAL_STORE_BYTES = 1 << 20;
/** Idle (no request waiting), `storeIdle` stores batches that have waited this long ... */
export const WAL_STORE_IDLE_MS = 100;
/**
 * ... once no batch was written for this long either: the exchange is quiet. At 1,000 requests/s
 * the matcher is idle between most batches but never quiet this long, so stores wait for the
 * region to fill.
 */
export const WAL_STORE_QUIET_MS = 20;

/** The JournalOptions a WalStore reads (described there). */
export interface WalStoreOptions {
  fault_file?: string | null;
  onStoreWait?: (last_id: number) => void;
  read_only?: boolean;
  wal_bytes?: number;
  wal_sync?: WalSync;
}

/** What the WalStore uses of its Journal. */
export interface WalStoreHost {
  batches: Database<Buffer, number>;
  reserve: JournalReserve;
  /** The journal's last batch (`Journal.lastBatchId`). */
  lastBatchId: () => number;
  /**
   * Runs `write` until it succeeds, holding the caller; faults reported as batch `batch_id`'s.
   * `failed` is a failure of the same write already met elsewhere (the storer thread): reported
   * and counted as the first attempt's.
   */
  retried: (batch_id: number, write: () => void, failed?: unknown) => void;
  /** Another thread committed to LMDB: this thread's read snapshot is renewed. */
  storedElsewhere: () => void;
}

/** A store on the storer thread: its job, and the first `count` unstored batches (`bytes`, through `last_id`) it holds. */
interface StoreInFlight {
  seq: number;
  count: number;
  bytes: number;
  last_id: number;
}

export class WalStore {
  private readonly options: WalStoreOptions;
  private readonly host: WalStoreHost;
  /** LMDB's last batch (0: none), as far as this thread knows; the write-ahead file holds the ones after it. */
  private stored_batch_id: number;
  /**
   * The writer's write-ahead file (null: read only, `wal_bytes: 0`, or it could not be created, in
   * which case every batch goes to LMDB directly as before it existed).
   */
  private readonly wal: WalWriter | null;
  /**
   * The batches after LMDB's last, in order: the store in flight's (the first `flight.count`), then
   * the current cycle's (writer); or read from the file at open (read only).
   */
  private unstored: WalBatch[] = [];
  private unstored_bytes = 0;
  /** The store on the storer thread, null when none is in flight. */
  private flight: StoreInFlight | null = null;
  /** The storer thread, as this thread drives it (started at open when there is a write-ahead file: see there). */
  private readonly storer: StorerDriver;
  /** When the oldest unstored batch was acknowledged (Date.now()). */
  private unstored_since_ms = 0;
  /** When the last batch was written (Date.now()). */
  private last_append_ms = 0;
  /** LMDB commits that stored write-ahead batches, since open. */
  stores = 0;
  /** Of them, on the storer thread. */
  stores_async = 0;

  /** Writes of this thread's own that waited for the storer thread's open of LMDB (StorerDriver `storer`), since open. */
  get storer_open_waits(): number {
    return this.storer.open_waits;
  }

  /** Waits for a store in flight before the file's region could be reused (or LMDB written), and their time. */
  get store_waits(): number {
    return this.storer.store_waits;
  }

  get store_wait_ms(): number {
    return this.storer.store_wait_ms;
  }

  /** `stored_batch_id`: LMDB's last batch (0: none). */
  constructor(dir: string, stored_batch_id: number, options: WalStoreOptions, host: WalStoreHost) {
    this.options = options;
    this.host = host;
    this.stored_batch_id = stored_batch_id;
    this.storer = new StorerDriver(dir, options.fault_file ?? null, options.onStoreWait ?? null);
    const tail = readWalTail(dir, stored_batch_id, (message) => {
      throw new JournalCorruption(message);
    });
    if (options.read_only === true) {
      this.wal = null;
      this.unstored = tail;
      return;
    }
    // Recovery: what the write-ahead file holds after LMDB's last batch (durable, maybe
    // acknowledged) is stored first, as one durable transaction.
    if (tail.length > 0) {
      storeOnce(host.batches, tail, options.fault_file);
      this.stored_batch_id = tail[tail.length - 1].batch_id;
      console.error(`ringbook: journal: stored batches ${tail[0].batch_id}..${this.stored_batch_id} from the write-ahead file into LMDB`);
    }
    this.wal = options.wal_bytes === 0 ? null : openWal(dir, options.wal_bytes ?? WAL_BYTES_DEFAULT, options.wal_sync ?? 'dsync');
    this.wal?.restart(this.stored_batch_id);
    // After recovery's store: the thread's LMDB open never overlaps it.
    if (this.wal !== null) this.storer.start();
  }

  /** The last batch held at open: the last unstored one (read only), else LMDB's. */
  lastBatchId(): number {
    return this.unstored.length > 0 ? this.unstored[this.unstored.length - 1].batch_id : this.stored_batch_id;
  }

  /** The unstored batches, in order (the journal's readers; do not modify). */
  batches(): readonly WalBatch[] {
    return this.unstored;
  }

  /** Starts the write-ahead file's next cycle after batch `batch_id` (`Journal.resumeAfter`). */
  restart(batch_id: number): void {
    this.wal?.restart(batch_id);
  }

  /** `Journal.append`'s write of the encoded batch `value` (see there). */
  append(batch_id: number, value: Buffer): void {
    const wal = this.wal;
    if (wal !== null && wal.fitsEmpty(value.length)) {
      // A full region: its batches go to LMDB, and the next cycle starts in the other region.
      if (!wal.fits(value.length)) this.switchRegion(wal);
      this.host.retried(batch_id, () => walOnce(wal, batch_id, value, this.options.fault_file));
      const now_ms = Date.now();
      this.last_append_ms = now_ms;
      if (this.cycleCount() === 0) this.unstored_since_ms = now_ms;
      this.unstored.push({ batch_id, value });
      this.unstored_bytes += value.length;
    } else {
      this.storeUnstored();
      this.host.retried(batch_id, () => putOnce(this.host.batches, batch_id, value, this.options.fault_file));
      this.stored_batch_id = batch_id;
      wal?.restart(batch_id);
      this.host.reserve.consumed(value.length);
    }
  }

  /** The current cycle's batches (after the store in flight's). */
  private cycleCount(): number {
    return this.unstored.length - (this.flight?.count ?? 0);
  }

  /**
   * After the batch's commit marker is out (the matcher, between batches): notes a finished store,
   * and once the current cycle's records fill its region (one more one-page record would not fit,
   * or WAL_STORE_BYTES of batches wait), hands them to the storer thread and starts the next
   * cycle in the other region. Returns whether it started a store.
   */
  afterAck(): boolean {
    const wal = this.wal;
    if (wal === null) return false;
    this.pollStore();
    if (this.cycleCount() === 0) return false;
    if (wal.fits(0) && this.cycleBytes() < WAL_STORE_BYTES) return false;
    this.switchRegion(wal);
    return true;
  }

  /** Bytes of the current cycle's batches. */
  private cycleBytes(): number {
    let bytes = this.unstored_bytes;
    if (this.flight !== null) bytes -= this.flight.bytes;
    return bytes;
  }

  /**
   * The matcher with no request waiting: notes a finished store, and stores the batches once the
   * oldest has waited WAL_STORE_IDLE_MS and no batch came for WAL_STORE_QUIET_MS (a quiet
   * exchange's LMDB catches up within ~0.1-0.2 s; a busy one's at `afterAck`), unless a store is
   * still in flight (the next idle call). Returns whether it started one.
   */
  storeIdle(now_ms = Date.now()): boolean {
    const wal = this.wal;
    if (wal !== null) this.pollStore();
    if (this.cycleCount() === 0 || now_ms - this.unstored_since_ms < WAL_STORE_IDLE_MS || now_ms - this.last_append_ms < WAL_STORE_QUIET_MS) return false;
    if (wal === null || this.flight !== null) return false;
    this.switchRegion(wal);
    return true;
  }

  /** When the last batch was written into the write-ahead file (Date.now(); 0: none since open). */
  lastAppendMs(): number {
    return this.last_append_ms;
  }

  /** Batches acknowledged (durable in the write-ahead file) and not yet known to be in LMDB. */
  unstoredBatches(): number {
    return this.options.read_only === true ? 0 : this.unstored.length;
  }

  /**
   * Whether the storer thread may be writing LMDB (and the end of its file): a store in flight, or
   * its open of LMDB not over yet.
   */
  storeInFlight(): boolean {
    if (this.flight !== null) this.pollStore();
    return this.flight !== null || this.storer.opening();
  }

  /** The storer thread: none (read only, no write-ahead file, could not start, given up), starting (its LMDB open not over), ready. */
  storerState(): StorerState {
    return this.storer.state();
  }

  /** Waits until the storer thread's open of LMDB is over (StorerDriver.awaitOpen: bounded, then given up). */
  awaitStorerOpen(): void {
    this.storer.awaitOpen();
  }

  /**
   * Hands the current cycle's batches to the storer thread and starts the next cycle in the other
   * region, after waiting for the store of that region's previous batches if it is still in
   * flight. Without the thread, stores them here (`storeUnstored`).
   */
  private switchRegion(wal: WalWriter): void {
    if (this.cycleCount() === 0) return;
    this.awaitStore();
    const batches = this.unstored;
    const seq = this.storer.post(batches);
    if (seq === null) {
      this.storeUnstored();
      return;
    }
    this.flight = { seq, count: batches.length, bytes: this.unstored_bytes, last_id: batches[batches.length - 1].batch_id };
    wal.switchRegion();
  }

  /** Notes the store in flight's outcome once it is done (one atomic load when it is not). */
  private pollStore(): void {
    const f = this.flight;
    if (f === null || !this.storer.done(f.seq)) return;
    this.finishStore(f);
  }

  /**
   * Waits for the store in flight, if any, and notes its outcome: before the file's region is
   * reused, before the journal writes LMDB itself, at close (and tests). Counted.
   */
  awaitStore(): void {
    const f = this.flight;
    if (f === null || !this.storer.running()) return;
    this.storer.awaitDone(f.seq, f.last_id);
    this.finishStore(f);
  }

  /**
   * A finished store: its batches leave the unstored ones. A failed one is reported as the next
   * batch's fault and retried here, holding the caller until it lands (the region is not reused
   * meanwhile, and no later batch is acknowledged).
   */
  private finishStore(f: StoreInFlight): void {
    const outcome = this.storer.outcome();
    const batches = this.unstored.slice(0, f.count);
    if (!outcome.ok) {
      this.host.retried(this.host.lastBatchId() + 1, () => storeOnce(this.host.batches, batches, this.options.fault_file), new Error(outcome.message));
      // A thread that could not open LMDB is given up: stores are this thread's again.
      this.storer.storeFailed(outcome.message);
    } else {
      this.stores_async++;
    }
    this.flight = null;
    this.unstored.splice(0, f.count);
    this.unstored_bytes -= f.bytes;
    this.stored(f.last_id, f.bytes);
  }

  /** LMDB holds the batches through `last_id` durably. */
  private stored(last_id: number, bytes: number): void {
    this.stored_batch_id = last_id;
    this.host.reserve.consumed(bytes);
    this.host.storedElsewhere();
    this.stores++;
  }

  /**
   * Stores every unstored batch into LMDB, durably, and restarts the file in region 0: waits for
   * the store in flight, then stores the current cycle's batches here in one transaction. A
   * failing store is retried here (the caller is held, so no later batch is acknowledged; the file
   * keeps every batch LMDB lacks meanwhile), reported through `onFault` as a fault of the next
   * batch, the one it holds. Before a trim, before a batch too large for the file, at close, and
   * without the storer thread.
   */
  storeUnstored(): void {
    if (this.options.read_only === true) return;
    this.awaitStore();
    // Before this thread's LMDB write (a trim and a batch too large for the file come here first).
    this.storer.awaitOpen();
    if (this.unstored.length === 0) return;
    const batches = this.unstored;
    this.host.retried(this.host.lastBatchId() + 1, () => storeOnce(this.host.batches, batches, this.options.fault_file));
    this.unstored = [];
    const bytes = this.unstored_bytes;
    this.unstored_bytes = 0;
    this.stored(batches[batches.length - 1].batch_id, bytes);
    this.wal?.restart(this.stored_batch_id);
  }

  /** The unstored batches from `from` on (none when the first is after `from`: the caller reports the gap). */
  unstoredFrom(from: number): WalBatch[] {
    const u = this.unstored;
    if (u.length === 0 || from < u[0].batch_id || from > u[u.length - 1].batch_id) return [];
    return u.slice(from - u[0].batch_id);
  }

  /**
   * Waits for the store in flight, stores what the write-ahead file still holds (one attempt: if
   * it fails, the file keeps it and the next open stores it), then closes the file and ends the
   * storer thread.
   */
  async close(): Promise<void> {
    if (this.options.read_only !== true) {
      try {
        // A thread still starting is never ended mid-open, nor is LMDB written beside its open.
        this.storer.awaitOpen();
        if (this.flight !== null && this.storer.running()) {
          if (this.storer.awaitOk(this.flight.seq)) {
            const f = this.flight;
            this.unstored.splice(0, f.count);
            this.unstored_bytes -= f.bytes;
          }
          this.flight = null;
        }
        if (this.unstored.length > 0) {
          storeOnce(this.host.batches, this.unstored, this.options.fault_file);
          this.unstored = [];
        }
      } catch (e) {
        console.error(`ringbook: journal: storing the write-ahead file's batches at close failed (the next start stores them): ${describeWriteError(e)}`);
      }
    }
    this.wal?.close();
    await this.storer.close();
  }
}

/** The writer's write-ahead file; null (every batch to LMDB directly) when it cannot be created. */
function openWal(dir: string, bytes: number, sync: WalSync): WalWriter | null {
  try {
    return WalWriter.open(dir, bytes, sync);
  } catch (e) {
    console.error(`ringbook: journal: no write-ahead file (${describeWriteError(e)}): every batch is committed to LMDB before its answer`);
    return null;
  }
}
