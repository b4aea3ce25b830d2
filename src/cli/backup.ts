// `ringbook backup --out <dir>`: a restorable copy of a data dir, while its server runs (the
// common case) or stopped (docs/operations.md "Backup"). Debian's mdb_copy cannot read these LMDB
// files (the lmdb package builds its own LMDB); lmdb-js's own copy can, and a read transaction
// never blocks the server's writer. How the parts are copied and checked: backup_copy.ts.
// The copy is made in a temporary directory beside --out and renamed into place at the end, so a
// failed or interrupted backup leaves no half copy where a restore would look; until then it holds
// BACKUP_INCOMPLETE, which a start refuses (what a SIGKILL leaves; the next backup removes it).
// SIGINT/SIGTERM end the copy at its next step with its LMDB environments closed (onSignals).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { DATA_DIR_LOCK_FILE, dataDirHeld, INCOMPLETE_BACKUP_FILE, processAlive, readIncompleteBackupMarker, refuseIncompleteBackup } from '../journal/data_dir_lock.js';
import { STALE_READER_SWEEP_MS } from '../journal/stale_readers.js';
import { BackupInterrupted, copyDataDir, CopyRaced, syncPath, UNINTERRUPTED, type BackupCopy, type CopyControl } from './backup_copy.js';
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
(a race with the running server is retried, up to ${BACKUP_ATTEMPTS_MAX} attempts; what the server trims or
prunes during the copy is held from the start and kept in it). Every batch acknowledged before the
backup started is in the copy. Restore: start a server with the copy as its data dir.

options:
  --out <dir>                where the copy goes: a new or empty directory (written beside it
                             first, then renamed: a failed backup leaves nothing there)
  --data-dir <dir>           the server's data directory (default: RINGBOOK_DATA_DIR, else config
                             server.data_dir: ./data from the current directory)
  --json                     machine-readable output (one JSON object)
  --help                     this text

Ctrl-C or SIGTERM stops it after the step in progress (an LMDB copy runs to its end) and removes
the partial copy; a partial copy that a killed backup left is marked BACKUP_INCOMPLETE (a start
refuses it) and removed by the next backup to the same --out.

