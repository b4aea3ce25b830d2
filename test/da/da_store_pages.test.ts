// The DA store appends its batches (MDB_APPEND, src/da/da_store.ts APPEND_PUT): leaf pages filled,
// not split in half, so each commit writes and flushes a third fewer pages on the disk the
// journal's durable appends share (issue 11, docs/benchmarks.md "h26j"). Before: a ~1.2 KB batch
// record filled 2 per 4 KB page; appended: 3. Page counts are LMDB's, not timings.
// And the pages a dead reader would pin: a reader process killed inside its read transaction (a
// SIGKILLed `ringbook backup`) leaves its slot in da/lock.mdb, and LMDB frees no page its snapshot
// could read, so the file grows until a restart; the writer's commits clear such slots
// (src/journal/stale_readers.ts, as the journal's: test/cli/backup_interrupt.test.ts).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { open } from 'lmdb';
import { LmdbDaStore, DA_STORE_LMDB_OPTIONS } from '../../src/da/da_store.js';
import type { PublishedBatch } from '../../src/da/published.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { encodeChanges } from '../../src/da/state_diff.js';
import { H } from './store_batches.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { readerPids } from '../lmdb_readers.js';

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

/**
 * Another process with `dir`'s environment open read-only inside a read transaction (as LMDB's
 * copy in `ringbook backup` holds one), resolved once it is in; `exited` once it is gone.
 */
async function deadToBeReader(dir: string): Promise<{ pid: number; exited: Promise<NodeJS.Signals | null> }> {
  const script = `
    import { open } from 'lmdb';
    const root = open({ path: process.env.READ_DIR, readOnly: true });
    root.useReadTransaction();
    process.stdout.write('reading\\n');
    setInterval(() => undefined, 60_000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: process.cwd(), env: { ...process.env, READ_DIR: dir }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the reader did not start within 10 s')), 10_000);
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('reading')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((signal) => reject(new Error(`the reader exited (${signal}) before reading`)));
  });
  return { pid: child.pid!, exited };
}

describe('DA store: a dead reader\'s slot', () => {
  it('a reader process SIGKILLed inside its read transaction: its slot stays until the writer\'s next commit clears it (the sweep\'s interval injected: 0)', async () => {
    const dir = tmp();
    // The DA worker's store (commits on the calling thread, transactionSync: lmdb-js never checks there itself).
    const store = LmdbDaStore.open(dir, { commit_interval_ms: 0, sync_commits: true, reader_sweep_ms: 0 });
    try {
      await store.submit(loneOrderBatch(1));
      const lock = path.join(dir, 'lock.mdb');
      const r = await deadToBeReader(dir);
      expect(readerPids(lock)).toContain(r.pid);
      process.kill(r.pid, 'SIGKILL');
      expect(await r.exited).toBe('SIGKILL');
      expect(readerPids(lock), 'nothing ran in the dead process').toContain(r.pid);
      expect(store.stale_readers_cleared).toBe(0);
      await store.submit(loneOrderBatch(2));
      expect(readerPids(lock)).not.toContain(r.pid);
      expect(store.stale_readers_cleared).toBe(1);
      expect(store.get(2)?.header.state_root).toBe(H(2));
    } finally {
      await store.close();
    }
  });
});
