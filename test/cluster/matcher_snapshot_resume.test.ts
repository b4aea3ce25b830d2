// Which snapshot a cluster matcher resumes from (src/cluster/matcher_snapshots.ts), without NATS:
// random request flows run through the real engine (ReplayExecutor, as the matcher role runs it),
// a snapshot is taken at every 10th confirmed batch (3 kept), and resume() is asked against a
// fake event stream (sequence = batch id + 1). The newest snapshot the stream confirms is
// restored and then follows the original batch for batch (same state roots); one the stream
// holds with another root, or no longer holds, or a damaged file, is passed over for the next
// older one; none left: null (the stream from sequence 1). The zero balance leaves the matcher
// takes from its state tree are the read model's (the single process's source of them).
// Also without NATS: /status's snapshot_capture_ms is the engine's whole pause (it covers the post
// to the writer thread), and the role's stop closes its snapshots (the writer thread ends; none
// is taken after).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BatchRequests } from '../../src/cluster/batch_request.js';
import type { BatchHeader } from '../../src/cluster/log_format.js';
import type { MatcherStatus } from '../../src/cluster/matcher_options.js';
import { requestPurgeStatus } from '../../src/cluster/request_purge.js';
import { MatcherSnapshots, zeroBalances, type ReadBatchAt } from '../../src/cluster/matcher_snapshots.js';
import { ClusterMatcher } from '../../src/cluster/matcher_role.js';
import { NatsCredentials } from '../../src/cluster/nats_auth.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { ReadModel } from '../../src/read_model/read_model.js';
import { listSnapshots, readSnapshotFile } from '../../src/snapshot/snapshot_file.js';
import { generateSequence, standardConfig } from '../engine/generator.js';
import { recordsOf, recordable } from '../da/records.js';
import { streamHeader } from './stream_headers.js';

/** A flow with a zero balance leaf (an account that emptied a balance): rare in the generator's flows. */
const SEED = 8;
const EVERY_BATCHES = 10;
const KEEP = 3;
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function statusOf(): MatcherStatus {
  return {
    node_id: 'm', role: 'standby', batch_id: -1, state_root: '', events_through: 0, requests_through: 0, mismatches: 0, leader_since_ms: 0,
    batches_cut: 0, store_fault: null, batch_requests: new BatchRequests().counts, resumed_from_batch_id: -1, snapshots_written: 0,
    snapshot_batch_id: -1, snapshot_capture_ms: 0, snapshots_deferred: 0, requests_purge: requestPurgeStatus(0),
  };
}

const sorted = (x: [number, number][]): [number, number][] => [...x].sort((a, b) => a[0] - b[0] || a[1] - b[1]);

