// Clears LMDB reader slots left by dead processes, from a server's writer. A reader that dies
// inside a read transaction (`ringbook backup` killed with SIGKILL mid-copy: its LMDB copy is one
// long read transaction) leaves its slot in the environment's lock.mdb, and LMDB keeps every page
// that slot's snapshot could read: the live data.mdb grows by what is written meanwhile (the
// journal's trims and the DA store's commits free nothing). LMDB frees such slots only when asked
// (mdb_reader_check, lmdb-js `readerCheck()`): lmdb-js asks when a process opens the environment
// (a restart, the next backup) and on its own write threads every ten minutes, but the server's
// writers commit with transactionSync, which never asks. So the writer asks here, rate-limited.
import type { RootDatabase } from 'lmdb';

/**
 * At most one check per this many ms of a writer's commits: a dead reader pins pages for about
 * this long. A check takes LMDB's reader mutex and reads the slot table (126 slots by default),
 * with one lock probe per distinct pid: nothing next to a commit's fsync.
 */
export const STALE_READER_SWEEP_MS = 2_000;

export class StaleReaderSweep {
  /** When the next check is due (Date.now() time); the first a period after the open, not at the first commit (Journal.sweepReaders). */
  private next_ms: number;
  /** Slots of dead processes cleared so far. */
  cleared = 0;

  constructor(private readonly env: Pick<RootDatabase, 'readerCheck'>, private readonly every_ms = STALE_READER_SWEEP_MS) {
    this.next_ms = Date.now() + every_ms;
  }

  /** Called beside each commit; checks when due. Never throws (a failed check is retried when due again). */
  maybe(now_ms = Date.now()): void {
    if (now_ms < this.next_ms) return;
    this.next_ms = now_ms + this.every_ms;
    try {
      this.cleared += this.env.readerCheck();
    } catch {
      // A closed environment or a lock-file error: the commit itself reports what matters.
    }
  }
}
