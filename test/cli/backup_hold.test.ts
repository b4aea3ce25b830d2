// backup_hold.ts against LMDB directly: what a trim and a prune take from the data dir after the
// hold was taken comes back into the copy, byte for byte (the trimmed batches, written back in
// transactions of a bounded size, more than one here; the pruned snapshot file, from its
// descriptor). On the old code there is no hold (the module does not exist).
import fs from 'node:fs';
import path from 'node:path';
import { open } from 'lmdb';
import { describe, expect, it } from 'vitest';
import { BackupHold } from '../../src/cli/backup_hold.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tmpDir = tempDirsPerFile('ringbook-backup-hold-');
/** Batches in the fake journal; TRIMMED of them deleted after the hold (over one write-back transaction's 4,096). */
const BATCHES = 6_000;
const TRIMMED = 5_000;

function batchBytes(id: number): Buffer {
  return Buffer.from(`batch ${id} `.repeat(1 + (id % 7)));
}

describe('BackupHold', () => {
  it('writes back the batches trimmed and copies the snapshots pruned after it was taken', async () => {
    const data = tmpDir();
    const journal_dir = path.join(data, 'journal');
    const snapshots = path.join(data, 'snapshots');
    fs.mkdirSync(snapshots, { recursive: true });
    const old_snapshot = 'snapshot-000000000010.msgpack';
    fs.writeFileSync(path.join(snapshots, old_snapshot), Buffer.from('held snapshot bytes'));
    // The server's journal: its env options and named database as Journal.open's.
    const server = open({ path: journal_dir, compression: false });
    const batches = server.openDB<Buffer, number>({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
    server.transactionSync(() => {
      for (let id = 1; id <= BATCHES; id++) batches.putSync(id, batchBytes(id));
    });

    const hold = BackupHold.take(data);
    try {
      // The server trims and prunes after the hold was taken.
      batches.transactionSync(() => {
        for (let id = 1; id <= TRIMMED; id++) batches.removeSync(id);
      });
      fs.rmSync(path.join(snapshots, old_snapshot));
      const copy_dir = path.join(tmpDir(), 'journal');
      fs.mkdirSync(copy_dir);
      await server.backup(copy_dir, false);

      expect(hold.fillTrimmed(copy_dir)).toBe(TRIMMED);
      const dst_snapshots = tmpDir();
      expect(hold.copyPrunedSnapshots(dst_snapshots)).toEqual({ files: 1, bytes: 'held snapshot bytes'.length });
      expect(fs.readFileSync(path.join(dst_snapshots, old_snapshot), 'utf8')).toBe('held snapshot bytes');

      const copy = open({ path: copy_dir, readOnly: true });
      try {
        const db = copy.openDB<Buffer, number>({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
        const keys = [...db.getKeys()] as number[];
        expect(keys).toHaveLength(BATCHES);
        expect(keys[0]).toBe(1);
        expect(keys[BATCHES - 1]).toBe(BATCHES);
        for (const id of [1, 4_096, 4_097, TRIMMED, TRIMMED + 1, BATCHES]) expect(db.get(id)?.equals(batchBytes(id)), `batch ${id}`).toBe(true);
      } finally {
        await copy.close();
      }
    } finally {
      await hold.release();
      await server.close();
    }
  });
});
