// Read access to the journal from the DA thread: the same LMDB environment the matcher thread
// writes (lmdb-js shares one environment between the threads of a process), opened with the same
// options as `Journal.open`, its header checked by the journal's own `checkHeader` (ids, sizes, format;
// the records' checksum was checked by the matcher thread, which wrote the batch or replayed it
// from disk with `Journal.readTransient`, CRC included, before its events reached the DA thread).
// The batch's keccak input hash is computed here, off the matcher and the front; the verifier,
// which trusts nothing, recomputes it from the published bytes.
//
// The write-ahead file (src/journal/wal.ts): a batch is acknowledged once it is durable there,
// and the matcher stores it into LMDB after its commit marker; the DA thread asks for it right
// after the marker, so a batch missing from LMDB is looked for in that file (by id, its record's
// CRC checked: the matcher may be overwriting it, having stored it into LMDB and restarted the
// file), and LMDB is asked again with a fresh read snapshot when the file no longer has it.
import fs from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { journalBatchesDb } from '../journal/journal_db.js';
import { checkHeader } from '../journal/journal_codec.js';
import { RECORD_WORDS } from '../ring/records.js';
import { continuesChain, openWalForReading, readWalRecord, walkWal, walRegionStart, WalScratch, type WalHeader } from '../journal/wal.js';
import type { BatchInputSource, RawJournalBatch } from './da_interfaces.js';
import { keccak256Into } from './keccak.js';

export type { RawJournalBatch } from './da_interfaces.js';

/**
 * Rounds of (LMDB, write-ahead file, LMDB with a fresh snapshot) before a batch counts as absent.
 * One suffices unless the matcher restarts the file twice while one lookup runs (each restart
 * follows a durable LMDB commit of everything the file held).
 */
const WAL_LOOKUP_ROUNDS_MAX = 8;

/** Byte offset of the batch's time (f64 LE) in a journal value's header (journal_codec.ts: five u32, then batch id and time). */
const TIME_MS_AT = 28;
/** The input hash's digest, made into hex at once (journal_codec.ts inputHashOfBytes's value, without its fresh array and Buffer per batch). */
const INPUT_HASH = Buffer.alloc(32);

export class JournalReader implements BatchInputSource {
  private readonly dir: string;
  private readonly root: RootDatabase;
  private readonly batches: Database<Buffer, number>;
  /** The write-ahead file, opened at the first lookup that needs it (null: not yet, or absent). */
  private wal: { fd: number; file_bytes: number } | null = null;
  private readonly scratch = new WalScratch();
  /** The last record found in the write-ahead file: the next batch's record usually follows it. */
  private wal_cursor: WalHeader | null = null;
  /** Batches read from the write-ahead file (LMDB did not have them yet), since open. */
  wal_reads = 0;
  /** Of the lookups there, those that walked the file's headers from a cycle's start (the cursor missed). */
  wal_walks = 0;

  private constructor(dir: string, root: RootDatabase) {
    this.dir = dir;
    this.root = root;
    this.batches = root.openDB<Buffer, number>(journalBatchesDb());
  }

  static open(dir: string): JournalReader {
    return new JournalReader(dir, open({ path: dir, overlappingSync: false, noSync: false, compression: false, mapSize: 64 * 1024 * 1024 * 1024 }));
  }

  /** Id of the last journaled batch (0 when none), the write-ahead file's included. */
  lastBatchId(): number {
    this.root.resetReadTxn();
    let last = 0;
    for (const key of this.batches.getKeys({ reverse: true, limit: 1 })) last = key as number;
    const w = this.walHeaders();
    return w === null || w.last.batch_id <= last ? last : w.last.batch_id;
  }

  /** Id of the oldest batch held (batches below were trimmed after a snapshot); 0 when none. */
  firstBatchId(): number {
    this.root.resetReadTxn();
    for (const key of this.batches.getKeys({ limit: 1 })) return key as number;
    // An empty LMDB: the write-ahead file's first cycle (a journal resumed after a snapshot).
    return this.walHeaders()?.first.batch_id ?? 0;
  }

  /** The first and last record of the write-ahead file's current cycle (headers only); null: none. */
  private walHeaders(): { first: WalHeader; last: WalHeader } | null {
    const wal = this.openWal();
    if (wal === null) return null;
    let first: WalHeader | null = null;
    const last = walkWal(wal.fd, wal.file_bytes, this.scratch, (h) => {
      first ??= h;
    });
    return first === null || last === null ? null : { first, last };
  }

