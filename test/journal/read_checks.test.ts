// Who checks what when a journal batch is read back (docs/verifiability.md, "Journal checks"):
// every first read from disk (the matcher's replay through `Journal.read`, `ringbook replay`)
// recomputes the records' CRC-32 and refuses an altered batch; the DA thread's JournalReader,
// which reads batches the matcher already checked, still refuses a wrong header (id, size,
// format) and returns exactly the records and input hash the checked read gives.
import path from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { JournalReader } from '../../src/da/journal_reader.js';
import { Journal } from '../../src/journal/journal.js';
import { decodeBatch, decodeCheckedBatch, encodeBatch, inputHash, JournalCorruption } from '../../src/journal/journal_codec.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { mulberry32 } from '../../src/util/prng.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tempDir = tempDirsPerFile('ringbook-journal-read-');

/** `count` records of random words (the journal stores records as opaque words). */
function randomRecords(count: number, seed: number): Int32Array {
  const rand = mulberry32(seed);
  const r = new Int32Array(count * RECORD_WORDS);
  for (let i = 0; i < r.length; i++) r[i] = (rand() * 2 ** 32) | 0;
  return r;
}

/** A journal of batches 1..n (batch i holds i + 2 records), closed. */
async function writeJournal(n: number): Promise<{ dir: string; records: Int32Array[] }> {
  const dir = tempDir();
  const journal = Journal.open(dir);
  const records: Int32Array[] = [];
  for (let id = 1; id <= n; id++) {
    records.push(randomRecords(id + 2, id));
    journal.append(id, 1_700_000_000_000 + id, records[id - 1], id + 2);
  }
  await journal.close();
  return { dir, records };
}

