// The LMDB storer thread's client (h22j, issue 11, docs/benchmarks.md "h22j"): the journal hands a
// full region's write-ahead batches to a small worker thread (wal_storer_worker.ts), which stores
// them into LMDB in one synchronous transaction (its two device flushes) while the matcher goes on
// with the next batches in the other region; the matcher only looks at a shared word to learn the
// store's outcome. Why: the same store on the matcher held it ~3.8-6.2 ms (p50) every ~0.5 s at
// 1,000 requests/s, and the requests that arrived meanwhile waited (~1% of them: the p99/p999).
//
// The handover is one postMessage with the batches' bytes in one transferred buffer (no copy on
// either side after the concatenation); the outcome comes back through a SharedArrayBuffer
// (sequence number done, ok or failed, the error's text), because the matcher thread never turns
// its event loop (matcher_worker.ts) and so could not receive a message. For the same reason the
// worker never logs (its console would be forwarded through this thread's event loop): the journal
// logs what it reports.
import { Worker } from 'node:worker_threads';
import type { WalBatch } from './wal.js';

/** Control words: the last job done (its sequence number), its outcome (0 ok, 1 failed), its message's bytes. */
export const STORER_DONE = 0;
export const STORER_FAILED = 1;
export const STORER_MESSAGE_BYTES = 2;
/** Set (1) by a thread that could not open LMDB: it fails every job, and the journal stops using it. */
export const STORER_UNUSABLE = 3;
/**
 * Set (1) once the thread's open of LMDB is over (opened, or failed: then STORER_UNUSABLE is set
 * first). The thread starts with the journal (h23m); until this word is set its LMDB open may still
 * run, and the journal's own LMDB writes wait for it (wal_storer_driver.ts `awaitOpen`).
 */
export const STORER_READY = 4;
/** Bytes of the control words before the message. */
export const STORER_HEADER_BYTES = 32;
/** Longest failure message kept (UTF-8 bytes). */
export const STORER_MESSAGE_MAX = 1024;

/** A job: batches `first_id`..`first_id + ends.length - 1`, batch i in `bytes` [ends[i-1], ends[i]). */
export interface StorerJob {
  seq: number;
  first_id: number;
  bytes: ArrayBuffer;
  ends: Uint32Array;
}

export interface StorerData {
  dir: string;
  control: SharedArrayBuffer;
  fault_file: string | null;
}

/** The outcome of a finished job. */
export type StoreOutcome = { ok: true } | { ok: false; message: string };

export class WalStorer {
  private readonly worker: Worker;
  private readonly control: Int32Array;
  private readonly message: Uint8Array;
  private seq = 0;

  private constructor(worker: Worker, control: SharedArrayBuffer) {
    this.worker = worker;
    this.control = new Int32Array(control, 0, STORER_HEADER_BYTES / 4);
    this.message = new Uint8Array(control, STORER_HEADER_BYTES);
  }

  /**
   * Starts the thread; null when it cannot be (the journal then stores on its own thread, as before
   * h22j). Does not wait for it: `new Worker` returns once the thread exists; its boot (Node, the
   * modules, lmdb-js opening the environment) runs on it, and a job posted meanwhile waits in its
   * port until it listens.
   */
  static start(dir: string, fault_file: string | null): WalStorer | null {
    const control = new SharedArrayBuffer(STORER_HEADER_BYTES + STORER_MESSAGE_MAX);
    // Run from TypeScript source (vitest), the compiled worker is in the tsc output mirror dist/.
    const here = import.meta.url;
    const file = here.endsWith('.ts') ? new URL('../../dist/src/journal/wal_storer_worker.js', here) : new URL('./wal_storer_worker.js', here);
    try {
      const worker = new Worker(file, { workerData: { dir, control, fault_file } satisfies StorerData, stdout: true, stderr: true });
      // It must not keep the process alive on its own; the journal's close ends it.
      worker.unref();
      return new WalStorer(worker, control);
    } catch {
      return null;
    }
  }

  /** Hands `batches` (contiguous ids, in order) to the thread; returns the job's sequence number. */
  post(batches: readonly WalBatch[]): number {
    let total = 0;
    for (const b of batches) total += b.value.length;
    const bytes = new Uint8Array(total);
    const ends = new Uint32Array(batches.length);
    let at = 0;
    for (let i = 0; i < batches.length; i++) {
      bytes.set(batches[i].value, at);
      at += batches[i].value.length;
      ends[i] = at;
    }
    const job: StorerJob = { seq: ++this.seq, first_id: batches[0].batch_id, bytes: bytes.buffer, ends };
    this.worker.postMessage(job, [bytes.buffer, ends.buffer]);
    return job.seq;
  }

  /** Whether job `seq` is done (one atomic load). */
  done(seq: number): boolean {
    return Atomics.load(this.control, STORER_DONE) >= seq;
  }

  /** Sleeps until job `seq` is done or `timeout_ms` passed; returns whether it is done. */
  wait(seq: number, timeout_ms: number): boolean {
    const seen = Atomics.load(this.control, STORER_DONE);
    if (seen >= seq) return true;
    Atomics.wait(this.control, STORER_DONE, seen, timeout_ms);
    return this.done(seq);
  }

  /** Whether the thread's open of LMDB is over (one atomic load). */
  ready(): boolean {
    return Atomics.load(this.control, STORER_READY) === 1;
  }

  /** Sleeps until the thread's open of LMDB is over or `timeout_ms` passed; returns whether it is. */
  waitReady(timeout_ms: number): boolean {
    if (this.ready()) return true;
    Atomics.wait(this.control, STORER_READY, 0, timeout_ms);
    return this.ready();
  }

  /** Whether the thread could not open LMDB (every job it gets fails). */
  unusable(): boolean {
    return Atomics.load(this.control, STORER_UNUSABLE) === 1;
  }

  /** The outcome of the last job done. */
  outcome(): StoreOutcome {
    if (Atomics.load(this.control, STORER_FAILED) === 0) return { ok: true };
    const n = Math.min(STORER_MESSAGE_MAX, Atomics.load(this.control, STORER_MESSAGE_BYTES));
    return { ok: false, message: Buffer.from(this.message.subarray(0, n)).toString('utf8') };
  }

  /** Ends the thread (a job in flight is abandoned: the write-ahead file keeps its batches). */
  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
