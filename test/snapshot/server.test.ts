// Snapshots used by the real server: periodic snapshots while trading, kill -9, restart from the
// newest snapshot + the journal after it, with the same state root and the same GET answers; the
// chain published after the restart re-executes from genesis (ringbook verify); a corrupt newest
// snapshot is reported and the older one is used; a journal trimmed after snapshots still
// recovers, and without any snapshot it refuses to start, saying why.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JournalReader } from '../../src/da/journal_reader.js';
import { decodeEngine, encodeEngine, encodeSnapshot, listSnapshots, readSnapshotFile } from '../../src/snapshot/snapshot_file.js';
import { ok } from '../server/checks.js';
import { adminHeaders, adminState, api, caughtUpState, runVerifier, startServer, type StartedServer } from '../server/harness.js';
import { fund, readBack, snapshotWritten, trade } from './traffic.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const EVERY = 4;
const dataDir = tempDirsPerFile('ringbook-snap-');

function verify(s: StartedServer, extra: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const config = path.join(s.data_dir, 'test-config.json');
  return runVerifier(s.url, config, ['--out', dataDir(), ...extra]);
}

describe('server recovery from snapshots', () => {
  const data_dir = dataDir();
  const env = { RINGBOOK_DATA_DIR: data_dir };
  const config = { snapshots: { every_batches: EVERY, keep: 2 } };

  it('resumes from the newest snapshot after kill -9: same root, same answers, journal replayed after it; a corrupt one is passed over', async () => {
    let s = await startServer({ env, config });
    const t = await fund(s);
    const filled = await trade(s, t, 6, 'r1');
    let st = await caughtUpState(s);
    if (Number(st.batch_id) % EVERY === 0) {
      // Make sure some journal batches follow the last snapshot.
      ok(await api(s.url).post('/orders', t.taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 10_000 })));
      st = await caughtUpState(s);
    }
    const batch_id = Number(st.batch_id);
    const last_due = Math.floor(batch_id / EVERY) * EVERY;
    await snapshotWritten(s, last_due);
    const before = await readBack(s, t, filled);
    const snap_state = await adminState(s);
    expect(snap_state.snapshots.last.state_root).toMatch(/^0x[0-9a-f]{64}$/);
    const kept = listSnapshots(path.join(data_dir, 'snapshots')).map((x) => x.batch_id);
    const last_snapshot = kept[0];
    if (snap_state.snapshots.deferred === 0) {
      expect(snap_state.snapshots.written).toBe(batch_id / EVERY | 0);
      expect(kept).toEqual([last_due, last_due - EVERY]);
    } else {
      // A loaded machine: a snapshot fell due while both kept copies were still being written (the
      // DA thread behind) and was deferred to a later batch (h31f); several due meanwhile make one.
      expect(kept.length).toBe(2);
      expect(last_snapshot).toBeGreaterThanOrEqual(last_due);
      expect(last_snapshot).toBeLessThanOrEqual(batch_id);
    }
    await s.stop('SIGKILL');

    s = await startServer({ env, config });
    const after_state = await caughtUpState(s);
    expect(after_state.recovery).toMatchObject({ snapshot_batch_id: last_snapshot, replayed_batches: batch_id - last_snapshot, batch_id });
    expect(after_state.state_root).toBe(st.state_root);
    expect(after_state.state_root_rechecks_failed).toBe(0);
    expect(after_state.batch_id).toBe(st.batch_id);
    expect(await readBack(s, t, filled)).toEqual(before);
    expect(s.output().stdout).toContain(`recovered from the snapshot at batch ${last_snapshot} + ${batch_id - last_snapshot} journal batches`);

    // Trading goes on from the restored state, and the whole published chain re-executes.
    t.maker.skipTo(Number((before['maker.balances'] as { nonce_high_water: number }).nonce_high_water));
    t.taker.skipTo(Number((before['taker.balances'] as { nonce_high_water: number }).nonce_high_water));
    const more = await trade(s, t, 3, 'r2');
    expect(more.length).toBe(6);
    const st2 = await caughtUpState(s);
    const v = await verify(s);
    expect(v.code, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout.trim().split('\n').pop() as string)).toMatchObject({ verify: 'ok', checked: Number(st2.batch_id), state_root: st2.state_root });
    // The verifier can start from a snapshot: its root checked against the published one.
    const [snap] = listSnapshots(path.join(data_dir, 'snapshots'));
    const v2 = await verify(s, ['--snapshot', snap.file]);
    expect(v2.code, v2.stderr).toBe(0);
    expect(JSON.parse(v2.stdout.trim())).toMatchObject({ verify: 'ok', checked: Number(st2.batch_id) - snap.batch_id, state_root: st2.state_root });
    const f = readSnapshotFile(snap.file);
    const e = decodeEngine(f.engine);
    e.canonical.accounts[0].balances[2][0] += 1; // a state that is not the published one
    const forged = path.join(dataDir(), 'forged.msgpack');
    fs.writeFileSync(forged, encodeSnapshot(f, encodeEngine(e), f.front));
    const v3 = await verify(s, ['--snapshot', forged]);
    expect(v3.code).toBe(1);
    expect(v3.stderr).toMatch(new RegExp(`the published root of batch ${snap.batch_id} is 0x`));
    const before2 = await readBack(s, t, filled);
    await snapshotWritten(s, Math.floor(Number(st2.batch_id) / EVERY) * EVERY);
    await s.stop('SIGKILL');

    // The newest snapshot is damaged: reported, and the older one is used.
    const [newest, older] = listSnapshots(path.join(data_dir, 'snapshots'));
    const bytes = fs.readFileSync(newest.file);
    bytes[bytes.length >> 1] ^= 0x55;
    fs.writeFileSync(newest.file, bytes);
    s = await startServer({ env, config });
    const st3 = await caughtUpState(s);
    expect(st3.recovery).toMatchObject({ snapshot_batch_id: older.batch_id, replayed_batches: Number(st2.batch_id) - older.batch_id });
    expect(st3.state_root).toBe(st2.state_root);
    expect(await readBack(s, t, filled)).toEqual(before2);
    expect(s.output().stderr).toMatch(new RegExp(`${path.basename(newest.file)} not used: corrupt`));
    expect((await s.stop('SIGTERM')).code).toBe(0);

    // A snapshot that is intact (digest recomputed) but whose engine state is not the one its
    // batch's published root commits to: the DA thread's root check stops the start.
    const g = readSnapshotFile(older.file);
    const ge = decodeEngine(g.engine);
    ge.canonical.accounts[0].balances[2][0] += 1;
    fs.writeFileSync(older.file, encodeSnapshot(g, encodeEngine(ge), g.front));
    await expect(startServer({ env, config })).rejects.toThrow(new RegExp(`snapshot at batch ${older.batch_id}: its state gives root 0x[0-9a-f]{64}, the published root is 0x`));
  }, 120_000);

  it('two snapshots in flight (the writer held): one due is deferred, not packed on the matcher, and taken once a copy is free; ' +
    'on demand: POST /admin/snapshot writes one at the current batch (admin token needed)', async () => {
    // While this file exists the writer thread waits before its walks (RINGBOOK_TEST_SNAPSHOT_HOLD_FILE):
    // the matcher's two kept copies stay held, as behind a slow disk or DA thread.
    const hold = path.join(dataDir(), 'hold');
    fs.writeFileSync(hold, '');
    const s = await startServer({ env: { RINGBOOK_TEST_SNAPSHOT_HOLD_FILE: hold }, config: { snapshots: { every_batches: 2, keep: 1 } } });
    try {
      const t = await fund(s);
      const unauthorized = await api(s.url).post('/admin/snapshot', {});
      expect(unauthorized.status).toBe(401);
      // Batches (one per order) through batch 6: its periodic snapshot falls due with both copies
      // held (batches 2 and 4 hold them); then the front hears of the deferral.
      let st = await adminState(s);
      for (let i = 0; i < 20 && Number(st.batch_id) < 6; i++) {
        ok(await api(s.url).post('/orders', t.taker.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 10_000 })));
        st = await adminState(s);
      }
      expect(Number(st.batch_id)).toBe(6);
      for (let i = 0; i < 500 && !(st.snapshots.deferred >= 1); i++) {
        await new Promise((r) => setTimeout(r, 20)); // a poll, bounded
        st = await adminState(s);
      }
      expect(st.snapshots, 'a periodic one deferred, none written yet').toMatchObject({ deferred: 1, written: 0, dropped: 0 });
      // Asked for meanwhile: deferred too; its answer waits for the copy taken once one is free.
      const asked = api(s.url).post('/admin/snapshot', {}, adminHeaders(s));
      asked.catch(() => undefined); // awaited below; a failure before must not surface as unhandled
      for (let i = 0; i < 500 && st.snapshots.deferred < 2; i++) {
        await new Promise((r) => setTimeout(r, 20)); // a poll (the matcher wakes within its 100 ms sleep), bounded
        st = await adminState(s);
      }
      expect(st.snapshots.deferred, 'the one asked for deferred').toBe(2);
      fs.rmSync(hold);
      const r = ok(await asked);
      st = await caughtUpState(s);
      expect(r.batch_id).toBe(st.batch_id);
      expect(r.pack_ms, 'the matcher only copied (before h31f it walked and packed this one)').toBe(0);
      expect(r.capture_ms).toBeGreaterThan(0);
      expect(r.state_root).toBe(st.state_root);
      expect(r.bytes).toBeGreaterThan(0);
      expect(fs.existsSync(r.file)).toBe(true);
      // The two held, then the deferred one at the batch it was taken; the front part captured for
      // the deferred periodic batch was let go, not counted as dropped.
      expect(st.snapshots).toMatchObject({ written: 3, dropped: 0, deferred: 2 });
      expect(listSnapshots(path.join(s.data_dir, 'snapshots')).map((f) => f.batch_id)).toEqual([Number(r.batch_id)]);
      expect(s.output().stdout + s.output().stderr).toMatch(/snapshot at batch \d+ deferred/);
      expect(t.maker.address).toMatch(/^0x/);
      expect((await s.stop('SIGTERM')).code).toBe(0);
    } finally {
      await s.stop('SIGTERM');
    }
  }, 60_000);
});

