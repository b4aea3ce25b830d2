// The write-ahead file's side of the journal (journal.ts owns one WalStore): which batches the
// file holds and LMDB lacks (the unstored ones), when they are stored into LMDB, and the
// recovery of the file's tail at open. The acknowledgement path and its invariant are described
// at the top of journal.ts; the file itself is wal.ts.
import type { Database } from 'lmdb';
import { JournalCorruption } from './journal_codec.js';
import { describeWriteError, injectedFault } from './journal_fault.js';
import type { JournalReserve } from './reserve.js';
import { readWalTail, WalWriter, WAL_BYTES_DEFAULT, type WalBatch, type WalSync } from './wal.js';

/**
 * `afterAck` stores the write-ahead file's batches into LMDB once their records fill this fraction
 * of the file (1/2: 2 MB of the default 4 MB, 512 one-page records, ~0.5 s at 1,000 requests/s),
 * or once WAL_STORE_BYTES of batches wait. Why so rarely (issue 11, docs/benchmarks.md "h21j"):
 * a store costs its two device flushes and a fixed part whatever it holds (~0.65-1.4 ms of CPU
 * for 64 one-request batches, ~1.4-2.4 ms for 512: 10-22 against 3-5 µs per batch), and the
 * matcher is held by it (~1-3 ms), so a request that arrives meanwhile waits: with a store per 64
 * batches, ~1.5% of the requests at 1,000/s met one (the p99). Half the file leaves room for the
 * largest batch (~1 MB), so a batch never waits for a store before its own write.
 */
export const WAL_STORE_FILL_DENOMINATOR = 2;
/** ... or this many bytes of batches (a quarter of the default file). */
export const WAL_STORE_BYTES = 1 << 20;
/** Idle (no request waiting), `storeIdle` stores batches that have waited this long ... */
export const WAL_STORE_IDLE_MS = 100;
/**
 * ... once no batch was written for this long either: the exchange is quiet, and a store (~1-3 ms)
 * is unlikely to hold a request up. At 1,000 requests/s the matcher is idle between most batches
 * but never quiet this long, so stores wait for the file to fill (WAL_STORE_FILL_DENOMINATOR).
 */
export const WAL_STORE_QUIET_MS = 20;

/** The JournalOptions a WalStore reads (described there). */
export interface WalStoreOptions {
  fault_file?: string | null;
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
  /** Runs `write` until it succeeds, holding the caller; faults reported as batch `batch_id`'s. */
  retried: (batch_id: number, write: () => void) => void;
}

export class WalStore {
  private readonly options: WalStoreOptions;
  private readonly host: WalStoreHost;
  /** LMDB's last batch (0: none); the write-ahead file holds the ones after it. */
  private stored_batch_id: number;
  /**
   * The writer's write-ahead file (null: read only, `wal_bytes: 0`, or it could not be created, in
   * which case every batch goes to LMDB directly as before it existed).
   */
  private readonly wal: WalWriter | null;
  /**
   * The batches after LMDB's last, in order: in the write-ahead file, awaiting their store
   * (writer), or read from it at open (read only).
   */
  private unstored: WalBatch[] = [];
  private unstored_bytes = 0;
  /** When the oldest unstored batch was acknowledged (Date.now()). */
  private unstored_since_ms = 0;
  /** When the last batch was written (Date.now()). */
  private last_append_ms = 0;
  /** LMDB commits that stored write-ahead batches, since open. */
  stores = 0;

