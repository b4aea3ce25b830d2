// The snapshot's engine part through the kept column copies (src/matcher/engine_staging.ts,
// docs/benchmarks.md h29w): for the same engine state, the file the snapshot writer thread writes
// from a staged copy equals, byte for byte, the file encodeSnapshot wrote from the matcher's own
// walk and packing (captureState + encodeEngine, fixed created_ms); a cluster matcher's file
// (MatcherSnapshots, zero balance leaves from the copy) equals the old path's too; and the kept
// buffers are reused, never handed out again while a copy is being read (the copy in flight still
// holds its own batch's state): with one set (a cluster matcher's) take() declines then; with two
// (the single process's, h30s) it takes the second, and only with both read does it decline
// (takeDue then defers the snapshot: test/snapshot/deferral.test.ts). The writer thread runs
// from dist/ (`npx tsc` first), as the cluster's MatcherSnapshots starts it from TypeScript source.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { BatchRequests } from '../../src/cluster/batch_request.js';
import type { MatcherStatus } from '../../src/cluster/matcher_options.js';
import { requestPurgeStatus } from '../../src/cluster/request_purge.js';
import { MatcherSnapshots, zeroBalances, zeroBalancesOfColumns } from '../../src/cluster/matcher_snapshots.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import type { EngineConfig } from '../../src/engine/api.js';
import { EngineStaging, KEPT_SETS_MAX, releaseStaged, stagedEngineBytes, type StagedEngine } from '../../src/matcher/engine_staging.js';
import { encodeEngine, encodeSnapshot, readSnapshotFile, type SnapshotHeader } from '../../src/snapshot/snapshot_file.js';
import type { WriteDone, WriteJob } from '../../src/snapshot/writer_worker.js';
import { emptyRequest, OrderType, RequestKind, Side, Tif, type Request } from '../../src/engine/types.js';
import { BTC, ETH, generateSequence, standardConfig, USDC } from '../engine/generator.js';
import { recordsOf, recordable } from '../da/records.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { streamHeader } from '../cluster/stream_headers.js';

const tmp = tempDirsPerFile('ringbook-engine-staging-');
const WRITER = new URL('../../dist/src/snapshot/writer_worker.js', import.meta.url);
const writer = new Worker(WRITER, { workerData: null });
writer.unref();

afterAll(async () => {
  await writer.terminate();
});

function written(job: WriteJob): Promise<WriteDone> {
  return new Promise((resolve) => {
    writer.once('message', resolve);
    writer.postMessage(job);
  });
}

const BOOK_ACCOUNTS = 150;
const BOOK_ORDERS = 6_000;

/**
 * Many resting orders (the generator's flows leave a few dozen): BOOK_ACCOUNTS funded accounts
 * place BOOK_ORDERS limit orders that never cross, over 300 levels a side, a third with a client
 * id; 10 accounts past them withdraw a whole deposit (zero balances, pending withdrawals).
 */