describe('MatcherSnapshots.resume', () => {
  it('restores the newest snapshot the event stream confirms, else an older one, else none', async () => {
    const { config, requests: all } = generateSequence(SEED, 400);
    const requests = all.filter(recordable);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-matcher-resume-'));
    dirs.push(dir);
    const status = statusOf();
    const snaps = new MatcherSnapshots({ dir, every_batches: EVERY_BATCHES, keep: KEEP }, 'm', status, config.assets.length);
    const rm = new ReadModel(config.assets, { fills_per_account_kept: 10, trades_per_market_kept: 10, closed_orders_kept: 10 });
    const ex = new ReplayExecutor(config, { onEvent: (e) => rm.apply(e) });
    // The stream as the leader published it: header of batch b at sequence b + 1.
    const headers: BatchHeader[] = [];
    const batches: { records: Int32Array; n: number }[] = [];
    headers.push(streamHeader(0, ex.genesis().state_root, 0));
    batches.push({ records: new Int32Array(0), n: 0 });
    let zero_leaves_seen = 0;
    for (let at = 0, batch_id = 1; at < requests.length; batch_id++) {
      const n = Math.min(requests.length - at, 1 + (batch_id % 5));
      const records = recordsOf(requests.slice(at, at + n));
      at += n;
      const r = ex.apply(batch_id, 1_000 * batch_id, records, n);
      const h = streamHeader(batch_id, r.state_root, at);
      headers.push(h);
      batches.push({ records, n });
      snaps.confirmed(h, batch_id + 1, at, r.state_root, ex);
      // Looked up among the zero balances, or found by walking every leaf: the read model's.
      const candidates = zeroBalances(ex.matcher.captureState(), config.assets.length);
      expect(sorted(ex.builder.zeroBalanceLeaves(candidates, 0)), `batch ${batch_id}: zero balance leaves looked up`).toEqual(sorted(rm.zeroBalanceLeaves()));
      expect(sorted(ex.builder.zeroBalanceLeaves(candidates, Infinity)), `batch ${batch_id}: zero balance leaves walked`).toEqual(sorted(rm.zeroBalanceLeaves()));
      zero_leaves_seen += rm.zeroBalanceLeaves().length;
      await snaps.idle();
    }
    expect(zero_leaves_seen, 'the flow leaves some zero balance leaves').toBeGreaterThan(0);
    const files = listSnapshots(dir);
    // The newest carries a zero balance leaf: its restore (and the root check) depends on it.
    expect(readSnapshotFile(files[0].file).zero_balance_leaves.length).toBeGreaterThan(0);
    expect(files.length).toBe(KEEP);
    expect(status.snapshot_batch_id).toBe(files[0].batch_id);
    const last = headers.length - 1;
    expect(files[0].batch_id).toBe(last - (last % EVERY_BATCHES));

    const stream = (alter: (h: BatchHeader) => BatchHeader | null): ReadBatchAt => async (seq) => {
      const h = headers[seq - 1] === undefined ? null : alter(headers[seq - 1]);
      return h === null ? { header: null, why: 'no such message' } : { header: h };
    };

    // The newest, confirmed: restored, and it follows the original batch for batch.
    const r = await snaps.resume(config, undefined, stream((h) => h));
    expect(r).not.toBeNull();
    expect(r!.batch_id).toBe(files[0].batch_id);
    expect(r!.events_through).toBe(files[0].batch_id + 1);
    expect(r!.requests_through).toBe(headers[files[0].batch_id].requests_through);
    expect(r!.state_root).toBe(headers[files[0].batch_id].state_root);
    for (let b = r!.batch_id + 1; b <= last; b++) {
      expect(r!.executor.apply(b, 1_000 * b, batches[b].records, batches[b].n).state_root, `batch ${b} after the resume`).toBe(headers[b].state_root);
    }

    // The stream holds another root at the newest's sequence: the next older one.
    const other = await snaps.resume(config, undefined, stream((h) => h.batch_id === files[0].batch_id ? { ...h, state_root: '0x' + 'ab'.repeat(32) } : h));
    expect(other!.batch_id).toBe(files[1].batch_id);
    // The stream no longer holds the two newest: the oldest kept.
    const trimmed = await snaps.resume(config, undefined, stream((h) => h.batch_id >= files[1].batch_id ? null : h));
    expect(trimmed!.batch_id).toBe(files[2].batch_id);

    // Damaged files (truncated; garbage): passed over, never thrown.
    const bytes = fs.readFileSync(files[0].file);
    fs.writeFileSync(files[0].file, bytes.subarray(0, bytes.length - 100));
    fs.writeFileSync(files[1].file, 'not a snapshot');
    const damaged = await snaps.resume(config, undefined, stream((h) => h));
    expect(damaged!.batch_id).toBe(files[2].batch_id);
    // Nothing the stream confirms: none (the stream's start).
    expect(await snaps.resume(config, undefined, stream(() => null))).toBeNull();
  });
});

