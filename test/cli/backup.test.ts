// `ringbook backup` (src/cli/backup.ts, docs/operations.md "Backup"): a copy of a running server's
// data dir, taken while orders keep coming, starts as a second server that recovers at least the
// batch the backup started at, with every order acknowledged before the backup and a history that
// `ringbook verify` (against the second server) and `ringbook replay` (on the copy) agree with; a
// stopped server's copy comes back at the same batch and root; bad calls are refused and leave
// nothing behind. On the old code there is no backup command (exit 64, "unknown command").
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BACKUP_ATTEMPTS_MAX } from '../../src/cli/backup.js';
import { INCOMPLETE_BACKUP_MARKER_BYTES_MAX, lockDataDir, refuseIncompleteBackup } from '../../src/journal/data_dir_lock.js';
import { ok } from '../server/checks.js';
import { api, caughtUpState, deposit, runScript, runVerifier, startServer, Wallet, type StartedServer } from '../server/harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { cli } from './run_cli.js';

const tmpDir = tempDirsPerFile('ringbook-backup-');
/** Snapshots every few batches, so the copy holds some and a restart resumes from one. */
const CONFIG = { snapshots: { every_batches: 4, keep: 2 } };
/** Orders placed before the backup starts (each acknowledged, so each must be in the copy). */
const ORDERS_BEFORE = 12;
/** Server runs of the trimmed-journal test at most, until its journal is trimmed after a snapshot. */
const TRIM_ROUNDS_MAX = 4;
/** Each such run waits at most TRIM_WAIT_POLLS x TRIM_WAIT_POLL_MS for the trim before it stops. */
const TRIM_WAIT_POLLS = 50;
const TRIM_WAIT_POLL_MS = 100;
/** A bound on the orders placed while the backup runs (it stops at the backup's end). */
const ORDERS_DURING_MAX = 400;
const TEST_BOUND_MS = 240_000;

interface BackupJson {
  ok: boolean;
  out: string;
  server_running: boolean;
  attempts: number;
  journal: { first_batch_id: number; last_batch_id: number; bytes: number };
  da: { last_batch_id: number };
  snapshots: { files: number; resume_batch_id: number | null };
  files: string[];
  skipped: string[];
}

/** Whether the server logged a trim of its journal (info lines: stdout; stderr checked too). */
function trimLogged(s: StartedServer): boolean {
  const out = s.output();
  return (out.stdout + out.stderr).includes('journal trimmed through batch');
}

/** A resting bid far below any ask: stays open, so the read model never forgets it. */
function bid(w: Wallet, i: number): Record<string, unknown> {
  return w.order({ market_id: 'ETH-USDC', side: 'bid', price: (1000 + (i % 50)) * 1_000_000, quantity: 1_000, client_order_id: `b${i}` });
}

/** A funded wallet with ORDERS_BEFORE resting bids, acknowledged before a backup starts. */
async function biddingWallet(s: StartedServer): Promise<{ a: ReturnType<typeof api>; w: Wallet; before_ids: number[] }> {
  const a = api(s.url);
  const w = Wallet.random();
  ok(await deposit(s, w.address, 'USDC', '1000000'));
  const before_ids: number[] = [];
  for (let i = 0; i < ORDERS_BEFORE; i++) before_ids.push(ok(await a.post('/orders', bid(w, i))).order_id);
  return { a, w, before_ids };
}

function openOrderIds(list: { order_id: number }[]): number[] {
  return list.map((o) => o.order_id).sort((a, b) => a - b);
}

