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
// fall below a threshold, zeros are appended to the file and fdatasynced (one step at most: 1 MB
// took ~1.6 ms here). Durability does not depend on any of this: LMDB writes and syncs its pages
// wherever they are, and only ever past its own last page into the zeros, never the reverse (the
// zeros are written from the file's current end, on the matcher thread, and never while a store
// runs on the storer thread: Journal.reserveAhead checks, since both would write at the file's
// end). A crash mid-step leaves a longer file of zeros, which LMDB ignores.
import fs from 'node:fs';

/** Largest reserve: ~30 s of journal at 1,000 one-request batches/s (each ~0.3 KB, a page per ~13). */
export const JOURNAL_RESERVE_BYTES_MAX = 8 << 20;
/** At most this much is written per call (1 MB + fdatasync: ~1.6 ms on this disk). */
export const JOURNAL_RESERVE_STEP_BYTES_MAX = 1 << 20;
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
      while (done < step) done += fs.writeSync(fd, zeros, 0, step - done, size + done);
      fs.fdatasyncSync(fd);
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
