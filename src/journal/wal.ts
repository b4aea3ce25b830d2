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
//   magic u32, version u32, crc u32, body_bytes u32, prev_crc u32, 0 u32, base f64, batch_id f64,
//   then the body (the batch exactly as LMDB stores it: journal_codec.ts `encodeBatch`), zeros to
//   the next page.
// `crc` is the CRC-32 of the header from `body_bytes` on and of the body. A cycle starts at offset
// 0 when every earlier record is in LMDB; `base` is then LMDB's last batch id and the cycle's
// records are batches base+1, base+2, ... at increasing offsets, each naming the previous one's
// crc (`prev_crc`, 0 for the first). A valid chain from offset 0 (intact, same base, ids
// contiguous, crcs linked) is the cycle; it ends at the first record that breaks a rule: zeros,
// a torn write (crc), or a record of an earlier cycle (another base, an older id, another crc
// link), which the current cycle overwrote only in part. Record bodies hold request bytes a
// client chose, so a header forged inside a stale body would also have to name the previous
// record's crc, which covers the sequencer's time and other clients' requests.
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

/** Space a record of `body_bytes` takes in the file. */
export function walRecordBytes(body_bytes: number): number {
  return roundUpPage(WAL_HEADER_BYTES + body_bytes);
}

function recordCrc(header: Buffer, body: Uint8Array): number {
  return crc32(body, crc32(header.subarray(12, WAL_HEADER_BYTES)));
}

/**
 * The matcher thread's writer: appends records durably, one device flush each. Single writer:
 * the journal's WalStore (wal_store.ts) owns it and decides when a cycle restarts (`restart`).
 */
export class WalWriter {
  readonly file: string;
  readonly size_bytes: number;
  private readonly fd: number;
  /** How an append is made durable (see WalSync). */
  readonly sync: WalSync;
  private readonly header = Buffer.alloc(WAL_HEADER_BYTES);
  private readonly zeros = Buffer.alloc(WAL_PAGE_BYTES);
  /** The current cycle: its base, where the next record goes and the crc it names. */
  private base = 0;
  private next_offset = 0;
  private prev_crc = 0;
  /** Records appended in this cycle. */
  records = 0;

  private constructor(file: string, fd: number, size_bytes: number, sync: WalSync) {
    this.file = file;
    this.fd = fd;
    this.size_bytes = size_bytes;
    this.sync = sync;
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

  /** Starts a new cycle at offset 0: every record written so far is in LMDB, whose last batch is `base`. */
  restart(base: number): void {
    this.base = base;
    this.next_offset = 0;
    this.prev_crc = 0;
    this.records = 0;
  }

  /** Whether a record of `body_bytes` fits after the records of this cycle. */
  fits(body_bytes: number): boolean {
    return this.next_offset + walRecordBytes(body_bytes) <= this.size_bytes;
  }

  /** Whether it would fit in an empty cycle (a larger batch goes to LMDB directly). */
  fitsEmpty(body_bytes: number): boolean {
    return walRecordBytes(body_bytes) <= this.size_bytes;
  }

  /** Bytes of the file the current cycle's records take (where the next record goes). */
  usedBytes(): number {
    return this.next_offset;
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
    h.writeUInt32LE(0, 20);
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
  const header: WalHeader = {
    offset, crc: h.readUInt32LE(8), body_bytes, prev_crc: h.readUInt32LE(16), base: h.readDoubleLE(24), batch_id: h.readDoubleLE(32),
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

/** Whether `h` continues the chain after `prev` (null: `h` is at offset 0 and starts it). */
export function continuesChain(prev: WalHeader | null, h: WalHeader): boolean {
  if (prev === null) return h.offset === 0 && h.prev_crc === 0 && h.batch_id === h.base + 1;
  return h.offset === prev.next_offset && h.base === prev.base && h.batch_id === prev.batch_id + 1 && h.prev_crc === prev.crc;
}

/**
 * Walks the current cycle from offset 0 and calls `each` with every record (checked, body in
 * `scratch`) in order; stops at the chain's end. Returns the last record (null: no cycle).
 * `with_body` false reads headers only (the crc is then not checked: for finding ids, not data).
 */
export function walkWal(fd: number, file_bytes: number, scratch: WalScratch, each: (h: WalHeader) => boolean | void, with_body = true): WalHeader | null {
  let prev: WalHeader | null = null;
  for (let offset = 0; offset < file_bytes;) {
    const h = readWalRecord(fd, offset, file_bytes, scratch, with_body);
    if (h === null || !continuesChain(prev, h)) break;
    prev = h;
    if (each(h) === false) break;
    offset = h.next_offset;
  }
  return prev;
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
 * is empty), in order, checked (crc, chain). Records of the cycle at or below `lmdb_last` are
 * already stored (a store landed before the crash, the cycle did not restart yet). A cycle that
 * starts after LMDB's last batch would leave a gap: refused (LMDB only ever grows at its end, so
 * a cycle's base is at most LMDB's last batch), except when LMDB is empty (a journal resumed after
 * a snapshot, `Journal.resumeAfter`: its first cycle starts at the snapshot's batch).
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
    });
    if (out.length > 0 && lmdb_last > 0 && base > lmdb_last) {
      onGap(`the write-ahead file ${walPath(journal_dir)} continues batch ${base} but the journal's LMDB ends at batch ${lmdb_last}`);
    }
  } finally {
    fs.closeSync(opened.fd);
  }
  return out;
}
