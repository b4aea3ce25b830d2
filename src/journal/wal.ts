// The journal's write-ahead file (issue 11, docs/operations.md "Durability", docs/benchmarks.md
// "hwj"): a batch is acknowledged once it is durable HERE, with one device flush, and is stored
// into LMDB (the journal every reader uses) after its acknowledgement.
//
// Why. A synchronous LMDB commit is two flushes (its pages + fdatasync, then the meta page through
// an O_DSYNC descriptor): p50 ~0.45 ms, p99 ~1.5 ms on this disk, the largest part of a request's
// latency at 1,000/s. One 4 KB page written inside a file region written beforehand, then one
// fdatasync: p50 ~0.2 ms, p99 ~0.5 ms (native-bench/sync_floor).
//
// Layout. `wal.log` is preallocated (zeros written and fdatasynced once at creation), so an
// append never changes the file's size and its fdatasync writes no inode. Records start on 4 KB
// boundaries and are written as whole pages (no read-modify-write of a page not in the cache):
//   magic u32, version u32, crc u32, body_bytes u32, prev_crc u32, prev_last u32, base f64,
//   batch_id f64, then the body (the batch exactly as LMDB stores it: journal_codec.ts
//   `encodeBatch`), zeros to the next page.
// `crc` is the CRC-32 of the header from `body_bytes` on and of the body. The file is two regions
// (h22j): [0, half) and [half, end), half = half the file's pages. A cycle starts at a region's
// first byte; `base` is the batch before its first record, and its records are batches base+1,
// base+2, ... at increasing offsets in that region, each naming the previous one's crc (`prev_crc`,
// 0 for the first). A valid chain from a region's start (intact, same base, ids contiguous, crcs
// linked) is that region's cycle; it ends at the first record that breaks a rule: zeros, a torn
// write (crc), or a record of an earlier cycle (another base, an older id, another crc link),
// which the current cycle overwrote only in part. Record bodies hold request bytes a client
// chose, so a header forged inside a stale body would also have to name the previous record's
// crc, which covers the sequencer's time and other clients' requests.
//
// Two cycles, so that LMDB's store of one region's batches runs beside the matcher (wal_store.ts):
// when a region is full, its batches go to LMDB on the storer thread and the next cycle starts in
// the other region, whose previous batches LMDB already holds durably. A cycle's first record says
// in `prev_last` where its predecessor cycle's last record is (its page + 1), or 0 when its base
// is in LMDB (the first cycle after an open, a restart after a synchronous store): then the other
// region's cycle is history. The live batches are the predecessor's (when named) then the newest
// cycle's, in id order (`walkWal`). An older build's file (one cycle from offset 0, possibly past
// half, `prev_last` 0) reads the same way.
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';

export const WAL_FILE = 'wal.log';
/** Default size: four of the largest batches (4,096 requests with consent slots, ~1 MB). */
export const WAL_BYTES_DEFAULT = 4 << 20;
export const WAL_PAGE_BYTES = 4096;
const MAGIC = 0x4c415752; // "RWAL"
const VERSION = 1;
export const WAL_HEADER_BYTES = 40;

/**
 * How an append is made durable: 'dsync', one pwritev through an O_DSYNC descriptor (the kernel
 * writes and flushes the written range before the call returns: one syscall); 'fdatasync', a
 * pwritev then fdatasync. The same device flush; docs/benchmarks.md "hwj" compares them. On
 * this disk (virtio, write-back cache, no FUA) `O_DIRECT`, `RWF_DSYNC` and two pages measured no
 * faster either: every way is a write then a flush, and the flush is the cost (docs/benchmarks.md
 * "h16s", native-bench/durable_append).
 */
export type WalSync = 'dsync' | 'fdatasync';

/** One record's header fields (its body is read separately). */
export interface WalHeader {
  offset: number;
  base: number;
  batch_id: number;
  crc: number;
  prev_crc: number;
  /** A cycle's first record: its predecessor cycle's last record's offset; -1: none (or not a first record). */
  prev_last: number;
  body_bytes: number;
  /** Where the next record of the cycle starts. */
  next_offset: number;
}

export function walPath(journal_dir: string): string {
  return path.join(journal_dir, WAL_FILE);
}

