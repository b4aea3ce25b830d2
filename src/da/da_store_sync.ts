// The DA store's durability settings (issue 11; docs/operations.md, "The DA store's durability"):
// which LMDB flushes a DA store commit asks for, and the environment flush that makes the rest
// durable, and how its batches are put (appended: fewer pages per commit). Apart from da_store.ts
// (the store's grouping and reads) to keep each file readable.
import type { RootDatabase } from 'lmdb';

/**
 * The LMDB environment options of every handle on a DA store (writer and readers alike: lmdb-js
 * shares one environment per path within a process, and its flags are those of the first open).
 * Durability (issue 11, docs/operations.md "The DA store's durability"): `noMetaSync` (LMDB
 * MDB_NOMETASYNC) keeps LMDB's order (the data pages are written and fdatasync'ed before the
 * meta page that points to them is written) but writes the meta page through the plain
 * descriptor instead of the O_DSYNC one: one device flush per commit instead of two, and the
 * meta page becomes durable with the next commit's fdatasync, an idle sync
 * (DA_STORE_IDLE_SYNC_MS) or close(). An OS crash or power loss can therefore undo the last
 * commit only (one group: the batches of one DA post), never corrupt the tree (lmdb.h: "maintains
 * database integrity, but a system crash may undo the last committed transaction"); the restart
 * publishes those batches again from the journal (src/da/publisher.ts), byte for byte.
 * `overlappingSync: false` (lmdb-js's default is on): LMDB's own page reuse rule (a writer reuses
 * only pages freed before the last committed transaction) is what keeps the previous meta page's
 * tree intact; lmdb-js's overlapping mode changes that rule. Not `noSync`: without any flush
 * between the data pages and the meta page, the kernel may write the meta page back first (and
 * pages the last durable tree still uses may be reused and written over), a corrupt store after a
 * crash (lmdb.h: integrity only "if the filesystem preserves write order").
 */
export const DA_STORE_LMDB_OPTIONS = { compression: false, overlappingSync: false, noMetaSync: true } as const;

/**
 * After a commit with none following it for this long (ms), the writer flushes the environment
 * (mdb_env_sync): the last commit's meta page, which noMetaSync leaves in the page cache until the
 * next commit's flush. Bounds how long a quiet store's newest commit stays undoable by a crash;
 * under load the next commit (every DA post) makes it durable first.
 */
export const DA_STORE_IDLE_SYNC_MS = 1000;

/**
 * lmdb-js `put` options for the `batches` database: MDB_APPEND. The DA store only adds batches at
 * the end (submit refuses any id but latest() + 1), and LMDB's ordinary insert splits a full leaf
 * page in half even at the end of the tree, so a ~1.2 KB batch record filled 2 per 4 KB page
 * (59%); appended, 3 (88%): a third fewer pages written and flushed per commit, on the disk the
 * journal's durable appends share (issue 11, docs/benchmarks.md "h26j": the DA writer's effect on
 * the appends' tail follows its bytes, not its number of commits). A key not above the last
 * fails the put (MDB_KEYEXIST), and with it the commit, as any commit failure: never a silent
 * overwrite. The order_fills keys ([order_id, fill_id]) do not only grow: ordinary puts.
 */
export const APPEND_PUT = { append: true } as const;

/** lmdb-js's `put` with an options object (write.js handles `append`; its index.d.ts types only putSync's). */
export interface AppendingDb<V> {
  put(id: number, value: V, options: typeof APPEND_PUT): Promise<boolean>;
}

/** lmdb-js's `sync(callback)` (mdb_env_sync with force, on a pool thread), missing from its types. */
interface SyncableRoot {
  sync(callback: (err: Error | null) => void): void;
}

/** One environment flush (mdb_env_sync with force: fdatasync of the data file, on lmdb-js's pool thread). */
export function syncEnvironment(root: RootDatabase): Promise<void> {
  return new Promise((resolve, reject) => {
    (root as unknown as SyncableRoot).sync((err) => (err ? reject(err) : resolve()));
  });
}

/**
 * A flush DA_STORE_IDLE_SYNC_MS after the last commit (re-armed by each commit; never keeps a
 * process alive). A failed idle flush is only counted: the data it could not flush is the last
 * commit's meta page, and the next commit's own fdatasync meets the same disk and fails through
 * the commit's path (which stops the store); close() and durableLatest() flush and report.
 */
export class IdleSync {
  private timer: NodeJS.Timeout | null = null;
  /** The idle flush running now (the environment must not close under it). */
  private running: Promise<void> | null = null;
  failures = 0;

  constructor(private readonly ms: number, private readonly sync: () => Promise<void>) {}

  arm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      const run: Promise<void> = this.sync().catch(() => {
        this.failures++;
      }).finally(() => {
        if (this.running === run) this.running = null;
      });
      this.running = run;
    }, this.ms);
    this.timer.unref();
  }

  /** No flush after this; resolves once a flush already running is done (close() flushes itself after). */
  stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    return this.running ?? Promise.resolve();
  }
}
