// The matcher thread's side of the LMDB storer thread (src/journal/wal_storer_driver.ts), on its
// own: nothing before its start; after its open, `opening` is false (it then reads a plain field,
// the idle turn's check) and a handed store lands in LMDB with an ok outcome; a thread that could
// not open LMDB fails its store, is given up on `storeFailed` and never started again. The
// journal's use of it (when stores are handed over, retried, waited for) is wal_async.test.ts's.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { StorerDriver } from '../../src/journal/wal_storer_driver.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { lmdbIds, walBatches } from './wal_batches.js';

const tempDir = tempDirsPerFile('ringbook-wal-storer-driver-');
const { bodyOf } = walBatches(3);
const batchesOf = (ids: number[]): { batch_id: number; value: Buffer }[] => ids.map((id) => ({ batch_id: id, value: bodyOf(id) }));

describe('StorerDriver', () => {
  it('is none until started; once its open is over, not opening, and a handed store lands', async () => {
    const dir = tempDir();
    const d = new StorerDriver(dir, null);
    expect(d.state()).toBe('none');
    expect(d.opening()).toBe(false);
    expect(d.running()).toBe(false);
    expect(d.done(1)).toBe(false);
    try {
      expect(d.start()).not.toBeNull();
      expect(d.running()).toBe(true);
      d.awaitOpen();
      expect(d.state()).toBe('ready');
      expect(d.opening()).toBe(false);
      expect(d.opening()).toBe(false); // the cached answer agrees
      const seq = d.post(batchesOf([1, 2, 3]));
      expect(seq).toBe(1);
      d.awaitDone(seq!, 3);
      expect(d.done(seq!)).toBe(true);
      expect(d.outcome()).toEqual({ ok: true });
    } finally {
      await d.close();
    }
    expect(d.state()).toBe('none');
    expect(d.opening()).toBe(false);
    expect(await lmdbIds(dir)).toEqual([1, 2, 3]);
  });

  it('a thread that cannot open LMDB fails its store, is given up on storeFailed, and is not started again', async () => {
    const dir = tempDir();
    fs.mkdirSync(dir, { recursive: true });
    const fault_file = path.join(dir, 'fault');
    fs.writeFileSync(fault_file, 'storer'); // read by the thread as it starts
    const d = new StorerDriver(dir, fault_file);
    try {
      const seq = d.post(batchesOf([1])); // starts it
      expect(seq).toBe(1);
      d.awaitDone(seq!, 1);
      const outcome = d.outcome();
      expect(outcome).toEqual({ ok: false, message: expect.stringContaining('injected storer open failure') });
      d.storeFailed(outcome.ok ? '' : outcome.message);
      expect(d.state()).toBe('none');
      expect(d.running()).toBe(false);
      expect(d.opening()).toBe(false);
      fs.rmSync(fault_file);
      expect(d.start()).toBeNull();
      expect(d.post(batchesOf([1]))).toBeNull();
    } finally {
      await d.close();
    }
  });
});
