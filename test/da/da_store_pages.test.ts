// The DA store appends its batches (MDB_APPEND, src/da/da_store.ts APPEND_PUT): leaf pages filled,
// not split in half, so each commit writes and flushes a third fewer pages on the disk the
// journal's durable appends share (issue 11, docs/benchmarks.md "h26j"). Before: a ~1.2 KB batch
// record filled 2 per 4 KB page; appended: 3. Page counts are LMDB's, not timings.
import { describe, expect, it } from 'vitest';
import { open } from 'lmdb';
import { LmdbDaStore, DA_STORE_LMDB_OPTIONS } from '../../src/da/da_store.js';
import type { PublishedBatch } from '../../src/da/published.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { encodeChanges } from '../../src/da/state_diff.js';
import { H } from './store_batches.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmp = tempDirsPerFile('ringbook-da-pages-');
/** The light-load shape: a lone order's batch (two request records, ~400 bytes of state diff). */
const LEAVES = 16;
function loneOrderBatch(id: number): PublishedBatch {
  return {
    header: { batch_id: id, prev_state_root: H(id - 1), state_root: H(id), fills_root: H(0), input_hash: H(id * 7), timestamp: 1_764_000_000_000 + id },
    inputs_hex: 'ab'.repeat(2 * RECORD_WORDS * 4),
    fills: [],
    state_diff_bytes: encodeChanges(Array.from({ length: LEAVES }, (_, i) => ({ kind: 1, key: Buffer.from((id * LEAVES + i).toString(16).padStart(12, '0'), 'hex'), value: new Uint8Array(16).fill(7) }))),
  };
}
const GROUPS = 20;
const PER_GROUP = 50;

describe('DA store pages', () => {
  it('fills its leaf pages: 3 lone-order batches per 4 KB page, not 2, over commits of 50, and reads them all back', async () => {
    const dir = tmp();
    const store = LmdbDaStore.open(dir, { commit_interval_ms: 0, sync_commits: true });
    let id = 1;
    for (let g = 0; g < GROUPS; g++) {
      const done: Promise<void>[] = [];
      for (let i = 0; i < PER_GROUP; i++) done.push(store.submit(loneOrderBatch(id++)));
      await Promise.all(done);
    }
    await store.close();
    const root = open({ path: dir, ...DA_STORE_LMDB_OPTIONS });
    const stats = root.openDB({ name: 'batches', encoding: 'msgpack', keyEncoding: 'uint32' }).getStats() as { entryCount: number; treeLeafPageCount: number };
    await root.close();
    expect(stats.entryCount).toBe(GROUPS * PER_GROUP);
    // 1,000 batches: 334 pages appended (500 when every page split in half).
    expect(stats.treeLeafPageCount).toBeLessThanOrEqual(Math.ceil((GROUPS * PER_GROUP) / 3) + 1);
    const reader = LmdbDaStore.open(dir, { reader: true });
    expect(reader.latest()).toBe(GROUPS * PER_GROUP);
    for (const k of [1, 2, 3, 499, 1000]) expect(reader.get(k)?.header.state_root).toBe(H(k));
    await reader.close();
  });
});
