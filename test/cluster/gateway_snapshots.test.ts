// Which snapshot a cluster gateway resumes from (src/cluster/gateway_snapshots.ts), without NATS:
// a random request flow runs through the real engine (ReplayExecutor) into a read model, the
// gateway's snapshots are taken as its batch listener takes them (every 7th batch, 3 kept, one more
// at the clean stop) by the snapshot writer thread, and resume() is asked against a fake event
// stream (sequence = batch id + 1). The newest the stream confirms and continues is imported and
// equals the read model at its batch; a truncated newest one is passed over for the next older;
// one whose next sequence holds another batch (a stream that does not continue it) too; none left:
// null (the stream from sequence 1). The writer thread runs from dist/ (`npx tsc` first).
// Then the backend's own check at the read (JetStreamGatewayBackend over a fake event stream: a
// NatsConnection and JetStreamManager answering only what its start and reader ask): a first batch
// after the resumed snapshot that is not N + 1 (the stream changed between resume()'s check and
// the read) exits 75 naming <data_dir>/gateway, before anything reaches the event ring.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { batchHeaders, type BatchHeader } from '../../src/cluster/log_format.js';
import { JetStreamGatewayBackend } from '../../src/cluster/gateway_backend.js';
import { GatewaySnapshots } from '../../src/cluster/gateway_snapshots.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { ComponentLog } from '../../src/util/log.js';
import type { ReadBatchAt } from '../../src/cluster/stream_snapshots.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { MarketData } from '../../src/marketdata/market_data.js';
import { ReadModel } from '../../src/read_model/read_model.js';
import { exportFront, importFront } from '../../src/snapshot/front_state.js';
import { listSnapshots } from '../../src/snapshot/snapshot_file.js';
import { generateSequence } from '../engine/generator.js';
import { recordsOf, recordable } from '../da/records.js';
import { streamHeader } from './stream_headers.js';

const SEED = 3;
const EVERY_BATCHES = 7;
const KEEP = 3;
const LIMITS = { fills_per_account_kept: 10, trades_per_market_kept: 10, closed_orders_kept: 10 };
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A read model's whole state, comparable (its snapshot export, typed arrays as plain arrays). */
function stateOf(rm: ReadModel, md: MarketData): string {
  return JSON.stringify(exportFront(rm, md), (_k, v: unknown) => (v instanceof Float64Array ? [...v] : v));
}

describe('GatewaySnapshots', () => {
  it('resumes from the newest snapshot the stream confirms and continues; a corrupt one is passed over', async () => {
    const { config, requests: all } = generateSequence(SEED, 300);
    const requests = all.filter(recordable);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-gateway-snapshots-'));
    dirs.push(dir);
    const settings = { dir, every_batches: EVERY_BATCHES, keep: KEEP };
    const snaps = new GatewaySnapshots(settings, 'g');
    const rm = new ReadModel(config.assets, LIMITS);
    const md = new MarketData(rm);
    let listener: (batch_id: number) => void = () => undefined;
    snaps.attach(rm, md, (fn) => {
      listener = fn;
    });
    const ex = new ReplayExecutor(config, { onEvent: (e) => rm.apply(e) });
    const headers: BatchHeader[] = [];
    headers.push(streamHeader(0, ex.genesis().state_root, 0));
    /** The read model's state at each batch. */
    const states = new Map<number, string>();
    for (let at = 0, batch_id = 1; at < requests.length; batch_id++) {
      const n = Math.min(requests.length - at, 1 + (batch_id % 5));
      const records = recordsOf(requests.slice(at, at + n));
      at += n;
      // Noted before its records reach the read model, as the backend does.
      const r = ex.apply(batch_id, 1_000 * batch_id, records, n);
      const h = streamHeader(batch_id, r.state_root, at);
      headers.push(h);
      snaps.noteBatch(h, batch_id + 1);
      expect(rm.batch_id).toBe(batch_id);
      listener(batch_id);
      states.set(batch_id, stateOf(rm, md));
      await snaps.idle();
    }
    const last = headers.length - 1;
    expect(last % EVERY_BATCHES, 'the last batch is not a periodic one').not.toBe(0);
    // The clean stop: one more, of the last batch.
    await snaps.stop();
    const files = listSnapshots(dir);
    expect(files.map((f) => f.batch_id)).toEqual([last, last - (last % EVERY_BATCHES), last - (last % EVERY_BATCHES) - EVERY_BATCHES]);

    const stream = (alter: (h: BatchHeader) => BatchHeader | null): ReadBatchAt => async (seq) => {
      const h = headers[seq - 1] === undefined ? null : alter(headers[seq - 1]);
      return h === null ? { header: null, why: 'no such message' } : { header: h };
    };
    /** A new gateway's start: the batch it resumes from (-1: none), its read model checked against the original's. */
    const resumeFrom = async (read: ReadBatchAt): Promise<number> => {
      const g = new GatewaySnapshots(settings, 'g');
      const r = await g.resume(read, last + 1, config.assets.length);
      if (r === null) return -1;
      expect(r.events_through).toBe(r.batch_id + 1);
      const rm2 = new ReadModel(config.assets, LIMITS);
      const md2 = new MarketData(rm2);
      importFront(rm2, md2, g.resume_front!);
      expect(stateOf(rm2, md2), `the read model at batch ${r.batch_id}`).toBe(states.get(r.batch_id));
      return r.batch_id;
    };

    expect(await resumeFrom(stream((h) => h))).toBe(files[0].batch_id);
    // The stream's sequence after the second newest holds another batch: it does not continue it.
    const periodic = files[1].batch_id;
    // (and no longer holds the newest).
    const shifted = stream((h) => (h.batch_id === periodic + 1 ? { ...h, batch_id: periodic + 7 } : h.batch_id > periodic + 1 ? null : h));
    expect(await resumeFrom(shifted)).toBe(files[2].batch_id);
    // A truncated newest: passed over for the next older one, never thrown.
    const bytes = fs.readFileSync(files[0].file);
    fs.writeFileSync(files[0].file, bytes.subarray(0, bytes.length >> 1));
    expect(await resumeFrom(stream((h) => h))).toBe(files[1].batch_id);
    // Nothing the stream confirms: none (the stream from sequence 1).
    expect(await resumeFrom(stream(() => null))).toBe(-1);
  });
});

