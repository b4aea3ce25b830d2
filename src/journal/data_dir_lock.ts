// One server per data directory: `<data>/server.pid` names the server that runs on it. Nothing
// stopped a second server on the same data directory (with another port, or before the exclusive
// listen, the same one): both then wrote one journal. A start finds the file and refuses while
// the process it names lives; a file whose process is gone (kill -9, a crash, a power loss) is
// taken over. The file goes at the process's exit when it is still this process's.
// Not a kernel lock (Node has no flock): two starts at the same instant over a stale file could
// both go on; it guards the mistakes seen (a second start by hand, `ringbook start --help`).
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

export const DATA_DIR_LOCK_FILE = 'server.pid';

/** A data directory another live server holds. */
export class DataDirInUse extends Error {}

/** Whether `pid` is a live process that may be a server (Linux: its command line names node). */
function serverAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: it lives, under another user.
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
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

/**
 * Takes `dir` for this process, or throws DataDirInUse naming the live server that has it.
 * Returns the release (also run at the process's exit), which removes the file only while it
 * still names this process.
 */
export function lockDataDir(dir: string): () => void {
  const file = path.join(dir, DATA_DIR_LOCK_FILE);
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
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    const release = (): void => {
      if (pidIn(file) !== process.pid) return;
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    };
    process.once('exit', release);
    return release;
  }
  throw new DataDirInUse(`ringbook: cannot take the data dir ${dir}: ${file} came back after it was removed (another server starting?)`);
}
