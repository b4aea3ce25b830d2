// The DA store's compact record (src/da/da_record.ts): roots and fill addresses as bytes, no key
// names, so fewer bytes per commit on the journal's disk (docs/benchmarks.md "h26b"). Sizes are
// msgpack bytes read raw from LMDB, page counts LMDB's, not timings. Every form must read back
// as the published batch, byte for byte in its JSON, whatever form wrote it.
import { describe, expect, it } from 'vitest';
import { open } from 'lmdb';
import { LmdbDaStore, DA_STORE_LMDB_OPTIONS } from '../../src/da/da_store.js';
import { batchToJson, type PublishedBatch } from '../../src/da/published.js';
import { encodeChanges } from '../../src/da/state_diff.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { batch, fill, H } from './store_batches.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmp = tempDirsPerFile('ringbook-da-record-');

/** A lone order's batch as the DA worker submits it (bench/da_batches.ts's shape, 16 leaves of diff). */
function loneOrderBatch(id: number): PublishedBatch {
  return {
    header: { batch_id: id, prev_state_root: H(id - 1), state_root: H(id), fills_root: H(0), input_hash: H(id * 7), timestamp: 1_764_000_000_000 + id },
    inputs_hex: 'ab'.repeat(2 * RECORD_WORDS * 4),
    fills: [],
    state_diff_bytes: encodeChanges(Array.from({ length: 16 }, (_, i) => ({ kind: 1, key: Buffer.from((id * 16 + i).toString(16).padStart(12, '0'), 'hex'), value: new Uint8Array(16).fill(7) }))),
  };
}

/** A batch with fills of distinct addresses (lowercase, as the publisher makes them). */
function fillsBatch(id: number, n: number): PublishedBatch {
  const fills = Array.from({ length: n }, (_, k) => ({
    ...fill(id, id * 10 + k, 2 * k + 1, 2 * k + 2),
    taker: '0x' + (id * 31 + k).toString(16).padStart(40, 'a'), maker: '0x' + (id * 37 + k).toString(16).padStart(40, 'c'),
  }));
  return { ...batch(id, fills), header: { ...batch(id).header, fills_root: H(id * 3) } };
}

/** What GET /da/batches/:id serves for `b` (its diff decoded, as the store reads it back). */
function served(b: PublishedBatch): string {
  return JSON.stringify(batchToJson(b));
}

