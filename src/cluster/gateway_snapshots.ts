// A cluster gateway's local snapshots of its read model and market data (docs/scale-out.md, "Disk,
// restarts and trimming"): without them a gateway reads the event stream from sequence 1 at
// every start, so its start time grows with the exchange's history.
//
// Files: the single process's snapshot format (src/snapshot/snapshot_file.ts) in
// <data_dir>/gateway, the front part only (the FrontState of src/snapshot/front_state.ts: every GET
// answer's source) and an empty engine part, with the batch's published state root and time and
// the header's `cluster` positions (the event stream sequence of the batch; the request stream
// position its header carries). So the stream checks a gateway's file as it checks a matcher's
// (stream_snapshots.ts), and the single process never takes one for its own (no engine part, other
// directory).
//
// Written: after batch N's commit reached the read model and market data (a batch listener), every
// `every_batches` and once more at a clean stop: the front thread exports them into columns (as the
// single process's front does, exportFront) and the snapshot writer thread packs, digests and
// writes the file atomically and keeps the `keep` newest. One write at a time: one due while the
// previous is written is passed over with a warning.
//
// Read: at start, the newest file the stream confirms (its batch at its sequence) whose next
// sequence, if the stream holds it yet, is batch N + 1; else the next older, else none (the stream
// from sequence 1, said in the log). The gateway then reads from the following sequence, and the
// backend refuses (exits 75) if the first batch it reads there is not N + 1 after all.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { MarketData } from '../marketdata/market_data.js';
import type { ReadModel } from '../read_model/read_model.js';
import { decodeFront, exportFront, frontBuffers, type FrontState } from '../snapshot/front_state.js';
import { listSnapshots, snapshotFileName } from '../snapshot/snapshot_file.js';
import { componentLog } from '../util/log.js';
import type { BatchHeader } from './log_format.js';
import { newestConfirmed, SnapshotWriterThread, type ReadBatchAt } from './stream_snapshots.js';
import type { FrontSnapshots } from '../gateway/matcher_link_options.js';

const log = componentLog('cluster');

export interface GatewaySnapshotSettings {
  /** Where the files go (<data_dir>/gateway); null: none written or read (a gateway with its own DA thread replays from sequence 1). */
  dir: string | null;
  /** A snapshot at every batch id that is a multiple of this (RINGBOOK_GATEWAY_SNAPSHOT_EVERY_BATCHES; 0: only at a clean stop). */
  every_batches: number;
  /** The newest files kept (config snapshots.keep). */
  keep: number;
}

/** Where a gateway resumes: its read model at `batch_id` (resume_front), the stream read from `events_through + 1`. */
export interface GatewayResume {
  batch_id: number;
  events_through: number;
}

/** What it did (logged; the resume point is GET /admin/state `recovery`). */
export interface GatewaySnapshotStatus {
  written: number;
  /** The newest one written by this process (-1: none yet). */
  last_batch_id: number;
  /** The front thread's pause for the last one: exporting the read model and market data into columns. */
  last_export_ms: number;
}

interface Noted {
  header: BatchHeader;
  seq: number;
}

export class GatewaySnapshots implements FrontSnapshots {
  private readonly settings: GatewaySnapshotSettings;
  private readonly who: string;
  private readonly writer = new SnapshotWriterThread();
  private writing: Promise<void> | null = null;
  /** Batches handed to the event ring whose commit the read model has not reached yet, in order (at most what the ring holds). */
  private readonly noted = new Map<number, Noted>();
  /** The batch the read model is at, with its stream position (null: none noted yet). */
  private applied: Noted | null = null;
  private rm: ReadModel | null = null;
  private md: MarketData | null = null;
  private closed = false;
  resume_point: GatewayResume | null = null;
  /** The resumed read model and market data, until the server imported them (attach). */
  resume_front: FrontState | null = null;
  readonly status: GatewaySnapshotStatus = { written: 0, last_batch_id: -1, last_export_ms: 0 };

  constructor(settings: GatewaySnapshotSettings, node_id: string) {
    this.settings = settings;
    this.who = `gateway ${node_id}`;
    if (settings.dir !== null) mkdirSync(settings.dir, { recursive: true });
  }

