// config threads.pipeline_cpu (src/util/thread_placement.ts; docs/operations.md "Thread placement"):
// on the real server the front (main thread) and the matcher run on the pipeline CPU and every
// other thread on the rest, orders still flow; a verify worker started in place of a dead one is
// placed at once (the pool asks for a sweep), not at the next timed one; the sweep's rules on a
// fake kernel; the config's refusals.
import fs from 'node:fs';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { pipelineCpu } from '../../src/config/sections.js';
import { ConfigError } from '../../src/config/checks.js';
import { onPipeline, placementPlan, ThreadPlacer, type NativeAffinity } from '../../src/util/thread_placement.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { Validator, type Schema } from '../openapi/validate.js';
import { adminState, api, deposit, REPO_ROOT, startServer, Wallet } from './harness.js';

/** A kernel CPU list ("0-2,5") as numbers. */
function cpuList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const [a, b] = part.split('-').map(Number);
    for (let c = a; c <= (b ?? a); c++) out.push(c);
  }
  return out;
}

function threadsOf(pid: number): { tid: number; comm: string; cpus: number[] }[] {
  const out: { tid: number; comm: string; cpus: number[] }[] = [];
  for (const name of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const status = fs.readFileSync(`/proc/${pid}/task/${name}/status`, 'utf8');
      const comm = fs.readFileSync(`/proc/${pid}/task/${name}/comm`, 'utf8').trim();
      out.push({ tid: Number(name), comm, cpus: cpuList((/^Cpus_allowed_list:\s*(\S+)/m.exec(status) as RegExpExecArray)[1]) });
    } catch {
      // ended since the listing
    }
  }
  return out;
}

const cores = os.availableParallelism();

