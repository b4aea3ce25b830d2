// config threads.background on the real server: the DA thread and the snapshot writer (and only
// they) run at the configured nice value and policy as the kernel reports them in
// /proc/<pid>/task/<tid>/stat; a priority that cannot be applied is logged and the server serves.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { THREAD_BACKGROUND_DEFAULT } from '../../src/config/sections.js';
import { api, deposit, startServer, Wallet, type StartedServer } from './harness.js';

interface TaskView { tid: number; comm: string; nice: number; policy: number }

function tasks(pid: number): TaskView[] {
  const out: TaskView[] = [];
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
    } catch {
      continue; // a thread that ended meanwhile
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.push({ tid: Number(t), comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), nice: Number(f[16]), policy: Number(f[38]) });
  }
  return out;
}

/** The named threads, waited for (the snapshot writer names itself once its worker has booted). */
async function named(pid: number, names: string[]): Promise<Map<string, TaskView>> {
  for (let i = 0; i < 100; i++) {
    const found = new Map(tasks(pid).filter((t) => names.includes(t.comm)).map((t) => [t.comm, t]));
    if (found.size === names.length) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`threads ${names.join(', ')} not all found in /proc/${pid}/task: ${tasks(pid).map((t) => t.comm).join(', ')}`);
}

async function ordersFlow(s: StartedServer): Promise<void> {
  const w = Wallet.random();
  expect((await deposit(s, w.address, 'USDC', '1000')).status).toBe(200);
  expect((await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }))).status).toBe(200);
}

describe.runIf(process.platform === 'linux')('threads.background', () => {
  it('lowers the DA thread and the snapshot writer only', async () => {
    const s = await startServer({ config: { threads: { background: { nice: 6, policy: 'batch' } } } });
    try {
      const pid = s.proc.pid as number;
      const t = await named(pid, ['rb-da', 'rb-snapshot', 'rb-matcher']);
      expect(t.get('rb-da')).toMatchObject({ nice: 6, policy: 3 });
      expect(t.get('rb-snapshot')).toMatchObject({ nice: 6, policy: 3 });
      // The latency path keeps the default: matcher and front (the process's main thread).
      expect(t.get('rb-matcher')).toMatchObject({ nice: 0, policy: 0 });
      expect(tasks(pid).find((x) => x.tid === pid)).toMatchObject({ nice: 0, policy: 0 });
      expect(tasks(pid).filter((x) => x.nice !== 0).map((x) => x.comm).sort()).toEqual(['rb-da', 'rb-snapshot']);
      const out = s.output().stdout;
      expect(out).toContain(`ringbook: DA thread set to nice 6, policy batch (thread ${t.get('rb-da')?.tid}) (config threads.background)`);
      await ordersFlow(s);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it('without the key: the DA thread at nice 10, SCHED_BATCH (THREAD_BACKGROUND_DEFAULT)', async () => {
    const s = await startServer();
    try {
      const t = await named(s.proc.pid as number, ['rb-da', 'rb-matcher']);
      expect(t.get('rb-da')).toMatchObject({ nice: THREAD_BACKGROUND_DEFAULT.nice, policy: 3 });
      expect(THREAD_BACKGROUND_DEFAULT.policy).toBe('batch');
      expect(t.get('rb-matcher')).toMatchObject({ nice: 0, policy: 0 });
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it('nice 0, policy other leaves every thread at the default', async () => {
    const s = await startServer({ config: { threads: { background: { nice: 0, policy: 'other' } } } });
    try {
      const pid = s.proc.pid as number;
      await named(pid, ['rb-da', 'rb-snapshot']);
      expect(tasks(pid).filter((x) => x.nice !== 0 || x.policy !== 0)).toEqual([]);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it('reports a priority it cannot apply and serves at the default one', async () => {
    // No chrt on the PATH (the harness starts node by its absolute path).
    const s = await startServer({ config: { threads: { background: { nice: 6, policy: 'batch' } } }, env: { PATH: '/nonexistent-ringbook-test' } });
    try {
      const pid = s.proc.pid as number;
      const t = await named(pid, ['rb-da', 'rb-snapshot']);
      expect(t.get('rb-da')).toMatchObject({ nice: 0, policy: 0 });
      const err = s.output().stderr;
      expect(err).toMatch(/ringbook: DA thread priority not set to nice 6, policy batch: chrt \(util-linux\) is not installed \(thread \d+\) \(config threads.background\); running at the default priority/);
      await ordersFlow(s);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });
});