function roundUpPage(bytes: number): number {
  return Math.ceil(bytes / WAL_PAGE_BYTES) * WAL_PAGE_BYTES;
}

/** The file's regions (h22j): one is filled while the other's batches are stored into LMDB. */
export const WAL_REGIONS = 2;

/** Where the second region starts in a file of `file_bytes` (half its whole pages, rounded down). */
export function walRegionStart(file_bytes: number): number {
  return Math.floor(Math.floor(file_bytes / WAL_PAGE_BYTES) / WAL_REGIONS) * WAL_PAGE_BYTES;
}

/** Space a record of `body_bytes` takes in the file. */
export function walRecordBytes(body_bytes: number): number {
  return roundUpPage(WAL_HEADER_BYTES + body_bytes);
}

function recordCrc(header: Buffer, body: Uint8Array): number {
  return crc32(body, crc32(header.subarray(12, WAL_HEADER_BYTES)));
}

/**
 * The matcher thread's writer: appends records durably, one device flush each. Single writer:
 * the journal's WalStore (wal_store.ts) owns it and decides when a cycle starts (`restart` after
 * everything is in LMDB, `switchRegion` while the current region's batches are being stored).
 */
export class WalWriter {
  readonly file: string;
  readonly size_bytes: number;
  private readonly fd: number;
  /** How an append is made durable (see WalSync). */
  readonly sync: WalSync;
  private readonly header = Buffer.alloc(WAL_HEADER_BYTES);
  private readonly zeros = Buffer.alloc(WAL_PAGE_BYTES);
  /** Where the second region starts (walRegionStart of the file's size). */
  readonly region_start_bytes: number;
  /** The current cycle: its region (0, 1), base, where the next record goes and the crc it names. */
  private region: 0 | 1 = 0;
  private base = 0;
  private next_offset = 0;
  private prev_crc = 0;
  /** Written into the cycle's first record (-1: its base is in LMDB). */
  private prev_last = -1;
  /** The offset of the cycle's last record (-1: none yet). */
  private last_offset = -1;
  /** Records appended in this cycle. */
  records = 0;

  private constructor(file: string, fd: number, size_bytes: number, sync: WalSync) {
    this.file = file;
    this.fd = fd;
    this.size_bytes = size_bytes;
    this.sync = sync;
    this.region_start_bytes = walRegionStart(size_bytes);
  }

