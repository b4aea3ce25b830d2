// Written zeros kept ahead of the journal's last LMDB page (issue 11, docs/benchmarks.md "journal
// commit").
//
// Why. A synchronous LMDB commit writes its dirty pages, fdatasyncs, then writes the meta page
// through an O_DSYNC descriptor. When the commit's new pages lie past the end of data.mdb (the
// journal only grows, and the DA thread's read snapshots keep freed pages from being reused at
// once), the file's size changes, and the fdatasync must also write the inode: one more
// synchronous device round trip inside the commit. Counted with the block tracepoints on this
// machine (ext4, virtio disk, 1,000 sequential one-request appends): 405 inode writes without the
// reserve, 205 with it (the rest follow mtime ticks); 20-request batches (overflow pages appended
// every commit): 1,182 and 173. Writing over blocks that already hold written zeros changes no
// metadata, so the commit is the data pages, a flush, the meta page and a flush.
//
// How. Between batches the matcher calls `reserveAhead`: when the zeros left past LMDB's last page
// fall below a threshold, zeros are appended to the file, at most JOURNAL_RESERVE_STEP_BYTES_MAX
// per call (the zeros are written from the file's current end, on the matcher thread, and never
// while a store runs on the storer thread: Journal.reserveAhead checks, since both would write at
// the file's end).
//
// No sync here (h25p, 2026-11-29). A step used to fdatasync its zeros on the matcher thread: the
// matcher was held ~3.1 ms p50 per top-up (bench/journal_topup.ts), a batch's worth of requests
// waiting behind it. The zeros need no durability of their own, and the journal's does not change
// without it:
// - LMDB never reads a page past its last committed one (the meta page's last page number), so
//   zeros that a crash loses, or a size that a crash takes back, are never looked at; the next
//   top-up after the restart measures the file again (fstat) and writes what is missing.
// - A commit that puts pages into the zeros makes them durable itself, file size included: the
//   commit path (lmdb-js 3.5.6, dependencies/lmdb/libraries/liblmdb/mdb.c mdb_txn_commit:
//   mdb_page_flush, then mdb_env_sync0, then mdb_env_write_meta) pwrites its pages through the
//   environment's descriptor, fdatasyncs it (MDB_FDATASYNC = fdatasync: this kernel is newer than
//   3.6, so no MDB_FSYNCONLY fallback; no MDB_WRITEMAP, no msync path), and only then writes the
//   meta page that points at them. On Linux fdatasync writes every dirty page of the file (the
//   whole inode, whichever descriptor or thread wrote it: these zeros too) and the inode when its
//   size or block allocation changed, so the size covering the commit's pages is on disk before
//   the meta page is: the guarantee every growing commit relied on before the reserve existed,
//   and that the old step's own fdatasync relied on (ext4 with or without a journal). Both the
//   matcher's and the storer thread's environments open the journal with `noSync: false,
//   overlappingSync: false` (journal.ts, wal_storer_worker.ts): every commit takes this path.
//   Nothing else reads data.mdb by size (backups copy the zeros as content).
// - The write-ahead file (wal.ts) is another file with its own flush; it is untouched.
// What moves: the zeros' device write and their block allocation (ext4 delalloc) now happen in
// the next LMDB commit's fdatasync, on the storer thread, off the acknowledgement path: one slower
// store per fill (a fill tops up from half to full, up to 4 MB, in idle calls; a store runs every
// ~0.5 s at 1,000 requests/s); the commits after it overwrite allocated blocks as before. The
// kernel's writeback may also write the zeros earlier, on its own threads.
// A crash mid-step leaves a longer file of zeros (or a shorter one), which LMDB ignores.
import fs from 'node:fs';

/** Largest reserve: ~30 s of journal at 1,000 one-request batches/s (each ~0.3 KB, a page per ~13). */
export const JOURNAL_RESERVE_BYTES_MAX = 8 << 20;
/**
 * At most this much is written per call: the matcher is held for the call (the pwrite copies the
 * zeros into the page cache, ~70 µs p50 here for 256 KB; it was 1 MB + an fdatasync, ~3.1 ms), so
 * the step bounds the wait of the requests that arrive meanwhile. 32 idle calls fill the 8 MB cap
 * from empty; busy, one call at a quarter left buys ~256 KB (~800 one-request batches).
 */
