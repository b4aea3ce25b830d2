// Shared by the backup tests that hold a backup mid-copy against a running server
// (backup_interrupt.test.ts, backup_keep1.test.ts): the hold seam, a bidder, LMDB's reader table.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ok } from '../server/checks.js';
import { api, deposit, REPO_ROOT, Wallet, type StartedServer } from '../server/harness.js';

const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'ringbook.js');
/** Polls of the hold file (every POLL_MS) before giving up on the backup reaching its hold. */
const HOLD_POLLS_MAX = 1_500;
const POLL_MS = 20;

/** LMDB's reader table, read from the lock file (its layout checked): test/lmdb_readers.ts. */
export { readerPids } from '../lmdb_readers.js';

export async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

export interface HeldBackup {
  pid: number;
  /** Remove it to let the backup go on. */
  hold_file: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }>;
}

/** A backup of `s` into `out`, held once it holds a read transaction on the server's journal. */
export async function heldBackup(s: StartedServer, out: string, hold: string, extra: string[] = []): Promise<HeldBackup> {
  const proc = spawn(process.execPath, [CLI, 'backup', '--data-dir', s.data_dir, '--out', out, ...extra], {
    cwd: REPO_ROOT, env: { ...process.env, RINGBOOK_TEST_BACKUP_HOLD_FILE: hold }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }>((resolve) => {
    proc.once('close', (code, signal) => resolve({ code, signal, stderr, stdout }));
  });
  let finished = false;
  void exited.then(() => {
    finished = true;
  });
  for (let i = 0; i < HOLD_POLLS_MAX && !finished; i++) {
    if (fs.existsSync(hold) && fs.readFileSync(hold, 'utf8').startsWith('holding')) return { pid: proc.pid!, hold_file: hold, exited };
    await sleep(POLL_MS);
  }
  proc.kill('SIGKILL');
  throw new Error(`the backup never held its read transaction (finished: ${finished}): ${stderr}`);
}

/** A funded wallet placing resting bids, one per call (each acknowledged). */
export async function bidder(s: StartedServer): Promise<() => Promise<void>> {
  const a = api(s.url);
  const w = Wallet.random();
  ok(await deposit(s, w.address, 'USDC', '1000000'));
  let i = 0;
  return async () => {
    ok(await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: (1000 + (i % 50)) * 1_000_000, quantity: 1_000, client_order_id: `b${i}` })));
    i++;
  };
}

