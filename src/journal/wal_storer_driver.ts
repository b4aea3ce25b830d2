// The matcher thread's side of the LMDB storer thread (h22j, h23m; docs/benchmarks.md "h22j",
// "h23m"): starting it when the journal opens, holding this thread's own LMDB writes until the
// thread's open of LMDB is over, handing it a region's batches, waiting for a store and reading its
// outcome, and giving the thread up (stores are then this thread's, as without it). Which batches a
// store holds and what its outcome means for them is wal_store.ts's; the thread's protocol (the
// worker, its control words) is wal_storer.ts's.
import type { WalBatch } from './wal.js';
import { WalStorer, type StoreOutcome } from './wal_storer.js';

/** Longest wait for the storer thread's open of LMDB before this thread writes LMDB itself (then it is given up). */
export const WAL_STORER_OPEN_WAIT_MS_MAX = 10_000;
/** A wait for the storer longer than this is logged (a stalled disk), and again at each multiple. */
export const WAL_STORE_WAIT_WARN_MS = 5_000;

/** The storer thread: none (read only, no write-ahead file, could not start, given up), starting (its LMDB open not over), ready. */
export type StorerState = 'none' | 'starting' | 'ready';

export class StorerDriver {
  private readonly dir: string;
  private readonly fault_file: string | null;
  /**
   * The storer thread (null: none, or it could not start). Started at open without waiting for it
   * (h23m; at the first store its start held that store's matcher 2.5-37 ms). The first store posts
   * its job whether or not the thread is up (the job waits in its port): the matcher never waits
   * for the start. The start's LMDB open (lmdb-js opens the database in a write transaction) never
   * overlaps this thread's own LMDB writes: a synchronous store, a trim, a batch too large for the
   * file, close and the reserve's top-ups first wait until it is over (`awaitOpen`, `opening`,
   * counted; ~0.1 s after open here, so only a write in a process's first moments waits), and close
   * never ends a thread mid-open. That overlap was the one difference when a test run hung 60 s with
   * the start at open (b99959d, not reproduced).
   */
  private storer: WalStorer | null = null;
  /** It could not start, or was given up: never started again. */
  private failed_to_start = false;
  /**
   * Until its open is seen over (or it is given up): `opening` then reads this one field instead of
   * the shared word (it is set once and never cleared).
   */
  private starting = false;
  /** Waits of this thread for the storer thread's open of LMDB (its own LMDB writes, the matcher's start), since open. */
  open_waits = 0;
  /** Waits for a store in flight before the file's region could be reused (or LMDB written), and their time. */
  store_waits = 0;
  store_wait_ms = 0;

  /** JournalOptions.onStoreWait (a test seam): told as a counted wait for a store begins. */
  private readonly on_store_wait: ((last_id: number) => void) | null;

  /** `dir`: the journal's; `fault_file`: JournalOptions.fault_file (the thread reads it too). */
  constructor(dir: string, fault_file: string | null, on_store_wait: ((last_id: number) => void) | null = null) {
    this.dir = dir;
    this.fault_file = fault_file;
    this.on_store_wait = on_store_wait;
  }

  /** Starts the thread unless it runs, could not start or was given up; returns it (null: stores are this thread's). */
  start(): WalStorer | null {
    if (this.storer === null && !this.failed_to_start) {
      this.storer = WalStorer.start(this.dir, this.fault_file);
      if (this.storer === null) {
        this.failed_to_start = true;
        console.error('ringbook: journal: the LMDB storer thread could not start: the write-ahead batches are stored on the matcher thread');
      } else {
        this.starting = true;
      }
    }
    return this.storer;
  }

  /** Hands `batches` (contiguous ids, in order) to the thread, started if need be: the job's sequence number; null without the thread. */
  post(batches: readonly WalBatch[]): number | null {
    const storer = this.start();
    return storer === null ? null : storer.post(batches);
  }

  /** Whether there is a thread whose jobs can be waited for. */
  running(): boolean {
    return this.storer !== null;
  }

  /** Whether job `seq` is done (false without the thread: nothing to note). One atomic load. */
  done(seq: number): boolean {
    const storer = this.storer;
    return storer !== null && storer.done(seq);
  }

  /** Whether the thread's open of LMDB may still run (it may be writing the end of LMDB's file). */
  opening(): boolean {
    if (!this.starting) return false;
    if (this.storer !== null && !this.storer.ready()) return true;
    this.starting = false;
    return false;
  }

  state(): StorerState {
    return this.storer === null ? 'none' : this.storer.ready() ? 'ready' : 'starting';
  }

  /**
   * Before this thread writes LMDB itself: waits until the thread's open of LMDB is over (see
   * `storer`), at most WAL_STORER_OPEN_WAIT_MS_MAX; a thread that is not up by then is given up
   * (stores are this thread's, as without it). One atomic load once it is up.
   */
  awaitOpen(): void {
    const storer = this.storer;
    if (storer === null || storer.ready()) return;
    const t0 = performance.now();
    while (!storer.waitReady(100)) {
      if (performance.now() - t0 >= WAL_STORER_OPEN_WAIT_MS_MAX) {
        console.error(`ringbook: journal: the LMDB storer thread did not open the journal within ${WAL_STORER_OPEN_WAIT_MS_MAX} ms: the write-ahead batches are stored on the matcher thread`);
        this.drop();
        return;
      }
    }
    this.open_waits++;
  }

  /**
   * Waits until job `seq` (batches ..`last_id`) is done, with the thread `running`: counted in
   * `store_waits` / `store_wait_ms` when it was not, logged past WAL_STORE_WAIT_WARN_MS.
   */
  awaitDone(seq: number, last_id: number): void {
    const storer = this.storer!;
    if (storer.done(seq)) return;
    this.on_store_wait?.(last_id);
    const t0 = performance.now();
    let warned_ms = 0;
    while (!storer.wait(seq, 100)) {
      const waited_ms = performance.now() - t0;
      if (waited_ms - warned_ms >= WAL_STORE_WAIT_WARN_MS) {
        warned_ms = waited_ms;
        console.error(`ringbook: journal: waiting ${Math.round(waited_ms)} ms for the LMDB store of batches ..${last_id} (the disk is slow)`);
      }
    }
    this.store_waits++;
    this.store_wait_ms += performance.now() - t0;
  }

  /** Close's wait for job `seq`, with the thread `running` (neither counted nor logged): whether it stored. */
  awaitOk(seq: number): boolean {
    const storer = this.storer!;
    while (!storer.wait(seq, 100));
    return storer.outcome().ok;
  }

  /** The outcome of the last job done, with the thread `running`. */
  outcome(): StoreOutcome {
    return this.storer!.outcome();
  }

  /**
   * After a failed store (`message`) was retried on this thread: a thread that could not open LMDB
   * would fail every later store too, so it is given up (stores are this thread's again).
   */
  storeFailed(message: string): void {
    if (!this.storer!.unusable()) return;
    console.error(`ringbook: journal: the LMDB storer thread could not open the journal (${message}): the write-ahead batches are stored on the matcher thread`);
    this.drop();
  }

  /** Stops using the thread: stores are this thread's again. */
  private drop(): void {
    void this.storer?.close();
    this.storer = null;
    this.failed_to_start = true;
    this.starting = false;
  }

  /** Ends the thread (after `awaitOpen`: never mid-open). */
  async close(): Promise<void> {
    await this.storer?.close();
    this.storer = null;
    this.starting = false;
  }
}