function bookFlow(): { config: EngineConfig; requests: Request[] } {
  const config = standardConfig({ accounts_max: BOOK_ACCOUNTS + 20, orders_open_max: BOOK_ORDERS + 100, orders_open_per_account_max: 1_000 });
  const requests: Request[] = [];
  for (let account = 1; account <= BOOK_ACCOUNTS + 10; account++) {
    for (const asset of [ETH, BTC, USDC]) {
      const r = emptyRequest();
      r.kind = RequestKind.DEPOSIT;
      r.account = account;
      r.asset = asset;
      r.amount_units = 1_000_000_000_000;
      requests.push(r);
    }
    if (account > BOOK_ACCOUNTS) {
      // Withdrawn whole: a listed account (its nonce) with a zero balance, and a pending withdrawal.
      const w = emptyRequest();
      w.kind = RequestKind.WITHDRAW;
      w.account = account;
      w.nonce = 1;
      w.asset = USDC;
      w.amount_units = 1_000_000_000_000;
      requests.push(w);
    }
  }
  const nonce = new Array<number>(BOOK_ACCOUNTS + 1).fill(0);
  for (let i = 0; i < BOOK_ORDERS; i++) {
    const r = emptyRequest();
    r.kind = RequestKind.PLACE;
    r.account = 1 + (i % BOOK_ACCOUNTS);
    r.nonce = ++nonce[r.account];
    r.market = i % 2;
    r.side = (i >> 1) % 2 === 0 ? Side.BID : Side.ASK;
    r.order_type = OrderType.LIMIT;
    r.tif = Tif.GTC;
    const m = config.markets[r.market];
    const away = 1 + ((i * 7) % 300);
    r.price_units = (1_000 + (r.side === Side.BID ? -away : away)) * m.tick_size_units;
    r.quantity_units = m.lot_size_units * (1 + (i % 5));
    if (i % 3 === 0) r.client_order_id = `c${i}`;
    requests.push(r);
  }
  return { config, requests };
}

/** An engine after `length` generated requests of `seed` (seed 0: bookFlow), cut into batches of 1-5. */
function engineAfter(seed: number, length: number): { ex: ReplayExecutor; config: EngineConfig; batch_id: number } {
  const { config, requests: all } = seed === 0 ? bookFlow() : generateSequence(seed, length);
  const requests = all.filter(recordable);
  const ex = new ReplayExecutor(config, {});
  ex.genesis();
  let batch_id = 0;
  for (let at = 0; at < requests.length;) {
    batch_id++;
    const n = Math.min(requests.length - at, 1 + (batch_id % 5));
    ex.apply(batch_id, 1_000 * batch_id, recordsOf(requests.slice(at, at + n)), n);
    at += n;
  }
  return { ex, config, batch_id };
}

/**
 * A replay of generateSequence(5, 3,000) in batches of 1-5 requests, stopping at every 10th batch
 * (`marks` yields the batch id there): the engine moves on between two snapshots' copies.
 */
function markedReplay(): { matcher: ReplayExecutor['matcher']; marks: Generator<number> } {
  const { config, requests: all } = generateSequence(5, 3_000);
  const requests = all.filter(recordable);
  const ex = new ReplayExecutor(config, {});
  ex.genesis();
  function* marks(): Generator<number> {
    for (let at = 0, batch_id = 1; at < requests.length; batch_id++) {
      const n = Math.min(requests.length - at, 1 + (batch_id % 5));
      ex.apply(batch_id, 1_000 * batch_id, recordsOf(requests.slice(at, at + n)), n);
      at += n;
      if (batch_id % 10 === 0) yield batch_id;
    }
  }
  return { get matcher() { return ex.matcher; }, marks: marks() };
}

function openOrders(ex: ReplayExecutor): number {
  return ex.matcher.captureState().canonical.markets.reduce((n, m) => n + m.bids.length + m.asks.length, 0);
}

/** The shapes: an empty book (genesis), short and long flows (many orders), one with zero balance leaves (seed 8). */
const SHAPES: { name: string; seed: number; length: number }[] = [
  { name: 'genesis: no order, no account', seed: 1, length: 0 },
  { name: 'a short flow', seed: 3, length: 150 },
  { name: 'zero balances (seed 8)', seed: 8, length: 400 },
  { name: 'a longer generated flow', seed: 5, length: 4_000 },
  { name: 'many resting orders, client ids, zero balances', seed: 0, length: 0 },
];

