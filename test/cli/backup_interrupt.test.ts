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
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ok } from '../server/checks.js';
import { api, caughtUpState, deposit, REPO_ROOT, startServer, Wallet, type StartedServer } from '../server/harness.js';
import { tempDirsPerFile } from '../temp_dirs.js';
import { cli } from './run_cli.js';

const tmpDir = tempDirsPerFile('ringbook-backup-int-');
const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'ringbook.js');
/** Trims after each snapshot: the pages a stale reader pins are the ones the trims free. */
const CONFIG = { snapshots: { every_batches: 4, keep: 2 }, journal: { trim: true } };
const TEST_BOUND_MS = 120_000;
/** Polls of the hold file (every POLL_MS) before giving up on the backup reaching its hold. */
const HOLD_POLLS_MAX = 1_500;
const POLL_MS = 20;
/** Orders placed at most while waiting for the server to clear the dead reader's slot. */
const SWEEP_ORDERS_MAX = 2_000;

/**
 * The pids owning reader slots in an LMDB lock file, read without opening the environment
 * (lmdb-js's open clears dead readers itself, which would hide what the server does). LMDB's
 * reader table (mdb.c MDB_txninfo) ends the file: 64-byte (cache line) records, each {txnid u64,
 * pid u32, ...}, a freed slot's pid 0, after a header of at least READERS_OFFSET_MIN bytes (its
 * txn id and mutexes, whose owner words could look like pids: skipped). The records' offsets are
 * those ≡ the file's size mod 64 (lmdb 3.5's build: the header is 208 bytes, 126 slots).
 */
const READERS_OFFSET_MIN = 192;
const READER_BYTES = 64;
function readerPids(lock_file: string): Set<number> {
  const b = fs.readFileSync(lock_file);
  const pids = new Set<number>();
  for (let o = READERS_OFFSET_MIN + (b.length % READER_BYTES); o + READER_BYTES <= b.length; o += READER_BYTES) {
    const pid = b.readUInt32LE(o + 8);
    if (pid !== 0) pids.add(pid);
  }
  return pids;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

interface HeldBackup {
  pid: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** A backup of `s` into `out`, held once it holds a read transaction on the server's journal. */
async function heldBackup(s: StartedServer, out: string): Promise<HeldBackup> {
  const hold = path.join(tmpDir(), 'hold');
  const proc = spawn(process.execPath, [CLI, 'backup', '--data-dir', s.data_dir, '--out', out], {
    cwd: REPO_ROOT, env: { ...process.env, RINGBOOK_TEST_BACKUP_HOLD_FILE: hold }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    proc.once('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
  let finished = false;
  void exited.then(() => {
    finished = true;
  });
  for (let i = 0; i < HOLD_POLLS_MAX && !finished; i++) {
    if (fs.existsSync(hold) && fs.readFileSync(hold, 'utf8').startsWith('holding')) return { pid: proc.pid!, exited };
    await sleep(POLL_MS);
  }
  proc.kill('SIGKILL');
  throw new Error(`the backup never held its read transaction (finished: ${finished}): ${stderr}`);
}

/** A funded wallet placing resting bids, one per call (each acknowledged). */
async function bidder(s: StartedServer): Promise<() => Promise<void>> {
  const a = api(s.url);
  const w = Wallet.random();
  ok(await deposit(s, w.address, 'USDC', '1000000'));
  let i = 0;
  return async () => {
    ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: (1000 + (i % 50)) * 1_000_000, quantity: 1_000, client_order_id: `b${i}` })));
    i++;
  };
}

describe('ringbook backup interrupted mid-copy against a running server', () => {
  it('SIGKILL: the dead reader slot is cleared by the running server, the partial copy is refused by a start and removed by the next backup', async () => {
    const s = await startServer({ config: CONFIG });
    try {
      const bid = await bidder(s);
      for (let i = 0; i < 12; i++) await bid();
      await caughtUpState(s);
      const out = path.join(tmpDir(), 'copy');
      const lock = path.join(s.data_dir, 'journal', 'lock.mdb');
      const b = await heldBackup(s, out);
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
      const b = await heldBackup(s, out);
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