describe('ringbook backup', () => {
  it('copies a running server while it takes orders; a server on the copy recovers every acknowledged order, verify and replay agree', async () => {
    const s = await startServer({ config: CONFIG });
    const out = path.join(tmpDir(), 'copy');
    let s2: Awaited<ReturnType<typeof startServer>> | null = null;
    try {
      const { a, w, before_ids } = await biddingWallet(s);
      const start = await caughtUpState(s);
      const start_batch = Number(start.batch_id);

      const run = cli(['backup', '--data-dir', s.data_dir, '--out', out, '--json']);
      let done = false;
      void run.finally(() => {
        done = true;
      });
      // Orders keep coming while the copy is made (at least one, even if the backup is quick).
      let during = 0;
      for (let i = ORDERS_BEFORE; i < ORDERS_BEFORE + ORDERS_DURING_MAX && (!done || during === 0); i++) {
        ok(await a.post('/orders', bid(w, i)));
        during++;
      }
      const r = await run;
      expect(r.code, r.stderr).toBe(0);
      const b = JSON.parse(r.stdout) as BackupJson;
      expect(b).toMatchObject({ ok: true, out, server_running: true });
      expect(b.journal.first_batch_id).toBe(1);
      expect(b.journal.last_batch_id).toBeGreaterThanOrEqual(start_batch);
      expect(b.da.last_batch_id).toBeLessThanOrEqual(b.journal.last_batch_id);
      expect(b.snapshots.files).toBeGreaterThanOrEqual(1);
      expect(b.skipped).toContain('server.pid');
      expect(fs.existsSync(path.join(out, 'server.pid'))).toBe(false);
      expect(fs.readdirSync(path.dirname(out))).toEqual(['copy']); // no partial copy left beside it
      expect(fs.statSync(path.join(out, 'operator_key')).mode & 0o777).toBe(0o600);

      // A second server on the copy (its own port), the first one still running.
      s2 = await startServer({ config: CONFIG, env: { RINGBOOK_DATA_DIR: out } });
      const st2 = await caughtUpState(s2);
      expect(Number(st2.batch_id)).toBeGreaterThanOrEqual(start_batch);
      expect(Number(st2.batch_id)).toBe(b.journal.last_batch_id);
      const orders = ok(await api(s2.url).get(`/account/${w.address}/orders`)) as { order_id: number }[];
      const ids = openOrderIds(orders);
      for (const id of before_ids) expect(ids, `order ${id} acknowledged before the backup`).toContain(id);

      const verify = await runVerifier(s2.url, path.join(s2.data_dir, 'test-config.json'), ['--out', tmpDir()]);
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      await s2.stop();
      s2 = null;
      // The copy's journal re-executed offline ends at the root the second server published.
      const replay = await cli(['replay', '--data-dir', out, '--json']);
      expect(replay.code, replay.stderr).toBe(0);
      const rj = JSON.parse(replay.stdout) as { last_batch_id: number; state_root: string; mismatches: unknown[] };
      expect(rj.last_batch_id).toBe(Number(st2.batch_id));
      expect(rj.state_root).toBe(st2.state_root);
      expect(rj.mismatches).toEqual([]);
    } finally {
      await s2?.stop();
      await s.stop();
    }
  }, TEST_BOUND_MS);

  it('copies a running server that trims its journal after its snapshots: the copy resumes from a snapshot it holds', async () => {
    // journal.trim: every snapshot (every 4 batches, 2 kept) trims the journal, so trims land
    // while the parts are copied; the copy is checked and retried (BACKUP_ATTEMPTS_MAX) for that.
    const config = { snapshots: { every_batches: 4, keep: 2 }, journal: { trim: true } };
    const s = await startServer({ config });
    const out = path.join(tmpDir(), 'copy');
    try {
      const { a, w, before_ids } = await biddingWallet(s);
      const start_batch = Number((await caughtUpState(s)).batch_id);
      const run = cli(['backup', '--data-dir', s.data_dir, '--out', out, '--json']);
      let done = false;
      void run.finally(() => {
        done = true;
      });
      for (let i = ORDERS_BEFORE; i < ORDERS_BEFORE + ORDERS_DURING_MAX && !done; i++) ok(await a.post('/orders', bid(w, i)));
      const r = await run;
      expect(r.code, r.stderr).toBe(0);
      const b = JSON.parse(r.stdout) as BackupJson;
      expect(b.journal.first_batch_id).toBeGreaterThan(1); // trimmed: the copy needs its snapshot
      expect(b.snapshots.resume_batch_id).not.toBeNull();
      expect(b.journal.first_batch_id).toBeLessThanOrEqual(b.da.last_batch_id + 1);
      await s.stop();
      const s2 = await startServer({ config, env: { RINGBOOK_DATA_DIR: out } });
      try {
        const st2 = await caughtUpState(s2);
        expect(Number(st2.batch_id)).toBeGreaterThanOrEqual(start_batch);
        expect(st2.recovery).toMatchObject({ snapshot_batch_id: b.snapshots.resume_batch_id });
        const ids = openOrderIds(ok(await api(s2.url).get(`/account/${w.address}/orders`)) as { order_id: number }[]);
        for (const id of before_ids) expect(ids, `order ${id} acknowledged before the backup`).toContain(id);
        // The DA store's copy holds the trimmed batches: the whole chain re-executes from genesis.
        const verify = await runVerifier(s2.url, path.join(s2.data_dir, 'test-config.json'), ['--out', tmpDir()]);
        expect(verify.code, verify.stdout + verify.stderr).toBe(0);
      } finally {
        await s2.stop();
      }
    } finally {
      await s.stop();
    }
  }, TEST_BOUND_MS);

  it('copies a stopped server\'s data dir: a server on the copy comes back at the same batch and root', async () => {
    const data_dir = tmpDir();
    const out = path.join(tmpDir(), 'nested', 'copy');
    const s = await startServer({ config: CONFIG, env: { RINGBOOK_DATA_DIR: data_dir } });
    let st;
    const w = Wallet.random();
    try {
      ok(await deposit(s, w.address, 'USDC', '1000'));
      for (let i = 0; i < 6; i++) ok(await api(s.url).post('/orders', bid(w, i)));
      st = await caughtUpState(s);
    } finally {
      await s.stop();
    }
    const r = await cli(['backup', '--data-dir', data_dir, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`backup of ${data_dir} (no server running) in ${out}`);
    expect(r.stdout).toContain(`journal/    batches 1..${st.batch_id}`);
    const s2 = await startServer({ config: CONFIG, env: { RINGBOOK_DATA_DIR: out } });
    try {
      const st2 = await caughtUpState(s2);
      expect(st2.batch_id).toBe(st.batch_id);
      expect(st2.state_root).toBe(st.state_root);
      expect(openOrderIds(ok(await api(s2.url).get(`/account/${w.address}/orders`)) as { order_id: number }[])).toHaveLength(6);
    } finally {
      await s2.stop();
    }
  }, TEST_BOUND_MS);

  it('refuses to leave a copy a start would refuse: a trimmed journal whose snapshots are gone', async () => {
    const data_dir = tmpDir();
    const out = path.join(tmpDir(), 'copy');
    const config = { snapshots: { every_batches: 2, keep: 1 }, journal: { trim: true } };
    // The trim follows a completed snapshot, which follows the DA store's publication: on a loaded
    // machine the server may stop before either. Rounds of orders until the journal is trimmed
    // (bounded; the test's premise is asserted, not assumed).
    let trimmed_through = 0;
    for (let round = 0; round < TRIM_ROUNDS_MAX && trimmed_through === 0; round++) {
      const s = await startServer({ config, env: { RINGBOOK_DATA_DIR: data_dir } });
      try {
        const w = Wallet.random();
        ok(await deposit(s, w.address, 'USDC', '1000'));
        for (let i = 0; i < 8; i++) ok(await api(s.url).post('/orders', bid(w, i)));
        await caughtUpState(s);
        // The trim comes after the snapshot's write (which waits for the DA store's flush): give
        // it a bounded while before the stop, so that a loaded machine needs fewer rounds.
        for (let k = 0; k < TRIM_WAIT_POLLS && !trimLogged(s); k++) {
          await new Promise((r) => setTimeout(r, TRIM_WAIT_POLL_MS));
        }
      } finally {
        await s.stop();
      }
      const inspect = await cli(['journal', 'inspect', '--data-dir', data_dir, '--json']);
      expect(inspect.code).toBe(0);
      trimmed_through = (JSON.parse(inspect.stdout) as { trimmed_through_batch_id: number }).trimmed_through_batch_id;
    }
    expect(trimmed_through).toBeGreaterThan(0);
    fs.rmSync(path.join(data_dir, 'snapshots'), { recursive: true });
    const r = await cli(['backup', '--data-dir', data_dir, '--out', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the copy is not restorable after 1 attempt(s): no snapshot in the copy continues its journal');
    expect(fs.readdirSync(path.dirname(out))).toEqual([]);
    // Against a running server (the data dir's lock held: here by this process) a failed check is
    // taken for a race and the copy made again, a bounded number of times, each removed.
    const release = lockDataDir(data_dir);
    const live = await cli(['backup', '--data-dir', data_dir, '--out', out]);
    release();
    expect(live.code).toBe(1);
    expect(live.stderr).toContain(`the copy is not restorable after ${BACKUP_ATTEMPTS_MAX} attempt(s): no snapshot in the copy continues its journal`);
    expect(fs.readdirSync(path.dirname(out))).toEqual([]);
  }, TEST_BOUND_MS);

  it('refuses a cluster role\'s data dir (a DA role\'s da/, a matcher\'s matcher/, no journal/), naming it, leaving nothing behind', async () => {
    // On the old code: "no journal in <dir>", which sent the operator looking for a journal that a
    // cluster role never has.
    const root = tmpDir();
    const data_dir = path.join(root, 'data');
    fs.mkdirSync(path.join(data_dir, 'da'), { recursive: true });
    fs.writeFileSync(path.join(data_dir, 'da', 'server.pid'), '');
    fs.mkdirSync(path.join(data_dir, 'matcher'));
    const r = await cli(['backup', '--data-dir', data_dir, '--out', path.join(root, 'copy')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${data_dir} is a cluster role's data dir (matcher/ (a cluster matcher's snapshots), da/ (a cluster DA role's store); no journal/)`);
    expect(r.stderr).toContain('RB_EVENTS');
    expect(fs.readdirSync(root)).toEqual(['data']);
  });

  it('a start refused on an incomplete backup or on a data dir in use writes no admin_token or operator_key there', async () => {
    // On the old code both refusals left a new admin_token and operator_key behind (written before
    // the data dir lock): in use, a token that is not the running server's when it took its own
    // from RINGBOOK_ADMIN_TOKEN.
    const no_secrets_from_env = { RINGBOOK_ADMIN_TOKEN: '', RINGBOOK_OPERATOR_KEY: '', RINGBOOK_PORT: '0' };
    const partial = tmpDir();
    fs.writeFileSync(path.join(partial, 'BACKUP_INCOMPLETE'), 'by pid 1\n');
    const incomplete = await runScript('src/main.js', [], { ...no_secrets_from_env, RINGBOOK_DATA_DIR: partial });
    expect(incomplete.code).toBe(1);
    expect(incomplete.stderr).toContain(`${partial} is an incomplete backup (BACKUP_INCOMPLETE: by pid 1)`);
    expect(fs.readdirSync(partial)).toEqual(['BACKUP_INCOMPLETE']);

    // A marker bigger than any the backup writes, or one that cannot be read (here a directory by
    // that name), refuses the start all the same, saying so; the big one is not read (on the old
    // code it was read whole into the message, and a directory was no marker: the start went on).
    const big = tmpDir();
    fs.writeFileSync(path.join(big, 'BACKUP_INCOMPLETE'), 'x'.repeat(INCOMPLETE_BACKUP_MARKER_BYTES_MAX + 1));
    expect(() => refuseIncompleteBackup(big)).toThrow(`${big} is an incomplete backup (BACKUP_INCOMPLETE ` +
      `${INCOMPLETE_BACKUP_MARKER_BYTES_MAX + 1} bytes, more than a marker's ${INCOMPLETE_BACKUP_MARKER_BYTES_MAX} (INCOMPLETE_BACKUP_MARKER_BYTES_MAX): not read)`);
    const odd = tmpDir();
    fs.mkdirSync(path.join(odd, 'BACKUP_INCOMPLETE'));
    expect(() => refuseIncompleteBackup(odd)).toThrow(`${odd} is an incomplete backup (BACKUP_INCOMPLETE not a regular file)`);

    const held = tmpDir();
    const release = lockDataDir(held);
    try {
      const in_use = await runScript('src/main.js', [], { ...no_secrets_from_env, RINGBOOK_DATA_DIR: held });
      expect(in_use.code).toBe(1);
      expect(in_use.stderr).toContain(`another server (pid ${process.pid}) runs on the data dir ${held}`);
      expect(fs.readdirSync(held)).toEqual(['server.pid']);
    } finally {
      release();
    }
  });

  it('refuses a non-empty --out, a data dir without a journal and bad options, leaving nothing behind', async () => {
    const root = tmpDir();
    const data_dir = path.join(root, 'data');
    fs.mkdirSync(path.join(data_dir, 'journal'), { recursive: true });
    const full = path.join(root, 'full');
    fs.mkdirSync(full);
    fs.writeFileSync(path.join(full, 'keep.txt'), 'x');

    const not_empty = await cli(['backup', '--data-dir', data_dir, '--out', full]);
    expect(not_empty.code).toBe(1);
    expect(not_empty.stderr).toContain(`--out ${full} exists and is not empty`);
    expect(fs.readdirSync(full)).toEqual(['keep.txt']);

    const missing = path.join(root, 'no-data');
    const no_journal = await cli(['backup', '--data-dir', missing, '--out', path.join(root, 'out1')]);
    expect(no_journal.code).toBe(1);
    expect(no_journal.stderr).toContain(`no journal in ${missing}`);

    const inside = await cli(['backup', '--data-dir', data_dir, '--out', path.join(data_dir, 'backup')]);
    expect(inside.code).toBe(1);
    expect(inside.stderr).toContain('is inside the data dir');

    for (const bad of [['backup', '--data-dir', data_dir], ['backup', '--data-dir', data_dir, '--out'],
      ['backup', '--data-dir', data_dir, '--out', path.join(root, 'out2'), '--frobnicate', 'x'], ['backup', 'extra', '--out', path.join(root, 'out3')]]) {
      const r = await cli(bad);
      expect(r.code, bad.join(' ')).toBe(64);
      expect(r.stderr).toContain('usage: ringbook backup');
    }
    const help = await cli(['backup', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.startsWith('usage: ringbook backup')).toBe(true);
    // Nothing was created: no copy, no partial directory, data dir untouched.
    expect(fs.readdirSync(root).sort()).toEqual(['data', 'full']);
    expect(fs.readdirSync(data_dir)).toEqual(['journal']);
  });
});