export const JOURNAL_RESERVE_STEP_BYTES_MAX = 256 << 10;
/** Values appended between two looks at LMDB's stats at least (~200 one-request batches). */
const JOURNAL_RESERVE_LOOK_BYTES_MIN = 64 << 10;
/**
 * The reserve is at most this fraction of the journal's used bytes (1/8): a small journal (a
 * fresh data dir, the tests' full-disk check) reserves little, a large one up to the cap.
 */
const RESERVE_FRACTION_DENOMINATOR = 8;

/** LMDB's end: bytes used ((last page number + 1) x page size) and its page size. */
export type LmdbEnd = () => { used_bytes: number; page_bytes: number };

export class JournalReserve {
  private readonly file: string;
  private readonly lmdb: LmdbEnd;
  private fd: number | null = null;
  private zeros: Buffer | null = null;
  /**
   * Bytes to append before the next look at LMDB's stats (~6 µs): the zeros left above the idle
   * threshold at the last look, at least JOURNAL_RESERVE_LOOK_BYTES_MIN. Appends subtract their
   * values' bytes (an estimate: LMDB also rewrites tree pages, which only makes a look late).
   */
  private until_look_bytes = 0;
  /** Topping up (it fell below half): a step per idle call until full. */
  private filling = false;
  /** Zero bytes written, since open. */
  written_bytes = 0;
  /** Steps that failed (full disk, I/O error); the journal goes on without the reserve. */
  failures = 0;

  constructor(file: string, lmdb: LmdbEnd) {
    this.file = file;
    this.lmdb = lmdb;
  }

  /** After an append of `value_bytes`. */
  consumed(value_bytes: number): void {
    this.until_look_bytes -= value_bytes;
  }

  /**
   * Tops the reserve up when it runs low. Idle (no request waiting): once less than half is left,
   * a step per call until it is full again. Requests waiting: a step only below a quarter. Returns
   * whether it wrote (and so took time).
   */
  reserveAhead(idle: boolean): boolean {
    if (this.until_look_bytes > 0 && !(idle && this.filling)) return false;
    const { used_bytes, page_bytes } = this.lmdb();
    const target = Math.min(JOURNAL_RESERVE_BYTES_MAX, Math.floor(used_bytes / RESERVE_FRACTION_DENOMINATOR / page_bytes) * page_bytes);
    let fd: number;
    let size: number;
    try {
      fd = this.fd ?? (this.fd = fs.openSync(this.file, 'r+'));
      size = fs.fstatSync(fd).size;
    } catch {
      // Look again only after the next stretch of appends, not at every batch: a file that cannot
      // be opened would otherwise cost an open and a stat per batch on the matcher thread.
      this.failures++;
      this.until_look_bytes = JOURNAL_RESERVE_LOOK_BYTES_MIN;
      return false;
    }
    const left = Math.max(0, size - used_bytes);
    if (left >= target) this.filling = false;
    else if (left < target / 2) this.filling = true;
    // Look again once the appends may have brought it to the next threshold: half (to start
    // topping up at the next idle moment), or a quarter while topping up (to step while busy).
    this.until_look_bytes = Math.max(JOURNAL_RESERVE_LOOK_BYTES_MIN, left - target / (this.filling ? 4 : 2));
    if (!this.filling || (!idle && left >= target / 4)) return false;
    const step = Math.min(JOURNAL_RESERVE_STEP_BYTES_MAX, target - left);
    const zeros = this.zeros ?? (this.zeros = Buffer.alloc(JOURNAL_RESERVE_STEP_BYTES_MAX));
    try {
      let done = 0;
      // No fdatasync: the next LMDB commit's own makes the zeros and the size durable (top).
      while (done < step) done += fs.writeSync(fd, zeros, 0, step - done, size + done);
      this.written_bytes += done;
    } catch {
      // Full disk or I/O error: LMDB grows the file itself, as without a reserve, and its own
      // write reports the fault if there is one. Tried again after the next look.
      this.failures++;
      this.filling = false;
    }
    return true;
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
