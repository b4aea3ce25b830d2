// What the cluster roles' local snapshots share (a matcher's engine, matcher_snapshots.ts; a
// gateway's read model, gateway_snapshots.ts): the event stream confirms a snapshot before it is
// used, and the snapshot writer thread (src/snapshot/writer_worker.ts, the single process's)
// packs and writes the files. One implementation of each, so both roles pass over the same files
// for the same reasons and write them the same way.
//
// A file is used only when its digest holds and the stream's message at the file's sequence is
// its batch (number, time and state root); else it is passed over with a warning naming it and
// why (`snapshot <file> passed over: ...`), then the next older one, then none (the stream from
// sequence 1). A corrupt file is never fatal.
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { JetStreamManager } from '@nats-io/jetstream';
import { listSnapshots, readSnapshotFile, type SnapshotFile } from '../snapshot/snapshot_file.js';
import type { WriteDone, WriteJob } from '../snapshot/writer_worker.js';
import { componentLog } from '../util/log.js';
import { EVENT_STREAM, readBatchHeader, type BatchHeader } from './log_format.js';
import { RETRY_WAIT_MS } from './matcher_store.js';

const log = componentLog('cluster');

/** The stream's batch header at an event stream sequence; null when the stream does not hold it (`why` says). */
export type ReadBatchAt = (seq: number) => Promise<{ header: BatchHeader } | { header: null; why: string }>;

/** The event stream's batch header at a sequence (a snapshot's check); a few retries ride out an election. */
export function batchReader(jsm: JetStreamManager): ReadBatchAt {
  return async (seq) => {
    let why = '';
    for (let tries = 0; tries < RETRY_WAIT_MS.length; tries++) {
      try {
        const m = await jsm.streams.getMessage(EVENT_STREAM, { seq });
        if (m === null) return { header: null, why: 'no such message' };
        return { header: readBatchHeader(m.header, m.data.length) };
      } catch (e) {
        why = String(e);
        // Trimmed or never written: asking again changes nothing.
        if (/no message found/i.test(why)) break;
        await sleep(RETRY_WAIT_MS[tries]);
      }
    }
    return { header: null, why };
  };
}

/** A snapshot file the event stream confirmed, and its batch's header there. */
export interface ConfirmedSnapshot {
  file: string;
  snapshot: SnapshotFile & { cluster: NonNullable<SnapshotFile['cluster']>; state_root: string };
  header: BatchHeader;
}

/**
 * The newest snapshot of `dir` that the event stream confirms and that `use` takes (`use` returns
 * what it restored, or why it passes the file over: a string); null when none does. `who` names
 * the role in the log lines ("matcher m1").
 */
export async function newestConfirmed<T>(
  dir: string, who: string, readBatchAt: ReadBatchAt, use: (c: ConfirmedSnapshot) => Promise<T | string>,
): Promise<{ value: T; confirmed: ConfirmedSnapshot } | null> {
  for (const { file } of listSnapshots(dir)) {
    const skip = (why: string): void => {
      log.warn(`ringbook ${who}: snapshot ${file} passed over: ${why}`);
    };
    try {
      const f = readSnapshotFile(file);
      if (f.cluster === undefined || f.state_root === null) {
        skip('not a cluster role\'s snapshot (no stream positions or state root)');
        continue;
      }
      const seq = f.cluster.events_through;
      const at = await readBatchAt(seq);
      if (at.header === null) {
        skip(`the event stream has no batch at sequence ${seq} (${at.why})`);
        continue;
      }
      const h = at.header;
      if (h.batch_id !== f.batch_id || h.state_root !== f.state_root || h.time_ms !== f.batch_time_ms) {
        skip(`the event stream's sequence ${seq} holds batch ${h.batch_id} (state root ${h.state_root}), ` +
          `not this batch ${f.batch_id} (state root ${f.state_root})`);
        continue;
      }
      const confirmed: ConfirmedSnapshot = { file, snapshot: { ...f, cluster: f.cluster, state_root: f.state_root }, header: h };
      const value = await use(confirmed);
      if (typeof value === 'string') {
        skip(value);
        continue;
      }
      return { value, confirmed };
    } catch (e) {
      // Truncated, altered, or of another version: the next older one, or the stream's start.
      skip(e instanceof Error ? e.message : String(e));
    }
  }
  return null;
}

/**
 * The snapshot writer thread of a cluster role, started at its first write; one write at a time
 * (the caller passes a due snapshot over while one is written). Between writes it does not keep
 * the process alive on its own.
 */
export class SnapshotWriterThread {
  private writer: Worker | null = null;
  private writer_done: ((d: WriteDone) => void) | null = null;

  private start(): Worker {
    // Run from TypeScript source (vitest), the compiled worker is in the tsc output mirror dist/.
    const here = import.meta.url;
    const file = here.endsWith('.ts') ? new URL('../../dist/src/snapshot/writer_worker.js', here) : new URL('../snapshot/writer_worker.js', here);
    const w = new Worker(file, { workerData: null });
    w.on('message', (d: WriteDone) => this.writer_done?.(d));
    w.on('error', (e) => {
      this.writer = null;
      this.writer_done?.({ ok: false, error: `snapshot writer failed: ${e.message}` });
    });
    w.unref();
    return w;
  }

  /** Posts `job` (its `transfer` buffers moved, not copied) and waits for the file; throws what failed. */
  async write(job: WriteJob, transfer: ArrayBuffer[] = []): Promise<Extract<WriteDone, { ok: true }>> {
    const writer = this.writer ?? (this.writer = this.start());
    // Held while a write is in flight: whoever awaits it (a clean stop) needs the answer.
    writer.ref();
    const done = await new Promise<WriteDone>((resolve) => {
      this.writer_done = resolve;
      writer.postMessage(job, transfer);
    }).finally(() => writer.unref());
    this.writer_done = null;
    if (!done.ok) throw new Error(done.error);
    return done;
  }

  /** Ends the thread (a write it interrupts leaves only a temporary file, deleted at the next prune). */
  async close(): Promise<void> {
    const w = this.writer;
    this.writer = null;
    if (w !== null) await w.terminate();
  }
}
