// The write-ahead file's stores on the storer thread (h22j, src/journal/wal_store.ts): two regions,
// the full one stored into LMDB beside the matcher while the next cycle fills the other. Recovery
// finds every acknowledged batch once and in order whatever the store's state at the crash (in
// flight, landed but not yet noticed, a stale cycle in the other region); the DA thread's reader
// finds a batch in either region; a region is reused only after its store landed (the matcher
// waits, counted); a store that fails on the storer is reported and retried on the matcher's
// thread. Real files and the real LMDB environment in temporary directories.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { JournalReader } from '../../src/da/journal_reader.js';
import { Journal, type JournalFault } from '../../src/journal/journal.js';
import { inputHash, JournalCorruption } from '../../src/journal/journal_codec.js';
import { readWalTail, walPath, walRegionStart, WalWriter, WAL_PAGE_BYTES } from '../../src/journal/wal.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { lmdbIds, range, walBatches } from './wal_batches.js';

const tempDir = tempDirsPerFile('ringbook-wal-async-');

// Batch `id`: id % 3 + 1 random records (seeded by the id).
const { recordsOf, countOf, timeOf, bodyOf } = walBatches(3);
const appendAll = (j: Journal, ids: number[]): void => {
  for (const id of ids) {
    j.append(id, timeOf(id), recordsOf(id), countOf(id));
    j.afterAck();
  }
};

/** A journal whose LMDB holds batches 1..n and whose write-ahead file has `pages` pages. */
async function lmdbWith(n: number, pages: number): Promise<string> {
  const dir = tempDir();
  const j = Journal.open(dir, { wal_bytes: pages * WAL_PAGE_BYTES });
  for (let id = 1; id <= n; id++) j.append(id, timeOf(id), recordsOf(id), countOf(id));
  await j.close();
  return dir;
}

/** Every batch through Journal.open's recovery and readTransient, checked against its records. */
async function readIds(dir: string): Promise<number[]> {
  const j = Journal.open(dir);
  try {
    const ids: number[] = [];
    for (const b of j.readTransient(1)) {
      expect(b.input_hash).toBe(inputHash(recordsOf(b.batch_id)));
      ids.push(b.batch_id);
    }
    return ids;
  } finally {
    await j.close();
  }
}

/** What kill -9 leaves: the journal's files as they are on disk now (every write was synchronous). */
function crashCopy(dir: string): string {
  const to = tempDir();
  for (const f of ['data.mdb', 'wal.log']) fs.copyFileSync(path.join(dir, f), path.join(to, f));
  return to;
}

/** Writes, with the journal's own writer, cycles as a live matcher leaves them: `cycles[i]` after a switch from `cycles[i-1]`. */
function walCycles(dir: string, pages: number, base: number, cycles: number[][]): void {
  const w = WalWriter.open(dir, pages * WAL_PAGE_BYTES);
  w.restart(base);
  cycles.forEach((ids, i) => {
    if (i > 0) w.switchRegion();
    for (const id of ids) w.append(id, bodyOf(id));
  });
  w.close();
}