/** The resumed snapshot: batch 7, stored at event stream sequence 8. */
const RESUMED = { batch_id: 7, events_through: 8 };

/**
 * Starts a gateway backend resumed from RESUMED over a stream whose sequence 9 (its last) holds
 * batch `next_batch_id` (no records), and says how the start ended: the process exit code the
 * backend asked for with its fatal log line, or 'served' (start() resolved: caught up).
 */
async function startAfterSnapshot(next_batch_id: number): Promise<{ exit_code: number; fatal: string } | 'served'> {
  const last_seq = RESUMED.events_through + 1;
  const message = (seq: number): StoredMsg | null => (seq > last_seq ? null : {
    seq: last_seq, data: new Uint8Array(0),
    header: batchHeaders({ batch_id: next_batch_id, time_ms: 1, requests_through: 0, input_records: 0, state_root: '0x', fills_root: '0x', leader: 'm' }),
  } as unknown as StoredMsg);
  const jsm = {
    streams: {
      info: async () => ({ state: { last_seq }, config: { allow_direct: true } }),
      getMessage: async (_stream: string, q: { seq: number }) => message(q.seq),
    },
    direct: { getMessage: async (_stream: string, q: { seq: number }) => message(q.seq) },
  } as unknown as JetStreamManager;
  const nc = { subscribe: () => ({ unsubscribe: () => undefined }) } as unknown as NatsConnection;
  const backend = new JetStreamGatewayBackend(nc, {} as JetStreamClient, jsm, {
    gateway_id: 'g', publish_timeout_ms: 1000, publish_give_up_ms: 1000, message_records_max: 64, resume: RESUMED,
  });
  let exited: (r: { exit_code: number; fatal: string }) => void = () => undefined;
  const exit = new Promise<{ exit_code: number; fatal: string }>((resolve) => {
    exited = resolve;
  });
  const fatal = vi.spyOn(ComponentLog.prototype, 'fatal').mockImplementation(() => undefined);
  vi.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    exited({ exit_code: code ?? 0, fatal: String(fatal.mock.calls.at(-1)?.[0]) });
  }) as typeof process.exit);
  const events = SpscRing.create({ capacity_slots: 16, slot_words: RECORD_WORDS });
  try {
    const started = backend.start(SpscRing.create({ capacity_slots: 16, slot_words: RECORD_WORDS }), events, () => undefined);
    return await Promise.race([exit, started.then(() => 'served' as const)]);
  } finally {
    await backend.stop();
  }
}

describe('JetStreamGatewayBackend after a resumed snapshot', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('exits 75 naming <data_dir>/gateway when the first batch read does not follow the snapshot (the stream changed since the check)', async () => {
    expect(await startAfterSnapshot(3)).toEqual({
      exit_code: 75,
      fatal: 'ringbook gateway g: event stream: batch 3 follows batch 7 (sequence 9) after the snapshot of batch 7: not the stream it ' +
        'was taken of; delete the gateway\'s snapshots (<data_dir>/gateway) to read it from sequence 1',
    });
  });

  it('serves when it does (batch 8): the fake stream above is one a gateway reads', async () => {
    expect(await startAfterSnapshot(RESUMED.batch_id + 1)).toBe('served');
    expect(process.exit).not.toHaveBeenCalled();
  });
});
