// config threads.matcher_slice_us on the real server: the matcher thread (and only it) runs with
// the asked-for EEVDF slice, as the kernel reports it in /proc/<pid>/task/<tid>/sched (`se.slice`,
// ns), and the outcome is logged; without the key nothing is called and every thread keeps the
// kernel's default slice. On a kernel before 6.12 (no per-thread slice) the refusal is what is
// logged and asserted.
import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { api, deposit, startServer, Wallet, type StartedServer } from './harness.js';

interface TaskSlice { tid: number; comm: string; slice_ns: number }

function slices(pid: number): TaskSlice[] {
  const out: TaskSlice[] = [];
  for (const t of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const sched = fs.readFileSync(`/proc/${pid}/task/${t}/sched`, 'utf8');
      const m = /^se\.slice\s*:\s*(\d+)$/m.exec(sched);
      out.push({ tid: Number(t), comm: fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim(), slice_ns: m === null ? -1 : Number(m[1]) });
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

const kernelTakesSlices = (): boolean => {
  const [major, minor] = os.release().split('.').map(Number);
  return major > 6 || (major === 6 && minor >= 12);
};

async function ordersFlow(s: StartedServer): Promise<void> {
  const w = Wallet.random();
  expect((await deposit(s, w.address, 'USDC', '1000')).status).toBe(200);
  expect((await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }))).status).toBe(200);
}

describe.runIf(process.platform === 'linux')('threads.matcher_slice_us', () => {
  it('gives the matcher thread that slice, and no other thread', async () => {
    const s = await startServer({ config: { threads: { matcher_slice_us: 200 } } });
    try {
      const pid = s.proc.pid as number;
      const all = slices(pid);
      const matcher = all.filter((t) => t.comm === 'rb-matcher');
      expect(matcher).toHaveLength(1);
      // The journal's storer thread is started by the matcher (and named like it until its boot
      // renames it): by the time the server is ready it has its own name.
      expect(all.filter((t) => t.comm === 'rb-storer')).toHaveLength(1);
      const front = all.find((t) => t.tid === pid) as TaskSlice;
      const out = s.output();
      if (kernelTakesSlices()) {
        expect(matcher[0].slice_ns).toBe(200_000);
        expect(out.stdout).toMatch(new RegExp(`ringbook: matcher thread slice set to 200 µs \\(was ${front.slice_ns / 1000} µs; thread ${matcher[0].tid}\\) \\(config threads.matcher_slice_us\\)`));
        // Every other thread keeps the default slice (the front's: the kernel's base slice).
        expect(all.filter((t) => t.slice_ns !== front.slice_ns).map((t) => t.comm)).toEqual(['rb-matcher']);
      } else {
        expect(out.stderr).toMatch(/ringbook: matcher thread slice not set to 200 µs: .* \(config threads.matcher_slice_us\); running with the kernel's default slice/);
      }
      await ordersFlow(s);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it('without the key: nothing is set, nothing logged, every thread at the default slice', async () => {
    const s = await startServer();
    try {
      const pid = s.proc.pid as number;
      const all = slices(pid);
      expect(all.some((t) => t.comm === 'rb-matcher')).toBe(true);
      expect(new Set(all.map((t) => t.slice_ns)).size).toBe(1);
      expect(s.output().stdout + s.output().stderr).not.toContain('matcher thread slice');
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });
});