describe('journal trimmed after snapshots', () => {
  it('recovers from a snapshot with the old journal batches gone, and refuses to start from genesis without one', async () => {
    const data_dir = dataDir();
    const env = { RINGBOOK_DATA_DIR: data_dir };
    const config = { snapshots: { every_batches: 3, keep: 2 }, journal: { trim: true } };
    let s = await startServer({ env, config });
    const t = await fund(s);
    const filled = await trade(s, t, 6, 'r1');
    const st = await caughtUpState(s);
    const newest = Math.floor(Number(st.batch_id) / 3) * 3;
    await snapshotWritten(s, newest);
    // The trim runs after the snapshot is written: give the matcher a moment. Its own trim, through
    // the older of the two kept (an earlier snapshot's trim line is already in the log, and a kill
    // after that one only left the journal starting before what this test expects).
    // Through the older kept one (newest - 3, unless a snapshot was deferred on a loaded machine).
    const older_kept = listSnapshots(path.join(data_dir, 'snapshots')).map((x) => x.batch_id)[1];
    const trim_line = `journal trimmed through batch ${older_kept} (`;
    for (let i = 0; i < 100 && !s.output().stdout.includes(trim_line); i++) await new Promise((r) => setTimeout(r, 20));
    const before = await readBack(s, t, filled);
    await s.stop('SIGKILL');
    const journal = JournalReader.open(path.join(data_dir, 'journal'));
    const first = journal.firstBatchId();
    const kept = listSnapshots(path.join(data_dir, 'snapshots'));
    await journal.close();
    expect(first).toBeGreaterThan(1);
    expect(first).toBe(kept[kept.length - 1].batch_id + 1);

    s = await startServer({ env, config });
    const st2 = await caughtUpState(s);
    expect(st2.state_root).toBe(st.state_root);
    expect(st2.recovery).toMatchObject({ snapshot_batch_id: kept[0].batch_id });
    expect(await readBack(s, t, filled)).toEqual(before);
    await s.stop('SIGKILL');

    fs.rmSync(path.join(data_dir, 'snapshots'), { recursive: true, force: true });
    await expect(startServer({ env, config })).rejects.toThrow(/journal starts at batch \d+ \(trimmed\) and no snapshot continues it/);
  }, 120_000);
});
