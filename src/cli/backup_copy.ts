// One attempt of `ringbook backup` (backup.ts): copies a data dir, live or stopped, into a fresh
// directory and checks that a server started on the copy would recover.
//
// Copy order (docs/operations.md "Backup"), each part a consistent image of its own:
// 1. `da/`: LMDB's own copy (lmdb-js `backup`, mdb_env_copy2: one read transaction, so a
//    consistent image while the server writes; readers never block LMDB's writer). Its last batch D.
// 2. `journal/wal.log`: read in one call. The server's write-ahead file holds the acknowledged
//    batches LMDB does not have yet (src/journal/wal.ts).
// 3. `journal/` LMDB, after the file: LMDB only grows at its end and a region of the file is
//    reused only once LMDB durably holds its batches, so LMDB's copy ends at or after the file
//    copy's oldest live cycle (the other order can leave a gap, which a start refuses). A record
//    torn by the copy ends the file's chain there; what it lost is in LMDB's later copy.
// 4. `snapshots/`: the complete files (the server writes a .tmp and renames).
// The DA thread publishes batches the journal holds, so a `da/` copied first is never ahead of
// the journal copied after it (copied the other way round, `da/` could hold batches the copy's
// journal lacks: the restored server would journal other batches under ids already published).
// 0. Before all: the hold (backup_hold.ts), a read transaction on the journal and descriptors of
//    the snapshot files. A trim by the running server during the copy (retention after a snapshot,
//    src/snapshot/coordinator.ts: with `snapshots.keep: 1`, after every snapshot) could start the
//    journal's copy after D + 1 (the restored DA thread could not publish D + 1), and a snapshot
//    pruned meanwhile could be the one the journal's copy was trimmed through: the batches trimmed
//    since the hold are written back into the journal's copy and the snapshots pruned since are
//    copied from their descriptors, so the copy continues from what the data dir held at the start.
// What the order and the hold cannot rule out, the check after the copy finds (the caller
// retries, bounded): a write-ahead file copied while the server switched regions, whose
// predecessor cycle LMDB's copy does not reach yet (readWalTail's gap).
import fs from 'node:fs';
import path from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { LmdbDaStore } from '../da/da_store.js';
import { Journal } from '../journal/journal.js';
import { WAL_FILE } from '../journal/wal.js';
import { DATA_DIR_LOCK_FILE, INCOMPLETE_BACKUP_FILE } from '../journal/data_dir_lock.js';
import { chooseSnapshot, RecoveryImpossible, type RecoveryChoice } from '../snapshot/recovery.js';
import { listSnapshots } from '../snapshot/snapshot_file.js';
import { JournalCorruption } from '../journal/journal_codec.js';
import { BackupHold } from './backup_hold.js';

/** The data dir's parts copied part by part; any other directory is skipped (and reported). */
const KNOWN_DIRS = new Set(['journal', 'da', 'snapshots']);
/** LMDB's lock file: per machine and process, never copied (LMDB makes a fresh one). */
const LMDB_LOCK_FILE = 'lock.mdb';

export interface BackupCopy {
  /** `refilled_batches`: batches the server trimmed during the copy, written back from the hold (backup_hold.ts). */
  journal: { first_batch_id: number; last_batch_id: number; bytes: number; wal_bytes: number; refilled_batches: number };
  da: { last_batch_id: number; bytes: number };
  /**
   * Snapshot files copied; `resume_batch_id`: the one a start on the copy resumes from (null:
   * genesis); `held_pruned`: of them, pruned by the server during the copy (from the hold).
   */
  snapshots: { files: number; bytes: number; resume_batch_id: number | null; held_pruned: number };
  /** Other top-level files copied (the secrets admin_token and operator_key, mode kept). */
  files: string[];
  /** Top-level entries not copied: the lock file, unknown directories. */
  skipped: string[];
  bytes: number;
}

/** A copy that a race with the running server made unrestorable: another attempt may succeed. */
export class CopyRaced extends Error {}

/** A signal (SIGINT, SIGTERM) ended the copy between two of its steps. */
export class BackupInterrupted extends Error {
  constructor(readonly signal: NodeJS.Signals) {
    super(`interrupted by ${signal}`);
  }
}

/** What the copy asks between its steps: the signal received, if any (backup.ts sets it). */
export interface CopyControl {
  interrupted(): NodeJS.Signals | null;
}

export const UNINTERRUPTED: CopyControl = { interrupted: () => null };

/** Ends the copy here when a signal came (its environments are closed on the way out). */
function checkpoint(ctl: CopyControl): void {
  const signal = ctl.interrupted();
  if (signal !== null) throw new BackupInterrupted(signal);
}

