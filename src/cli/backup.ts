// `ringbook backup --out <dir>`: a restorable copy of a data dir, while its server runs (the
// common case) or stopped (docs/operations.md "Backup"). Debian's mdb_copy cannot read these LMDB
// files (the lmdb package builds its own LMDB); lmdb-js's own copy can, and a read transaction
// never blocks the server's writer. How the parts are copied and checked: backup_copy.ts.
// The copy is made in a temporary directory beside --out and renamed into place at the end, so a
// failed or interrupted backup leaves no half copy where a restore would look.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { dataDirHeld } from '../journal/data_dir_lock.js';
import { copyDataDir, CopyRaced, syncPath, type BackupCopy } from './backup_copy.js';
import { EXIT_OK, type ParsedArgs, requireJournal, runCommand, str, UsageError } from './common.js';

/**
 * Attempts against a running server: a race (a journal trim, a snapshot pruned, a write-ahead
 * region switch between the parts' copies) is rare and each attempt is a fresh copy; a stopped
 * server's data dir does not change, so one attempt decides.
 */
export const BACKUP_ATTEMPTS_MAX = 3;

const KNOWN_FLAGS = ['data-dir', 'out', 'json', 'help'];

export const BACKUP_USAGE = `usage: ringbook backup --out <dir> [--data-dir <dir>] [--json]

Copies the data dir (journal/, da/, snapshots/, the secrets admin_token and operator_key) into
<dir>, while its server runs or stopped, and checks that a server started on the copy recovers:
the journal's copy continues the DA store's, and a snapshot the start needs is in the copy
(a race with the running server is retried, up to ${BACKUP_ATTEMPTS_MAX} attempts). Every batch acknowledged
before the backup started is in the copy. Restore: start a server with the copy as its data dir.

options:
  --out <dir>                where the copy goes: a new or empty directory (written beside it
                             first, then renamed: a failed backup leaves nothing there)
  --data-dir <dir>           the server's data directory (default: RINGBOOK_DATA_DIR, else config
                             server.data_dir: ./data from the current directory)
  --json                     machine-readable output (one JSON object)
  --help                     this text

exit codes: 0 ok, 1 error (no journal in the data dir, --out not empty, the copy not restorable),
64 usage error`;

export interface BackupResult extends BackupCopy {
  data_dir: string;
  out: string;
  /** Whether a server held the data dir (its lock, data_dir_lock.ts) when the backup started. */
  server_running: boolean;
  attempts: number;
}

/** --out: absent or an empty directory, not inside the data dir. */
function checkOut(out: string, data_dir: string): void {
  const rel = path.relative(data_dir, out);
  if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) {
    throw new Error(`--out ${out} is inside the data dir ${data_dir}: put the backup elsewhere`);
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(out);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (!st.isDirectory()) throw new Error(`--out ${out} exists and is not a directory`);
  if (fs.readdirSync(out).length > 0) throw new Error(`--out ${out} exists and is not empty: name a new or empty directory`);
}

export async function backup(data_dir: string, out: string): Promise<BackupResult> {
  requireJournal(data_dir);
  checkOut(out, data_dir);
  const server_running = dataDirHeld(data_dir);
  const parent = path.dirname(out);
  fs.mkdirSync(parent, { recursive: true });
  const attempts_max = server_running ? BACKUP_ATTEMPTS_MAX : 1;
  let last_race: CopyRaced | null = null;
  for (let attempt = 1; attempt <= attempts_max; attempt++) {
    const tmp = fs.mkdtempSync(path.join(parent, `.${path.basename(out)}.partial-`));
    // An interrupted backup removes its partial copy too.
    const onSignal = (): void => {
      fs.rmSync(tmp, { recursive: true, force: true });
      process.exit(1);
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const copy = await copyDataDir(data_dir, tmp);
      // rename(2) replaces an empty directory; --out was checked empty above.
      fs.renameSync(tmp, out);
      syncPath(parent);
      return { data_dir, out, server_running, attempts: attempt, ...copy };
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      if (!(e instanceof CopyRaced)) throw e;
      last_race = e;
    } finally {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    }
  }
  throw new Error(`the copy is not restorable after ${attempts_max} attempt(s): ${last_race?.message ?? 'unknown'}`);
}

/** Bytes for a person: KB below a megabyte (a small DA store's copy is tens of KB). */
function mb(bytes: number): string {
  return bytes < 1 << 20 ? `${Math.ceil(bytes / 1024)} KB` : `${(bytes / (1 << 20)).toFixed(1)} MB`;
}

function range(first: number, last: number): string {
  return first === 0 ? 'empty' : `batches ${first}..${last}`;
}

function printResult(r: BackupResult): void {
  console.log(`backup of ${r.data_dir} (${r.server_running ? 'server running' : 'no server running'}) in ${r.out}`);
  console.log(`  journal/    ${range(r.journal.first_batch_id, r.journal.last_batch_id)}  ${mb(r.journal.bytes)} (wal.log ${mb(r.journal.wal_bytes)})`);
  console.log(`  da/         ${r.da.last_batch_id === 0 ? 'empty' : `published up to batch ${r.da.last_batch_id}`}  ${mb(r.da.bytes)}`);
  console.log(`  snapshots/  ${r.snapshots.files} file${r.snapshots.files === 1 ? '' : 's'}  ${mb(r.snapshots.bytes)}; a start on the copy resumes from ` +
    (r.snapshots.resume_batch_id === null ? 'genesis' : `the snapshot at batch ${r.snapshots.resume_batch_id}`));
  console.log(`  files       ${r.files.length === 0 ? 'none' : r.files.join(', ')}`);
  if (r.skipped.length > 0) console.log(`  not copied  ${r.skipped.join(', ')}`);
  console.log(`${mb(r.bytes)} in ${r.attempts} attempt${r.attempts === 1 ? '' : 's'}; restore: start a server with ${r.out} as its data dir`);
}

export async function backupCommand(args: ParsedArgs): Promise<number> {
  return runCommand(args, BACKUP_USAGE, async () => {
    for (const name of args.flags.keys()) {
      if (!KNOWN_FLAGS.includes(name)) throw new UsageError(`backup: unknown option --${name}`);
    }
    if (args.positional.length > 1) throw new UsageError(`backup: unexpected argument ${JSON.stringify(args.positional[1])}`);
    const out_flag = str(args, 'out');
    if (out_flag === undefined || out_flag === '') throw new UsageError('backup: --out <dir> is required');
    // The config is read (and a bad one refused) unless --data-dir names the dir, as the other
    // offline commands do.
    const data_flag = str(args, 'data-dir');
    const data_dir = path.resolve(data_flag ?? loadConfig().server.data_dir);
    const r = await backup(data_dir, path.resolve(out_flag));
    if (args.flags.has('json')) console.log(JSON.stringify({ ok: true, ...r }));
    else printResult(r);
    return EXIT_OK;
  });
}
