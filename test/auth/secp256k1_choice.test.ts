// RINGBOOK_SECP256K1 (src/auth/secp256k1_choice.ts): which library recovers signers. A misspelt
// value stops the start (config/load.ts; the real server exits 1 naming the accepted values);
// createRecoverer() without options follows the switch, explicit options win over it; a library
// it cannot load throws naming the switch.
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/config/checks.js';
import { SECP256K1_ENV, secp256k1Choice } from '../../src/auth/secp256k1_choice.js';
import { createRecoverer } from '../../src/auth/recover.js';
import { addressFromPrivateKey, signPersonalMessage } from '../../src/auth/sign.js';
import { parseSignatureHex } from '../../src/auth/signature_rules.js';
import { eip191Hash } from '../../src/auth/eip191.js';
import { loadSystemSecp256k1 } from '../../src/auth/secp256k1_native.js';
import { adminState, api, deposit, startServer, Wallet, type StartedServer } from '../server/harness.js';
import { ok } from '../server/checks.js';
import { metricValue } from '../server/metrics_scrape.js';

const KEY = `0x${'5a'.repeat(32)}`;

/** How long a verify worker still loading when the server listened may take to report its library. */
const LATE_WORKER_REPORT_MS = 60_000;
/** Between two reads of GET /admin/state while one has not (see stateOnceWorkersReported). */
const LATE_WORKER_POLL_MS = 100;
/** A real server's start: up to VERIFY_WORKERS_START_WAIT_MS (10 s) for its workers, and their loading. */
const SERVER_START_MS = 30_000;
/** A real server's stop (the harness kills it after 15 s), with the orders sent before it. */
const SERVER_STOP_MS = 15_000;
/**
 * The time limit of a test per real server it starts. Above LATE_WORKER_REPORT_MS, so a worker
 * that never reports fails with stateOnceWorkersReported's message rather than vitest's 60 s
 * timeout of the whole test (which was the case when both were 60 s).
 */
const PER_SERVER_MS = SERVER_START_MS + LATE_WORKER_REPORT_MS + SERVER_STOP_MS;

/**
 * GET /admin/state once every verify worker of `s` has reported its library. The server listens
 * after waiting at most VERIFY_WORKERS_START_WAIT_MS (10 s) for its workers, so usually the first
 * answer has them all (the start line then says so, at info). On a loaded machine one may still
 * be loading then, and reports when it starts serving. A poll, bounded by LATE_WORKER_REPORT_MS,
 * because nothing else shows that moment: the worker writes its library and ready words into its
 * ring's shared memory (verify_ring.ts VR_LIBRARY, VR_READY) and sends no message, the server
 * logs no line for it and the process does not exit; only /admin/state (or the metrics) reads it.
 */
async function stateOnceWorkersReported(s: StartedServer): Promise<any> {
  const deadline = Date.now() + LATE_WORKER_REPORT_MS;
  for (;;) {
    const st = await adminState(s);
    if ((st.secp256k1.verify_workers as unknown[]).every((w) => w !== null)) return st;
    if (Date.now() >= deadline) {
      throw new Error(`a verify worker did not report its library within ${LATE_WORKER_REPORT_MS} ms: ${JSON.stringify(st.secp256k1)}`);
    }
    await new Promise((r) => setTimeout(r, LATE_WORKER_POLL_MS));
  }
}

/**
 * The start log line naming the libraries: info when every worker had started, warn (stderr)
 * with the time waited when one was still loading. Checked for its form and its total of
 * workers: how many had started by then depends on the machine's load.
 */
function expectStartLine(s: StartedServer, library: string, workers: number): void {
  const { stdout, stderr } = s.output();
  const lines = `${stdout}\n${stderr}`.split('\n').filter((l) => l.includes('ringbook: secp256k1 library:'));
  expect(lines).toHaveLength(1);
  const line = JSON.parse(lines[0]) as { level: string; msg: string; secp256k1: { front: string; verify_workers: (string | null)[] } };
  const form = new RegExp(`^ringbook: secp256k1 library: front ${library}((, \\d+ verify workers? (${library}|not started))+)( after waiting \\d+ ms .*)?$`);
  const m = form.exec(line.msg);
  expect(m, line.msg).not.toBeNull();
  const named = [...m![1].matchAll(/(\d+) verify workers?/g)].reduce((sum, g) => sum + Number(g[1]), 0);
  expect(named).toBe(workers);
  expect(line.secp256k1.verify_workers).toHaveLength(workers);
  const waiting = line.secp256k1.verify_workers.includes(null);
  expect([line.level, m![4] !== undefined]).toEqual(waiting ? ['warn', true] : ['info', false]);
}

/**
 * `s` names `library` for every checking thread where an operator looks: GET /admin/state
 * `secp256k1` (the workers' entries as they reported them), the metrics, and the start log line.
 */
async function expectReported(s: StartedServer, library: string): Promise<void> {
  const st = await stateOnceWorkersReported(s);
  const workers = st.secp256k1.verify_workers as unknown[];
  expect(workers.length).toBeGreaterThan(0);
  expect(st.secp256k1).toEqual({ front: library, verify_workers: workers.map(() => library) });
  const n = workers.length;
  expectStartLine(s, library, n);
  expect(await metricValue(s, 'ringbook_secp256k1_threads', `thread="front",library="${library}"`)).toBe(1);
  expect(await metricValue(s, 'ringbook_secp256k1_threads', `thread="verify_worker",library="${library}"`)).toBe(n);
  for (const other of ['system', 'npm', 'noble'].filter((l) => l !== library)) {
    expect(await metricValue(s, 'ringbook_secp256k1_threads', `thread="verify_worker",library="${other}"`)).toBe(0);
  }
}
const before = process.env[SECP256K1_ENV];

