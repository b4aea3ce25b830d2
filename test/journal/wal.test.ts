// The journal's write-ahead file (src/journal/wal.ts, docs/operations.md "Durability"): the
// batches it holds after LMDB's last one are stored into LMDB at the next open (recovery), a torn
// or garbage record ends it, records of an earlier cycle are never replayed, a cycle that would
// leave a gap is refused, read-only users see its batches without writing, and the DA thread's
// reader finds a batch that is only there. Real files in temporary directories; the write-ahead
// file is written with the journal's own writer, then left as a crash leaves it.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { JournalReader } from '../../src/da/journal_reader.js';
import { Journal } from '../../src/journal/journal.js';
import { inputHash, JournalCorruption } from '../../src/journal/journal_codec.js';
import { walPath, WalWriter, WAL_PAGE_BYTES } from '../../src/journal/wal.js';
import { WAL_STORE_FILL_DENOMINATOR, WAL_STORE_IDLE_MS, WAL_STORE_QUIET_MS } from '../../src/journal/wal_store.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { lmdbIds, range, walBatches } from './wal_batches.js';

const tempDir = tempDirsPerFile('ringbook-wal-');

// Batch `id`: id % 5 + 1 random records (seeded by the id).
const { recordsOf, countOf, timeOf, bodyOf } = walBatches(5);

/** A journal whose LMDB holds batches 1..n (stored after each acknowledgement, then closed). */
async function lmdbWith(n: number): Promise<string> {
  const dir = tempDir();
  const j = Journal.open(dir);
  for (let id = 1; id <= n; id++) {
    j.append(id, timeOf(id), recordsOf(id), countOf(id));
    j.afterAck();
  }
  await j.close();
  return dir;
}

/** Writes batches `ids` as a cycle starting after `base` (what a crash after their acknowledgement leaves). */
function walCycle(dir: string, base: number, ids: number[]): void {
  const w = WalWriter.open(dir);
  w.restart(base);
  for (const id of ids) w.append(id, bodyOf(id));
  w.close();
}

async function readIds(dir: string, options: { read_only?: boolean } = {}): Promise<number[]> {
  const j = Journal.open(dir, options);
  try {
    const ids: number[] = [];
    for (const b of j.readTransient(1)) {
      expect(Array.from(b.records)).toEqual(Array.from(recordsOf(b.batch_id)));
      expect(b.time_ms).toBe(timeOf(b.batch_id));
      ids.push(b.batch_id);
    }
    expect(j.lastBatchId()).toBe(ids.length === 0 ? 0 : ids[ids.length - 1]);
    return ids;
  } finally {
    await j.close();
  }
}