function rawRecords(dir: string): { sizes: number[]; leaf_pages: number } {
  const root = open({ path: dir, ...DA_STORE_LMDB_OPTIONS });
  const raw = root.openDB<Buffer, number>({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
  const sizes = [...raw.getRange({})].map(({ value }) => value.length);
  const stats = raw.getStats() as { treeLeafPageCount: number };
  void root.close();
  return { sizes, leaf_pages: stats.treeLeafPageCount };
}

describe('DA store records', () => {
  it('stores a lone order batch ~220 bytes smaller than as an object of hex (roots as bytes, no key names), 4 to a 4 KB leaf page (3 before), and reads each back as published', async () => {
    const dir = tmp();
    const store = LmdbDaStore.open(dir, { commit_interval_ms: 0, sync_commits: true });
    const N = 1000;
    for (let g = 0; g < N / 50; g++) {
      const done: Promise<void>[] = [];
      for (let i = 1; i <= 50; i++) done.push(store.submit(loneOrderBatch(g * 50 + i)));
      await Promise.all(done);
    }
    await store.close();
    const { sizes, leaf_pages } = rawRecords(dir);
    expect(sizes.length).toBe(N);
    // Object form: each root 68 bytes of hex string (34 as bytes), ~105 bytes of key names.
    const object_sizes = objectSizes([1, 2, 499, 1000].map(loneOrderBatch));
    [1, 2, 499, 1000].forEach((id, i) => expect(sizes[id - 1]).toBeLessThanOrEqual(object_sizes[i] - 4 * 34 - 80));
    expect(leaf_pages).toBeLessThanOrEqual(N / 4 + 1); // 334 at 3 per page
    const reader = LmdbDaStore.open(dir, { reader: true });
    for (const id of [1, 2, 499, 1000]) {
      const b = loneOrderBatch(id);
      const want = { header: b.header, inputs_hex: b.inputs_hex, fills: [], state_diff: reader.get(id)?.state_diff };
      expect(served(reader.get(id) as PublishedBatch)).toBe(served(want));
      expect(reader.get(id)?.header).toEqual(b.header);
    }
    await reader.close();
  });

  it('stores fills with their addresses as bytes (40 bytes fewer per fill); JSON byte-identical', async () => {
    const dir = tmp();
    const store = LmdbDaStore.open(dir, { commit_interval_ms: 0 });
    const batches = [fillsBatch(1, 4), fillsBatch(2, 1), fillsBatch(3, 0), fillsBatch(4, 7)];
    for (const b of batches) void store.submit(b);
    for (const b of batches) expect(served(store.get(b.header.batch_id) as PublishedBatch)).toBe(served(b)); // pending
    await store.close();
    const { sizes } = rawRecords(dir);
    const reader = LmdbDaStore.open(dir, { reader: true });
    for (const b of batches) expect(served(reader.get(b.header.batch_id) as PublishedBatch)).toBe(served(b));
    expect(reader.fillsOfOrder(1).map((r) => r.batch_id)).toEqual([1, 2, 4]);
    await reader.close();
    // Per fill the object form wrote 2 x 42 bytes of address strings; compact 2 x 22 (and no key names).
    const object_sizes = objectSizes(batches);
    for (let i = 0; i < batches.length; i++) {
      expect(sizes[i]).toBeLessThanOrEqual(object_sizes[i] - 4 * 34 - 80 - 40 * batches[i].fills.length);
    }
  });

  it('reads records stored as objects of hex (before the compact form) exactly as before, next to compact ones', async () => {
    const dir = tmp();
    const old = [batch(1, [fill(1, 1, 1, 2)]), batch(2), { ...batch(3, [fill(3, 2, 3, 4), fill(3, 3, 3, 5)]), state_diff: undefined }];
    // The old code's put: {header, inputs (bytes), fills, state_diff (the hex objects, or bytes)}.
    const root = open({ path: dir, ...DA_STORE_LMDB_OPTIONS });
    const db = root.openDB<unknown, number>({ name: 'batches', encoding: 'msgpack', keyEncoding: 'uint32' });
    await root.transaction(() => {
      void db.put(1, { header: old[0].header, inputs: Buffer.from(old[0].inputs_hex, 'hex'), fills: old[0].fills, state_diff: old[0].state_diff });
      void db.put(2, { header: old[1].header, inputs: Buffer.from(old[1].inputs_hex, 'hex'), fills: [], state_diff: encodeChanges([{ kind: 1, key: Buffer.from('000000010002', 'hex'), value: new Uint8Array(16) }]) });
      void db.put(3, { header: old[2].header, inputs: Buffer.from(old[2].inputs_hex, 'hex'), fills: old[2].fills, state_diff: [] });
    });
    await root.close();
    const store = LmdbDaStore.open(dir, { commit_interval_ms: 0 });
    expect(store.latest()).toBe(3);
    await store.submit(fillsBatch(4, 2));
    await store.close();
    const reader = LmdbDaStore.open(dir, { reader: true });
    expect(served(reader.get(1) as PublishedBatch)).toBe(served(old[0]));
    expect(served(reader.get(2) as PublishedBatch)).toBe(served(old[1])); // its diff's bytes decode to batch()'s hex diff
    expect(served(reader.get(3) as PublishedBatch)).toBe(served(old[2]));
    expect(served(reader.get(4) as PublishedBatch)).toBe(served(fillsBatch(4, 2)));
    await reader.close();
  });

  it('keeps a batch the compact form cannot hold exactly (upper-case hex, another key order) as an object: read back unchanged', async () => {
    const dir = tmp();
    const store = LmdbDaStore.open(dir, { commit_interval_ms: 0 });
    const upper = batch(1, [{ ...fill(1, 1, 1, 2), taker: '0x' + 'AB'.repeat(20) }]);
    const b2 = batch(2);
    const reordered: PublishedBatch = { ...b2, header: { state_root: b2.header.state_root, batch_id: 2, prev_state_root: b2.header.prev_state_root, fills_root: b2.header.fills_root, input_hash: b2.header.input_hash, timestamp: b2.header.timestamp } };
    const root_upper = batch(3);
    root_upper.header.state_root = root_upper.header.state_root.toUpperCase().replace('0X', '0x');
    for (const b of [upper, reordered, root_upper]) await store.submit(b);
    await store.close();
    const reader = LmdbDaStore.open(dir, { reader: true });
    for (const b of [upper, reordered, root_upper]) expect(served(reader.get(b.header.batch_id) as PublishedBatch)).toBe(served(b));
    await reader.close();
  });

  it('refuses a record of a later compact form rather than misread it', async () => {
    const dir = tmp();
    const root = open({ path: dir, ...DA_STORE_LMDB_OPTIONS });
    const db = root.openDB<unknown, number>({ name: 'batches', encoding: 'msgpack', keyEncoding: 'uint32' });
    await db.put(1, [2, 1]);
    await root.close();
    const reader = LmdbDaStore.open(dir, { reader: true });
    expect(() => reader.get(1)).toThrow(/form 2, this server reads form 1/);
    await reader.close();
  });
});

/** Each batch's size stored the old way (an object of hex), through the same msgpack settings. */
function objectSizes(batches: PublishedBatch[]): number[] {
  const dir = tmp();
  const root = open({ path: dir, ...DA_STORE_LMDB_OPTIONS });
  const db = root.openDB<unknown, number>({ name: 'batches', encoding: 'msgpack', keyEncoding: 'uint32' });
  root.transactionSync(() => {
    for (const b of batches) void db.put(b.header.batch_id, { header: b.header, inputs: Buffer.from(b.inputs_hex, 'hex'), fills: b.fills, state_diff: b.state_diff_bytes ?? b.state_diff ?? [] });
  });
  void root.close();
  return rawRecords(dir).sizes;
}
