// The pids owning reader slots in an LMDB lock file, read without opening the environment
// (lmdb-js's open clears dead readers itself, which would hide what the process under test does):
// test/cli/backup_interrupt.test.ts (the server's journal), test/da/da_store_pages.test.ts (the DA
// store's writer). The layout is lmdb-js 3.5.6's LMDB build (its mdb.c, MDB_txninfo): another
// version or build may move the table, so the file is checked against it first and a different
// one refused by name (LmdbLockLayoutUnknown) rather than read at the wrong offsets, where a
// mutex's owner word could pass for a pid.
import fs from 'node:fs';

/**
 * lmdb-js 3.5.6 on x86-64 Linux: MDB_MAGIC; MDB_LOCK_FORMAT (lock version 2 plus the bits of this
 * build's layout: cache line, mutex and record sizes); the reader table after a 208-byte header
 * (txn id, reader count, the reader, writer and sync mutexes), 64-byte (cache line) records of
 * {txnid u64, pid u32, ...}, a freed slot's pid 0 (126 slots by default: an 8,272-byte file).
 */
export const LMDB_LOCK_LAYOUT = { magic: 0xbeefc0de, format: 741302274, readers_offset: 208, reader_bytes: 64, pid_offset: 8 } as const;

/** A lock file not in LMDB_LOCK_LAYOUT: another lmdb-js version or build (update LMDB_LOCK_LAYOUT from its mdb.c). */
export class LmdbLockLayoutUnknown extends Error {}

const hex = (n: number): string => `0x${n.toString(16)}`;

/** Throws LmdbLockLayoutUnknown, naming what was expected and found, unless `b` is in LMDB_LOCK_LAYOUT. */
export function checkLockLayout(b: Buffer, lock_file: string): void {
  const L = LMDB_LOCK_LAYOUT;
  const magic = b.length >= 8 ? b.readUInt32LE(0) : null;
  const format = b.length >= 8 ? b.readUInt32LE(4) : null;
  const table_bytes = b.length - L.readers_offset;
  if (magic === L.magic && format === L.format && table_bytes > 0 && table_bytes % L.reader_bytes === 0) return;
  throw new LmdbLockLayoutUnknown(`${lock_file}: not the LMDB lock-file layout these tests read (expected lmdb-js 3.5.6's: ` +
    `magic ${hex(L.magic)}, format ${L.format}, ${L.reader_bytes}-byte reader slots after a ${L.readers_offset}-byte header; ` +
    `found magic ${magic === null ? 'none' : hex(magic)}, format ${format ?? 'none'}, ${b.length} bytes): ` +
    `another lmdb version or build? update LMDB_LOCK_LAYOUT in test/lmdb_readers.ts from its mdb.c`);
}

/** The pids of the occupied reader slots in `lock_file` (LMDB_LOCK_LAYOUT, checked first). */
export function readerPids(lock_file: string): Set<number> {
  const b = fs.readFileSync(lock_file);
  checkLockLayout(b, lock_file);
  const L = LMDB_LOCK_LAYOUT;
  const pids = new Set<number>();
  for (let o = L.readers_offset; o + L.reader_bytes <= b.length; o += L.reader_bytes) {
    const pid = b.readUInt32LE(o + L.pid_offset);
    if (pid !== 0) pids.add(pid);
  }
  return pids;
}