describe('write-ahead file recovery (Journal.open)', () => {
  it('stores the batches it holds after LMDB\'s last into LMDB, once, and continues after them', async () => {
    const dir = await lmdbWith(3);
    walCycle(dir, 3, [4, 5]);
    expect(await lmdbIds(dir)).toEqual(range(1, 3));
    expect(await readIds(dir)).toEqual(range(1, 5));
    expect(await lmdbIds(dir)).toEqual(range(1, 5));
    // A second open finds them stored: the cycle's records are at or below LMDB's last now.
    const j = Journal.open(dir);
    try {
      expect(j.lastBatchId()).toBe(5);
      j.append(6, timeOf(6), recordsOf(6), countOf(6));
      j.storeUnstored();
    } finally {
      await j.close();
    }
    expect(await readIds(dir)).toEqual(range(1, 6));
  });

  it('ignores a torn record and garbage after the last intact one', async () => {
    const dir = await lmdbWith(2);
    walCycle(dir, 2, [3, 4, 5]);
    // Batch 5's record (the third page) torn: one byte of its body changed.
    const fd = fs.openSync(walPath(dir), 'r+');
    fs.writeSync(fd, Buffer.from([0xff ^ bodyOf(5)[50]]), 0, 1, 2 * WAL_PAGE_BYTES + 40 + 50);
    // And garbage where a next record would start.
    fs.writeSync(fd, Buffer.alloc(WAL_PAGE_BYTES, 0x5a), 0, WAL_PAGE_BYTES, 3 * WAL_PAGE_BYTES);
    fs.closeSync(fd);
    expect(await readIds(dir)).toEqual(range(1, 4));
  });

  it('never replays the records of an earlier cycle that a shorter new cycle left behind', async () => {
    const dir = await lmdbWith(3);
    // Cycle after 3: batches 4..7 (stored into LMDB below), then the cycle after 7 writes batch 8
    // over the first record only: 5, 6 and 7 of the earlier cycle stay in the file.
    walCycle(dir, 3, [4, 5, 6, 7]);
    expect(await readIds(dir)).toEqual(range(1, 7));
    walCycle(dir, 7, [8]);
    expect(await readIds(dir)).toEqual(range(1, 8));
    expect(await lmdbIds(dir)).toEqual(range(1, 8));
  });

  it('refuses a cycle that starts after LMDB\'s last batch (a gap), with a clear error', async () => {
    const dir = await lmdbWith(3);
    walCycle(dir, 5, [6]);
    expect(() => Journal.open(dir)).toThrow(JournalCorruption);
    expect(() => Journal.open(dir)).toThrow(/continues batch 5 but the journal's LMDB ends at batch 3/);
  });

  it('continues a snapshot with an empty LMDB (resumeAfter): its first cycle starts at the snapshot\'s batch', async () => {
    const dir = tempDir();
    walCycle(dir, 40, [41, 42]);
    const j = Journal.open(dir);
    try {
      expect(j.firstBatchId()).toBe(41);
      expect(j.lastBatchId()).toBe(42);
      j.resumeAfter(40);
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual([41, 42]);
  });

  it('a data dir without a write-ahead file (an older release) opens and gets one', async () => {
    const dir = await lmdbWith(4);
    fs.rmSync(walPath(dir));
    expect(await readIds(dir)).toEqual(range(1, 4));
    expect(fs.existsSync(walPath(dir))).toBe(true);
  });
});

describe('readers of the write-ahead file', () => {
  it('read only (the CLI): its batches follow LMDB\'s, and nothing is written', async () => {
    const dir = await lmdbWith(3);
    walCycle(dir, 3, [4, 5]);
    const wal_before = fs.readFileSync(walPath(dir));
    expect(await readIds(dir, { read_only: true })).toEqual(range(1, 5));
    const j = Journal.open(dir, { read_only: true });
    try {
      expect(Array.from(j.read(4), (b) => b.batch_id)).toEqual([4, 5]);
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 3));
    expect(fs.readFileSync(walPath(dir)).equals(wal_before)).toBe(true);
  });

  it('the DA thread\'s reader finds an acknowledged batch that is only in the write-ahead file, before and after its store', async () => {
    const dir = tempDir();
    const j = Journal.open(dir);
    const reader = JournalReader.open(dir);
    try {
      for (let id = 1; id <= 3; id++) {
        j.append(id, timeOf(id), recordsOf(id), countOf(id));
        j.storeUnstored();
      }
      // Acknowledged, not stored yet (the matcher stores after the marker).
      j.append(4, timeOf(4), recordsOf(4), countOf(4));
      j.append(5, timeOf(5), recordsOf(5), countOf(5));
      expect(j.unstoredBatches()).toBe(2);
      expect(reader.lastBatchId()).toBe(5);
      for (const id of [4, 5]) {
        const b = reader.get(id);
        expect(b?.batch_id).toBe(id);
        expect(b?.time_ms).toBe(timeOf(id));
        expect(b?.count).toBe(countOf(id));
        expect(b?.input_hash).toBe(inputHash(recordsOf(id)));
      }
      expect(reader.wal_reads).toBe(2);
      // Stored, and the next cycle overwrote the file's first record with batch 6.
      j.storeUnstored();
      j.append(6, timeOf(6), recordsOf(6), countOf(6));
      expect(reader.get(4)?.input_hash).toBe(inputHash(recordsOf(4)));
      expect(reader.get(6)?.input_hash).toBe(inputHash(recordsOf(6)));
      expect(reader.get(7)).toBeUndefined();
      expect(reader.wal_reads).toBe(3);
    } finally {
      await reader.close();
      await j.close();
    }
  });
});

describe('stores into LMDB in groups (afterAck, storeIdle)', () => {
  it('stores once the records fill half the file (a region), one LMDB commit each, on the storer thread', async () => {
    const dir = tempDir();
    // 16 pages: every batch here is a one-page record, so the 8th fills half the file.
    const pages = 16;
    const j = Journal.open(dir, { wal_bytes: pages * WAL_PAGE_BYTES });
    try {
      let id = 0;
      for (let i = 0; i < pages / WAL_STORE_FILL_DENOMINATOR - 1; i++) {
        id++;
        j.append(id, timeOf(id), recordsOf(id), countOf(id));
        expect(j.afterAck()).toBe(false);
      }
      expect(j.unstoredBatches()).toBe(pages / WAL_STORE_FILL_DENOMINATOR - 1);
      id++;
      j.append(id, timeOf(id), recordsOf(id), countOf(id));
      expect(j.afterAck()).toBe(true);
      j.awaitStore();
      expect(j.unstoredBatches()).toBe(0);
      expect(j.stores).toBe(1);
      expect(j.stores_async).toBe(1);
      expect(j.afterAck()).toBe(false);
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, pages / WAL_STORE_FILL_DENOMINATOR));
  });

  it('at a steady light rate nothing is stored until the file is half full: 300 batches stay in the default file', async () => {
    const dir = tempDir();
    const j = Journal.open(dir);
    try {
      for (let id = 1; id <= 300; id++) {
        j.append(id, timeOf(id), recordsOf(id), countOf(id));
        expect(j.afterAck()).toBe(false);
        // The matcher between two batches ~1 ms apart: idle, never quiet for WAL_STORE_QUIET_MS.
        expect(j.storeIdle(j.lastAppendMs() + 1)).toBe(false);
      }
      expect(j.unstoredBatches()).toBe(300);
      expect(j.stores).toBe(0);
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 300));
  });

  it('idle: stores once the oldest batch waited WAL_STORE_IDLE_MS and no batch came for WAL_STORE_QUIET_MS', async () => {
    const dir = tempDir();
    const j = Journal.open(dir);
    try {
      j.append(1, timeOf(1), recordsOf(1), countOf(1));
      const t1 = j.lastAppendMs();
      expect(j.storeIdle(t1)).toBe(false);
      // Batch 2 is written WAL_STORE_IDLE_MS after batch 1 on a driven clock (the journal stamps
      // appends with Date.now()), not after a real sleep.
      const clock = vi.spyOn(Date, 'now').mockReturnValue(t1 + WAL_STORE_IDLE_MS);
      try {
        j.append(2, timeOf(2), recordsOf(2), countOf(2));
      } finally {
        clock.mockRestore();
      }
      const t2 = j.lastAppendMs();
      // The oldest waited long enough, but a batch just came: not quiet.
      expect(t2 - t1).toBe(WAL_STORE_IDLE_MS);
      expect(j.storeIdle(t2)).toBe(false);
      expect(j.stores).toBe(0);
      expect(j.storeIdle(t2 + WAL_STORE_QUIET_MS)).toBe(true);
      j.awaitStore();
      expect(j.stores).toBe(1);
      expect(j.unstoredBatches()).toBe(0);
      expect(j.storeIdle(t2 + 10 * WAL_STORE_IDLE_MS)).toBe(false);
      // A fresh batch alone, quiet at once but not old enough yet.
      j.append(3, timeOf(3), recordsOf(3), countOf(3));
      const t3 = j.lastAppendMs();
      expect(j.storeIdle(t3 + WAL_STORE_QUIET_MS)).toBe(WAL_STORE_QUIET_MS >= WAL_STORE_IDLE_MS);
      expect(j.storeIdle(t3 + WAL_STORE_IDLE_MS)).toBe(true);
      j.awaitStore();
      expect(j.stores).toBe(2);
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 3));
  });

  it('a crash with hundreds of acknowledged batches only in the write-ahead file loses none of them', async () => {
    const dir = tempDir();
    const crashed = tempDir();
    const j = Journal.open(dir);
    try {
      for (let id = 1; id <= 40; id++) {
        j.append(id, timeOf(id), recordsOf(id), countOf(id));
        j.afterAck();
      }
      j.storeUnstored(); // LMDB holds 1..40
      for (let id = 41; id <= 400; id++) {
        j.append(id, timeOf(id), recordsOf(id), countOf(id));
        expect(j.afterAck()).toBe(false);
      }
      expect(j.unstoredBatches()).toBe(360);
      // What kill -9 leaves now: the files as they are on disk (every write above was synchronous).
      for (const f of ['data.mdb', 'wal.log']) fs.copyFileSync(path.join(dir, f), path.join(crashed, f));
    } finally {
      await j.close();
    }
    expect(await lmdbIds(crashed)).toEqual(range(1, 40));
    const r = Journal.open(crashed);
    try {
      expect(r.lastBatchId()).toBe(400);
      expect(r.unstoredBatches()).toBe(0);
      let next = 1;
      for (const b of r.readTransient(1)) {
        expect(b.batch_id).toBe(next);
        expect(b.input_hash).toBe(inputHash(recordsOf(next)));
        next++;
      }
      expect(next).toBe(401);
    } finally {
      await r.close();
    }
    expect(await lmdbIds(crashed)).toEqual(range(1, 400));
  });

  it('a full region is stored before the next record goes to the other one, and a batch larger than a region goes to LMDB directly', async () => {
    const dir = tempDir();
    // Four pages: regions of two one-page records each.
    const j = Journal.open(dir, { wal_bytes: 4 * WAL_PAGE_BYTES });
    const reader = JournalReader.open(dir);
    try {
      for (let id = 1; id <= 2; id++) j.append(id, timeOf(id), recordsOf(id), countOf(id));
      expect(j.unstoredBatches()).toBe(2);
      // The third does not fit in region 0: 1..2 go to the storer, 3 into region 1.
      j.append(3, timeOf(3), recordsOf(3), countOf(3));
      expect(reader.get(2)?.input_hash).toBe(inputHash(recordsOf(2)));
      expect(reader.get(3)?.input_hash).toBe(inputHash(recordsOf(3)));
      j.awaitStore();
      expect(j.stores).toBe(1);
      expect(j.unstoredBatches()).toBe(1);
      // 60 records (~12.5 KB) do not fit in an 8 KB region.
      const big = new Int32Array(60 * RECORD_WORDS).fill(7);
      j.append(4, timeOf(4), big, 60);
      expect(j.unstoredBatches()).toBe(0);
      expect(reader.get(4)?.count).toBe(60);
      j.append(5, timeOf(5), recordsOf(5), countOf(5));
      expect(reader.get(5)?.input_hash).toBe(inputHash(recordsOf(5)));
      expect(reader.lastBatchId()).toBe(5);
    } finally {
      await reader.close();
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 5));
  });
});

