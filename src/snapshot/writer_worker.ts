// The snapshot writer thread: walks and packs the engine's part (a staged copy of its columns,
// src/matcher/engine_staging.ts; or bytes, as tests pass it),
// packs the front's part (the FrontState columns arrive transferred, not copied), encodes the file
// with its digest, writes it atomically and prunes old snapshots. So the matcher only pays for the
// copies and the front thread for exporting its read model into columns; the walk, msgpackr,
// SHA-256 and the disk run here. Posted to one job at a time by the single process's coordinator
// (src/snapshot/coordinator.ts) and by a cluster matcher (src/cluster/matcher_snapshots.ts, no
// front part).
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { packFront, type FrontState } from './front_state.js';
import { stagedEngineBytes, type StagedEngine } from '../matcher/engine_staging.js';
import { encodeSnapshot, pruneSnapshots, writeFileAtomic, type SnapshotHeader } from './snapshot_file.js';
import { answerMemoryQuestions } from '../util/thread_memory.js';
import { configureLogs, type LogSettings } from '../util/log.js';
import { nameThisThread, THREAD_NAMES } from '../util/thread_name.js';
import { prioritizeBackgroundThread, type ThreadPriority } from '../util/thread_priority.js';

/** What the coordinator passes the thread at start. */
export interface WriterData {
  priority: ThreadPriority | null;
  log: LogSettings;
  /**
   * Test seam (RINGBOOK_TEST_SNAPSHOT_HOLD_FILE, test/snapshot/server.test.ts), null in production:
   * while this file exists a job waits before its walk, so the matcher's copy stays held (two
   * snapshots in flight, deterministically).
   */
  hold_file?: string | null;
}

/** Longest a job waits for the test seam's hold file to go (then it goes on). */
const HOLD_WAIT_MS_MAX = 60_000;
/** How often the hold file is looked at. */
const HOLD_POLL_MS = 5;

export interface WriteJob {
  header: SnapshotHeader;
  /** Bytes (encodeEngine's) or a staged copy of the columns to walk and pack here. */
  engine: Uint8Array | StagedEngine;
  /** null: an engine-only snapshot (a cluster matcher's). */
  front: FrontState | null;
  file: string;
  dir: string;
  keep: number;
}

export type WriteDone =
  | { ok: true; bytes: number; engine_ms: number; pack_ms: number; write_ms: number; kept: { batch_id: number; file: string }[] }
  | { ok: false; error: string };

const port = parentPort;
if (port === null) throw new Error('snapshot writer: not in a worker thread');
const data = workerData as WriterData | null;
if (data !== null) {
  configureLogs(data.log);
  prioritizeBackgroundThread('snapshot writer', data.priority);
}
// Named once its priority is set (a test waits for the name, then reads the priority).
nameThisThread(THREAD_NAMES.snapshot_writer);
answerMemoryQuestions('snapshot_writer');

port.on('message', (job: WriteJob) => {
  void (async (): Promise<WriteDone> => {
    try {
      const hold = data?.hold_file ?? null;
      for (let waited = 0; hold !== null && existsSync(hold) && waited < HOLD_WAIT_MS_MAX; waited += HOLD_POLL_MS) await sleep(HOLD_POLL_MS);
      const t0 = performance.now();
      const engine = job.engine instanceof Uint8Array ? job.engine : stagedEngineBytes(job.engine);
      const te = performance.now();
      const bytes = encodeSnapshot(job.header, engine, job.front === null ? null : packFront(job.front));
      const t1 = performance.now();
      await writeFileAtomic(job.file, bytes);
      const kept = pruneSnapshots(job.dir, job.keep);
      return { ok: true, bytes: bytes.length, engine_ms: te - t0, pack_ms: t1 - te, write_ms: performance.now() - t1, kept };
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  })().then((done) => port.postMessage(done));
});
