// `ringbook replay`: rebuild the engine state from the journal alone, with the real engine, and
// print the state root of every N-th batch and of the last one. When the data dir also holds the
// published batches (da/), each root is compared with the one the server published; a mismatch
// exits 2, like `ringbook verify`.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { engineConfigOf } from '../config/read.js';
import { LmdbDaStore } from '../da/da_store.js';
import { ReplayExecutor } from '../da/replay.js';
import { Journal } from '../journal/journal.js';
import { stateDigest } from '../engine/state.js';
import type { EventFields } from '../ring/event_records.js';
import { requestsOfBatch } from './request_count.js';

export interface ReplayResult {
  batches: number;
  requests: number;
  last_batch_id: number;
  state_root: string;
  engine_digest: string;
  compared: number;
  mismatches: { batch_id: number; journal_root: string; published_root: string }[];
  seconds: number;
}

/** A one-line progress bar on stderr (only when stderr is a terminal or `force`). */
export class Progress {
  private last_ms = 0;
  constructor(private readonly label: string, private readonly total: number, private readonly force = false) {}

  update(done: number): void {
    if (!this.force && !process.stderr.isTTY) return;
    const now = Date.now();
    if (now - this.last_ms < 100 && done < this.total) return;
    this.last_ms = now;
    const width = 30;
    const frac = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const bar = '#'.repeat(Math.round(frac * width)).padEnd(width, '.');
    process.stderr.write(`\r${this.label} [${bar}] ${done}/${this.total}`);
    if (done >= this.total) process.stderr.write('\n');
  }
}

export function replayJournal(data_dir: string, opts: {
  every?: number;
  onRoot?: (batch_id: number, root: string) => void;
  /** Called with the executor after the last batch (snapshots read the engine and registry). */
  atEnd?: (executor: ReplayExecutor) => void;
  /** Every replayed event, after the state root builder (snapshots feed a read model). */
  onEvent?: (e: EventFields) => void;
} = {}): ReplayResult {
  const t0 = Date.now();
  const cfg = loadConfig();
  // Read only: the write-ahead file's batches (not yet in LMDB) are read after LMDB's.
  const journal = Journal.open(path.join(data_dir, 'journal'), { read_only: true });
  const da_dir = path.join(data_dir, 'da');
  const store = existsSync(da_dir) ? LmdbDaStore.open(da_dir, { reader: true }) : null;
  const executor = new ReplayExecutor(engineConfigOf(cfg), { onEvent: opts.onEvent });
  const progress = new Progress('replay', journal.lastBatchId());
  let roots = executor.genesis();
  let batches = 0;
  let requests = 0;
  let compared = 0;
  const mismatches: ReplayResult['mismatches'] = [];
  try {
    // Each batch is applied before the next is read: the journal's reused buffer suffices.
    for (const b of journal.readTransient(1)) {
      roots = executor.apply(b.batch_id, b.time_ms, b.records, b.count);
      batches++;
      requests += requestsOfBatch(b.records, b.count).requests;
      const published = store?.get(b.batch_id);
      if (published !== undefined) {
        compared++;
        if (published.header.state_root !== roots.state_root) {
          mismatches.push({ batch_id: b.batch_id, journal_root: roots.state_root, published_root: published.header.state_root });
        }
      }
      if (opts.every && b.batch_id % opts.every === 0 && opts.onRoot) opts.onRoot(b.batch_id, roots.state_root);
      progress.update(b.batch_id);
    }
  } finally {
    void journal.close();
  }
  if (opts.atEnd) opts.atEnd(executor);
  return {
    batches, requests, last_batch_id: roots.batch_id, state_root: roots.state_root,
    engine_digest: stateDigest(executor.engine.canonicalState()), compared, mismatches,
    seconds: (Date.now() - t0) / 1000,
  };
}