describe('recovery with a store on the storer thread at the crash', () => {
  it('a store in flight (LMDB lacks the older region): both regions\' batches are stored at open, once, in order', async () => {
    const dir = await lmdbWith(3, 8);
    walCycles(dir, 8, 3, [[4, 5, 6, 7], [8, 9]]);
    expect(readWalTail(dir, 3, (m) => { throw new Error(m); }).map((b) => b.batch_id)).toEqual(range(4, 9));
    expect(await readIds(dir)).toEqual(range(1, 9));
    expect(await lmdbIds(dir)).toEqual(range(1, 9));
    // Opened again: nothing twice, and the journal continues after 9.
    const j = Journal.open(dir, { wal_bytes: 8 * WAL_PAGE_BYTES });
    try {
      expect(j.lastBatchId()).toBe(9);
      expect(j.unstoredBatches()).toBe(0);
    } finally {
      await j.close();
    }
  });

  it('a store that landed before the crash but was not noticed: only the newer region\'s batches are stored', async () => {
    const dir = await lmdbWith(7, 8);
    walCycles(dir, 8, 3, [[4, 5, 6, 7], [8, 9]]);
    expect(readWalTail(dir, 7, (m) => { throw new Error(m); }).map((b) => b.batch_id)).toEqual([8, 9]);
    expect(await readIds(dir)).toEqual(range(1, 9));
  });

  it('a stale cycle in the other region (stored long ago, no predecessor named) is never replayed', async () => {
    const dir = await lmdbWith(9, 8);
    // Region 1 holds 6..7 (after 0's 4..5), then region 0 again 8..9 after 7, then (a restart at
    // open, base 9) region 0 anew with 10: its first record names no predecessor.
    walCycles(dir, 8, 3, [[4, 5], [6, 7], [8, 9]]);
    const w = WalWriter.open(dir, 8 * WAL_PAGE_BYTES);
    w.restart(9);
    w.append(10, bodyOf(10));
    w.close();
    expect(readWalTail(dir, 9, (m) => { throw new Error(m); }).map((b) => b.batch_id)).toEqual([10]);
    expect(await readIds(dir)).toEqual(range(1, 10));
  });

  it('a predecessor cycle that is unreadable is refused when LMDB lacks its batches, ignored when it holds them', async () => {
    const dir = await lmdbWith(3, 8);
    walCycles(dir, 8, 3, [[4, 5, 6, 7], [8]]);
    // Batch 6's record (the third page of region 0) torn: the older cycle ends at 5.
    const fd = fs.openSync(walPath(dir), 'r+');
    fs.writeSync(fd, Buffer.from([0xff ^ bodyOf(6)[50]]), 0, 1, 2 * WAL_PAGE_BYTES + 40 + 50);
    fs.closeSync(fd);
    expect(() => Journal.open(dir)).toThrow(JournalCorruption);
    expect(() => Journal.open(dir)).toThrow(/cycle before batch 8 ends at batch 6|ends at batch 5/);
    const held = await lmdbWith(7, 8);
    fs.copyFileSync(walPath(dir), walPath(held));
    expect(await readIds(held)).toEqual(range(1, 8));
  });

  it('a live journal killed at any point of a few region switches loses nothing acknowledged', async () => {
    const dir = tempDir();
    const pages = 6;
    const j = Journal.open(dir, { wal_bytes: pages * WAL_PAGE_BYTES });
    const copies: { at: number; dir: string }[] = [];
    try {
      for (let id = 1; id <= 20; id++) {
        j.append(id, timeOf(id), recordsOf(id), countOf(id));
        // Before afterAck (a store may be in flight) and after it (one may have just started).
        copies.push({ at: id, dir: crashCopy(dir) });
        j.afterAck();
        copies.push({ at: id, dir: crashCopy(dir) });
      }
      expect(j.stores_async).toBeGreaterThanOrEqual(5);
    } finally {
      await j.close();
    }
    for (const c of copies) expect(await readIds(c.dir)).toEqual(range(1, c.at));
  });
});

describe('readers while a store is on the storer thread', () => {
  it('the DA thread\'s reader finds batches of both regions, in flight and after the store, and LMDB\'s afterwards', async () => {
    const dir = tempDir();
    const j = Journal.open(dir, { wal_bytes: 8 * WAL_PAGE_BYTES });
    const reader = JournalReader.open(dir);
    try {
      appendAll(j, range(1, 4)); // region 0 full: 1..4 handed to the storer
      appendAll(j, [5, 6]);
      expect(reader.lastBatchId()).toBe(6);
      for (const id of range(1, 6)) expect(reader.get(id)?.input_hash).toBe(inputHash(recordsOf(id)));
      j.awaitStore();
      expect(await lmdbIds(dir)).toEqual(range(1, 4));
      appendAll(j, range(7, 10)); // region 1 full: 5..8 to the storer, 9.. over region 0's 1..4
      for (const id of range(1, 10)) expect(reader.get(id)?.input_hash).toBe(inputHash(recordsOf(id)));
      expect(reader.lastBatchId()).toBe(10);
      expect(reader.get(11)).toBeUndefined();
      // Read in id order as the DA thread does, the cursor follows each region switch itself:
      // only the lookups above (out of order, or before a batch existed) walked the headers.
      const walks = reader.wal_walks;
      appendAll(j, range(11, 16)); // 9..12 in region 0, then 13.. in region 1 (after 9..12's store)
      for (const id of range(11, 16)) expect(reader.get(id)?.input_hash).toBe(inputHash(recordsOf(id)));
      expect(reader.wal_walks).toBe(walks);
    } finally {
      await reader.close();
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 16));
  });

  it('read only (the CLI) sees both regions\' batches after LMDB\'s, and writes nothing', async () => {
    const dir = await lmdbWith(3, 8);
    walCycles(dir, 8, 3, [[4, 5, 6, 7], [8, 9]]);
    const before = fs.readFileSync(walPath(dir));
    const j = Journal.open(dir, { read_only: true });
    try {
      expect(Array.from(j.read(1), (b) => b.batch_id)).toEqual(range(1, 9));
      expect(j.lastBatchId()).toBe(9);
    } finally {
      await j.close();
    }
    expect(fs.readFileSync(walPath(dir)).equals(before)).toBe(true);
    expect(await lmdbIds(dir)).toEqual(range(1, 3));
  });
});

