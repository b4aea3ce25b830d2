// A submit the DA store refuses (src/da/da_store.ts): a batch whose stored form cannot be built
// (malformed fills, an inputs getter that throws) is rejected before the store changes, so the
// same id is accepted next and the ids stay contiguous; no group is left open without a batch
// (its timer would find none: a TypeError in a timer callback, which vitest reports as an
// unhandled error).
import { describe, expect, it } from 'vitest';
import { LmdbDaStore } from '../../src/da/da_store.js';
import type { DaStore } from '../../src/da/da_store_contract.js';
import { MemoryDaStore } from '../../src/da/memory_da_store.js';
import type { FillLeaf } from '../../src/da/fills_tree.js';
import type { PublishedBatch } from '../../src/da/published.js';
import { batch, fill } from './store_batches.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmp = tempDirsPerFile('ringbook-da-submit-');

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Batch `id` whose fill rows cannot be made (a fill that is not an object). */
function malformedFills(id: number): PublishedBatch {
  return { ...batch(id, [fill(id, 7, 10, 9)]), fills: [fill(id, 7, 10, 9), null as unknown as FillLeaf] };
}

/** Batch `id` whose inputs cannot be read (submitted without the bytes, its hex getter throws). */
function unreadableInputs(id: number): PublishedBatch {
  const b = batch(id);
  return {
    header: b.header, fills: b.fills, state_diff: b.state_diff,
    get inputs_hex(): string {
      throw new Error('inputs gone');
    },
  };
}

/**
 * After batch 1: batch 2 with malformed fills is refused and leaves nothing (so is one whose inputs
 * cannot be read, for a store that reads them at submit); then batch 2 and 3 go in. `settle`:
 * waits past the store's commit interval (an empty group's timer would fire there).
 */
async function refusedLeaveNoTrace(store: DaStore, reads_inputs: boolean, settle: () => Promise<void>): Promise<void> {
  await store.submit(batch(1));
  await expect(store.submit(malformedFills(2))).rejects.toThrow(TypeError);
  if (reads_inputs) await expect(store.submit(unreadableInputs(2))).rejects.toThrow(/inputs gone/);
  await settle();
  expect(store.latest()).toBe(1);
  expect(store.get(2)).toBeUndefined();
  expect(store.fillsOfOrder(10)).toEqual([]);
  await store.submit(batch(2, [fill(2, 7, 10, 9)]));
  await store.submit(batch(3));
  expect(store.latest()).toBe(3);
  expect(store.get(2)).toEqual(batch(2, [fill(2, 7, 10, 9)]));
  expect(store.fillsOfOrder(10)).toEqual([{ fill_id: 7, batch_id: 2 }]);
}

describe('DA store: a refused submit', () => {
  it('memory: leaves no trace; the same id is accepted next', async () => {
    // It reads the inputs at submit too (its own copy), so an unreadable one is refused there.
    await refusedLeaveNoTrace(new MemoryDaStore(), true, () => Promise.resolve());
  });

  it('LMDB: leaves no trace, no open group behind it; the same id is accepted next, no gap on disk', async () => {
    const dir = tmp();
    const interval_ms = 5;
    const w = LmdbDaStore.open(dir, { commit_interval_ms: interval_ms });
    // Refused as the first batch of a group (none open): no group may open for it.
    await refusedLeaveNoTrace(w, true, () => sleep(4 * interval_ms));
    // Refused while a group is open (batch 4 waits in it): the group commits batch 4 alone.
    const p4 = w.submit(batch(4));
    await expect(w.submit(malformedFills(5))).rejects.toThrow(TypeError);
    await p4;
    expect(w.latest()).toBe(4);
    await w.close();
    const again = LmdbDaStore.open(dir, { reader: true });
    expect(again.latest()).toBe(4);
    for (let id = 1; id <= 4; id++) expect(again.get(id)?.header.batch_id).toBe(id);
    expect(again.fillsOfOrder(10)).toEqual([{ fill_id: 7, batch_id: 2 }]);
    await again.close();
  });
});