exit codes: 0 ok, 1 error (no journal in the data dir, --out not empty, the copy not restorable,
a cluster role's data dir), 64 usage error, 130/143 interrupted (SIGINT/SIGTERM)`;

export interface BackupResult extends BackupCopy {
  data_dir: string;
  out: string;
  /** Whether a server held the data dir (its lock, data_dir_lock.ts) when the backup started. */
  server_running: boolean;
  attempts: number;
  /** Partial copies beside --out left by killed backups (their pid gone), removed before this one. */
  removed_partials: string[];
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

/** The partial copy being written (removed by a second signal's immediate exit). */
let partial_dir: string | null = null;

/** Left in the partial copy until it is complete (data_dir_lock.ts): who is writing it, since when. */
function markIncomplete(tmp: string, data_dir: string): void {
  fs.writeFileSync(path.join(tmp, INCOMPLETE_BACKUP_FILE), `ringbook backup of ${data_dir} by pid ${process.pid} since ${new Date().toISOString()}\n`);
}

/** The pid a partial copy's marker names (markIncomplete), null when unreadable (read bounded, as a start reads it). */
function markerPid(dir: string): number | null {
  const marker = readIncompleteBackupMarker(dir);
  const m = marker !== null && 'text' in marker ? /by pid (\d+)/.exec(marker.text) : null;
  return m === null ? null : Number(m[1]);
}

/**
 * Removes the partial copies beside --out that killed backups left (SIGKILL: no handler ran):
 * ours by name and marker, whose writer is gone. Returns their names.
 */
function removeDeadPartials(parent: string, out: string): string[] {
  const prefix = `.${path.basename(out)}.partial-`;
  const removed: string[] = [];
  for (const name of fs.readdirSync(parent)) {
    if (!name.startsWith(prefix)) continue;
    const dir = path.join(parent, name);
    const pid = markerPid(dir);
    if (pid === null || processAlive(pid)) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/**
 * A cluster role's data dir (docs/scale-out.md): a DA role's `da/` (its own lock file), a
 * matcher's `matcher/` or a gateway's `gateway/`, and no journal: all are derived from the NATS
 * event stream (a DA role rebuilds its store from it, a matcher and a gateway replay it without
 * their snapshots), which a copy of the dir does not hold.
 */
function refuseClusterDataDir(data_dir: string): void {
  if (fs.existsSync(path.join(data_dir, 'journal'))) return;
  const roles = [
    fs.existsSync(path.join(data_dir, 'matcher')) ? 'matcher/ (a cluster matcher\'s snapshots)' : null,
    fs.existsSync(path.join(data_dir, 'da', DATA_DIR_LOCK_FILE)) ? 'da/ (a cluster DA role\'s store)' : null,
    fs.existsSync(path.join(data_dir, 'gateway')) ? 'gateway/ (a cluster gateway\'s snapshots)' : null,
  ].filter((r): r is string => r !== null);
  if (roles.length === 0) return;
  throw new Error(`${data_dir} is a cluster role's data dir (${roles.join(', ')}; no journal/): ringbook backup copies a single ` +
    'server\'s data dir. Each is rebuilt from the cluster\'s NATS JetStream event stream RB_EVENTS: back that up (docs/operations.md "Backup")');
}

/**
 * `ctl`: the signal received (backupCommand's handlers), asked between the copy's steps; the
 * copy then ends there, its environments closed and its partial directory removed.
 */
export async function backup(data_dir: string, out: string, ctl: CopyControl = UNINTERRUPTED): Promise<BackupResult> {
  refuseClusterDataDir(data_dir);
  requireJournal(data_dir);
  refuseIncompleteBackup(data_dir);
  checkOut(out, data_dir);
  const server_running = dataDirHeld(data_dir);
  const parent = path.dirname(out);
  fs.mkdirSync(parent, { recursive: true });
  const removed_partials = removeDeadPartials(parent, out);
  const attempts_max = server_running ? BACKUP_ATTEMPTS_MAX : 1;
  let last_race: CopyRaced | null = null;
  for (let attempt = 1; attempt <= attempts_max; attempt++) {
    const tmp = fs.mkdtempSync(path.join(parent, `.${path.basename(out)}.partial-`));
    partial_dir = tmp;
    try {
      markIncomplete(tmp, data_dir);
      const copy = await copyDataDir(data_dir, tmp, ctl);
      // Complete and checked: the marker goes, durably, before the rename makes it the backup.
      fs.rmSync(path.join(tmp, INCOMPLETE_BACKUP_FILE));
      syncPath(tmp);
      // rename(2) replaces an empty directory; --out was checked empty above.
      fs.renameSync(tmp, out);
      partial_dir = null;
      syncPath(parent);
      return { data_dir, out, server_running, attempts: attempt, removed_partials, ...copy };
    } catch (e) {
      fs.rmSync(tmp, { recursive: true, force: true });
      partial_dir = null;
      if (!(e instanceof CopyRaced)) throw e;
      last_race = e;
    }
  }
  throw new Error(`the copy is not restorable after ${attempts_max} attempt(s): ${last_race?.message ?? 'unknown'}`);
}

/**
 * SIGINT and SIGTERM for the command's run: the first ends the copy at its next step (an LMDB
 * copy runs to its end: mdb_env_copy2 cannot be cut short), with its environments closed, so no
 * reader slot is left in the server's lock.mdb; a second exits at once (the slot of the copy in
 * progress is then the server's to clear: src/journal/stale_readers.ts). Returns the control and
 * the removal of the handlers.
 */
function onSignals(): { ctl: CopyControl; release: () => void } {
  let received: NodeJS.Signals | null = null;
  const handler = (signal: NodeJS.Signals): void => {
    if (received !== null) {
      if (partial_dir !== null) fs.rmSync(partial_dir, { recursive: true, force: true });
      console.error(`ringbook: backup: ${signal} again: exiting now; the partial copy was removed, nothing is at --out ` +
        `(the running LMDB copy's reader slot is cleared by the server's writer within ${STALE_READER_SWEEP_MS} ms of its next commit)`);
      process.exit(signalExitCode(signal));
    }
    received = signal;
    console.error(`ringbook: backup: ${signal}: stopping after the copy step in progress (${signal} again: exit now)`);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    ctl: { interrupted: () => received },
    release: () => {
      process.removeListener('SIGINT', handler);
      process.removeListener('SIGTERM', handler);
    },
  };
}

/** A shell's exit status for a process ended by `signal`: 128 + its number (130 SIGINT, 143 SIGTERM). */
function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + os.constants.signals[signal];
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
  const refilled = r.journal.refilled_batches > 0 ? `; ${r.journal.refilled_batches} batches trimmed during the copy written back` : '';
  console.log(`  journal/    ${range(r.journal.first_batch_id, r.journal.last_batch_id)}  ${mb(r.journal.bytes)} (wal.log ${mb(r.journal.wal_bytes)}${refilled})`);
  console.log(`  da/         ${r.da.last_batch_id === 0 ? 'empty' : `published up to batch ${r.da.last_batch_id}`}  ${mb(r.da.bytes)}`);
  console.log(`  snapshots/  ${r.snapshots.files} file${r.snapshots.files === 1 ? '' : 's'}  ${mb(r.snapshots.bytes)}; a start on the copy resumes from ` +
    (r.snapshots.resume_batch_id === null ? 'genesis' : `the snapshot at batch ${r.snapshots.resume_batch_id}`));
  console.log(`  files       ${r.files.length === 0 ? 'none' : r.files.join(', ')}`);
  if (r.skipped.length > 0) console.log(`  not copied  ${r.skipped.join(', ')}`);
  if (r.removed_partials.length > 0) console.log(`  removed     ${r.removed_partials.join(', ')} (partial copies of killed backups)`);
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
    const out = path.resolve(out_flag);
    const { ctl, release } = onSignals();
    let r: BackupResult;
    try {
      r = await backup(data_dir, out, ctl);
    } catch (e) {
      if (!(e instanceof BackupInterrupted)) throw e;
      if (args.flags.has('json')) console.log(JSON.stringify({ ok: false, error: 'INTERRUPTED', signal: e.signal }));
      console.error(`ringbook: backup interrupted by ${e.signal}: the partial copy was removed, nothing is at ${out}; ` +
        'the data dir\'s environments were closed (no reader slot left in the server\'s)');
      return signalExitCode(e.signal);
    } finally {
      release();
    }
    if (args.flags.has('json')) console.log(JSON.stringify({ ok: true, ...r }));
    else printResult(r);
    return EXIT_OK;
  });
}