describe('a region is reused only after its store landed', () => {
  it('the matcher waits for a slow store before it wraps (counted), and the region keeps its batches until then', async () => {
    const dir = tempDir();
    const release = path.join(dir, 'release-lock');
    // Told (onStoreWait, on the matcher's thread) as the matcher begins to wait for a store: the
    // region it must reuse is checked untouched then, and only then is LMDB's lock let go.
    const waits_seen: number[] = [];
    let region0: Buffer | null = null;
    let region0_at_wait: Buffer | null = null;
    // Two pages: a region per one-page record, so every batch switches.
    const j = Journal.open(dir, {
      wal_bytes: 2 * WAL_PAGE_BYTES,
      onStoreWait: (last_id) => {
        if (region0 === null) return; // storeUnstored's own wait for 1, before the lock is held
        waits_seen.push(last_id);
        region0_at_wait = fs.readFileSync(walPath(dir)).subarray(0, region0!.length);
        fs.writeFileSync(release, '');
      },
    });
    // Another process holds LMDB's write lock until the release file appears (the matcher is
    // blocked in append then, so the hand-off is a file, not a message it would have to send):
    // the storer's commit waits for it. Its 60 s limit only ends a test whose matcher never
    // waited (the child then exits 2, failing the test) rather than hanging it.
    const holder = spawn(process.execPath, ['--input-type=module', '-e', `
      import { existsSync } from 'node:fs';
      import { open } from 'lmdb';
      const root = open({ path: ${JSON.stringify(dir)}, compression: false });
      const db = root.openDB({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
      const poll = new Int32Array(new SharedArrayBuffer(4));
      let released = false;
      db.transactionSync(() => {
        db.putSync(1, db.getBinary(1));
        console.log('locked');
        for (let i = 0; i < 6000 && !(released = existsSync(${JSON.stringify(release)})); i++) Atomics.wait(poll, 0, 0, 10);
      });
      await root.close();
      process.exitCode = released ? 0 : 2;`], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    const holder_exit = new Promise<number | null>((resolve) => holder.once('exit', (code) => resolve(code)));
    try {
      appendAll(j, [1]);
      j.storeUnstored();
      const waits = j.store_waits;
      await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
      j.append(2, timeOf(2), recordsOf(2), countOf(2)); // region 0 (1 is in LMDB)
      j.append(3, timeOf(3), recordsOf(3), countOf(3)); // 2 to the storer (blocked), 3 in region 1
      region0 = fs.readFileSync(walPath(dir)).subarray(0, walRegionStart(2 * WAL_PAGE_BYTES));
      expect(j.store_waits).toBe(waits);
      expect(waits_seen).toEqual([]);
      // 4 needs region 0 again: the matcher waits for 2's store (the lock is held until it does),
      // then overwrites it.
      j.append(4, timeOf(4), recordsOf(4), countOf(4));
      expect(waits_seen).toEqual([2]);
      expect(region0_at_wait!.equals(region0)).toBe(true);
      expect(j.store_waits).toBe(waits + 1);
      expect(j.store_wait_ms).toBeGreaterThan(0);
      expect(await lmdbIds(dir)).toEqual(expect.arrayContaining([1, 2]));
      expect(await holder_exit, 'the lock holder was released by the matcher\'s wait, not its own limit').toBe(0);
    } finally {
      fs.writeFileSync(release, '');
      await holder_exit;
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 4));
  });

  it('a store that fails on the storer is reported as the next batch\'s fault and retried on the matcher thread, the region untouched meanwhile', async () => {
    const dir = tempDir();
    const fault_file = path.join(dir, 'fault');
    const faults: (JournalFault | null)[] = [];
    let region0_during: Buffer | null = null;
    const j = Journal.open(dir, {
      wal_bytes: 4 * WAL_PAGE_BYTES, fault_file,
      onFault: (fault) => {
        faults.push(fault);
        if (fault !== null) {
          region0_during = fs.readFileSync(walPath(dir)).subarray(0, 2 * WAL_PAGE_BYTES);
          fs.rmSync(fault_file);
        }
      },
    });
    try {
      appendAll(j, [1, 2]);
      fs.writeFileSync(fault_file, 'store');
      const region0 = fs.readFileSync(walPath(dir)).subarray(0, 2 * WAL_PAGE_BYTES);
      j.append(3, timeOf(3), recordsOf(3), countOf(3)); // 1..2 to the storer, which fails
      j.awaitStore();
      expect(faults).toEqual([{ batch_id: 4, message: expect.stringContaining('injected store failure') }, null]);
      expect(j.failed_writes).toBe(1);
      expect(region0_during!.equals(region0)).toBe(true);
      expect(j.stores).toBe(1);
      expect(j.stores_async).toBe(0);
      expect(await lmdbIds(dir)).toEqual([1, 2]);
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 3));
  });

  it('a storer thread that cannot open LMDB fails its first store, which the matcher thread stores; later stores are the matcher\'s own', async () => {
    const dir = tempDir();
    const fault_file = path.join(dir, 'fault');
    const faults: (JournalFault | null)[] = [];
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(fault_file, 'storer'); // read by the thread as it starts, at open
    const j = Journal.open(dir, { wal_bytes: 4 * WAL_PAGE_BYTES, fault_file, onFault: (fault) => faults.push(fault) });
    try {
      appendAll(j, [1, 2]);
      j.append(3, timeOf(3), recordsOf(3), countOf(3)); // 1..2 to the storer, which cannot open LMDB
      j.awaitStore();
      expect(faults).toEqual([{ batch_id: 4, message: expect.stringContaining('injected storer open failure') }, null]);
      expect(j.storerState()).toBe('none');
      expect(await lmdbIds(dir)).toEqual([1, 2]);
      fs.rmSync(fault_file);
      appendAll(j, range(4, 9)); // regions switch twice more: stored on this thread, no fault
      expect(faults.length).toBe(2);
      expect(j.stores_async).toBe(0);
      expect(j.stores).toBeGreaterThanOrEqual(3);
      expect(await lmdbIds(dir)).toEqual(expect.arrayContaining(range(1, 6)));
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 9));
  });

  it('no reserve top-up while a store is in flight (both write at the end of LMDB\'s file)', async () => {
    const dir = tempDir();
    const j = Journal.open(dir, { wal_bytes: 2 * WAL_PAGE_BYTES });
    const root = open({ path: dir, compression: false });
    const db = root.openDB<Buffer, number>({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
    try {
      appendAll(j, [1]);
      j.awaitStore();
      const size = fs.statSync(path.join(dir, 'data.mdb')).size;
      // This thread holds LMDB's write lock: the storer's commit of 2 waits for it.
      db.transactionSync(() => {
        j.append(2, timeOf(2), recordsOf(2), countOf(2));
        j.afterAck(); // 2 to the storer
        expect(j.unstoredBatches()).toBe(1);
        expect(j.reserveAhead(true)).toBe(false);
        expect(fs.statSync(path.join(dir, 'data.mdb')).size).toBe(size);
      });
      j.awaitStore();
      expect(j.unstoredBatches()).toBe(0);
    } finally {
      await root.close();
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual([1, 2]);
  });
});

describe('the storer thread starts at open (h23m)', () => {
  it('a writer journal with a write-ahead file starts it at open; read only and without the file, none', async () => {
    const dir = tempDir();
    const j = Journal.open(dir, { wal_bytes: 4 * WAL_PAGE_BYTES });
    try {
      // Started before any store: the first store only hands its batches over.
      expect(j.storerState()).not.toBe('none');
      appendAll(j, [1, 2, 3]); // 1..2 to the storer at the switch
      j.awaitStore();
      expect(j.storerState()).toBe('ready');
      expect(j.stores_async).toBe(1);
    } finally {
      await j.close();
    }
    const ro = Journal.open(dir, { read_only: true });
    expect(ro.storerState()).toBe('none');
    await ro.close();
    const direct = Journal.open(tempDir(), { wal_bytes: 0 });
    expect(direct.storerState()).toBe('none');
    await direct.close();
    expect(await lmdbIds(dir)).toEqual(range(1, 3));
  });

  it("the journal's own LMDB writes wait for the thread's open: a synchronous store and a trim right after open", async () => {
    const dir = tempDir();
    const j = Journal.open(dir, { wal_bytes: 4 * WAL_PAGE_BYTES });
    try {
      j.append(1, timeOf(1), recordsOf(1), countOf(1));
      j.storeUnstored(); // at once: the thread's open is over when this thread writes LMDB
      expect(j.storerState()).toBe('ready');
      appendAll(j, range(2, 6));
      expect(j.trimThrough(2)).toBe(2);
      expect(j.storerState()).toBe('ready');
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(3, 6));
  });

  it('close right after open ends the thread only once its open is over, and stores what the file holds', async () => {
    for (let i = 0; i < 3; i++) {
      const dir = tempDir();
      const j = Journal.open(dir, { wal_bytes: 4 * WAL_PAGE_BYTES });
      j.append(1, timeOf(1), recordsOf(1), countOf(1));
      await j.close();
      expect(await lmdbIds(dir)).toEqual([1]);
    }
  });
});