  /**
   * Opens `journal/wal.log`, creating and preallocating it when absent (zeros, fdatasync, then an
   * fsync of the directory so the file's entry is durable too). A file left half-created by a
   * crash is shorter than asked or all zeros: either way it holds no record, and a short one is
   * completed here.
   */
  static open(journal_dir: string, size_bytes = WAL_BYTES_DEFAULT, sync: WalSync = 'dsync'): WalWriter {
    const file = walPath(journal_dir);
    let fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_CREAT, 0o644);
    try {
      const have = fs.fstatSync(fd).size;
      const want = Math.max(roundUpPage(size_bytes), 2 * WAL_PAGE_BYTES);
      if (have < want) {
        const chunk = Buffer.alloc(Math.min(1 << 20, want - have));
        for (let at = have; at < want;) at += fs.writeSync(fd, chunk, 0, Math.min(chunk.length, want - at), at);
        fs.fdatasyncSync(fd);
        const dir_fd = fs.openSync(journal_dir, 'r');
        try {
          fs.fsyncSync(dir_fd);
        } finally {
          fs.closeSync(dir_fd);
        }
      }
      const bytes = Math.max(have, want) - (Math.max(have, want) % WAL_PAGE_BYTES);
      if (sync === 'dsync') {
        // Created with a plain descriptor (one flush for the whole preallocation); appends through
        // an O_DSYNC one.
        const dsync_fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_DSYNC);
        fs.closeSync(fd);
        fd = dsync_fd;
      }
      return new WalWriter(file, fd, bytes, sync);
    } catch (e) {
      fs.closeSync(fd);
      throw e;
    }
  }

  /** Starts a new cycle in region 0: every record written so far is in LMDB, whose last batch is `base`. */
  restart(base: number): void {
    this.startCycle(0, base, -1);
  }

  /**
   * Starts the next cycle in the other region, after this cycle's last batch, naming this cycle's
   * last record (its batches must stay readable until LMDB holds them: the caller stores them
   * before it switches back). The other region's previous batches must be in LMDB.
   */
  switchRegion(): void {
    if (this.records === 0) throw new Error('write-ahead file: switch of an empty cycle');
    this.startCycle(this.region === 0 ? 1 : 0, this.base + this.records, this.last_offset);
  }

  private startCycle(region: 0 | 1, base: number, prev_last: number): void {
    this.region = region;
    this.base = base;
    this.next_offset = region === 0 ? 0 : this.region_start_bytes;
    this.prev_crc = 0;
    this.prev_last = prev_last;
    this.last_offset = -1;
    this.records = 0;
  }

  /** The end of the current cycle's region. */
  private regionEnd(): number {
    return this.region === 0 ? this.region_start_bytes : this.size_bytes;
  }

  /** Whether a record of `body_bytes` fits after the records of this cycle, in its region. */
  fits(body_bytes: number): boolean {
    return this.next_offset + walRecordBytes(body_bytes) <= this.regionEnd();
  }

  /** Whether it would fit in an empty cycle of either region (a larger batch goes to LMDB directly). */
  fitsEmpty(body_bytes: number): boolean {
    return walRecordBytes(body_bytes) <= Math.min(this.region_start_bytes, this.size_bytes - this.region_start_bytes);
  }

  /** The batch id the next record must carry. */
  nextBatchId(): number {
    return this.base + this.records + 1;
  }

  /**
   * Writes batch `batch_id` (must be `nextBatchId()`, and must fit) and returns once it is durable
   * (pwritev of the whole pages through the O_DSYNC descriptor, or pwritev then fdatasync). On an error nothing advances: the same record
   * is written again at the same offset by the next call. `afterSync` runs after the flush and
   * before the record counts (the journal's fault seam: an fsync error leaves durability unknown).
   */
  append(batch_id: number, body: Uint8Array, afterSync?: () => void): void {
    if (batch_id !== this.nextBatchId()) throw new Error(`write-ahead file: batch ${batch_id} after ${this.nextBatchId() - 1}`);
    const h = this.header;
    h.writeUInt32LE(MAGIC, 0);
    h.writeUInt32LE(VERSION, 4);
    h.writeUInt32LE(body.length, 12);
    h.writeUInt32LE(this.prev_crc, 16);
    h.writeUInt32LE(this.records === 0 && this.prev_last >= 0 ? this.prev_last / WAL_PAGE_BYTES + 1 : 0, 20);
    h.writeDoubleLE(this.base, 24);
    h.writeDoubleLE(batch_id, 32);
    const crc = recordCrc(h, body);
    h.writeUInt32LE(crc, 8);
    const bytes = walRecordBytes(body.length);
    const pad = bytes - WAL_HEADER_BYTES - body.length;
    const parts = pad > 0 ? [h, body, this.zeros.subarray(0, pad)] : [h, body];
    let written = fs.writevSync(this.fd, parts, this.next_offset);
    // A short write (rare: signals, odd file systems): the rest (each part flushed as written
    // through O_DSYNC; otherwise the fdatasync below covers all).
    if (written < bytes) {
      const whole = Buffer.concat(parts);
      while (written < bytes) written += fs.writeSync(this.fd, whole, written, bytes - written, this.next_offset + written);
    }
    if (this.sync === 'fdatasync') fs.fdatasyncSync(this.fd);
    afterSync?.();
    this.prev_crc = crc;
    this.last_offset = this.next_offset;
    this.next_offset += bytes;
    this.records++;
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

/**
 * Reads the record at `offset` (header and body) into `scratch` (grown as needed; returned with
 * the header) and checks it: magic, version, size within the file, crc. Null when any fails
 * (zeros, a torn or a concurrent write, garbage). The body is `scratch.buf` bytes
 * [WAL_HEADER_BYTES, WAL_HEADER_BYTES + body_bytes), valid until the next read into it.
 */
export function readWalRecord(fd: number, offset: number, file_bytes: number, scratch: WalScratch, with_body = true): WalHeader | null {
  if (offset + WAL_HEADER_BYTES > file_bytes) return null;
  // With the body: the record's first page in one pread (a record of up to ~4 KB, the usual
  // one-page record, costs one syscall), the rest after it; headers only: the header.
  const h = with_body ? scratch.buf : scratch.header;
  const first = with_body ? Math.min(WAL_PAGE_BYTES, file_bytes - offset) : WAL_HEADER_BYTES;
  const got_first = fs.readSync(fd, h, 0, first, offset);
  if (got_first < WAL_HEADER_BYTES) return null;
  if (h.readUInt32LE(0) !== MAGIC || h.readUInt32LE(4) !== VERSION) return null;
  const body_bytes = h.readUInt32LE(12);
  if (offset + walRecordBytes(body_bytes) > file_bytes) return null;
  const prev_last_page = h.readUInt32LE(20);
  const header: WalHeader = {
    offset, crc: h.readUInt32LE(8), body_bytes, prev_crc: h.readUInt32LE(16), base: h.readDoubleLE(24), batch_id: h.readDoubleLE(32),
    prev_last: prev_last_page === 0 ? -1 : (prev_last_page - 1) * WAL_PAGE_BYTES,
    next_offset: offset + walRecordBytes(body_bytes),
  };
  if (!Number.isSafeInteger(header.base) || !Number.isSafeInteger(header.batch_id)) return null;
  if (!with_body) return header;
  const total = WAL_HEADER_BYTES + body_bytes;
  if (scratch.buf.length < total) {
    const grown = Buffer.alloc(Math.max(total, scratch.buf.length * 2));
    grown.set(scratch.buf.subarray(0, got_first));
    scratch.buf = grown;
  }
  const buf = scratch.buf;
  for (let got = got_first; got < total;) {
    const n = fs.readSync(fd, buf, got, total - got, offset + got);
    if (n === 0) return null;
    got += n;
  }
  // The CRC covers the header's fields and the body: a record torn by a concurrent writer (the
  // matcher restarting the file) between or within the reads is refused here.
  if (recordCrc(buf, buf.subarray(WAL_HEADER_BYTES, total)) !== header.crc) return null;
  return header;
}

/** Reused read buffers of one reader (a thread's). */
export class WalScratch {
  readonly header = Buffer.alloc(WAL_HEADER_BYTES);
  buf = Buffer.alloc(WAL_PAGE_BYTES);

  body(h: WalHeader): Buffer {
    return this.buf.subarray(WAL_HEADER_BYTES, WAL_HEADER_BYTES + h.body_bytes);
  }
}

/**
 * Whether `h` continues the chain after `prev` (null: `h` starts a cycle, so it must be read at a
 * region's start, `start`).
 */
export function continuesChain(prev: WalHeader | null, h: WalHeader, start = 0): boolean {
  if (prev === null) return h.offset === start && h.prev_crc === 0 && h.batch_id === h.base + 1;
  return h.offset === prev.next_offset && h.base === prev.base && h.batch_id === prev.batch_id + 1 && h.prev_crc === prev.crc;
}

/** Walks one cycle from `start` and calls `each` per record; stops at its end or when `each` says false. */
function walkCycle(fd: number, file_bytes: number, start: number, scratch: WalScratch, each: (h: WalHeader) => boolean | void, with_body: boolean): { last: WalHeader | null; stopped: boolean } {
  let prev: WalHeader | null = null;
  for (let offset = start; offset < file_bytes;) {
    const h = readWalRecord(fd, offset, file_bytes, scratch, with_body);
    if (h === null || !continuesChain(prev, h, start)) break;
    prev = h;
    if (each(h) === false) return { last: prev, stopped: true };
    offset = h.next_offset;
  }
  return { last: prev, stopped: false };
}

/** A cycle's first record at `start` (header only), null when none starts there. */
function cycleStart(fd: number, file_bytes: number, start: number, scratch: WalScratch): WalHeader | null {
  const h = readWalRecord(fd, start, file_bytes, scratch, false);
  return h !== null && continuesChain(null, h, start) ? h : null;
}

/**
 * Walks the live cycles (the newest region's, after its predecessor's when it names one) and calls
 * `each` with every record (checked, body in `scratch`) in id order; stops at the end or when
 * `each` says false. Returns the last record visited (null: none). `with_body` false reads headers
 * only (the crc is then not checked: for finding ids, not data). A predecessor that is not there
 * or does not reach the record the newest cycle names (overwritten under a concurrent reader, or
 * a record in its middle unreadable) is reported to `onBroken` with the newest cycle's base; the
 * walk goes on with the newest cycle when it answers true (default: a reader looking for an id,
 * whose caller asks LMDB for what the file lacks), else stops.
 */
export function walkWal(fd: number, file_bytes: number, scratch: WalScratch, each: (h: WalHeader) => boolean | void, with_body = true,
  onBroken: (message: string, newest_base: number) => boolean = () => true): WalHeader | null {
  const half = walRegionStart(file_bytes);
  const a = cycleStart(fd, file_bytes, 0, scratch);
  const b = half > 0 ? cycleStart(fd, file_bytes, half, scratch) : null;
  // The newest cycle has the higher base (bases only grow: each cycle starts after the last batch).
  const newest = a === null ? b : b === null || b.base <= a.base ? a : b;
  if (newest === null) return null;
  const other = newest === a ? b : a;
  let last: WalHeader | null = null;
  if (newest.prev_last >= 0) {
    // Its predecessor: the other region's cycle, through the record named (batch `newest.base`).
    const named = other === null ? null : readWalRecord(fd, newest.prev_last, file_bytes, scratch, false);
    if (other === null || named === null || named.base !== other.base || named.batch_id !== newest.base) {
      if (!onBroken(`the write-ahead file's cycle after batch ${newest.base} names a predecessor that is not there`, newest.base)) return null;
    } else {
      const older = walkCycle(fd, file_bytes, other.offset, scratch, each, with_body);
      if (older.stopped) return older.last;
      last = older.last;
      if ((older.last === null || older.last.offset !== named.offset || older.last.batch_id !== newest.base) &&
        !onBroken(`the write-ahead file's cycle before batch ${newest.base + 1} ends at batch ${older.last?.batch_id ?? other.base}`, newest.base)) {
        return last;
      }
    }
  }
  return walkCycle(fd, file_bytes, newest.offset, scratch, each, with_body).last ?? last;
}

/** Opens an existing write-ahead file for reading; null when there is none. */
export function openWalForReading(journal_dir: string): { fd: number; file_bytes: number } | null {
  let fd: number;
  try {
    fd = fs.openSync(walPath(journal_dir), 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  return { fd, file_bytes: fs.fstatSync(fd).size };
}

/** A batch of the write-ahead file: its id and its bytes as LMDB stores them (a copy). */
export interface WalBatch {
  batch_id: number;
  value: Buffer;
}

/**
 * The batches of the write-ahead file that LMDB lacks (its last batch is `lmdb_last`, 0 when it
 * is empty), in order, checked (crc, chain). Records at or below `lmdb_last` are already stored (a
 * store landed before the crash, the file was not reused yet). Live cycles that start after
 * LMDB's last batch would leave a gap: refused (LMDB only ever grows at its end, so the oldest
 * live cycle's base is at most LMDB's last batch), except when LMDB is empty (a journal resumed
 * after a snapshot, `Journal.resumeAfter`: its first cycle starts at the snapshot's batch); so is
 * a predecessor cycle that breaks before the newest cycle (`walkWal`'s `onBroken`).
 */
export function readWalTail(journal_dir: string, lmdb_last: number, onGap: (message: string) => never): WalBatch[] {
  const opened = openWalForReading(journal_dir);
  if (opened === null) return [];
  const out: WalBatch[] = [];
  const scratch = new WalScratch();
  try {
    let base = -1;
    walkWal(opened.fd, opened.file_bytes, scratch, (h) => {
      if (base < 0) base = h.base;
      if (h.batch_id > lmdb_last) out.push({ batch_id: h.batch_id, value: Buffer.from(scratch.body(h)) });
    }, true, (message, newest_base) => {
      // Batches up to the newest cycle's base that LMDB holds need no predecessor.
      if (newest_base > lmdb_last) onGap(`${walPath(journal_dir)}: ${message}, and the journal's LMDB ends at batch ${lmdb_last}`);
      return true;
    });
    if (out.length > 0 && lmdb_last > 0 && base > lmdb_last) {
      onGap(`the write-ahead file ${walPath(journal_dir)} continues batch ${base} but the journal's LMDB ends at batch ${lmdb_last}`);
    }
  } finally {
    fs.closeSync(opened.fd);
  }
  return out;
}