/** Replaces batch `id`'s stored bytes with `alter(bytes)`, as a disk fault or an edit would. */
async function alterOnDisk(dir: string, id: number, alter: (b: Buffer) => Buffer): Promise<void> {
  const root = open({ path: dir, compression: false });
  const batches = root.openDB<Buffer, number>({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
  const stored = batches.getBinary(id);
  if (stored === undefined) throw new Error(`batch ${id} not stored`);
  await batches.put(id, alter(Buffer.from(stored)));
  await root.close();
}

function readAll(dir: string, reader: 'read' | 'readTransient' = 'read'): number[] {
  const journal = Journal.open(dir);
  const ids: number[] = [];
  try {
    for (const b of journal[reader](1)) ids.push(b.batch_id);
  } finally {
    void journal.close();
  }
  return ids;
}

describe('journal read checks', () => {
  it('the DA reader returns exactly the records and input hash of the checked read', async () => {
    const { dir, records } = await writeJournal(4);
    const reader = JournalReader.open(dir);
    const journal = Journal.open(dir);
    try {
      for (const b of journal.read(1)) {
        const raw = reader.get(b.batch_id)!;
        expect(raw.count).toBe(b.count);
        expect(raw.time_ms).toBe(b.time_ms);
        expect(Buffer.compare(raw.inputs, Buffer.from(b.records.buffer, b.records.byteOffset, b.records.byteLength))).toBe(0);
        expect(raw.input_hash).toBe(b.input_hash);
        expect(raw.input_hash).toBe(inputHash(records[b.batch_id - 1]));
      }
      expect(reader.get(5)).toBeUndefined();
    } finally {
      await journal.close();
      await reader.close();
    }
  });

  it('an altered record on disk is refused by the checked read (replay), at that batch', async () => {
    const { dir } = await writeJournal(3);
    // One bit of one record word of batch 2 (past the 36-byte header).
    await alterOnDisk(dir, 2, (b) => {
      b[36 + 5] ^= 0x10;
      return b;
    });
    const seen: number[] = [];
    const journal = Journal.open(dir);
    try {
      expect(() => {
        for (const b of journal.read(1)) seen.push(b.batch_id);
      }).toThrow(/batch 2: checksum mismatch/);
    } finally {
      await journal.close();
    }
    expect(seen).toEqual([1]);
  });

  it('a torn or misplaced batch is refused by both readers', async () => {
    const { dir } = await writeJournal(3);
    const batch2 = encodeBatch(2, 1_700_000_000_002, randomRecords(4, 2), 4);
    // Batch 3's slot holds batch 2's bytes (wrong id); batch 2 lost its last record word (torn).
    await alterOnDisk(dir, 3, () => batch2);
    await alterOnDisk(dir, 2, (b) => b.subarray(0, b.length - 4));
    expect(() => readAll(dir)).toThrow(/batch 2: \d+ bytes, expected/);
    const reader = JournalReader.open(dir);
    try {
      expect(reader.get(1)?.batch_id).toBe(1);
      expect(() => reader.get(2)).toThrow(JournalCorruption);
      expect(() => reader.get(3)).toThrow(/batch 3: header says batch 2/);
    } finally {
      await reader.close();
    }
  });

  it('decodeCheckedBatch skips only the checksum: same records, a view when aligned, a copy when not', () => {
    const records = randomRecords(3, 9);
    const bytes = encodeBatch(7, 1_700_000_000_007, records, 3);
    const checked = decodeBatch(bytes, 7);
    const aligned = new Uint8Array(bytes.length);
    aligned.set(bytes);
    const view = decodeCheckedBatch(aligned, 7);
    expect(view.records.buffer).toBe(aligned.buffer);
    expect([...view.records]).toEqual([...checked.records]);
    expect(view.input_hash).toBe(checked.input_hash);
    // At an odd offset the records cannot be an Int32Array view: they are copied.
    const odd = new Uint8Array(bytes.length + 1).subarray(1);
    odd.set(bytes);
    const copied = decodeCheckedBatch(odd, 7);
    expect(copied.records.buffer).not.toBe(odd.buffer);
    expect([...copied.records]).toEqual([...checked.records]);
    // The checksum is what it skips: a flipped record bit passes it, and fails decodeBatch.
    aligned[40] ^= 1;
    expect(() => decodeBatch(aligned, 7)).toThrow(/checksum mismatch/);
    expect(decodeCheckedBatch(aligned, 7).records[1]).not.toBe(checked.records[1]);
    expect(() => decodeCheckedBatch(aligned, 8)).toThrow(/header says batch 7/);
  });

  it('readTransient (the start-up replay) gives exactly what read gives, in one reused aligned buffer', async () => {
    const { dir, records } = await writeJournal(5);
    const journal = Journal.open(dir);
    try {
      const copies = [...journal.read(1)];
      let buffer: ArrayBufferLike | null = null;
      let reused = 0;
      let i = 0;
      for (const b of journal.readTransient(1)) {
        const c = copies[i++];
        expect([b.batch_id, b.time_ms, b.count, b.bytes]).toEqual([c.batch_id, c.time_ms, c.count, c.bytes]);
        expect([...b.records]).toEqual([...records[b.batch_id - 1]]);
        expect(b.input_hash).toBe(c.input_hash);
        // Offset 0 of its own buffer: the request reader's Float64Array view needs 8-byte alignment.
        expect(b.records.byteOffset).toBe(0);
        // A new buffer only when this batch outgrew the last one (these batches grow: i + 2 records).
        if (buffer !== null && b.records.buffer !== buffer) expect(buffer.byteLength).toBeLessThan(b.count * RECORD_WORDS * 4);
        if (buffer === b.records.buffer) reused++;
        buffer = b.records.buffer;
      }
      expect(i).toBe(5);
      expect(reused).toBe(2); // 3, 4 records fit the doubled buffer of 2; 7 outgrows it
      // From the middle, and from past the end (nothing, no error).
      expect([...journal.readTransient(4)].map((b) => b.batch_id)).toEqual([4, 5]);
      expect([...journal.readTransient(6)]).toEqual([]);
    } finally {
      await journal.close();
    }
  });

  it('readTransient refuses an altered record, a torn batch and a gap, at that batch', async () => {
    const altered = await writeJournal(3);
    await alterOnDisk(altered.dir, 2, (b) => {
      b[36 + 5] ^= 0x10;
      return b;
    });
    const seen: number[] = [];
    const journal = Journal.open(altered.dir);
    try {
      expect(() => {
        for (const b of journal.readTransient(1)) seen.push(b.batch_id);
      }).toThrow(/batch 2: checksum mismatch/);
    } finally {
      await journal.close();
    }
    expect(seen).toEqual([1]);

    const torn = await writeJournal(3);
    await alterOnDisk(torn.dir, 2, (b) => b.subarray(0, b.length - 4));
    expect(() => readAll(torn.dir, 'readTransient')).toThrow(/batch 2: \d+ bytes, expected/);

    // A trimmed journal read from before its first batch: the same message as read's.
    const trimmed = await writeJournal(4);
    const j = Journal.open(trimmed.dir);
    try {
      expect(j.trimThrough(2)).toBe(2);
      expect(() => [...j.read(1)]).toThrow(/batch 1 missing \(next stored is 3\)/);
      expect(() => [...j.readTransient(1)]).toThrow(/batch 1 missing \(next stored is 3\)/);
      expect([...j.readTransient(3)].map((b) => b.batch_id)).toEqual([3, 4]);
    } finally {
      await j.close();
    }
  });
});
