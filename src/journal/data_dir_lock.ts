// One server per data directory: `<data>/server.pid` names the server that runs on it. Nothing
// stopped a second server on the same data directory (with another port, or before the exclusive
// listen, the same one): both then wrote one journal.
//
// The lock is the kernel's: flock(2) on the file, held through a descriptor left open for the
// process's life (native/file_lock.c). The kernel drops it however the process ends (kill -9, a
// crash, a power loss), so a file left behind never blocks a start, and a live server's lock
// refuses every other start, even two at the same instant. The pid in the file only names the
// holder in the refusal. After taking the lock the start checks that the path still leads to the
// locked file (a stopping server removes it, and a start that opened it just before then would
// hold a lock on a file no one else can see): if not, it opens the new one and tries again.
// Without the native module (not Linux, not built) the pid in the file decides: a live process
// whose command line names node holds it; a gone one's file is taken over. That guess is wrong
// for a pid reused by another node program, and two starts at the same instant could both go on.
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readFileSync, readSync, statSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findNativeModule } from '../util/native_module.js';

export const DATA_DIR_LOCK_FILE = 'server.pid';
/** Opens of the lock file before giving up: each retry follows a file removed or replaced between the open and the lock. */
const LOCK_ATTEMPTS_MAX = 4;

/** A data directory another live server holds. */
export class DataDirInUse extends Error {}

/**
 * In a copy that `ringbook backup` (src/cli/backup.ts) is still making, removed only once the
 * copy is complete and checked: a backup killed mid-copy (SIGKILL, a crash) leaves its partial
 * directory with it, and a start on that directory is refused rather than run on half a data dir.
 */
export const INCOMPLETE_BACKUP_FILE = 'BACKUP_INCOMPLETE';

/**
 * Most bytes of INCOMPLETE_BACKUP_FILE read: the marker names the backup's data dir (a path, at
 * most PATH_MAX = 4,096 bytes on Linux), its pid and a time, so 8 KiB hold any marker the backup
 * wrote. A bigger file is not read further (before 2026-11-29 the whole file was read at every
 * start, however big); it refuses the start all the same.
 */
export const INCOMPLETE_BACKUP_MARKER_BYTES_MAX = 8192;

/**
 * The marker in `dir`: null when there is none; else its text, or why it could not be read (it
 * refuses a start either way: a marker that cannot be read is still a marker). Opened without
 * blocking (O_NONBLOCK: a FIFO by that name does not wait for a writer) and read at most
 * INCOMPLETE_BACKUP_MARKER_BYTES_MAX bytes.
 */
