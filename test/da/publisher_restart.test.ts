// The DA publisher on a restart over a DA store that already holds some journaled batches
// (src/da/publisher.ts skip_below): the roots of the stored batches before the last one are
// taken from the store (not recomputed), the last stored batch's root is recomputed once and
// compared with its published header, the rest are published. rootKnownBatchId() (where the DA
// thread's backlog starts counting after a restart) is the last batch whose root the replay
// takes without computing it: the recomputed batch still awaits its root, so it counts.
import { describe, expect, it } from 'vitest';
import type { DaStore } from '../../src/da/da_store_contract.js';
import { MemoryDaStore } from '../../src/da/memory_da_store.js';
import type { BatchInputSource } from '../../src/da/da_interfaces.js';
import { DaPublisherCore } from '../../src/da/publisher.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { decodeBatch, encodeBatch } from '../../src/journal/journal_codec.js';
import { BatchField, EventType } from '../../src/ring/event_records.js';
import { generateSequence } from '../engine/generator.js';
import { recordable, recordsOf } from './records.js';

const BATCHES = 6;
const STORED = 4;
const T0 = Date.UTC(2026, 10, 26);

describe('DA publisher restarted over a store that holds some batches', () => {
  it('takes the roots before the last stored batch from the store, recomputes that one, and counts it as not yet known', async () => {
    const { config, requests } = generateSequence(11, 300);
    const flow = requests.filter(recordable);
    const per = Math.ceil(flow.length / BATCHES);
    const encoded = Array.from({ length: BATCHES }, (_, b) => {
      const reqs = flow.slice(b * per, (b + 1) * per);
      return decodeBatch(encodeBatch(b + 1, T0 + b, recordsOf(reqs), reqs.length), b + 1);
    });
    const journal: BatchInputSource = {
      get: (id) => {
        const b = encoded[id - 1];
        if (b === undefined) return undefined;
        const inputs = Buffer.from(b.records.buffer, b.records.byteOffset, b.records.byteLength);
        return { batch_id: b.batch_id, time_ms: b.time_ms, count: b.count, inputs, input_hash: b.input_hash };
      },
      lastBatchId: () => BATCHES,
      close: async () => undefined,
    };

    /** Replays batches 1..upto through a publisher; the root it holds after each batch. */
    function replay(publisher: DaPublisherCore, upto: number): Map<number, string | null> {
      const roots = new Map<number, string | null>();
      const exec = new ReplayExecutor(config, {
        onEvent: (e) => {
          publisher.onEvent(e);
          if (e.type() === EventType.BATCH_COMMITTED) {
            const id = e.field(BatchField.BATCH_ID);
            publisher.onBatch(id, e.field(BatchField.TIME_MS));
            roots.set(id, publisher.stateRoot());
          }
        },
      });
      exec.genesis();
      for (const b of encoded.slice(0, upto)) exec.apply(b.batch_id, b.time_ms, b.records, b.count);
      return roots;
    }

    // The first run publishes batches 1..STORED.
    const stored = new MemoryDaStore();
    const first = new DaPublisherCore({ assets: config.assets, store: stored, journal });
    const true_roots = replay(first, STORED);
    await first.settled();
    expect(stored.latest()).toBe(STORED);

    // The restart reads that store, with the published roots of its last two batches altered:
    // an altered root the replay takes as it is was not computed; one it reports as a mismatch was.
    const altered = (id: number): string => `0x${'a'.repeat(63)}${id}`;
    const store: DaStore = {
      submit: (b) => stored.submit(b),
      get: (id) => {
        const b = stored.get(id);
        return b === undefined || id < STORED - 1 ? b : { ...b, header: { ...b.header, state_root: altered(id) } };
      },
      latest: () => stored.latest(),
      fillsOfOrder: (o) => stored.fillsOfOrder(o),
      close: () => stored.close(),
    };
    const logs: string[] = [];
    const again = new DaPublisherCore({ assets: config.assets, store, journal, log: (m) => logs.push(m) });
    expect(again.rootKnownBatchId()).toBe(STORED - 1);
    const roots = replay(again, BATCHES);
    // Batch STORED - 1: taken from the store (the altered root, not recomputed).
    expect(roots.get(STORED - 1)).toBe(altered(STORED - 1));
    // Batch STORED: recomputed (the true root) and compared with the altered header.
    expect(roots.get(STORED)).toBe(true_roots.get(STORED));
    expect(again.recheck_mismatches).toBe(1);
    expect(logs).toEqual([expect.stringMatching(new RegExp(`batch ${STORED} recomputed on start differs from the published header`))]);
    await again.settled();
    expect(stored.latest()).toBe(BATCHES);
  });
});
