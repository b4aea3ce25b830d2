// What a start writes into its data dir before it has started, kept so that a start that then fails
// (a refusal, a port in use, NATS unreachable) removes it again and leaves the data dir as it found
// it (docs/operations.md "Start and stop"); once started, all of it stays. One StartClaim per
// process (src/main.ts), for the single process and the cluster roles alike:
// - the secrets it generated (admin_token, operator_key), written only once the start is past its
//   refusals (keepSecret: after the data dir lock and the cluster settings);
// - the directories its mkdir made (absent before the start), removed only if empty;
// - the directory it locked (the single process: the data dir; a matcher role: <data>/matcher, a
//   DA role: <data>/da), when it held nothing but the lock file: the parts the start made in it.
// Before 2026-11-29 a refused start left new secrets behind, a failed first single-process start
// a journal no server served from, and a cluster role's failed start everything it made.
import { mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DATA_DIR_LOCK_FILE, lockDataDir } from './data_dir_lock.js';

/** A secret from the environment, else from the data dir, else generated (in memory: keepSecret writes it). */
export interface StartSecret {
  value: string;
  /** Made by this start, not yet in the data dir (keepSecret writes it). */
  generated: boolean;
  file: string;
}

/** Reads (or makes) a secret without writing anything: StartClaim.keepSecret writes a generated one. */
export function findSecret(data_dir: string, file: string, from_env: string | null, make: () => string): StartSecret {
  const p = path.join(data_dir, file);
  if (from_env) return { value: from_env, generated: false, file: p };
  try {
    return { value: readFileSync(p, 'utf8').trim(), generated: false, file: p };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return { value: make(), generated: true, file: p };
}

/** A locked directory that held nothing but the lock file: the entries `isPart` names are this start's. */
interface ClaimedDir {
  dir: string;
  release: () => void;
  isPart: (name: string) => boolean;
}

function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export class StartClaim {
  /** Secret files this start wrote. */
  readonly #secrets: string[] = [];
  /** Directories this start's mkdir made. */
  readonly #made_dirs = new Set<string>();
  readonly #claimed: ClaimedDir[] = [];

  /** mkdir -p `dir`, noting the directories it made (removed, if empty, when the start fails). */
  mkdir(dir: string): void {
    const first = mkdirSync(dir, { recursive: true });
    if (first === undefined) return;
    // From `dir` up to the first one made (an ancestor of `dir`; the root check bounds the walk).
    for (let d = dir; ; d = path.dirname(d)) {
      this.#made_dirs.add(d);
      if (d === first || d === path.dirname(d)) return;
    }
  }

  /**
   * Takes `dir` for this process (lockDataDir: an incomplete backup there, or a live server or
   * role holding it, refuses the start). If it holds nothing but the lock file now, what the start
   * makes in it from here on is its own (with the lock held nothing else writes it, and `ringbook
   * backup`/`snapshot` refuse a dir without a journal): the entries `isPart` names are removed if
   * the start fails. Checked after the lock, not before it, so a server that ran and stopped
   * meanwhile is seen.
   */
  lock(dir: string, isPart: (name: string) => boolean): void {
    const release = lockDataDir(dir);
    if (readdirSync(dir).every((name) => name === DATA_DIR_LOCK_FILE)) this.#claimed.push({ dir, release, isPart });
  }

  /**
   * Writes a generated secret into the data dir. `wx`: a file another process on this data dir
   * wrote since (two cluster roles sharing it) is kept and its value used, never overwritten.
   */
  keepSecret(s: StartSecret): StartSecret {
    if (!s.generated) return s;
    try {
      writeFileSync(s.file, s.value + '\n', { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      return { value: readFileSync(s.file, 'utf8').trim(), generated: false, file: s.file };
    }
    this.#secrets.push(s.file);
    return s;
  }

  /**
   * The start failed: its secrets go, then the parts it made in the directories it claimed, their
   * lock files, and the directories it made, deepest first, each only if empty (rmdir), so
   * anything else found there stays, and so does a directory that existed. Best effort: what
   * cannot be removed stays (the exit says why the start failed).
   */
  forget(): void {
    for (const file of this.#secrets.splice(0)) {
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    }
    for (const c of this.#claimed.splice(0)) {
      for (const name of entriesOf(c.dir)) {
        if (name === DATA_DIR_LOCK_FILE || !c.isPart(name)) continue;
        try {
          rmSync(path.join(c.dir, name), { recursive: true, force: true });
        } catch {
          // left as it is
        }
      }
      c.release();
    }
    // Longest path first: a child before its parent.
    for (const d of [...this.#made_dirs].sort((a, b) => b.length - a.length)) {
      try {
        rmdirSync(d);
      } catch {
        // not empty (or gone): it stays
      }
    }
    this.#made_dirs.clear();
  }

  /** Started: its secrets and directories stay, whatever follows. */
  succeeded(): void {
    this.#secrets.length = 0;
    this.#made_dirs.clear();
    this.#claimed.length = 0;
  }
}
