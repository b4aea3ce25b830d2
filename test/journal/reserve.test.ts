// The journal's reserve (src/journal/reserve.ts): zeros written past LMDB's last page between
// batches, so that commits overwrite allocated blocks instead of growing data.mdb. Checked on the
// real LMDB environment: the reserve is a bounded fraction of the journal, appends land inside it
// (the file's size does not move while they do), and what was appended reads back intact, also
// after a reopen of a file that ends in zeros.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../src/journal/journal.js';
import { JOURNAL_RESERVE_BYTES_MAX, JOURNAL_RESERVE_STEP_BYTES_MAX, JournalReserve } from '../../src/journal/reserve.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { appendBatches, expectReopensIntact } from './reserve_batches.js';

const tempDir = tempDirsPerFile('ringbook-reserve-');

const fileBytes = (dir: string): number => fs.statSync(path.join(dir, 'data.mdb')).size;

function reserveUntilDone(j: Journal): number {
  let steps = 0;
  while (j.reserveAhead(true)) {
    steps++;
    if (steps > 64) throw new Error('reserve never filled');
  }
  return steps;
}

describe('journal reserve', () => {
  it('keeps at most an eighth of a small journal in zeros, and none for an empty one', () => {
    const dir = tempDir();
    const j = Journal.open(dir);
    try {
      const before = fileBytes(dir);
      expect(reserveUntilDone(j)).toBe(0);
      expect(fileBytes(dir)).toBe(before);
      appendBatches(j, 200, 10); // ~420 KB of values
      const used = fileBytes(dir);
      expect(reserveUntilDone(j)).toBeGreaterThan(0);
      const grown = fileBytes(dir) - used;
      expect(grown).toBeGreaterThan(0);
      expect(grown).toBeLessThanOrEqual(used / 8);
      expect(grown % 4096).toBe(0);
      expect(j.reserve.failures).toBe(0);
    } finally {
      void j.close();
    }
  });

  it('lets appends land in the zeros (the file does not grow) and reads them back, also after a reopen', async () => {
    const dir = tempDir();
    const j = Journal.open(dir);
    // ~40 MB of 200-request batches: the reserve's cap is a fraction of that.
    const last_big = appendBatches(j, 1000, 200);
    const used = fileBytes(dir);
    const steps = reserveUntilDone(j);
    // An eighth of ~42 MB (~5.2 MB), in steps of at most JOURNAL_RESERVE_STEP_BYTES_MAX (256 KB).
    const reserved_size = fileBytes(dir);
    expect(reserved_size - used).toBe(j.reserve.written_bytes);
    expect(j.reserve.written_bytes).toBeGreaterThan(used / 8 - 64 * 4096);
    expect(j.reserve.written_bytes).toBeLessThanOrEqual(Math.min(used / 8, JOURNAL_RESERVE_BYTES_MAX));
    expect(steps).toBe(Math.ceil(j.reserve.written_bytes / JOURNAL_RESERVE_STEP_BYTES_MAX));
    // ~100 KB of small batches fit in the reserve: LMDB writes inside the file.
    const last_small = appendBatches(j, 300, 2);
    expect(fileBytes(dir)).toBe(reserved_size);
    await j.close();

    await expectReopensIntact(dir, last_big, last_small);
  }, 120_000);

  it('tops up only when nearly used while requests wait (a quarter), and at half when idle', () => {
    const dir = tempDir();
    const j = Journal.open(dir);
    try {
      appendBatches(j, 400, 200); // ~16 MB: a 2 MB reserve
      reserveUntilDone(j);
      const full = fileBytes(dir);
      // Use more than half and less than three quarters of the ~2.2 MB reserve (30 x ~42 KB values
      // in overflow pages: ~1.36 MB of pages).
      appendBatches(j, 30, 200);
      const after = fileBytes(dir);
      expect(after).toBe(full); // still inside the reserve
      expect(j.reserveAhead(false)).toBe(false); // busy: more than a quarter left
      expect(j.reserveAhead(true)).toBe(true); // idle: below half, topped up
      expect(fileBytes(dir)).toBeGreaterThan(full);
    } finally {
      void j.close();
    }
  }, 60_000);
});

describe('a reserve whose file cannot be opened', () => {
  it('counts the failure and looks again only after the next stretch of appends, not at every batch', () => {
    let looks = 0;
    const reserve = new JournalReserve(path.join(tempDir(), 'missing', 'data.mdb'), () => {
      looks++;
      return { used_bytes: 1 << 20, page_bytes: 4096 };
    });
    for (let batch = 0; batch < 50; batch++) {
      reserve.consumed(100); // small batches: far below a look's stretch of appends
      reserve.reserveAhead(false);
    }
    expect(reserve.failures).toBe(1);
    expect(looks).toBe(1);
  });
});
