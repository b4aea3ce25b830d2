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
 * `afterAck` stores the write-ahead file's batches into LMDB once this many wait (or
 * WAL_STORE_BYTES of them): one LMDB commit (two flushes, ~0.45 ms) per 64 batches instead of
 * per batch, and the matcher is held by it 64 times less often (docs/benchmarks.md "hwj").
 */
export const WAL_STORE_BATCHES = 64;
/** ... or this many bytes of batches (a quarter of the default file). */
export const WAL_STORE_BYTES = 1 << 20;
/** Idle (no request waiting), `storeIdle` stores batches that have waited this long. */
export const WAL_STORE_IDLE_MS = 100;

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
      if (this.unstored.length === 0) this.unstored_since_ms = Date.now();
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
   * After the batch's commit marker is out (the matcher, between batches): once WAL_STORE_BATCHES
   * batches (or WAL_STORE_BYTES) wait in the write-ahead file, stores them into LMDB
   * (`storeUnstored`). Returns whether it stored (and so took time).
   */
  afterAck(): boolean {
    if (this.unstored.length < WAL_STORE_BATCHES && this.unstored_bytes < WAL_STORE_BYTES) return false;
    this.storeUnstored();
    return true;
  }

  /**
   * The matcher with no request waiting: stores the batches that have waited WAL_STORE_IDLE_MS
   * or more (a quiet exchange's LMDB catches up within ~0.1-0.2 s). Returns whether it stored.
   */
  storeIdle(now_ms = Date.now()): boolean {
    if (this.unstored.length === 0 || now_ms - this.unstored_since_ms < WAL_STORE_IDLE_MS) return false;
    this.storeUnstored();
    return true;
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
