// The journal reserve's top-up runs on the matcher thread, so it must not wait for the device
// (h25p, src/journal/reserve.ts "No sync here"): no step calls fsync/fdatasync, each writes at
// most JOURNAL_RESERVE_STEP_BYTES_MAX, the reserve still reaches its target over several calls, and
// the journal (whose commits then land in the unsynced zeros) reopens with every batch intact.
// The sync calls are counted by spying on node:fs, the module reserve.ts writes through; only the
// calls made inside `reserveAhead` are counted (the write-ahead file may sync through fs itself).
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Journal } from '../../src/journal/journal.js';
import { JOURNAL_RESERVE_STEP_BYTES_MAX, JournalReserve } from '../../src/journal/reserve.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { appendBatches, expectReopensIntact } from './reserve_batches.js';

const tempDir = tempDirsPerFile('ringbook-reserve-nosync-');
/** More calls than any fill needs (8 MB cap / 256 KB steps = 32): a reserve that never fills fails. */
const CALLS_MAX = 64;

/** Counts node:fs sync calls of every form (sync and callback). */
function spySyncs(): () => number {
  const spies = [
    vi.spyOn(fs, 'fdatasyncSync'),
    vi.spyOn(fs, 'fsyncSync'),
    vi.spyOn(fs, 'fdatasync'),
    vi.spyOn(fs, 'fsync'),
  ];
  return () => spies.reduce((n, s) => n + s.mock.calls.length, 0);
}

afterEach(() => {
  vi.restoreAllMocks();
});

const fileBytes = (file: string): number => fs.statSync(file).size;

/** Idle top-ups until one writes nothing; checks each step's size and that none synced. */
function fill(call: () => boolean, file: string, syncs: () => number): number {
  let steps = 0;
  for (let calls = 0; calls < CALLS_MAX; calls++) {
    const size_before = fileBytes(file);
    const syncs_before = syncs();
    const wrote = call();
    expect(syncs() - syncs_before).toBe(0);
    expect(fileBytes(file) - size_before).toBeLessThanOrEqual(JOURNAL_RESERVE_STEP_BYTES_MAX);
    if (!wrote) return steps;
    steps++;
  }
  throw new Error(`reserve not full after ${CALLS_MAX} calls`);
}

describe('journal reserve top-up without a sync', () => {
  it('grows to its target in bounded steps, none syncing (a plain file, LMDB faked)', () => {
    const file = path.join(tempDir(), 'data.mdb');
    const used_bytes = 16 << 20; // target: an eighth, 2 MB
    fs.writeFileSync(file, '');
    fs.truncateSync(file, used_bytes);
    const reserve = new JournalReserve(file, () => ({ used_bytes, page_bytes: 4096 }));
    const syncs = spySyncs();
    try {
      const steps = fill(() => reserve.reserveAhead(true), file, syncs);
      expect(reserve.failures).toBe(0);
      expect(reserve.written_bytes).toBe(2 << 20);
      expect(fileBytes(file)).toBe(used_bytes + (2 << 20));
      expect(steps).toBe(Math.ceil((2 << 20) / JOURNAL_RESERVE_STEP_BYTES_MAX));
      expect(steps).toBeGreaterThan(1);
      expect(syncs()).toBe(0);
    } finally {
      reserve.close();
    }
  });

  it('a journal whose commits land in the unsynced zeros reopens with every batch intact', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'data.mdb');
    const j = Journal.open(dir);
    const last_big = appendBatches(j, 200, 200); // ~8 MB of values: a ~1 MB reserve
    const used = fileBytes(file);
    const syncs = spySyncs();
    const steps = fill(() => j.reserveAhead(true), file, syncs);
    vi.restoreAllMocks();
    expect(j.reserve.failures).toBe(0);
    expect(steps).toBeGreaterThan(1);
    const reserved_size = fileBytes(file);
    expect(reserved_size - used).toBe(j.reserve.written_bytes);
    expect(j.reserve.written_bytes).toBeGreaterThan(used / 8 - 64 * 4096);
    // Small batches, each stored by a synchronous commit into the zeros: the file does not grow.
    const last_small = appendBatches(j, 200, 2);
    expect(fileBytes(file)).toBe(reserved_size);
    await j.close();

    await expectReopensIntact(dir, last_big, last_small);
  }, 120_000);
});
