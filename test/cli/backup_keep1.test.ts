// `ringbook backup` against a server that keeps one snapshot and trims its journal through it
// after each (`snapshots.keep: 1`, `journal.trim: true`, a snapshot every 2 batches): the race
// "keep 1 may miss", forced. The backup is held after copying `da/` and `wal.log`, before the
// journal's LMDB (RINGBOOK_TEST_BACKUP_HOLD_FILE), while orders make several snapshots, each
// followed by a trim past the DA store's copy and the prune of the snapshot before it. Without the
// hold of src/cli/backup_hold.ts that attempt's journal copy starts after the DA store's copy + 1
// (and the snapshot it was trimmed through is gone): it fails the check and the copy is made
// again (attempts 2), and under a steady flow every attempt can lose the same way. With it the
// trimmed batches are written back into the copy and the pruned snapshot copied from its held
// descriptor: the first attempt is restorable, and a server started on it recovers every order
// acknowledged before the backup.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ok } from '../server/checks.js';
import { api, caughtUpState, runVerifier, startServer } from '../server/harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { bidder, heldBackup } from './backup_helpers.js';
import { cli } from './run_cli.js';

const tmpDir = tempDirsPerFile('ringbook-backup-keep1-');
const CONFIG = { snapshots: { every_batches: 2, keep: 1 }, journal: { trim: true } };
/** Orders acknowledged before the backup starts. */
const ORDERS_BEFORE = 12;
/** Trims the server must make past the DA store's copy while the backup is held. */
const TRIMS_PAST = 4;
/** Rounds of ORDERS_PER_ROUND orders (then a journal inspect) at most while the backup is held. */
const ROUNDS_MAX = 30;
const ORDERS_PER_ROUND = 10;
const TEST_BOUND_MS = 240_000;

async function trimmedThrough(data_dir: string): Promise<number> {
  const r = await cli(['journal', 'inspect', '--data-dir', data_dir, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { trimmed_through_batch_id: number }).trimmed_through_batch_id;
}

describe('ringbook backup with snapshots.keep 1 and journal.trim', () => {
  it('a snapshot, a trim and a prune during the copy: the first attempt is restorable, from what the data dir held at the start', async () => {
    const s = await startServer({ config: CONFIG });
    let s2: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      const bid = await bidder(s);
      for (let i = 0; i < ORDERS_BEFORE; i++) await bid();
      const start_batch = Number((await caughtUpState(s)).batch_id);
      const before = await trimmedThrough(s.data_dir);
      const out = path.join(tmpDir(), 'copy');
      const b = await heldBackup(s, out, path.join(tmpDir(), 'hold'), ['--json']);
      const snapshots_at_hold = fs.readdirSync(path.join(s.data_dir, 'snapshots'));
      // The premise, asserted: trims well past the DA store's copy (taken before the hold), and
      // the snapshots of the hold's time pruned.
      let through = before;
      for (let round = 0; round < ROUNDS_MAX && through < start_batch + TRIMS_PAST * CONFIG.snapshots.every_batches; round++) {
        for (let i = 0; i < ORDERS_PER_ROUND; i++) await bid();
        through = await trimmedThrough(s.data_dir);
      }
      expect(through).toBeGreaterThanOrEqual(start_batch + TRIMS_PAST * CONFIG.snapshots.every_batches);
      const snapshots_now = fs.readdirSync(path.join(s.data_dir, 'snapshots'));
      for (const f of snapshots_at_hold) expect(snapshots_now, 'pruned since the hold').not.toContain(f);

      fs.rmSync(b.hold_file);
      const e = await b.exited;
      expect(e.code, e.stderr).toBe(0);
      const r = JSON.parse(e.stdout) as {
        attempts: number; journal: { first_batch_id: number; last_batch_id: number; refilled_batches: number };
        da: { last_batch_id: number }; snapshots: { resume_batch_id: number | null; held_pruned: number };
      };
      expect(r.attempts).toBe(1);
      expect(r.journal.refilled_batches).toBeGreaterThan(0);
      expect(r.journal.first_batch_id).toBeLessThanOrEqual(before + 1);
      expect(r.journal.first_batch_id).toBeLessThanOrEqual(r.da.last_batch_id + 1);
      expect(r.snapshots.held_pruned).toBeGreaterThanOrEqual(1);
      expect(r.snapshots.resume_batch_id).not.toBeNull();

      // A server on the copy (the first one still running) recovers from it.
      s2 = await startServer({ config: CONFIG, env: { RINGBOOK_DATA_DIR: out } });
      const st2 = await caughtUpState(s2);
      expect(Number(st2.batch_id)).toBeGreaterThanOrEqual(start_batch);
      expect(st2.recovery).toMatchObject({ snapshot_batch_id: r.snapshots.resume_batch_id });
      ok(await api(s2.url).get('/markets'));
      const verify = await runVerifier(s2.url, path.join(s2.data_dir, 'test-config.json'), ['--out', tmpDir()]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    } finally {
      await s2?.stop();
      await s.stop();
    }
  }, TEST_BOUND_MS);
});
