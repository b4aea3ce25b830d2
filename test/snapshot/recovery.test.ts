// Which snapshot a start uses (src/snapshot/recovery.ts): newest first, passing over (and
// naming) a corrupt file, one without the front part, one without the engine part (a cluster
// gateway's), one the DA store does not hold yet, one
// whose root is not the published one, one the journal does not continue; genesis when none is
// usable, unless the journal was trimmed.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseSnapshot, RecoveryImpossible, type RecoveryFacts } from '../../src/snapshot/recovery.js';
import { encodeSnapshot, snapshotFileName } from '../../src/snapshot/snapshot_file.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tempDir = tempDirsPerFile('ringbook-choose-');

const ROOT = (n: number): string => '0x' + n.toString(16).padStart(64, '0');

function dirWith(snaps: { batch_id: number; root?: string | null; front?: boolean; engine?: boolean; corrupt?: boolean }[]): string {
  const dir = tempDir();
  for (const s of snaps) {
    const bytes = encodeSnapshot(
      { batch_id: s.batch_id, batch_time_ms: 1, state_root: s.root === undefined ? ROOT(s.batch_id) : s.root, zero_balance_leaves: [], created_ms: 2 },
      new Uint8Array(s.engine === false ? [] : [1, 2, 3]), s.front === false ? null : new Uint8Array([4, 5]),
    );
    if (s.corrupt) bytes[bytes.length - 40] ^= 1;
    fs.writeFileSync(path.join(dir, snapshotFileName(s.batch_id)), bytes);
  }
  return dir;
}

function facts(o: Partial<RecoveryFacts> = {}): RecoveryFacts {
  return { journal_first: 1, journal_last: 100, published_last: 100, publishedRoot: (n) => (n <= 100 ? ROOT(n) : undefined), ...o };
}

describe('chooseSnapshot', () => {
  it('takes the newest usable one', () => {
    const c = chooseSnapshot(dirWith([{ batch_id: 40 }, { batch_id: 80 }]), facts());
    expect(c.snapshot?.batch_id).toBe(80);
    expect(c.rejected).toEqual([]);
  });

  it('passes over, with the reason, corrupt, engine-only, unpublished, wrong-root and uncontinued snapshots', () => {
    const dir = dirWith([
      { batch_id: 10 }, { batch_id: 20, corrupt: true }, { batch_id: 30, front: false }, { batch_id: 120 },
      { batch_id: 50, root: ROOT(7) }, { batch_id: 60, engine: false },
    ]);
    const c = chooseSnapshot(dir, facts());
    expect(c.snapshot?.batch_id).toBe(10);
    expect(c.rejected.map((r) => [path.basename(r.file), r.reason.replace(/ \(.*$/, '').slice(0, 40)])).toEqual([
      [snapshotFileName(120), 'batch 120 is not in the DA store yet'],
      [snapshotFileName(60), 'no engine part'],
      [snapshotFileName(50), `its state root ${ROOT(7)}`.slice(0, 40)],
      [snapshotFileName(30), 'engine-only snapshot'],
      [snapshotFileName(20), 'corrupt: digest mismatch'],
    ]);
    // A journal trimmed past batch 11 cannot continue the snapshot at 10 either.
    expect(() => chooseSnapshot(dir, facts({ journal_first: 15 }))).toThrow(RecoveryImpossible);
    // A cluster gateway's file (front part, no engine part) is an error to look at, not used.
    expect(c.rejected.find((r) => r.file.endsWith(snapshotFileName(60)))?.kind).toBe('unusable');
  });

  it('starts from genesis when none is usable and the journal is whole; refuses when it was trimmed', () => {
    expect(chooseSnapshot(dirWith([]), facts()).snapshot).toBeNull();
    const c = chooseSnapshot(dirWith([{ batch_id: 90 }]), facts({ published_last: 0, publishedRoot: () => undefined }));
    expect(c.snapshot).toBeNull();
    expect(c.rejected[0].reason).toContain('not in the DA store');
    expect(() => chooseSnapshot(dirWith([]), facts({ journal_first: 31 }))).toThrow(/journal starts at batch 31 \(trimmed\) and no snapshot continues it/);
    // A backup of journal/ and snapshots/ alone (no da/): the snapshot is there, the DA store is
    // not, and the message says what to restore.
    expect(() => chooseSnapshot(dirWith([{ batch_id: 30 }]), facts({ journal_first: 31, published_last: 0, publishedRoot: () => undefined })))
      .toThrow(/batch 30 is not in the DA store yet.*restore the whole data directory from a backup \(journal\/, da\/ and snapshots\/ together/);
  });

  it('accepts a journal trimmed through the snapshot, or emptied by the trim', () => {
    expect(chooseSnapshot(dirWith([{ batch_id: 60 }]), facts({ journal_first: 61 })).snapshot?.batch_id).toBe(60);
    expect(chooseSnapshot(dirWith([{ batch_id: 60 }]), facts({ journal_first: 0, journal_last: 0 })).snapshot?.batch_id).toBe(60);
  });
});
