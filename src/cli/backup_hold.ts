// What one attempt of `ringbook backup` (backup_copy.ts) holds of the running server's data dir
// from its start: a read transaction on the journal's LMDB and a descriptor of every snapshot file.
//
// Why: the server trims its journal through its oldest kept snapshot after each snapshot
// (src/snapshot/coordinator.ts) and prunes snapshots past `snapshots.keep`. With `keep: 1` the
// trim follows every snapshot at once, so a snapshot completed while the parts are copied (one
// per `every_batches` batches) either trims the journal's copy past the DA store's copy (copied
// before it: the restored DA thread could not publish the next batch) or prunes the snapshot the
// journal's copy was trimmed through (no snapshot continues it). Each attempt was checked and
// made again (BACKUP_ATTEMPTS_MAX), but under a steady flow every attempt could lose the same way.
// Held from the start, nothing a trim or a prune does after it is lost:
// - the journal's copy gets back the batches trimmed since the start (read in the held
//   transaction, written into the copy under the same keys, byte for byte), so it starts where the
//   server's journal started then, at or before the DA store's copy's end + 1 (a trim never passes
//   what the DA store holds durably, and the DA store is copied after the start);
// - a snapshot pruned since the start is copied from its held descriptor (a file written before
//   the start, so its batch is in the DA store's copy), and the journal from the start continues it.
// The cost to the server: LMDB keeps the journal's pages of the start until the attempt ends (as
// the journal's copy already does for its own run).
import fs from 'node:fs';
import path from 'node:path';
import { open, type Database, type RootDatabase, type Transaction } from 'lmdb';
import { journalBatchesDb } from '../journal/journal_db.js';
import { listSnapshots } from '../snapshot/snapshot_file.js';

/** A copy opened to write trimmed batches back: values stored as given (the journal's env is uncompressed). */
const JOURNAL_COPY_ENV = { compression: false, overlappingSync: false, noSync: false } as const;
/** Batches written back per transaction into the journal's copy (fillTrimmed). */
const REFILL_TXN_BATCHES_MAX = 4_096;
/** Bytes read and written at a time when a held snapshot is copied from its descriptor. */
const COPY_CHUNK_BYTES = 1 << 20;

interface HeldSnapshot {
  name: string;
  fd: number;
}

export class BackupHold {
  private constructor(
    /** The server's journal environment (read only), null when it has no LMDB yet. */
    readonly journal_env: RootDatabase | null,
    private readonly batches: Database<Buffer, number> | null,
    private readonly txn: Transaction | null,
    private readonly snapshots: HeldSnapshot[],
  ) {}

  /** Takes the hold on `data_dir` (before any part is copied). */
  static take(data_dir: string): BackupHold {
    const journal_dir = path.join(data_dir, 'journal');
    let env: RootDatabase | null = null;
    let batches: Database<Buffer, number> | null = null;
    let txn: Transaction | null = null;
    if (fs.existsSync(path.join(journal_dir, 'data.mdb'))) {
      // readOnly: this process never writes the server's environment.
      env = open({ path: journal_dir, readOnly: true });
      batches = env.openDB<Buffer, number>(journalBatchesDb());
      txn = env.useReadTransaction();
    }
    const held: HeldSnapshot[] = [];
    for (const s of listSnapshots(path.join(data_dir, 'snapshots'))) {
      try {
        held.push({ name: path.basename(s.file), fd: fs.openSync(s.file, 'r') });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // pruned since the listing
      }
    }
    return new BackupHold(env, batches, txn, held);
  }

  /**
   * Writes into the journal's copy in `dst_journal` the batches held from the start that it lacks
   * below its first one (trimmed by the server meanwhile). Returns how many.
   */
  fillTrimmed(dst_journal: string): number {
    if (this.batches === null || this.txn === null) return 0;
    const copy = open({ path: dst_journal, ...JOURNAL_COPY_ENV });
    try {
      const db = copy.openDB<Buffer, number>(journalBatchesDb());
      let copy_first = 0;
      for (const key of db.getKeys({ limit: 1 })) copy_first = key as number;
      if (copy_first === 0) return 0; // nothing in the copy's LMDB: nothing was trimmed from it
      // Streamed in transactions of at most REFILL_TXN_BATCHES_MAX (a long copy under a fast
      // trim can leave many; one LMDB write transaction holds a bounded number of dirty pages).
      let refilled = 0;
      let chunk: { key: number; value: Buffer }[] = [];
      const flush = (): void => {
        const items = chunk;
        db.transactionSync(() => {
          for (const m of items) db.putSync(m.key, m.value);
        });
        refilled += items.length;
        chunk = [];
      };
      for (const { key, value } of this.batches.getRange({ end: copy_first, transaction: this.txn })) {
        chunk.push({ key: key as number, value: value as Buffer });
        if (chunk.length >= REFILL_TXN_BATCHES_MAX) flush();
      }
      if (chunk.length > 0) flush();
      return refilled;
    } finally {
      copy.close();
    }
  }

  /**
   * Copies into `dst_snapshots` each held snapshot not there yet (pruned by the server since the
   * start), from its descriptor. Returns the files and bytes copied.
   */
  copyPrunedSnapshots(dst_snapshots: string): { files: number; bytes: number } {
    let files = 0;
    let bytes = 0;
    const buf = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
    for (const s of this.snapshots) {
      const to = path.join(dst_snapshots, s.name);
      if (fs.existsSync(to)) continue;
      const out = fs.openSync(to, 'wx', 0o644);
      try {
        for (let pos = 0; ;) {
          const n = fs.readSync(s.fd, buf, 0, buf.length, pos);
          if (n === 0) break;
          fs.writeSync(out, buf, 0, n);
          pos += n;
          bytes += n;
        }
      } finally {
        fs.closeSync(out);
      }
      files++;
    }
    return { files, bytes };
  }

  /** Ends the read transaction (the server's pages are free again), closes the environment and the descriptors. */
  async release(): Promise<void> {
    for (const s of this.snapshots) fs.closeSync(s.fd);
    this.snapshots.length = 0;
    this.txn?.done();
    await this.journal_env?.close();
  }
}