export function readIncompleteBackupMarker(dir: string): { text: string } | { unreadable: string } | null {
  let fd: number;
  try {
    fd = openSync(path.join(dir, INCOMPLETE_BACKUP_FILE), constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    return { unreadable: `cannot be opened: ${code ?? (e as Error).message}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { unreadable: 'not a regular file' };
    if (st.size > INCOMPLETE_BACKUP_MARKER_BYTES_MAX) {
      return { unreadable: `${st.size} bytes, more than a marker's ${INCOMPLETE_BACKUP_MARKER_BYTES_MAX} (INCOMPLETE_BACKUP_MARKER_BYTES_MAX): not read` };
    }
    const buf = Buffer.alloc(INCOMPLETE_BACKUP_MARKER_BYTES_MAX);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return { text: buf.toString('utf8', 0, n).trim() };
  } catch (e) {
    return { unreadable: `cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

/** Throws when `dir` is an incomplete backup (INCOMPLETE_BACKUP_FILE in it, readable or not). */
export function refuseIncompleteBackup(dir: string): void {
  const marker = readIncompleteBackupMarker(dir);
  if (marker === null) return;
  const what = 'text' in marker ? `${INCOMPLETE_BACKUP_FILE}: ${marker.text}` : `${INCOMPLETE_BACKUP_FILE} ${marker.unreadable}`;
  throw new Error(`ringbook: ${dir} is an incomplete backup (${what}): ` +
    'the backup stopped before its copy was complete and checked; delete it and restore from a complete backup');
}

interface NativeFileLock {
  /** flock(fd, LOCK_EX | LOCK_NB): 0, or the errno (EWOULDBLOCK: held by another). */
  lockExclusive(fd: number): number;
}

let native: NativeFileLock | null | undefined;
function nativeLock(): NativeFileLock | null {
  if (native === undefined) {
    const found = findNativeModule<NativeFileLock>('file_lock.node');
    native = 'module' in found ? found.module : null;
  }
  return native;
}

/** Whether `pid` is a live process (signal 0; EPERM: it lives, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether `pid` is a live process that may be a server (Linux: its command line names node). */
function serverAlive(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    // A pid reused after a reboot by some other program is not a server.
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('node');
  } catch {
    return true; // no /proc (not Linux): trust the pid
  }
}

function pidIn(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function inUse(dir: string, file: string, holder: number | null): DataDirInUse {
  const who = holder === null ? 'another server' : `another server (pid ${holder})`;
  return new DataDirInUse(`ringbook: ${who} runs on the data dir ${dir}: stop it first`);
}

/** The file still at `file` is the one open as `fd` (not removed or replaced since the open). */
function samePath(fd: number, file: string): boolean {
  try {
    const a = fstatSync(fd);
    const b = statSync(file);
    return a.ino === b.ino && a.dev === b.dev;
  } catch {
    return false;
  }
}

/**
 * Writes this process's pid into the locked file and arranges its removal at exit. `locked`: the
 * descriptor holding the flock, closed (so unlocked) by the release after the file is removed.
 */
function holdAs(fd: number, file: string, locked: boolean): () => void {
  ftruncateSync(fd, 0);
  writeSync(fd, `${process.pid}\n`, 0);
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    if (pidIn(file) === process.pid) {
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    }
    if (locked) closeSync(fd);
  };
  process.once('exit', release);
  return release;
}

/** flock: the kernel decides; the descriptor stays open (and locked) until the process ends. */
function lockWithKernel(dir: string, file: string, lock: NativeFileLock): () => void {
  for (let attempt = 0; attempt < LOCK_ATTEMPTS_MAX; attempt++) {
    const fd = openSync(file, constants.O_RDWR | constants.O_CREAT, 0o644);
    const e = lock.lockExclusive(fd);
    if (e !== 0) {
      closeSync(fd);
      if (e === os.constants.errno.EWOULDBLOCK || e === os.constants.errno.EAGAIN) throw inUse(dir, file, pidIn(file));
      throw new Error(`ringbook: cannot lock ${file}: flock failed with errno ${e}`);
    }
    if (samePath(fd, file)) return holdAs(fd, file, true);
    closeSync(fd); // a stopping server removed it after our open: lock the file now at the path
  }
  throw new DataDirInUse(`ringbook: cannot take the data dir ${dir}: ${file} kept changing (other servers starting and stopping?)`);
}

/** Without flock: the pid in the file decides (see the header for what that cannot tell). */
function lockWithPid(dir: string, file: string): () => void {
  // Bounded: a stale file is removed once, then the create must win.
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx', 0o644);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const holder = pidIn(file);
      if (holder !== null && holder !== process.pid && serverAlive(holder)) {
        throw new DataDirInUse(`ringbook: another server (pid ${holder}) runs on the data dir ${dir}: stop it first ` +
          `(or, if pid ${holder} is not a ringbook server, delete ${file})`);
      }
      try {
        unlinkSync(file);
      } catch {
        // another start removed it first: the create below decides
      }
      continue;
    }
    const release = holdAs(fd, file, false);
    closeSync(fd);
    return release;
  }
  throw new DataDirInUse(`ringbook: cannot take the data dir ${dir}: ${file} came back after it was removed (another server starting?)`);
}

/**
 * Takes `dir` for this process, or throws DataDirInUse naming the live server that has it (an
 * incomplete backup, refuseIncompleteBackup, is refused before).
 * Returns the release (also run at the process's exit), which removes the file only while it
 * still names this process; the kernel lock itself ends with the process.
 */
export function lockDataDir(dir: string): () => void {
  refuseIncompleteBackup(dir);
  const file = path.join(dir, DATA_DIR_LOCK_FILE);
  const lock = nativeLock();
  return lock === null ? lockWithPid(dir, file) : lockWithKernel(dir, file, lock);
}

/**
 * Whether a live server holds `dir` now (for tools beside it: `ringbook backup`). With flock: a
 * lock tried on a descriptor of our own and given back at once (closing it releases it), so only
 * a process holding the lock counts; without: the pid in the file, as lockWithPid decides.
 */
export function dataDirHeld(dir: string): boolean {
  const file = path.join(dir, DATA_DIR_LOCK_FILE);
  const lock = nativeLock();
  if (lock === null) {
    const holder = pidIn(file);
    return holder !== null && holder !== process.pid && serverAlive(holder);
  }
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY);
  } catch {
    return false; // no file: no server has started on it since the last clean stop
  }
  try {
    const e = lock.lockExclusive(fd);
    return e === os.constants.errno.EWOULDBLOCK || e === os.constants.errno.EAGAIN;
  } finally {
    closeSync(fd);
  }
}

/** Which mechanism lockDataDir uses here (for the start's log and the tests). */
export function dataDirLockKind(): 'flock' | 'pid' {
  return nativeLock() === null ? 'pid' : 'flock';
}