  /** `stored_batch_id`: LMDB's last batch (0: none). */
  constructor(dir: string, stored_batch_id: number, options: WalStoreOptions, host: WalStoreHost) {
    this.options = options;
    this.host = host;
    this.stored_batch_id = stored_batch_id;
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
      this.unstored = tail;
      this.storeOnce();
      this.stored_batch_id = tail[tail.length - 1].batch_id;
      this.unstored = [];
      console.error(`ringbook: journal: stored batches ${tail[0].batch_id}..${this.stored_batch_id} from the write-ahead file into LMDB`);
    }
    this.wal = options.wal_bytes === 0 ? null : openWal(dir, options.wal_bytes ?? WAL_BYTES_DEFAULT, options.wal_sync ?? 'dsync');
    this.wal?.restart(this.stored_batch_id);
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
      // A full file: its batches go to LMDB first, and the next cycle starts at offset 0.
      if (!wal.fits(value.length)) this.storeUnstored();
      this.host.retried(batch_id, () => this.walOnce(wal, batch_id, value));
      const now_ms = Date.now();
      this.last_append_ms = now_ms;
      if (this.unstored.length === 0) this.unstored_since_ms = now_ms;
      this.unstored.push({ batch_id, value });
      this.unstored_bytes += value.length;
    } else {
      this.storeUnstored();
      this.host.retried(batch_id, () => this.putOnce(batch_id, value));
      this.stored_batch_id = batch_id;
      wal?.restart(batch_id);
      this.host.reserve.consumed(value.length);
    }
  }

  /**
   * After the batch's commit marker is out (the matcher, between batches): once the unstored
   * batches' records fill 1/WAL_STORE_FILL_DENOMINATOR of the write-ahead file (or WAL_STORE_BYTES
   * of batches wait), stores them into LMDB (`storeUnstored`). Returns whether it stored (and so
   * took time).
   */
  afterAck(): boolean {
    const wal = this.wal;
    if (wal === null || this.unstored.length === 0) return false;
    if (wal.usedBytes() * WAL_STORE_FILL_DENOMINATOR < wal.size_bytes && this.unstored_bytes < WAL_STORE_BYTES) return false;
    this.storeUnstored();
    return true;
  }

  /**
   * The matcher with no request waiting: stores the batches once the oldest has waited
   * WAL_STORE_IDLE_MS and no batch came for WAL_STORE_QUIET_MS (a quiet exchange's LMDB catches up
   * within ~0.1-0.2 s; a busy one's at `afterAck`). Returns whether it stored.
   */
  storeIdle(now_ms = Date.now()): boolean {
    if (this.unstored.length === 0 || now_ms - this.unstored_since_ms < WAL_STORE_IDLE_MS || now_ms - this.last_append_ms < WAL_STORE_QUIET_MS) return false;
    this.storeUnstored();
    return true;
  }

  /** When the last batch was written into the write-ahead file (Date.now(); 0: none since open). */
  lastAppendMs(): number {
    return this.last_append_ms;
  }

  /** Batches acknowledged (durable in the write-ahead file) and not yet in LMDB. */
  unstoredBatches(): number {
    return this.options.read_only === true ? 0 : this.unstored.length;
  }

  /**
   * Stores the write-ahead file's batches into LMDB, durably, in one transaction, and restarts the
   * file at offset 0. A failing store is retried here (the caller is held, so no later batch is
   * acknowledged; the file keeps every batch LMDB lacks meanwhile), reported through `onFault` as
   * a fault of the next batch, the one it holds. Also before a trim, before a batch that does not
   * fit, and at close.
   */
  storeUnstored(): void {
    if (this.options.read_only === true || this.unstored.length === 0) return;
    this.host.retried(this.host.lastBatchId() + 1, () => this.storeOnce());
    this.stored_batch_id = this.unstored[this.unstored.length - 1].batch_id;
    this.host.reserve.consumed(this.unstored_bytes);
    this.unstored = [];
    this.unstored_bytes = 0;
    this.stores++;
    this.wal?.restart(this.stored_batch_id);
  }

  /** One synchronous LMDB transaction with every unstored batch: durable when it returns. */
  private storeOnce(): void {
    if (this.options.fault_file && injectedFault(this.options.fault_file) === 'store') throw new Error('injected store failure (test seam)');
    const batches = this.unstored;
    const db = this.host.batches;
    db.transactionSync(() => {
      for (const b of batches) {
        const ok: unknown = db.putSync(b.batch_id, b.value);
        if (ok === false) throw new Error(`journal write of batch ${b.batch_id} failed`);
      }
    });
  }

  private walOnce(wal: WalWriter, batch_id: number, value: Buffer): void {
    const injected = this.options.fault_file ? injectedFault(this.options.fault_file) : null;
    if (injected === 'write') throw new Error('injected write failure (test seam)');
    wal.append(batch_id, value, injected === 'fsync' ? () => {
      throw new Error('injected fsync failure (test seam): durability unknown');
    } : undefined);
  }

  private putOnce(batch_id: number, value: Buffer): void {
    const injected = this.options.fault_file ? injectedFault(this.options.fault_file) : null;
    if (injected === 'write') throw new Error('injected write failure (test seam)');
    // One synchronous transaction, committed with sync on: durable when putSync returns.
    // (lmdb-js returns false for a refused conditional write; its types say void.)
    const ok: unknown = this.host.batches.putSync(batch_id, value);
    if (ok === false) throw new Error(`journal write of batch ${batch_id} failed`);
    if (injected === 'fsync') throw new Error('injected fsync failure (test seam): durability unknown');
  }

  /** The unstored batches from `from` on (none when the first is after `from`: the caller reports the gap). */
  unstoredFrom(from: number): WalBatch[] {
    const u = this.unstored;
    if (u.length === 0 || from < u[0].batch_id || from > u[u.length - 1].batch_id) return [];
    return u.slice(from - u[0].batch_id);
  }

  /**
   * Stores what the write-ahead file holds (one attempt: if it fails, the file keeps it and the
   * next open stores it), then closes the file.
   */
  close(): void {
    if (this.options.read_only !== true && this.unstored.length > 0) {
      try {
        this.storeOnce();
        this.unstored = [];
      } catch (e) {
        console.error(`ringbook: journal: storing the write-ahead file's batches at close failed (the next start stores them): ${describeWriteError(e)}`);
      }
    }
    this.wal?.close();
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
