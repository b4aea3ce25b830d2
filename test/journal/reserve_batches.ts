// The reserve tests' journal traffic, written once (reserve.test.ts, reserve_no_sync.test.ts):
// batches of deterministic records appended and stored, and the check that a reopened journal
// reads every one of them back.
import { expect } from 'vitest';
import { Journal } from '../../src/journal/journal.js';
import { RECORD_WORDS } from '../../src/ring/records.js';

export function records(count: number, seed: number): Int32Array {
  const r = new Int32Array(count * RECORD_WORDS);
  for (let i = 0; i < r.length; i++) r[i] = (Math.imul(i + seed, 2654435761) ^ seed) | 0;
  return r;
}

/**
 * Appends `n` batches of `size` records after the journal's last, each stored into LMDB right
 * after its acknowledgement (`storeUnstored`: the reserve is about LMDB's commits); returns the last id.
 */
export function appendBatches(j: Journal, n: number, size: number): number {
  let id = j.lastBatchId();
  for (let i = 0; i < n; i++) {
    id++;
    j.append(id, 1_000 + id, records(size, id), size);
    j.storeUnstored();
  }
  return id;
}

/**
 * Reopens the journal in `dir` and reads every batch back: ids 1..last_small in order, 200
 * records each through `last_big` and 2 after it, each with the records appendBatches wrote.
 */
export async function expectReopensIntact(dir: string, last_big: number, last_small: number): Promise<void> {
  const j = Journal.open(dir);
  try {
    expect(j.lastBatchId()).toBe(last_small);
    let expected = 1;
    for (const b of j.read(1)) {
      expect(b.batch_id).toBe(expected);
      const size = b.batch_id <= last_big ? 200 : 2;
      expect(b.count).toBe(size);
      expect(Array.from(b.records.subarray(0, 8))).toEqual(Array.from(records(size, b.batch_id).subarray(0, 8)));
      expected++;
    }
    expect(expected - 1).toBe(last_small);
  } finally {
    await j.close();
  }
}
