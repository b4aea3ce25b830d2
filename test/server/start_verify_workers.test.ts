// The server's start and its verify workers (src/gateway/server.ts awaitVerifyWorkers, src/main.ts;
// docs/operations.md "Start and stop"), on real servers whose verify worker is a test fixture
// (RINGBOOK_TEST_VERIFY_WORKER_FILE): a worker that dies before it serves (a broken build) fails
// the start with exit 1; one still loading after the 10 s wait is a warning with the time waited
// and the server serves (the front checks the tasks).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { VERIFY_WORKERS_START_WAIT_MS } from '../../src/auth/verify_limits.js';
import { api, deposit, startServer, Wallet } from './harness.js';
import { ok } from './checks.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../auth/fixtures/${name}`, import.meta.url));
const BROKEN = fixture('verify_worker_broken.mjs');
const NEVER_READY = fixture('verify_worker_never_ready.mjs');

interface LogLine {
  level: string;
  msg: string;
  waited_ms?: number;
}

function logLines(text: string): LogLine[] {
  return text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);
}

describe('the start waits for the verify workers', () => {
  it('a worker that dies before it serves (a broken build) fails the start: exit 1, a clear message, never listening', async () => {
    await expect(startServer({ env: { RINGBOOK_TEST_VERIFY_WORKER_FILE: BROKEN } }))
      .rejects.toThrow(/server exited \(code 1[\s\S]*the verify pool is broken: a verify worker ended before it served \(broken verify worker build\)/);
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
});