/**
 * Test seam only (test/cli/backup_interrupt.test.ts, backup_keep1.test.ts): a file path. Before
 * the journal's copy (the hold's read transaction on the server's journal open, as LMDB's copy
 * holds one for its whole run) the backup writes `holding <pid>` into the file and waits until the
 * file is removed (or a signal, or TEST_HOLD_MS_MAX): a deterministic "mid-copy", once per process.
 */
const TEST_HOLD_FILE_ENV = 'RINGBOOK_TEST_BACKUP_HOLD_FILE';
const TEST_HOLD_MS_MAX = 60_000;
const TEST_HOLD_POLL_MS = 20;
let test_held = false;

async function testHold(ctl: CopyControl): Promise<void> {
  const file = process.env[TEST_HOLD_FILE_ENV];
  if (file === undefined || file === '' || test_held) return;
  test_held = true;
  fs.writeFileSync(file, `holding ${process.pid}\n`);
  const deadline = Date.now() + TEST_HOLD_MS_MAX;
  while (fs.existsSync(file) && ctl.interrupted() === null && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, TEST_HOLD_POLL_MS));
  }
}

function fileBytes(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * LMDB's consistent copy of the environment in `from` (or `held`, already open: then left open)
 * into the new directory `to`. The copy is one read transaction that cannot be cut short: a
 * signal meanwhile ends the backup after it.
 */
async function copyLmdb(from: string, to: string, ctl: CopyControl, held: RootDatabase | null = null): Promise<number> {
  fs.mkdirSync(to, { recursive: true });
  // readOnly: this process never writes the server's environment. Only the environment is
  // opened (no named database): the copy is of pages, whatever the databases' encodings.
  // (lmdb-js's open clears the reader slots of dead processes, a killed backup's among them.)
  const env = held ?? open({ path: from, readOnly: true });
  try {
    checkpoint(ctl);
    await env.backup(to, false);
  } finally {
    // Closing ends this process's read transactions and frees its reader slots in the server's lock.mdb.
    if (held === null) await env.close();
  }
  return fileBytes(path.join(to, 'data.mdb'));
}

/** Copies a file with its mode (the secrets are 0600); false when it vanished meanwhile. */
function copyFile(from: string, to: string): boolean {
  try {
    fs.copyFileSync(from, to);
    fs.chmodSync(to, fs.statSync(from).mode & 0o777);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/** fsync of every file and directory under `dir` (the copy is durable before it is renamed into place). */
function syncTree(dir: string): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) syncTree(p);
    else syncPath(p);
  }
  syncPath(dir);
}

