// config matcher.cpu on the real server: the matcher thread (and only it) is pinned, the log says
// so, and orders still flow; a CPU the machine lacks is refused at start.
import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { api, deposit, startServer, Wallet } from './harness.js';

function allowedOf(pid: number, tid: number): string | null {
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
  return m ? m[1] : null;
}

describe.runIf(process.platform === 'linux')('matcher.cpu', () => {
  it('pins the matcher thread to the configured CPU and leaves the front thread alone', async () => {
    const cpu = os.availableParallelism() - 1;
    const s = await startServer({ config: { matcher: { cpu } } });
    try {
      const m = /ringbook: matcher thread pinned to CPU (\d+) \(thread (\d+)\)/.exec(s.output().stdout);
      expect(m, s.output().stdout + s.output().stderr).not.toBeNull();
      const [, logged_cpu, tid] = m as RegExpExecArray;
      expect(Number(logged_cpu)).toBe(cpu);
      const pid = s.proc.pid as number;
      expect(Number(tid)).not.toBe(pid);
      expect(allowedOf(pid, Number(tid))).toBe(String(cpu));
      if (os.availableParallelism() > 1) expect(allowedOf(pid, pid)).not.toBe(String(cpu));
      const w = Wallet.random();
      expect((await deposit(s, w.address, 'USDC', '1000')).status).toBe(200);
      expect((await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }))).status).toBe(200);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it('refuses a CPU number the machine does not have before listening', async () => {
    const cores = os.availableParallelism();
    await expect(startServer({ config: { matcher: { cpu: cores } } })).rejects.toThrow(`matcher.cpu must be null or an integer CPU number in [0, ${cores - 1}]`);
  });
});