describe('the cluster matcher\'s snapshot pause and stop', () => {
  it('snapshot_capture_ms covers the post to the writer thread; after close() no snapshot is taken', async () => {
    const { config, requests: all } = generateSequence(3, 150);
    const requests = all.filter(recordable).slice(0, 4);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-matcher-pause-'));
    dirs.push(dir);
    const status = statusOf();
    const snaps = new MatcherSnapshots({ dir, every_batches: 1, keep: 10 }, 'm', status, config.assets.length);
    const ex = new ReplayExecutor(config, {});
    ex.genesis();
    // A clock each post to a worker thread moves by a minute: a measure across the post sees it,
    // one that stops before it does not (no real time is measured).
    const POST_MS = 60_000;
    let posts = 0;
    const real_now = performance.now.bind(performance);
    const post = Worker.prototype.postMessage;
    const now_spy = vi.spyOn(performance, 'now').mockImplementation(() => real_now() + posts * POST_MS);
    const post_spy = vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (this: Worker, ...args: Parameters<Worker['postMessage']>) {
      posts++;
      post.apply(this, args);
    });
    try {
      const batch = (batch_id: number): void => {
        const r = ex.apply(batch_id, 1_000 * batch_id, recordsOf(requests.slice(batch_id - 1, batch_id)), 1);
        const h = streamHeader(batch_id, r.state_root, batch_id);
        snaps.confirmed(h, batch_id + 1, batch_id, r.state_root, ex);
      };
      batch(1);
      expect(posts, 'the job posted within confirmed()').toBe(1);
      expect(status.snapshot_capture_ms, 'the pause includes the post').toBeGreaterThanOrEqual(POST_MS);
      await snaps.idle();
      expect(status.snapshots_written).toBe(1);
      await snaps.close();
      batch(2);
      await snaps.idle();
      expect(posts, 'no writer thread started again after close()').toBe(1);
      expect(listSnapshots(dir).map((f) => f.batch_id)).toEqual([1]);
    } finally {
      now_spy.mockRestore();
      post_spy.mockRestore();
      await snaps.close();
    }
  });

  it('a snapshot due while the kept copy is still read is deferred to the first confirmed batch after it is freed (not passed over)', async () => {
    const { config, requests: all } = generateSequence(3, 150);
    const requests = all.filter(recordable);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-matcher-defer-'));
    dirs.push(dir);
    const status = statusOf();
    const snaps = new MatcherSnapshots({ dir, every_batches: 3, keep: 10 }, 'm', status, config.assets.length);
    const ex = new ReplayExecutor(config, {});
    ex.genesis();
    // The writer thread gets no job until released: the copy of batch 3 stays held, deterministically.
    const post = Worker.prototype.postMessage;
    const held: { w: Worker; args: Parameters<Worker['postMessage']> }[] = [];
    const post_spy = vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (this: Worker, ...args: Parameters<Worker['postMessage']>) {
      held.push({ w: this, args });
    });
    try {
      const batch = (batch_id: number): void => {
        const r = ex.apply(batch_id, 1_000 * batch_id, recordsOf(requests.slice(batch_id - 1, batch_id)), 1);
        const h = streamHeader(batch_id, r.state_root, batch_id);
        snaps.confirmed(h, batch_id + 1, batch_id, r.state_root, ex);
      };
      for (let b = 1; b <= 7; b++) batch(b);
      expect(held.length, 'batch 3\'s job only').toBe(1);
      expect(status.snapshots_deferred, 'batch 6 deferred').toBe(1);
      post_spy.mockRestore();
      for (const h of held) post.apply(h.w, h.args);
      await snaps.idle();
      batch(8);
      await snaps.idle();
      expect(listSnapshots(dir).map((f) => f.batch_id).sort((a, b) => a - b), 'batch 6\'s snapshot taken at batch 8').toEqual([3, 8]);
      expect(readSnapshotFile(listSnapshots(dir)[0].file).state_root).toBe(ex.builder.stateRoot());
      batch(9);
      await snaps.idle();
      expect(listSnapshots(dir).map((f) => f.batch_id).sort((a, b) => a - b), 'then on schedule again').toEqual([3, 8, 9]);
      expect(status.snapshots_written).toBe(3);
    } finally {
      post_spy.mockRestore();
      await snaps.close();
    }
  });

  it('the role\'s stop closes its snapshots (their writer thread)', async () => {
    const close = vi.spyOn(MatcherSnapshots.prototype, 'close');
    try {
      const m = new ClusterMatcher({
        nats_urls: [], nats_credentials: NatsCredentials.none(), node_id: 'm', engine_config: standardConfig(), replicas: 1, lease_ttl_ms: 1_000,
        batch_records_max: 64, store_fault_after_ms: 1_000, fault_file: null, snapshots: { dir: null, every_batches: 0, keep: 1 }, request_purge_every_ms: 0,
      });
      // Never started: stop() runs its whole path with no connection.
      await m.stop();
      expect(m.status.role).toBe('stopped');
      expect(close).toHaveBeenCalledTimes(1);
    } finally {
      close.mockRestore();
    }
  });
});