describe('a store into LMDB that fails after the acknowledgement', () => {
  it('holds the caller and retries until it lands, reported as the next batch\'s fault; the file is not overwritten meanwhile', async () => {
    const dir = tempDir();
    const fault_file = path.join(dir, 'fault');
    const faults: ({ batch_id: number; message: string } | null)[] = [];
    let wal_during_fault: Buffer | null = null;
    const j = Journal.open(dir, {
      fault_file,
      onFault: (fault) => {
        faults.push(fault);
        // The matcher's thread is held in the retry: the "operator" frees the disk from here.
        if (fault !== null) {
          wal_during_fault = fs.readFileSync(walPath(dir));
          fs.rmSync(fault_file);
        }
      },
    });
    try {
      for (let id = 1; id <= 3; id++) j.append(id, timeOf(id), recordsOf(id), countOf(id));
      fs.writeFileSync(fault_file, 'store');
      const wal_before = fs.readFileSync(walPath(dir));
      j.storeUnstored();
      expect(faults).toEqual([{ batch_id: 4, message: expect.stringContaining('injected store failure') }, null]);
      expect(j.failed_writes).toBe(1);
      expect(wal_during_fault!.equals(wal_before)).toBe(true);
      expect(j.unstoredBatches()).toBe(0);
    } finally {
      await j.close();
    }
    expect(await lmdbIds(dir)).toEqual(range(1, 3));
  });
});