/** A verify worker that serves N tasks and dies (the first of the process only; its replacement is the real one). */
const DIES_AFTER = fileURLToPath(new URL('../auth/fixtures/verify_worker_dies_after.mjs', import.meta.url));
/** Looks at /proc for the replacement verify thread, 50 ms apart: 15 s for it to boot on a loaded machine. */
const REPLACEMENT_POLLS = 300;
const POLL_MS = 50;
/** Orders sent one by one until one meets the dying worker. */
const ORDERS_MAX = 20;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.runIf(process.platform === 'linux')('threads.pipeline_cpu on the real server', () => {
  it.runIf(cores >= 2)(`puts the front and the matcher on one CPU and every other thread on the others (${cores} CPUs here)`, async () => {
    const cpu = cores - 1;
    const s = await startServer({ config: { threads: { pipeline_cpu: cpu } } });
    try {
      const out = s.output().stdout + s.output().stderr;
      const m = /ringbook: threads placed: the front and the matcher on CPU (\d+), the other threads on CPUs ([\d,]+) \((\d+) threads, (\d+) moved\)/.exec(out);
      expect(m, out).not.toBeNull();
      const [, logged, others_text, threads, moved] = m as RegExpExecArray;
      expect(Number(logged)).toBe(cpu);
      const others = others_text.split(',').map(Number);
      expect(others).not.toContain(cpu);
      expect(others.length).toBeGreaterThan(0);
      expect(Number(moved)).toBeGreaterThan(0);
      expect(Number(moved)).toBeLessThanOrEqual(Number(threads));
      const pid = s.proc.pid as number;
      const all = threadsOf(pid);
      const names = new Set(all.map((t) => t.comm));
      expect(names.has('rb-matcher'), [...names].join(' ')).toBe(true);
      expect(names.has('rb-da'), [...names].join(' ')).toBe(true);
      for (const t of all) {
        const on_pipeline = t.tid === pid || t.comm === 'rb-matcher';
        expect(t.cpus, `${t.tid} ${t.comm}`).toEqual(on_pipeline ? [cpu] : others);
      }
      const w = Wallet.random();
      expect((await deposit(s, w.address, 'USDC', '1000')).status).toBe(200);
      expect((await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }))).status).toBe(200);
      // What an operator reads: the plan and the sweeps (the first one's moves at least).
      const placement = (await adminState(s)).thread_placement as { pipeline_cpus: number[]; other_cpus: number[]; sweeps: number; moved: number; failed: number };
      expect(placement).toMatchObject({ pipeline_cpus: [cpu], other_cpus: others, failed: 0 });
      expect(placement.sweeps).toBeGreaterThanOrEqual(1);
      expect(placement.moved).toBeGreaterThanOrEqual(Number(moved));
      // docs/openapi.yaml describes it (the openapi suite's server runs with the setting off: null).
      const spec = parse(fs.readFileSync(path.join(REPO_ROOT, 'docs', 'openapi.yaml'), 'utf8')) as { components: { schemas: Record<string, Schema> } };
      expect(new Validator(spec).validate(await adminState(s), spec.components.schemas.AdminState)).toEqual([]);
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it.runIf(cores >= 2)('places a verify worker started in place of a dead one at once, not at the next timed sweep', async () => {
    const cpu = cores - 1;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-placement-'));
    // Inline checks and stealing off: every check is a worker's task, so one meets the dying worker.
    const s = await startServer({
      config: { threads: { pipeline_cpu: cpu }, verify: { inline_items_max: 0, steal_after_us: 0 } },
      env: {
        RINGBOOK_TEST_VERIFY_WORKER_FILE: DIES_AFTER, RINGBOOK_TEST_VERIFY_MARK_FILE: path.join(dir, 'first-worker'),
        RINGBOOK_TEST_VERIFY_DIES_AFTER_TASKS: '2', RINGBOOK_TEST_VERIFY_REPLACEMENT: 'real',
      },
    });
    try {
      const pid = s.proc.pid as number;
      let st = await adminState(s);
      for (let i = 0; i < 300 && st.verify_pool.workers_ready !== st.verify_pool.threads; i++) {
        await sleep(POLL_MS);
        st = await adminState(s);
      }
      expect(st.verify_pool).toMatchObject({ worker_restarts: 0 });
      const others = st.thread_placement.other_cpus as number[];
      expect(st.thread_placement.new_thread_sweeps).toBe(0);
      const before = new Set(threadsOf(pid).map((t) => t.tid));
      const w = Wallet.random();
      expect((await deposit(s, w.address, 'USDC', '100000')).status).toBe(200);
      let refused = false;
      for (let i = 0; i < ORDERS_MAX && !refused; i++) {
        const r = await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 10_000 }));
        refused = r.status === 503;
      }
      expect(refused).toBe(true); // the worker died holding that order's check
      // By state: the replacement (a verify thread that was not there before) is already on the
      // other CPUs the first time it is seen, named (so booted), and a sweep was run for it. Without
      // the pool's sweep it runs on its creator's CPU, the front's pipeline CPU, booting and serving
      // there until the timer's sweep, up to 5 s later (a timer sweep in between would hide that; the
      // count of new-thread sweeps still tells).
      let fresh: { tid: number; comm: string; cpus: number[] }[] = [];
      for (let i = 0; i < REPLACEMENT_POLLS && fresh.length === 0; i++) {
        fresh = threadsOf(pid).filter((t) => !before.has(t.tid) && t.comm === 'rb-verify');
        if (fresh.length === 0) await sleep(POLL_MS);
      }
      st = await adminState(s);
      const placement = st.thread_placement as { new_thread_sweeps?: number };
      expect(fresh.length, 'a replacement verify thread').toBeGreaterThanOrEqual(1);
      for (const t of fresh) expect(t.cpus, `${t.tid} ${t.comm} ${JSON.stringify(placement)}`).toEqual(others);
      expect(placement.new_thread_sweeps, JSON.stringify(placement)).toBeGreaterThanOrEqual(1);
      expect(st.verify_pool.worker_restarts).toBe(1);
      // And nothing else of the process strayed onto the pipeline CPU meanwhile.
      for (const t of threadsOf(pid)) {
        expect(t.cpus, `${t.tid} ${t.comm}`).toEqual(t.tid === pid || t.comm === 'rb-matcher' ? [cpu] : others);
      }
      expect((await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 10_000 }))).status).toBe(200);
    } finally {
      expect((await s.stop()).code).toBe(0);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('reports no placement in GET /admin/state when the setting is off', async () => {
    const s = await startServer();
    try {
      expect((await adminState(s)).thread_placement).toBeNull();
    } finally {
      expect((await s.stop()).code).toBe(0);
    }
  });

  it('refuses a CPU the machine does not have before listening', async () => {
    await expect(startServer({ config: { threads: { pipeline_cpu: cores } } })).rejects.toThrow(`threads.pipeline_cpu must be null or an integer CPU number in [0, ${cores - 1}]`);
  });
});