/** fsync of one file or directory. */
export function syncPath(p: string): void {
  const fd = fs.openSync(p, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Copies `data_dir` into the empty directory `into` (see the top of this file), then checks it. */
export async function copyDataDir(data_dir: string, into: string, ctl: CopyControl = UNINTERRUPTED): Promise<BackupCopy> {
  // Before any part: what a trim or a prune meanwhile would take from the copy (backup_hold.ts).
  const hold = BackupHold.take(data_dir);
  try {
    return await copyHeld(data_dir, into, ctl, hold);
  } finally {
    await hold.release();
  }
}

async function copyHeld(data_dir: string, into: string, ctl: CopyControl, hold: BackupHold): Promise<BackupCopy> {
  const src_journal = path.join(data_dir, 'journal');
  const src_da = path.join(data_dir, 'da');
  const dst_journal = path.join(into, 'journal');
  const dst_da = path.join(into, 'da');
  const dst_snapshots = path.join(into, 'snapshots');
  // 1. da/ (absent before a server's first start completed: the start makes it).
  const da_bytes = fs.existsSync(path.join(src_da, 'data.mdb')) ? await copyLmdb(src_da, dst_da, ctl) : 0;
  checkpoint(ctl);
  // 2. The write-ahead file, one read of the whole file (4 MB by default): the shortest window.
  fs.mkdirSync(dst_journal, { recursive: true });
  let wal_bytes = 0;
  const src_wal = path.join(src_journal, WAL_FILE);
  if (fs.existsSync(src_wal)) {
    const bytes = fs.readFileSync(src_wal);
    fs.writeFileSync(path.join(dst_journal, WAL_FILE), bytes, { mode: 0o644 });
    wal_bytes = bytes.length;
  }
  // 3. The journal's LMDB, then the batches trimmed since the hold was taken back into it.
  let journal_bytes = 0;
  let refilled = 0;
  if (hold.journal_env !== null) {
    await testHold(ctl);
    journal_bytes = await copyLmdb(src_journal, dst_journal, ctl, hold.journal_env);
    refilled = hold.fillTrimmed(dst_journal);
    journal_bytes = fileBytes(path.join(dst_journal, 'data.mdb'));
  }
  checkpoint(ctl);
  // 4. Snapshots, newest first; one pruned since the listing is simply not there, one pruned
  // since the hold is copied from its descriptor.
  fs.mkdirSync(dst_snapshots, { recursive: true });
  let snapshot_files = 0;
  let snapshot_bytes = 0;
  for (const s of listSnapshots(path.join(data_dir, 'snapshots'))) {
    const to = path.join(dst_snapshots, path.basename(s.file));
    if (!copyFile(s.file, to)) continue;
    snapshot_files++;
    snapshot_bytes += fileBytes(to);
  }
  const pruned = hold.copyPrunedSnapshots(dst_snapshots);
  snapshot_files += pruned.files;
  snapshot_bytes += pruned.bytes;
  // The other top-level files: the secrets (admin_token, operator_key), a config kept there.
  const files: string[] = [];
  const skipped: string[] = [];
  let other_bytes = 0;
  for (const e of fs.readdirSync(data_dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (KNOWN_DIRS.has(e.name)) continue;
    if (e.name === DATA_DIR_LOCK_FILE || e.name === INCOMPLETE_BACKUP_FILE || !e.isFile()) {
      skipped.push(e.isDirectory() ? `${e.name}/` : e.name);
      continue;
    }
    if (copyFile(path.join(data_dir, e.name), path.join(into, e.name))) {
      files.push(e.name);
      other_bytes += fileBytes(path.join(into, e.name));
    }
  }
  checkpoint(ctl);
  const check = await checkCopy(into);
  syncTree(into);
  return {
    journal: { first_batch_id: check.journal_first, last_batch_id: check.journal_last, bytes: journal_bytes + wal_bytes, wal_bytes, refilled_batches: refilled },
    da: { last_batch_id: check.da_last, bytes: da_bytes },
    snapshots: { files: snapshot_files, bytes: snapshot_bytes, resume_batch_id: check.resume_batch_id, held_pruned: pruned.files },
    files,
    skipped,
    bytes: da_bytes + journal_bytes + wal_bytes + snapshot_bytes + other_bytes,
  };
}

interface CopyFacts {
  journal_first: number;
  journal_last: number;
  da_last: number;
  resume_batch_id: number | null;
}

/**
 * What a start on the copy would find (the same reads and rules: Journal.open's write-ahead tail,
 * src/snapshot/recovery.ts), without starting it. Throws CopyRaced when a race made it unrestorable.
 */
async function checkCopy(into: string): Promise<CopyFacts> {
  let journal: Journal;
  try {
    journal = Journal.open(path.join(into, 'journal'), { read_only: true });
  } catch (e) {
    if (e instanceof JournalCorruption) throw new CopyRaced(`the journal's copy: ${e.message}`);
    throw e;
  }
  let store: LmdbDaStore | null = null;
  try {
    const journal_first = journal.firstBatchId();
    const journal_last = journal.lastBatchId();
    store = fs.existsSync(path.join(into, 'da', 'data.mdb')) ? LmdbDaStore.open(path.join(into, 'da'), { reader: true }) : null;
    const da_last = store?.latest() ?? 0;
    if (da_last > journal_last) {
      // Not a race of this order (da/ is copied first): a data dir whose journal lost batches.
      throw new Error(`the DA store holds batches up to ${da_last} but the journal ends at batch ${journal_last}`);
    }
    if (journal_first > da_last + 1) {
      throw new CopyRaced(`the journal's copy starts at batch ${journal_first}, after the DA store's copy (up to batch ${da_last}): trimmed between the copies`);
    }
    const reader = store;
    let choice: RecoveryChoice;
    try {
      choice = chooseSnapshot(path.join(into, 'snapshots'), {
        journal_first, journal_last, published_last: da_last,
        publishedRoot: (id) => reader?.get(id)?.header.state_root,
      });
    } catch (e) {
      if (e instanceof RecoveryImpossible) throw new CopyRaced(`no snapshot in the copy continues its journal: ${e.message}`);
      throw e;
    }
    return { journal_first, journal_last, da_last, resume_batch_id: choice.snapshot?.batch_id ?? null };
  } finally {
    await journal.close();
    await store?.close();
    // Opening made LMDB lock files in the copy: a restore makes its own.
    for (const dir of ['journal', 'da']) fs.rmSync(path.join(into, dir, LMDB_LOCK_FILE), { force: true });
  }
}
