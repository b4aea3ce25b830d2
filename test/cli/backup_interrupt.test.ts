// An interrupted `ringbook backup` against a running server (src/cli/backup.ts, docs/operations.md
// "Backup"). The backup is held mid-copy (RINGBOOK_TEST_BACKUP_HOLD_FILE: a read transaction on
// the server's journal, as LMDB's copy holds for its whole run) and then:
// - SIGKILL: its reader slot stays in the server's journal/lock.mdb (a dead pid), until the
//   server's writer clears it (src/journal/stale_readers.ts) while the server keeps taking orders;
//   the partial copy it leaves is marked BACKUP_INCOMPLETE, a start on it is refused, and the next
//   backup removes it;
// - SIGTERM: the backup ends at its next step with its environments closed (no slot of its pid
//   left), removes its partial copy and exits 143 saying so.
// On the old code the hold seam does not exist (the backup finishes: no hold file), a SIGTERM
// exited 1 without a word, and nothing cleared a dead backup's slot in a running server.
// The reader table is read from the lock file in lmdb-js 3.5.6's layout, checked first: a made-up
// lock file in another layout is refused naming the one expected (test/lmdb_readers.ts).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { caughtUpState, startServer } from '../server/harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { bidder, heldBackup, readerPids } from './backup_helpers.js';
import { LMDB_LOCK_LAYOUT, LmdbLockLayoutUnknown } from '../lmdb_readers.js';
import { cli } from './run_cli.js';

const tmpDir = tempDirsPerFile('ringbook-backup-int-');
/** Trims after each snapshot: the pages a stale reader pins are the ones the trims free. */
const CONFIG = { snapshots: { every_batches: 4, keep: 2 }, journal: { trim: true } };
const TEST_BOUND_MS = 120_000;
/** Orders placed at most while waiting for the server to clear the dead reader's slot. */
const SWEEP_ORDERS_MAX = 2_000;

describe('ringbook backup interrupted mid-copy against a running server', () => {
  it('SIGKILL: the dead reader slot is cleared by the running server, the partial copy is refused by a start and removed by the next backup', async () => {
    const s = await startServer({ config: CONFIG });
    try {
      const bid = await bidder(s);
      for (let i = 0; i < 12; i++) await bid();
      await caughtUpState(s);
      const out = path.join(tmpDir(), 'copy');
      const lock = path.join(s.data_dir, 'journal', 'lock.mdb');
      const b = await heldBackup(s, out, path.join(tmpDir(), 'hold'));
      expect(readerPids(lock), 'the held backup\'s reader slot (the scan reads the table)').toContain(b.pid);
      process.kill(b.pid, 'SIGKILL');
      expect((await b.exited).signal).toBe('SIGKILL');
      expect(readerPids(lock)).toContain(b.pid); // nothing ran in the dead process

      // Its partial copy: marked, and a start on it is refused.
      const partials = fs.readdirSync(path.dirname(out));
      expect(partials).toHaveLength(1);
      expect(partials[0]).toMatch(/^\.copy\.partial-/);
      const partial = path.join(path.dirname(out), partials[0]);
      expect(fs.readFileSync(path.join(partial, 'BACKUP_INCOMPLETE'), 'utf8')).toContain(`by pid ${b.pid}`);
      await expect(startServer({ config: CONFIG, env: { RINGBOOK_DATA_DIR: partial } })).rejects.toThrow(/is an incomplete backup/);

      // The server keeps taking orders, and its writer clears the dead slot (bounded).
      let orders = 0;
      while (readerPids(lock).has(b.pid) && orders < SWEEP_ORDERS_MAX) {
        await bid();
        orders++;
      }
      expect(readerPids(lock), `after ${orders} orders`).not.toContain(b.pid);
      await bid();
      await caughtUpState(s);

      // The next backup removes the dead one's partial copy and makes a good one.
      const r = await cli(['backup', '--data-dir', s.data_dir, '--out', out, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, removed_partials: [partials[0]] });
      expect(fs.readdirSync(path.dirname(out))).toEqual(['copy']);
      expect(fs.existsSync(path.join(out, 'BACKUP_INCOMPLETE'))).toBe(false);
    } finally {
      await s.stop();
    }
  }, TEST_BOUND_MS);

  it('SIGTERM: the backup stops at its next step, closes its environments (no reader slot left), removes its partial copy and exits 143', async () => {
    const s = await startServer({ config: CONFIG });
    try {
      const bid = await bidder(s);
      for (let i = 0; i < 6; i++) await bid();
      const out = path.join(tmpDir(), 'copy');
      const lock = path.join(s.data_dir, 'journal', 'lock.mdb');
      const b = await heldBackup(s, out, path.join(tmpDir(), 'hold'));
      expect(readerPids(lock)).toContain(b.pid);
      process.kill(b.pid, 'SIGTERM');
      const e = await b.exited;
      expect(e.code, e.stderr).toBe(143);
      expect(e.stderr).toContain('backup interrupted by SIGTERM: the partial copy was removed, nothing is at');
      // Checked at once, before any commit of the server could have swept: the backup freed its slot itself.
      expect(readerPids(lock)).not.toContain(b.pid);
      expect(fs.readdirSync(path.dirname(out))).toEqual([]);
      await bid();
    } finally {
      await s.stop();
    }
  }, TEST_BOUND_MS);
});

describe('the reader table the tests read (test/lmdb_readers.ts)', () => {
  /** A made-up lock file: LMDB_LOCK_LAYOUT's header and 126 slots, `pid` in slot 3; mutex owner words in the header. */
  function madeUp(over: { magic?: number; format?: number; header_bytes?: number } = {}, pid = 4242): string {
    const L = LMDB_LOCK_LAYOUT;
    const header_bytes = over.header_bytes ?? L.readers_offset;
    const b = Buffer.alloc(header_bytes + 126 * L.reader_bytes);
    b.writeUInt32LE(over.magic ?? L.magic, 0);
    b.writeUInt32LE(over.format ?? L.format, 4);
    b.writeUInt32LE(process.pid, 24); // a held mutex's owner (a tid): must not read as a reader
    b.writeUInt32LE(process.pid, header_bytes - 48);
    b.writeUInt32LE(pid, header_bytes + 3 * L.reader_bytes + L.pid_offset);
    const file = path.join(tmpDir(), 'lock.mdb');
    fs.writeFileSync(file, b);
    return file;
  }

  it('reads the slots\' pids from a lock file in lmdb-js 3.5.6\'s layout, not the header\'s words', () => {
    expect(readerPids(madeUp())).toEqual(new Set([4242]));
  });

  it.each([
    ['another lock format (another lmdb build or version)', { format: LMDB_LOCK_LAYOUT.format + 1 }, /format 741302275/],
    ['not an LMDB lock file (magic)', { magic: 0x12345678 }, /found magic 0x12345678/],
    ['a reader table not of 64-byte records after 208 bytes (a 240-byte header)', { header_bytes: 240 }, /8304 bytes/],
  ])('refuses %s, naming the layout it expected', (_what, over, found) => {
    const file = madeUp(over);
    expect(() => readerPids(file)).toThrow(LmdbLockLayoutUnknown);
    expect(() => readerPids(file)).toThrow(/expected lmdb-js 3\.5\.6's: magic 0xbeefc0de, format 741302274, 64-byte reader slots after a 208-byte header/);
    expect(() => readerPids(file)).toThrow(found);
  });
});