afterEach(() => {
  if (before === undefined) delete process.env[SECP256K1_ENV];
  else process.env[SECP256K1_ENV] = before;
});

describe('RINGBOOK_SECP256K1', () => {
  it('accepts auto, system, npm, noble (unset or empty: auto); anything else is an error naming them', () => {
    expect(secp256k1Choice({})).toEqual({ choice: 'auto' });
    expect(secp256k1Choice({ [SECP256K1_ENV]: '' })).toEqual({ choice: 'auto' });
    for (const v of ['auto', 'system', 'npm', 'noble'] as const) expect(secp256k1Choice({ [SECP256K1_ENV]: v })).toEqual({ choice: v });
    for (const bad of ['System', 'native', 'nobel', ' npm']) {
      expect(secp256k1Choice({ [SECP256K1_ENV]: bad })).toEqual({
        error: `RINGBOOK_SECP256K1 must be one of auto, system, npm, noble (or unset: auto), not ${JSON.stringify(bad)}`,
      });
    }
  });

  it('a misspelt value stops loadConfig; the accepted ones pass', () => {
    for (const v of ['', 'auto', 'system', 'npm', 'noble']) expect(() => loadConfig({ [SECP256K1_ENV]: v })).not.toThrow();
    expect(() => loadConfig({ [SECP256K1_ENV]: 'nobel' })).toThrow(ConfigError);
    expect(() => loadConfig({ [SECP256K1_ENV]: 'nobel' })).toThrow('RINGBOOK_SECP256K1 must be one of auto, system, npm, noble');
  });

  it('createRecoverer() follows it; explicit options win; each recovers the signer', () => {
    const message = 'ringbook:cancel::choice:1';
    const sig = parseSignatureHex(signPersonalMessage(KEY, message)) as Uint8Array;
    const address = addressFromPrivateKey(KEY);
    process.env[SECP256K1_ENV] = 'noble';
    const noble = createRecoverer();
    expect([noble.backend, noble.library]).toEqual(['noble', null]);
    expect(noble.recoverAddress(eip191Hash(message), sig)).toBe(address);
    expect(createRecoverer({ backend: 'native' }).backend, 'explicit options win').toBe('native');
    process.env[SECP256K1_ENV] = 'npm';
    const npm = createRecoverer();
    expect([npm.backend, npm.library]).toEqual(['native', 'npm']);
    expect(npm.recoverAddress(eip191Hash(message), sig)).toBe(address);
    process.env[SECP256K1_ENV] = 'system';
    if (loadSystemSecp256k1() !== null) {
      const system = createRecoverer();
      expect([system.backend, system.library]).toEqual(['native', 'system']);
      expect(system.recoverAddress(eip191Hash(message), sig)).toBe(address);
    } else {
      expect(() => createRecoverer()).toThrow(/^RINGBOOK_SECP256K1=system, but native secp256k1 backend \(system library\) is not available/);
    }
    process.env[SECP256K1_ENV] = 'nobel';
    expect(() => createRecoverer()).toThrow('RINGBOOK_SECP256K1 must be one of');
    delete process.env[SECP256K1_ENV];
    expect(createRecoverer().backend).toBe('native');
  });

  it('the real server refuses to start on a misspelt value, and runs on noble', async () => {
    await expect(startServer({ env: { [SECP256K1_ENV]: 'nobel' } })).rejects.toThrow(/server exited \(code 1[\s\S]*RINGBOOK_SECP256K1 must be one of auto, system, npm, noble/);
    const s = await startServer({ env: { [SECP256K1_ENV]: 'noble' } });
    try {
      await expectReported(s, 'noble');
      const w = Wallet.random();
      ok(await deposit(s, w.address, 'USDC', '1000'));
      const order = ok(await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 10_000 })));
      expect(order.status).toBe('open');
      // A forged signature is still refused on noble.
      const forged = w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 10_000 });
      const r = await api(s.url).post('/orders', { ...forged, signature: `0x${'11'.repeat(64)}1b` });
      expect(r.status).toBe(401);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  }, 2 * PER_SERVER_MS);

  it('the real server names the library it runs on: npm, and system when it is built (else auto, which falls back to npm)', async () => {
    const system_built = loadSystemSecp256k1() !== null;
    // One server at a time: two loading at once on a loaded machine slow each other's workers.
    for (const [env, library] of [['npm', 'npm'], system_built ? ['system', 'system'] : ['', 'npm']] as const) {
      const s = await startServer({ env: { [SECP256K1_ENV]: env } });
      try {
        await expectReported(s, library);
        // The reports name what checks: a signed order passes.
        const w = Wallet.random();
        ok(await deposit(s, w.address, 'USDC', '1000'));
        ok(await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 10_000 })));
      } finally {
        expect((await s.stop()).code).toBe(0);
      }
    }
  }, 2 * PER_SERVER_MS);
});