  private openWal(): { fd: number; file_bytes: number } | null {
    if (this.wal === null) this.wal = openWalForReading(this.dir);
    return this.wal;
  }

  /** Batch `batch_id`'s bytes (as LMDB stores them) from the write-ahead file, or undefined. */
  private fromWal(batch_id: number): Buffer | undefined {
    const wal = this.openWal();
    if (wal === null) return undefined;
    const c = this.wal_cursor;
    if (c !== null && c.batch_id === batch_id - 1) {
      const h = readWalRecord(wal.fd, c.next_offset, wal.file_bytes, this.scratch);
      if (h !== null && continuesChain(c, h)) return this.foundInWal(h);
      // The matcher's next cycle starts in the other region when one fills (wal.ts, h22j: every
      // ~512 batches): its first record names the cursor's record as its predecessor's last. Two
      // reads here instead of the walk below over the ~512 headers of the cursor's cycle (0.8-15
      // ms of this thread per region switch, h22j's note).
      const other_start = c.offset < walRegionStart(wal.file_bytes) ? walRegionStart(wal.file_bytes) : 0;
      const s = readWalRecord(wal.fd, other_start, wal.file_bytes, this.scratch);
      if (s !== null && continuesChain(null, s, other_start) && s.base === c.batch_id && s.prev_last === c.offset) return this.foundInWal(s);
    }
    this.wal_walks++;
    // From the cycle's start: headers until the batch, then its record read and checked.
    let target: WalHeader | null = null;
    walkWal(wal.fd, wal.file_bytes, this.scratch, (h) => {
      if (h.batch_id === batch_id) target = h;
      return h.batch_id < batch_id;
    }, false);
    if (target === null) {
      // Opened while the matcher was still creating it (the server's start): its size now.
      wal.file_bytes = fs.fstatSync(wal.fd).size;
      return undefined;
    }
    const t: WalHeader = target;
    const h = readWalRecord(wal.fd, t.offset, wal.file_bytes, this.scratch);
    if (h === null || h.crc !== t.crc || h.batch_id !== batch_id) return undefined;
    return this.foundInWal(h);
  }

  private foundInWal(h: WalHeader): Buffer {
    this.wal_cursor = h;
    this.wal_reads++;
    return this.scratch.body(h);
  }

  /**
   * The batch as journaled, or undefined when absent. Throws on a malformed header (id, size,
   * format). Its `input_hash` is computed here, in get(), while the read buffer is valid; its
   * `inputs` are a view of lmdb-js's read buffer, which this thread's next LMDB read (of any
   * database) reuses: copy what you keep first (the DA store copies the inputs it keeps). A copy
   * per batch here was the DA worker's largest ArrayBuffer allocation (inputs_arena.ts says why
   * that matters).
   */
  get(batch_id: number): RawJournalBatch | undefined {
    let value: Buffer | undefined = this.batches.getBinaryFast(batch_id);
    for (let round = 0; value === undefined && round < WAL_LOOKUP_ROUNDS_MAX; round++) {
      // Acknowledged, not yet in LMDB: the write-ahead file has it (its record's CRC checked).
      value = this.fromWal(batch_id);
      if (value !== undefined) break;
      // lmdb-js keeps one read snapshot per event-loop turn; the matcher thread may have
      // committed this batch after it was taken (and restarted the write-ahead file): renew it.
      this.root.resetReadTxn();
      value = this.batches.getBinaryFast(batch_id);
    }
    if (value === undefined) return undefined;
    // The journal's header checks for the matcher's format (ids, sizes; no second checksum, no
    // copy); the input hash is computed here, in the DA thread, never on the matcher or the front.
    // Not decodeCheckedBatch: its JournalBatch defines `input_hash` as a getter on an object
    // literal, a fresh accessor closure per batch, which V8 turns into a new map per object (map
    // migration, a dictionary and a slow property load per batch), and it made two more typed-array
    // views than the one kept here (with endBatch's like change: ~21 k of the ~554 k instructions
    // a one-request batch costs the DA core under callgrind, docs/benchmarks.md h23d).
    const count = checkHeader(value, batch_id);
    const inputs = value.subarray(value.length - count * RECORD_WORDS * 4);
    keccak256Into(inputs, 0, inputs.length, INPUT_HASH, 0);
    return { batch_id, time_ms: value.readDoubleLE(TIME_MS_AT), count, inputs, input_hash: '0x' + INPUT_HASH.toString('hex') };
  }

  async close(): Promise<void> {
    if (this.wal !== null) fs.closeSync(this.wal.fd);
    this.wal = null;
    await this.root.close();
  }
}