  /**
   * The newest local snapshot the event stream confirms and continues (`last_seq`: the stream's
   * last sequence now), decoded; null: read the stream from sequence 1. Kept as `resume_point`.
   */
  async resume(readBatchAt: ReadBatchAt, last_seq: number, asset_count: number): Promise<GatewayResume | null> {
    const dir = this.settings.dir;
    if (dir === null) return null;
    const r = await newestConfirmed(dir, this.who, readBatchAt, async ({ snapshot: f }): Promise<FrontState | string> => {
      if (f.front === null) return 'no read model part';
      const front = decodeFront(f.front);
      if (front.batch_id !== f.batch_id) return `its read model is at batch ${front.batch_id}, not ${f.batch_id}`;
      if (front.assets !== asset_count) return `${front.assets} assets, the config has ${asset_count}`;
      const next = f.cluster.events_through + 1;
      if (next > last_seq) return front;
      const at = await readBatchAt(next);
      if (at.header === null) return `the event stream's next sequence ${next} cannot be read (${at.why})`;
      if (at.header.batch_id !== f.batch_id + 1) {
        return `the event stream's next sequence ${next} holds batch ${at.header.batch_id}, not ${f.batch_id + 1}: the stream does not continue it`;
      }
      return front;
    });
    if (r === null) {
      const why = listSnapshots(dir).length === 0 ? 'no snapshot' : 'no snapshot that the event stream confirms (the warnings above say why)';
      log.info(`ringbook ${this.who}: ${why} in ${dir}: reading the event stream from sequence 1`);
      return null;
    }
    const { snapshot: f } = r.confirmed;
    this.resume_point = { batch_id: f.batch_id, events_through: f.cluster.events_through };
    this.resume_front = r.value;
    log.info(`ringbook ${this.who}: resuming from snapshot of batch ${f.batch_id} (event stream sequence ${f.cluster.events_through})`,
      { batch_id: f.batch_id });
    return this.resume_point;
  }

  /** Before the first event, `resume_front` imported: the read model and market data the snapshots are taken of. */
  attach(rm: ReadModel, md: MarketData, onBatchCommitted: (fn: (batch_id: number) => void) => void): void {
    this.rm = rm;
    this.md = md;
    this.resume_front = null;
    onBatchCommitted((batch_id) => this.committed(batch_id));
  }

  /** The backend hands batch `h`, stored at event stream sequence `seq`, to the event ring. */
  noteBatch(h: BatchHeader, seq: number): void {
    this.noted.set(h.batch_id, { header: h, seq });
  }

  /** Batch listener: batch `batch_id`'s commit reached the read model and market data. */
  committed(batch_id: number): void {
    const n = this.noted.get(batch_id);
    // In batch order: what is at or before this batch is done with.
    for (const k of this.noted.keys()) {
      if (k > batch_id) break;
      this.noted.delete(k);
    }
    if (n === undefined) return;
    this.applied = n;
    const every = this.settings.every_batches;
    if (every > 0 && batch_id > 0 && batch_id % every === 0) this.take(n);
  }

  private take(n: Noted): void {
    const { rm, md } = this;
    const dir = this.settings.dir;
    if (dir === null || rm === null || md === null || this.closed) return;
    const batch_id = n.header.batch_id;
    if (this.writing !== null) {
      log.warn(`ringbook ${this.who}: snapshot of batch ${batch_id} passed over: the previous one is still being written`);
      return;
    }
    if (rm.batch_id !== batch_id) {
      log.error(`ringbook ${this.who}: snapshot of batch ${batch_id} not taken: the read model is at batch ${rm.batch_id}`);
      return;
    }
    const t0 = performance.now();
    const front = exportFront(rm, md);
    this.status.last_export_ms = Math.round(performance.now() - t0);
    const h = n.header;
    this.writing = this.writer.write({
      header: {
        batch_id, batch_time_ms: h.time_ms, state_root: h.state_root, zero_balance_leaves: [], created_ms: Date.now(),
        cluster: { events_through: n.seq, requests_through: h.requests_through },
      },
      engine: new Uint8Array(0), front, file: path.join(dir, snapshotFileName(batch_id)), dir, keep: this.settings.keep,
    }, frontBuffers(front)).then((done) => {
      this.status.written++;
      this.status.last_batch_id = batch_id;
      log.info(`ringbook ${this.who}: snapshot of batch ${batch_id} written (${done.bytes} bytes; front paused ${this.status.last_export_ms} ms)`,
        { batch_id });
    }, (e: unknown) => {
      // The disk's trouble is not the exchange's: the gateway goes on, a restart reads more of the stream.
      log.error(`ringbook ${this.who}: snapshot of batch ${batch_id} not written: ${String(e)}`, undefined, { batch_id });
    }).finally(() => {
      this.writing = null;
    });
  }

  /** Waits for the write in flight, if any. */
  async idle(): Promise<void> {
    await this.writing;
  }

  /**
   * A clean stop, after the read model took its last batch: a snapshot of that batch unless the
   * newest written (or resumed from) is it, then the writer thread ends.
   */
  async stop(): Promise<void> {
    await this.writing;
    const n = this.applied;
    if (n !== null && n.header.batch_id !== this.status.last_batch_id && n.header.batch_id !== this.resume_point?.batch_id) {
      this.take(n);
      await this.writing;
    }
    await this.close();
  }

  /** Ends the writer thread; no snapshot is taken after (a failed start, the end of stop()). */
  async close(): Promise<void> {
    this.closed = true;
    await this.writer.close();
  }
}
