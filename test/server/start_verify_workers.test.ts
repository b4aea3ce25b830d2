// The server's start and its verify workers (src/gateway/server.ts awaitVerifyWorkers, src/main.ts;
// docs/operations.md "Start and stop"), on real servers whose verify worker is a test fixture
// (RINGBOOK_TEST_VERIFY_WORKER_FILE): a worker that dies before it serves (a broken build) fails
// the start with exit 1; one still loading after the 10 s wait is a warning with the time waited
// and the server serves (the front checks the tasks); a SIGTERM during the wait stops cleanly.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERIFY_WORKERS_START_WAIT_MS } from '../../src/auth/verify_limits.js';
import { api, deposit, REPO_ROOT, SERVER_MAIN, startServer, TEST_ADMIN_TOKEN, Wallet } from './harness.js';
import { ok } from './checks.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../auth/fixtures/${name}`, import.meta.url));
const BROKEN = fixture('verify_worker_broken.mjs');
const NEVER_READY = fixture('verify_worker_never_ready.mjs');
const NEVER_ENDS = fixture('verify_worker_never_ends.mjs');

interface LogLine {
  level: string;
  msg: string;
  waited_ms?: number;
  not_started?: number;
}

function logLines(text: string): LogLine[] {
  return text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);
}

describe('the start waits for the verify workers', () => {
  it('a worker that dies before it serves (a broken build) fails the start: exit 1, a clear message, never listening', async () => {
    await expect(startServer({ env: { RINGBOOK_TEST_VERIFY_WORKER_FILE: BROKEN } }))
      .rejects.toThrow(/server exited \(code 1[\s\S]*the verify pool is broken: a verify worker ended before it served \(broken verify worker build\)/);
  });

  it('a failed start whose stop never finishes (a verify worker that does not end) still exits 1 with its error, saying the stop did not finish', async () => {
    // The start fails at its listen (the port held here); its stop waits for the verify worker,
    // which never ends. On the old code the stop was awaited as it was: the process said nothing
    // until Piscina's own 30 s close timeout ended the worker (a stop that hangs in earnest: never),
    // and no line said why. The bound is the test seam's (FAILED_START_STOP_WAIT_MS is 10 s).
    const holder = net.createServer();
    const port = await new Promise<number>((resolve) => holder.listen(0, '127.0.0.1', () => resolve((holder.address() as net.AddressInfo).port)));
    try {
      await expect(startServer({ env: { RINGBOOK_PORT: String(port), RINGBOOK_TEST_VERIFY_WORKER_FILE: NEVER_ENDS, RINGBOOK_TEST_FAILED_START_STOP_WAIT_MS: '100' } }))
        .rejects.toThrow(new RegExp('server exited \\(code 1, signal null\\) before listening[\\s\\S]*' +
          'the stop after the failed start did not finish within 100 ms \\(FAILED_START_STOP_WAIT_MS\\): exiting with the start\'s error without it' +
          `[\\s\\S]*"level":"fatal"[^\\n]*"message":"cannot listen on 127\\.0\\.0\\.1:${port} \\(the port is in use[^\\n]*"msg":"ringbook: start failed"`));
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });

  it('a worker still loading after the wait: a warn line with the time waited, and the server serves signed requests', async () => {
    const s = await startServer({ env: { RINGBOOK_TEST_VERIFY_WORKER_FILE: NEVER_READY } });
    try {
      const { stdout, stderr } = s.output();
      expect(stdout).not.toContain('ringbook: secp256k1 library:');
      const line = logLines(stderr).find((l) => l.msg.startsWith('ringbook: secp256k1 library:'));
      expect(line, stderr).toBeDefined();
      expect(line!.level).toBe('warn');
      expect(line!.msg).toMatch(/^ringbook: secp256k1 library: front \w+, 1 verify worker not started after waiting \d+ ms /);
      expect(line!.waited_ms).toBeGreaterThanOrEqual(VERIFY_WORKERS_START_WAIT_MS - 50);
      expect(line!.msg).toContain(`after waiting ${line!.waited_ms} ms`);
      // The worker never serves: the front checks what waits (verify.steal_after_us).
      const w = Wallet.random();
      ok(await deposit(s, w.address, 'USDC', '1000'));
      const order = ok(await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 10_000 })));
      expect(order.status).toBe('open');
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  }, 90_000);

  it('SIGTERM during the wait: the start ends at once without listening, a clean stop, exit 0; the data dir starts again', async () => {
    const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-'));
    try {
      const config_file = path.join(data_dir, 'test-config.json');
      fs.writeFileSync(config_file, JSON.stringify({ metrics: { port: 0 } }));
      const env = {
        ...(process.env as Record<string, string>),
        RINGBOOK_PORT: '0', RINGBOOK_HOST: '127.0.0.1', RINGBOOK_DATA_DIR: data_dir, RINGBOOK_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        RINGBOOK_CONFIG: config_file, RINGBOOK_TEST_VERIFY_WORKER_FILE: NEVER_READY,
      };
      const proc = spawn(process.execPath, [SERVER_MAIN], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      proc.stdout!.on('data', (d: Buffer) => (stdout += d));
      proc.stderr!.on('data', (d: Buffer) => (stderr += d));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
      try {
        // The journal is recovered just before the start waits for the verify workers.
        for (let i = 0; i < 600 && !stdout.includes('ringbook: recovered'); i++) await new Promise((r) => setTimeout(r, 50));
        expect(stdout).toContain('ringbook: recovered');
        proc.kill('SIGTERM');
        // Only a guard against a hang (a stop that never comes), far past the 10 s wait: what
        // shows the SIGTERM ended the wait is the log below, not how soon the process exited.
        const killer = setTimeout(() => proc.kill('SIGKILL'), 60_000);
        const exit = await exited;
        clearTimeout(killer);
        expect(exit, `${stdout}\n${stderr}`).toEqual({ code: 0, signal: null });
        const lines = logLines(stdout);
        const msgs = lines.map((l) => l.msg);
        expect(msgs).toContain('ringbook: SIGTERM during the start: stopping cleanly once the threads are up, without listening');
        // The stop request, not the workers (the fixture never serves) nor the end of the 10 s
        // wait, ended the wait: had the SIGTERM not been heard until then, the wait would have
        // ended on its own, with the warning below and no such line.
        const ended = lines.find((l) => l.msg.startsWith('ringbook: stop requested while waiting for the verify workers'));
        expect(ended, stdout).toBeDefined();
        expect(ended).toMatchObject({ level: 'info', not_started: 1 });
        expect(`${stdout}\n${stderr}`).not.toContain('ringbook: secp256k1 library:');
        expect(msgs).toContain('ringbook: stopped cleanly');
        // The clean stop came after that line: the pool's close (its workers' rings closed and
        // their threads ended, VerifyWorkers.stop) was awaited before the process said so.
        expect(msgs.indexOf('ringbook: stopped cleanly')).toBeGreaterThan(msgs.indexOf(ended!.msg));
        expect(stdout).not.toContain('ringbook: listening on');
      } finally {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
        await exited;
      }
      // The stop left the journal whole: a server with the real workers starts on it.
      const again = await startServer({ env: { RINGBOOK_DATA_DIR: data_dir } });
      expect((await again.stop()).code).toBe(0);
    } finally {
      fs.rmSync(data_dir, { recursive: true, force: true });
    }
  }, 90_000);
});