describe('snapshot engine part from kept column copies', () => {
  it.each(SHAPES)('$name: the writer thread\'s file equals encodeSnapshot of the matcher\'s own capture', async ({ seed, length }) => {
    const { ex, config, batch_id } = engineAfter(seed, length);
    const state = ex.matcher.captureState();
    const engine_old = new Uint8Array(encodeEngine(state));
    const header: SnapshotHeader = {
      batch_id, batch_time_ms: 1_000 * batch_id, state_root: ex.builder.stateRoot(), zero_balance_leaves: [[1, 0]], created_ms: 1_700_000_000_000,
    };
    const old_file = Buffer.from(encodeSnapshot(header, engine_old, null));
    const staging = new EngineStaging();
    // Twice: the second copy goes into the first one's kept buffers.
    for (let round = 0; round < 2; round++) {
      const staged = staging.take(ex.matcher);
      expect(staged).not.toBeNull();
      if (staged === null) return;
      expect(zeroBalancesOfColumns(staged.columns, staged.addresses.length / 20, config.assets.length)).toEqual(zeroBalances(state, config.assets.length));
      const dir = tmp();
      const file = path.join(dir, `snapshot-${round}.msgpack`);
      const done = await written({ header, engine: staged, front: null, file, dir, keep: 3 });
      expect(done.ok, done.ok ? '' : done.error).toBe(true);
      expect(Buffer.compare(fs.readFileSync(file), old_file), `round ${round}: file bytes`).toBe(0);
      expect(staging.reading, 'the writer frees the copy after its walk').toBe(false);
    }
    if (seed === 0) {
      expect(openOrders(ex), 'many open orders').toBeGreaterThan(BOOK_ORDERS / 2);
      expect(zeroBalances(state, config.assets.length).filter(([account]) => account > BOOK_ACCOUNTS).length, 'zero balances of listed accounts').toBeGreaterThan(0);
    }
  });

  // sha256 of encodeSnapshot({ batch_id, batch_time_ms: 1, state_root: null, zero_balance_leaves: [],
  // created_ms: 5 }, engine, null) for these states, as main's code (6d1a385, before h29w: the
  // engine part from captureState + encodeEngine) wrote them. A deliberate change of the
  // canonical state or the file format changes them; nothing else should.
  it.each([
    [1, 0, '0630b4f789cee5c5d0653f282a3adecaabc1d6b6aacd1217c9275b3edefb46cd'],
    [3, 150, '747b70befcef3389d219b3fa730f29a71eea01f83802637d43c6974002f56ccb'],
    [8, 400, '30ea7e050bbb231b220bd3b17b9da98a06aaf4a1bdb7b80bec41ebee5fb1be1a'],
    [5, 4_000, 'ac0995466c4b0f74af2395ac6742804a1cfebf3d9245e4b6f8751e0da83808b8'],
    [0, 0, '34036cf19879b6c8e3ebd055944f904bc879eb6065b9d1761dc61261529761ca'],
    [11, 3_000, 'ae21ef6794a667393a0c899806a4548efc25aee0b6b562fafe33e97243496dd5'],
    [12, 3_000, '5b71aeb5316211acc44bc4d0a4fa17c225dad353ce73892234468b4bfed2ed76'],
  ] as const)('seed %i, %i requests: both paths write the file main\'s code wrote', (seed, length, sha256) => {
    const { ex, batch_id } = engineAfter(seed, length);
    const header: SnapshotHeader = { batch_id, batch_time_ms: 1, state_root: null, zero_balance_leaves: [], created_ms: 5 };
    const staged = new EngineStaging().take(ex.matcher);
    if (staged === null) throw new Error('fresh buffers are free');
    const engines = { new: stagedEngineBytes(staged), old: new Uint8Array(encodeEngine(ex.matcher.captureState())) };
    for (const [path_name, engine] of Object.entries(engines)) {
      expect(createHash('sha256').update(encodeSnapshot(header, engine, null)).digest('hex'), `${path_name} path`).toBe(sha256);
    }
  });

  it('one set (a cluster matcher\'s): reuses the kept buffers, and hands none out while a copy is read: that copy keeps its own batch', () => {
    const ex = markedReplay();
    const staging = new EngineStaging(1);
    let held: { staged: NonNullable<ReturnType<EngineStaging['take']>>; bytes: Uint8Array } | null = null;
    let kept_buffer: ArrayBufferLike | null = null;
    let passed_over = 0;
    let checked = 0;
    for (const batch_id of ex.marks) {
      const staged = staging.take(ex.matcher);
      if (held === null) {
        expect(staged, `batch ${batch_id}: buffers free`).not.toBeNull();
        if (staged === null) return;
        if (kept_buffer !== null && staged.columns.order_f.buffer.byteLength === kept_buffer.byteLength) {
          expect(staged.columns.order_f.buffer, 'the kept buffer reused').toBe(kept_buffer);
        }
        kept_buffer = staged.columns.order_f.buffer;
        // Held over the next 10-batch mark (a write still in flight there).
        held = { staged, bytes: new Uint8Array(encodeEngine(ex.matcher.captureState())) };
      } else {
        expect(staged, `batch ${batch_id}: declined while a copy is read`).toBeNull();
        passed_over++;
        // The copy in flight still walks to its own batch's bytes, though the engine moved on.
        expect(Buffer.compare(stagedEngineBytes(held.staged), held.bytes), 'the held copy was not overwritten').toBe(0);
        expect(() => stagedEngineBytes(held!.staged), 'a freed copy is not walked again').toThrow(/not held/);
        releaseStaged(held.staged);
        held = null;
        checked++;
      }
    }
    expect(passed_over).toBeGreaterThan(3);
    expect(checked).toBe(passed_over);
    expect(staging.declined).toBe(passed_over);
  });

  it('two sets (the single process\'s): one due while a copy is read takes the second set, and only with both read is it declined', () => {
    const ex = markedReplay();
    const staging = new EngineStaging();
    /** Copies held over the next 10-batch marks, with the bytes of their own batch (oldest first). */
    const held: { staged: StagedEngine; bytes: Uint8Array }[] = [];
    const buffers = new Set<ArrayBufferLike>();
    let declined = 0;
    let walked = 0;
    for (const batch_id of ex.marks) {
      const staged = staging.take(ex.matcher);
      if (held.length === KEPT_SETS_MAX) {
        // Two snapshots in flight: declined (takeDue defers it).
        expect(staged, `batch ${batch_id}: both sets read`).toBeNull();
        declined++;
        // The older one's walk ends (the writer frees its set); the newer stays in flight.
        const done = held.shift() as (typeof held)[number];
        expect(Buffer.compare(stagedEngineBytes(done.staged), done.bytes), 'the older copy was not overwritten').toBe(0);
        walked++;
        continue;
      }
      expect(staged, `batch ${batch_id}: ${held.length} set(s) read, one free`).not.toBeNull();
      if (staged === null) return;
      for (const h of held) expect(staged.columns.order_f.buffer, 'not a set being read').not.toBe(h.staged.columns.order_f.buffer);
      buffers.add(staged.columns.order_f.buffer);
      held.push({ staged, bytes: new Uint8Array(encodeEngine(ex.matcher.captureState())) });
    }
    expect(staging.held, 'the sets still read').toBe(held.length);
    for (const h of held) expect(Buffer.compare(stagedEngineBytes(h.staged), h.bytes), 'a held copy kept its batch').toBe(0);
    expect(declined).toBeGreaterThan(3);
    expect(walked).toBe(declined);
    expect(staging.declined).toBe(declined);
    expect(staging.sets_allocated, 'memory: never more than KEPT_SETS_MAX sets').toBe(KEPT_SETS_MAX);
    expect(KEPT_SETS_MAX).toBe(2);
    // The order pool grows over the flow (its copies are reallocated with room), so a few buffers; not one per snapshot.
    expect(buffers.size).toBeLessThan(walked);
    expect(() => new EngineStaging(KEPT_SETS_MAX + 1)).toThrow(/sets_max/);
  });

  it('a cluster matcher\'s file (zero balance leaves from the copy) equals the old path\'s, also one due while the last is written', async () => {
    const { config, requests: all } = generateSequence(8, 400);
    const requests = all.filter(recordable);
    const dir = tmp();
    const status: MatcherStatus = {
      node_id: 'm', role: 'standby', batch_id: -1, state_root: '', events_through: 0, requests_through: 0, mismatches: 0, leader_since_ms: 0,
      batches_cut: 0, store_fault: null, batch_requests: new BatchRequests().counts, resumed_from_batch_id: -1, snapshots_written: 0,
      snapshot_batch_id: -1, snapshot_capture_ms: 0, snapshots_deferred: 0, requests_purge: requestPurgeStatus(0),
    };
    const snaps = new MatcherSnapshots({ dir, every_batches: 1, keep: 1_000 }, 'm', status, config.assets.length);
    const ex = new ReplayExecutor(config, {});
    ex.genesis();
    const fileOf = (batch_id: number): string => path.join(dir, `snapshot-${String(batch_id).padStart(12, '0')}.msgpack`);
    /** The file the old path wrote at the batch of the write in flight (created_ms: the written file's). */
    let in_flight: { batch_id: number; bytes: (created_ms: number) => Uint8Array } | null = null;
    const check = (): void => {
      if (in_flight === null) return;
      const f = readSnapshotFile(fileOf(in_flight.batch_id));
      expect(Buffer.compare(fs.readFileSync(fileOf(in_flight.batch_id)), Buffer.from(in_flight.bytes(f.created_ms))), `batch ${in_flight.batch_id}: file bytes`).toBe(0);
      compared++;
      in_flight = null;
    };
    let compared = 0;
    let while_written = 0;
    for (let at = 0, batch_id = 1; at < requests.length; batch_id++) {
      const n = Math.min(requests.length - at, 1 + (batch_id % 5));
      const r = ex.apply(batch_id, 1_000 * batch_id, recordsOf(requests.slice(at, at + n)), n);
      at += n;
      const h = streamHeader(batch_id, r.state_root, at);
      const written_before = status.snapshots_written;
      const deferred_before = status.snapshots_deferred;
      snaps.confirmed(h, batch_id + 1, at, r.state_root, ex);
      const state = ex.matcher.captureState();
      const zero_balance_leaves = ex.builder.zeroBalanceLeaves(zeroBalances(state, config.assets.length));
      const engine = new Uint8Array(encodeEngine(state));
      const cluster = { events_through: batch_id + 1, requests_through: at };
      const b = batch_id;
      const now = {
        batch_id, bytes: (created_ms: number) => encodeSnapshot({ batch_id: b, batch_time_ms: h.time_ms, state_root: r.state_root, zero_balance_leaves, created_ms, cluster }, engine, null),
      };
      if (in_flight !== null) {
        // Due while the last batch's write is in flight (nothing awaited since): copied if the
        // writer thread already walked the last copy (the set is free), else deferred (to the next
        // batch: every batch is due here). The write in flight still holds the last batch's state
        // though the engine has moved on, and a copy taken meanwhile is written after it.
        await snaps.idle();
        check();
        const taken = fs.existsSync(fileOf(batch_id));
        expect(status.snapshots_written).toBe(written_before + (taken ? 2 : 1));
        expect(status.snapshots_deferred, `batch ${batch_id}: taken or deferred`).toBe(deferred_before + (taken ? 0 : 1));
        if (taken) {
          in_flight = now;
          check();
        }
        while_written++;
        continue;
      }
      in_flight = now;
      // Every third write is left in flight over the next batch.
      if (batch_id % 3 !== 0) {
        await snaps.idle();
        check();
      }
    }
    await snaps.idle();
    check();
    await snaps.close();
    expect(compared).toBeGreaterThan(40);
    expect(while_written).toBeGreaterThan(10);
    expect(status.snapshots_written).toBe(compared);
  });
});
