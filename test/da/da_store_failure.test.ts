// A DA store commit that fails (src/da/da_store.ts): nothing of its group is written (lmdb-js
// keeps what a failing transaction callback wrote before it threw, so the store takes it back),
// nothing after it either (no gap in the ids), every submit of the group rejects with the error,
// later submits are refused, close() still ends; the publisher stops with that error and never
// reports a batch of the failed group as published. The failure is real: a batch msgpack cannot
// encode (a number beyond 64 bits) fails the group's LMDB transaction. Also: the group's wait
// does not keep the process alive.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LmdbDaStore } from '../../src/da/da_store.js';
import type { DaStore } from '../../src/da/da_store_contract.js';
import type { FillLeaf } from '../../src/da/fills_tree.js';
import { JournalReader } from '../../src/da/journal_reader.js';
import { DaPublisherCore } from '../../src/da/publisher.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { Journal } from '../../src/journal/journal.js';
import { BatchField, EventType } from '../../src/ring/event_records.js';
import { generateSequence } from '../engine/generator.js';
import { recordable, recordsOf } from './records.js';
import { batch, fill } from './store_batches.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmp = tempDirsPerFile('ringbook-da-fail-');

/** A fill whose price msgpack cannot encode (a BigInt beyond 64 bits): its batch's commit fails. */
function unencodable(f: FillLeaf): FillLeaf {
  return { ...f, price: (10n ** 30n) as unknown as number };
}

const timeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('DA store: a failed commit', () => {
  it.each([false, true])('writes nothing of its group, rejects each of its submits with the error, refuses later ones, and closes (sync_commits %s)', async (sync_commits) => {
    const dir = tmp();
    const w = LmdbDaStore.open(dir, { commit_interval_ms: 60_000, sync_commits });
    await Promise.all([w.submit(batch(1)), w.submit(batch(2, [fill(2, 1, 10, 9)]))].concat(w.written()));
    expect(w.latest()).toBe(2);
    // The group's wait does not keep the process alive (a 60 s timer, unref'd).
    const before = timeouts();
    const p3 = w.submit(batch(3, [fill(3, 2, 11, 9)]));
    expect(timeouts()).toBe(before);
    const p4 = w.submit(batch(4, [unencodable(fill(4, 3, 12, 9))]));
    const p5 = w.submit(batch(5));
    const settled = Promise.allSettled([p3, p4, p5]);
    expect(w.get(4)?.header.batch_id).toBe(4); // readable while it waits
    await w.written(); // never rejects: the failure is the submits'
    for (const r of await settled) {
      expect(r.status).toBe('rejected');
      expect(String((r as PromiseRejectedResult).reason)).toMatch(/DA store: the commit of batches 3\.\.5 failed: .*too large/);
    }
    // Not readable, not counted: the store is back at batch 2.
    expect(w.latest()).toBe(2);
    for (const id of [3, 4, 5]) expect(w.get(id)).toBeUndefined();
    expect(w.fillsOfOrder(11)).toEqual([]);
    expect(w.fillsOfOrder(9)).toEqual([{ fill_id: 1, batch_id: 2 }]);
    await expect(w.submit(batch(3))).rejects.toThrow(/an earlier commit failed, nothing more is written: DA store: the commit of batches 3\.\.5 failed/);
    await w.close();
    await expect(w.submit(batch(3))).rejects.toThrow(/DA store: closed/);
    // On disk: batch 3 (put before the one that failed) was taken back with its fill rows.
    const again = LmdbDaStore.open(dir, { reader: true });
    expect(again.latest()).toBe(2);
    expect(again.get(3)).toBeUndefined();
    expect(again.fillsOfOrder(11)).toEqual([]);
    expect(again.fillsOfOrder(9)).toEqual([{ fill_id: 1, batch_id: 2 }]);
    await again.close();
  });

  it('a group queued behind the failed one is not written (no gap in the ids)', async () => {
    const dir = tmp();
    const w = LmdbDaStore.open(dir, { commit_interval_ms: 60_000 });
    await Promise.all([w.submit(batch(1)), w.written()]);
    const bad = w.submit(batch(2, [unencodable(fill(2, 1, 10, 9))]));
    void w.written(); // its commit starts
    const behind = w.submit(batch(3)); // submitted before that commit's outcome is known
    await w.written();
    await expect(bad).rejects.toThrow(/the commit of batches 2\.\.2 failed/);
    await expect(behind).rejects.toThrow(/batches 3\.\.3 not written: an earlier commit failed/);
    await w.close();
    const again = LmdbDaStore.open(dir, { reader: true });
    expect(again.latest()).toBe(1);
    expect(again.get(3)).toBeUndefined();
    await again.close();
  });
});

describe('DA publisher over a failed commit', () => {
  it('stops with the error and reports the last stored batch, not the failed ones', async () => {
    const dir = tmp();
    const { config, requests } = generateSequence(7, 400);
    const flow = requests.filter(recordable);
    const per = Math.ceil(flow.length / 6);
    const journal = Journal.open(path.join(dir, 'journal'));
    const T0 = Date.UTC(2026, 10, 26);
    for (let b = 0; b < 6; b++) {
      const reqs = flow.slice(b * per, (b + 1) * per);
      journal.append(b + 1, T0 + b, recordsOf(reqs), reqs.length);
    }
    const real = LmdbDaStore.open(path.join(dir, 'da'));
    // Batch 4 reaches the real store in a form it cannot encode: its group's commit fails.
    const store: DaStore = {
      submit: (b, inputs) => real.submit(b.header.batch_id === 4 ? { ...b, fills: [unencodable(fill(4, 1, 1, 2))] } : b, inputs),
      get: (id) => real.get(id),
      latest: () => real.latest(),
      fillsOfOrder: (o) => real.fillsOfOrder(o),
      close: () => real.close(),
    };
    const logs: string[] = [];
    const publisher = new DaPublisherCore({ assets: config.assets, store, journal: JournalReader.open(path.join(dir, 'journal')), log: (m) => logs.push(m) });
    const exec = new ReplayExecutor(config, {
      onEvent: (e) => {
        publisher.onEvent(e);
        if (e.type() === EventType.BATCH_COMMITTED) publisher.onBatch(e.field(BatchField.BATCH_ID), e.field(BatchField.TIME_MS));
      },
    });
    exec.genesis();
    const batches = [...journal.read()];
    for (const b of batches.slice(0, 2)) exec.apply(b.batch_id, b.time_ms, b.records, b.count);
    expect(await publisher.rootReport()).toMatchObject({ batch_id: 2, failure: null });
    expect(real.latest()).toBe(2);
    for (const b of batches.slice(2)) exec.apply(b.batch_id, b.time_ms, b.records, b.count);
    // What the DA thread reports for this message: asked now (the builder is at batch 6), answered
    // once the store settled: the failure, no root, batch 2.
    const report = await publisher.rootReport();
    expect(report.state_root).toBeNull();
    expect(report.batch_id).toBe(2);
    expect(report.failure).toMatch(/DA store: the commit of batches 3\.\.6 failed: .*too large/);
    expect(publisher.stateRoot()).toBeNull();
    expect(publisher.stateRootBatchId()).toBe(2);
    expect(real.latest()).toBe(2);
    expect(real.get(3)).toBeUndefined();
    expect(logs).toEqual([expect.stringMatching(/DA publisher stopped \(state roots no longer published\): DA store: the commit of batches 3\.\.6 failed/)]);
    await publisher.close();
    await journal.close();
  });
});
