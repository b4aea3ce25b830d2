// The DA backlog bound (limits.da_backlog_batches_max) right after a restart: the batches the
// restart replays whose roots are already known (the snapshot's batch, batches the DA store
// already publishes) are not a backlog. Counted from -1 until the DA thread's first report, a
// data dir with >= the limit batches refused writes with 503 right after start, and a server
// resumed from a snapshot at its last batch showed no state root until its first write.
//
// One data dir, three servers: (1) P deposits, a snapshot at P, clean stop, the DA store copied
// aside; (2) resumed from that snapshot (nothing to replay) with the limit at L <= P: the root is
// there at once, and K back-to-back writes are all taken (K < L); stop; the DA store put back as
// it was at P, so the journal is K batches ahead of it; (3) restarted with the limit: the replay
// republishes P+1..P+K (the same roots as before), and back-to-back writes are taken meanwhile.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ok } from './checks.js';
import { adminHeaders, adminState, api, caughtUpState, deposit, startServer, Wallet, type StartedServer } from './harness.js';

const P = 48;
const LIMIT = 40;
const K = 12;
/** Back-to-back writes after the third start: with K replayed they stay under LIMIT. */
const WRITES = 20;

const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-da-restart-'));
afterAll(() => fs.rmSync(data_dir, { recursive: true, force: true }));
const env = { RINGBOOK_DATA_DIR: data_dir };
const limited = { limits: { da_backlog_batches_max: LIMIT } };

/** `n` deposits one after the other (each its own batch on an idle server); every answer 200. */
async function deposits(s: StartedServer, n: number, tag: string): Promise<string[]> {
  const statuses: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await deposit(s, Wallet.random().address, 'USDC', '1');
    statuses.push(r.status === 200 ? 'ok' : `${tag} ${i}: ${r.status} ${r.text}`);
  }
  return statuses;
}

describe('DA backlog after a restart', () => {
  it('counts only the batches whose roots the replay must compute: no 503 right after start', async () => {
    // (1) P batches published, a snapshot at the last one.
    const s1 = await startServer({ env });
    expect((await deposits(s1, P, 'first')).filter((x) => x !== 'ok')).toEqual([]);
    const st1 = await caughtUpState(s1);
    const p = Number(st1.batch_id);
    expect(p).toBeGreaterThanOrEqual(LIMIT);
    const snap = ok(await api(s1.url).post('/admin/snapshot', {}, adminHeaders(s1)));
    expect(snap.batch_id).toBe(String(p));
    expect((await s1.stop()).code).toBe(0);
    const da_dir = path.join(data_dir, 'da');
    const da_at_p = path.join(data_dir, 'da-at-p');
    fs.cpSync(da_dir, da_at_p, { recursive: true });

    // (2) Resumed from the snapshot at the last batch: nothing replayed, the root known at once.
    const s2 = await startServer({ env, config: limited });
    const first = await adminState(s2);
    expect(first.recovery).toMatchObject({ snapshot_batch_id: p, replayed_batches: 0 });
    expect(first.state_root_batch_id).toBe(String(p));
    expect(first.state_root).toBe(st1.state_root);
    expect((await deposits(s2, K, 'after resume')).filter((x) => x !== 'ok')).toEqual([]);
    const st2 = await caughtUpState(s2);
    const n = Number(st2.batch_id);
    expect(n).toBe(p + K);
    const published = ok(await api(s2.url).get(`/da/batches/${n}`));
    expect((await s2.stop()).code).toBe(0);

    // The DA store back at P: the journal is K batches ahead of it.
    fs.rmSync(da_dir, { recursive: true, force: true });
    fs.renameSync(da_at_p, da_dir);

    // (3) The replay republishes P+1..N while writes are taken.
    const s3 = await startServer({ env, config: limited });
    try {
      expect((await deposits(s3, WRITES, 'after replay')).filter((x) => x !== 'ok')).toEqual([]);
      const st3 = await caughtUpState(s3);
      expect(Number(st3.batch_id)).toBe(n + WRITES);
      expect(st3.state_root_rechecks_failed).toBe(0);
      // Batch N recomputed over the old DA store: the header the second server published.
      expect(ok(await api(s3.url).get(`/da/batches/${n}`)).header).toEqual(published.header);
      expect((await s3.stop()).code).toBe(0);
    } finally {
      await s3.stop();
    }
  }, 120_000);
});