describe('threads.pipeline_cpu config', () => {
  it('takes null, absent or a CPU below the count, agreeing with matcher.cpu', () => {
    expect(pipelineCpu(undefined, null, 2)).toBeNull();
    expect(pipelineCpu(null, 1, 2)).toBeNull();
    expect(pipelineCpu(1, null, 2)).toBe(1);
    expect(pipelineCpu(0, 0, 4)).toBe(0);
  });

  it.each([
    [2, null, 2, 'must be null or an integer CPU number in [0, 1]'],
    [-1, null, 2, 'must be null or an integer CPU number in [0, 1]'],
    [0.5, null, 2, 'must be null or an integer CPU number in [0, 1]'],
    ['1', null, 2, 'must be null or an integer CPU number in [0, 1]'],
    [0, null, 1, 'needs at least 2 CPUs'],
    [1, 0, 2, 'disagree'],
  ])('refuses %j (matcher.cpu %j, %i CPUs)', (x, matcher_cpu, n, message) => {
    expect(() => pipelineCpu(x, matcher_cpu, n)).toThrow(ConfigError);
    expect(() => pipelineCpu(x, matcher_cpu, n)).toThrow(message);
  });
});

describe('thread placement rules', () => {
  it('plans the pipeline CPU apart from the rest of the allowed CPUs, or says why not', () => {
    expect(placementPlan(1, [0, 1, 2])).toEqual({ pipeline: [1], others: [0, 2] });
    expect(placementPlan(3, [0, 1])).toMatch(/not among the CPUs this process may use/);
    expect(placementPlan(0, [0])).toMatch(/no other CPU/);
  });

  it('the main thread and rb-matcher go on the pipeline, every other thread does not', () => {
    expect(onPipeline(100, 100, 'node')).toBe(true);
    expect(onPipeline(101, 100, 'rb-matcher')).toBe(true);
    expect(onPipeline(102, 100, 'rb-da')).toBe(false);
    expect(onPipeline(103, 100, 'V8 DefaultWorke')).toBe(false);
  });

  // The sweep over this test process's own threads, against a fake kernel: what it asks for each
  // thread, that a thread already in place is left alone, and how refusals and ended threads count.
  function fakeKernel(place: (tid: number) => number[] | 'gone', refuse: Set<number>): NativeAffinity & { calls: [number, number[]][] } {
    const calls: [number, number[]][] = [];
    return {
      calls,
      getAffinity: (tid) => {
        const now = place(tid);
        return now === 'gone' ? { errno: 3 } : { errno: 0, cpus: now };
      },
      setAffinity: (tid, cpus) => {
        calls.push([tid, cpus]);
        return refuse.has(tid) ? 1 : 0;
      },
      strerror: (e) => `errno ${e}`,
    };
  }

  it.runIf(process.platform === 'linux')('moves the threads not in place, skips those in place and ended ones, counts refusals', () => {
    const pid = process.pid;
    const tids = fs.readdirSync(`/proc/${pid}/task`).map(Number);
    const others = tids.filter((t) => t !== pid);
    expect(others.length).toBeGreaterThan(1); // vitest's worker has V8 and libuv threads
    const [gone, refused] = others;
    const kernel = fakeKernel((tid) => (tid === gone ? 'gone' : tid === pid ? [7] : [0, 7]), new Set([refused]));
    const placer = new ThreadPlacer({ pipeline: [7], others: [0] }, kernel, pid);
    const r = placer.sweep();
    const asked = new Map(kernel.calls);
    expect(asked.has(pid)).toBe(false); // the main thread was on [7] already
    expect(asked.has(gone)).toBe(false);
    for (const t of others.filter((x) => x !== gone && fs.existsSync(`/proc/${pid}/task/${x}`))) expect(asked.get(t)).toEqual([0]);
    expect(r.failed).toBe(1);
    expect(r.first_failure).toContain(`thread ${refused}`);
    expect(r.moved).toBe(kernel.calls.length - 1);
    expect(placer.sweeps).toBe(1);
    expect(placer.failed).toBe(1);
    // A second sweep asks again only for the refused thread: the others are known to be in place.
    kernel.calls.length = 0;
    const again = placer.sweep();
    expect(kernel.calls.map(([t]) => t)).toEqual(fs.existsSync(`/proc/${pid}/task/${refused}`) ? [refused] : []);
    expect(again.moved).toBe(0);
    expect(placer.sweeps).toBe(2);
  });
});
