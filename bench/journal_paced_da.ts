// The DA-like writer of bench/journal_paced.ts (`--da-interval-ms`), in its own worker thread as
// the server's DA worker is (src/da/da_worker.ts): the real LmdbDaStore, opened as the DA worker
// opens it (DA_STORE_LMDB_OPTIONS, sync_commits, one commit per message), in `<dir>/da` next to
// the journal (the same file system, as in the server's data dir), taking `batches` DA-sized
// batches every `interval_ms` and committing them as one group: the DA worker's shape at
// 1,000 requests/s (one journal batch per request, DA_POST_INTERVAL_MS = 50 => ~50 per commit).
// Reports each commit's wall time on this thread (the write and its fdatasync) when told to stop.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { LmdbDaStore } from '../src/da/da_store.js';
import { daBatch } from './da_batches.js';

/** What journal_paced.ts hands this worker. */
export interface DaWriterData {
  dir: string;
  interval_ms: number;
  batches: number;
  /** State-diff bytes per batch (a lone order's batch changes ~10 leaves). */
  diff_bytes: number;
  /** Tick on the same timer but write nothing: the control for the windows after each tick. */
  phantom: boolean;
  /** Another compiled da_store.js to write with (A/B of the store's writes; null: this build's). */
  store_module: string | null;
}

/** This worker's messages: 'ready' once the store is open, then 'done' with its figures after 'stop'. */
export type DaWriterMessage =
  | { type: 'ready' }
  | { type: 'done'; commits: number; batches: number; batch_bytes: number; commit_ms: number[]; env_syncs: number; spans: Float64Array; ticks: Float64Array };

/** A time both threads read alike (ms since the epoch, sub-ms): performance.now() is per thread. */
export const sharedNow = (): number => performance.timeOrigin + performance.now();

if (parentPort !== null && (workerData as Partial<DaWriterData> | null)?.interval_ms !== undefined) {
  const port = parentPort;
  const data = workerData as DaWriterData;
  const Store: typeof LmdbDaStore = data.store_module === null ? LmdbDaStore
    : ((await import(pathToFileURL(path.resolve(data.store_module)).href)) as { LmdbDaStore: typeof LmdbDaStore }).LmdbDaStore;
  const store = Store.open(path.join(data.dir, 'da'), { commit_interval_ms: 0, sync_commits: true });
  const commit_ms: number[] = [];
  /** Each commit's start and end (sharedNow), for which appends overlapped a commit. */
  const spans: number[] = [];
  /** Each tick's time (sharedNow), phantom or not: set by the timer, not by the disk. */
  const ticks: number[] = [];
  let next_id = store.latest() + 1;
  let batch_bytes = 0;
  const inputs = Buffer.from(daBatch(1, 0).inputs_hex, 'hex');
  const tick = (): void => {
    ticks.push(sharedNow());
    if (data.phantom) return;
    for (let i = 0; i < data.batches; i++) {
      const b = daBatch(next_id++, data.diff_bytes);
      batch_bytes += inputs.length + data.diff_bytes;
      void store.submit(b, inputs);
    }
    // commit_interval_ms 0: the group commits at the end of this turn, on this thread (transactionSync).
    const t0 = sharedNow();
    void store.written().then(() => {
      const t1 = sharedNow();
      commit_ms.push(t1 - t0);
      spans.push(t0, t1);
    });
  };
  const timer = setInterval(tick, data.interval_ms);
  port.on('message', (m: { type: 'stop' }) => {
    if (m.type !== 'stop') return;
    clearInterval(timer);
    void store.close().then(() => {
      port.postMessage({
        type: 'done', commits: store.commits, batches: next_id - 1, batch_bytes, commit_ms, env_syncs: store.env_syncs,
        spans: Float64Array.from(spans), ticks: Float64Array.from(ticks),
      } satisfies DaWriterMessage);
    });
  });
  port.postMessage({ type: 'ready' } satisfies DaWriterMessage);
}
