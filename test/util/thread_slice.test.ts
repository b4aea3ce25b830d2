// A thread's EEVDF slice request (config threads.matcher_slice_us; src/util/thread_slice.ts,
// native/thread_slice.c): set in worker threads, so the test runner's own threads keep theirs; the
// kernel's view is read independently of the module, from the `se.slice` line of
// /proc/<pid>/task/<tid>/sched (ns). Linux >= 6.12 takes a slice per thread; an older kernel takes
// the call and ignores it, which the module must report as not applied (asserted below too: the
// clamped request is refused on every kernel).
import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { SliceResult } from '../../src/util/thread_slice.js';
import { applyThreadSlice, readThreadSlice, setThreadSlice, SLICE_US_MAX, SLICE_US_MIN, threadIdsNamed } from '../../src/util/thread_slice.js';
import { currentThreadId } from '../../src/util/thread_name.js';
import { threadSliceUs } from '../../src/config/sections.js';
import { ConfigError } from '../../src/config/checks.js';
import { defaultConfigPath, mergeConfig } from '../../src/config/load.js';
import { validateConfig } from '../../src/config/read.js';

const SLICE_JS = fileURLToPath(new URL('../../dist/src/util/thread_slice.js', import.meta.url));
const PRIORITY_JS = fileURLToPath(new URL('../../dist/src/util/thread_priority.js', import.meta.url));
const ADDON = fileURLToPath(new URL('../../native/build/thread_slice.node', import.meta.url));

/** Whether this kernel takes a slice per thread (EEVDF's sched_runtime on SCHED_OTHER: 6.12). */
function kernelTakesSlices(): boolean {
  const [major, minor] = os.release().split('.').map(Number);
  return major > 6 || (major === 6 && minor >= 12);
}

/** The kernel's `se.slice` of one thread of this process, in ns (null: no such line, a kernel before EEVDF). */
function kernelSliceNs(tid: number): number | null {
  const m = /^se\.slice\s*:\s*(\d+)$/m.exec(fs.readFileSync(`/proc/${process.pid}/task/${tid}/sched`, 'utf8'));
  return m === null ? null : Number(m[1]);
}

/**
 * A fresh worker that (after `setup`, a statement run with the slice and priority modules as `s`
 * and `p`) calls setThreadSlice(0, slice_us) on itself, or only reports its tid when `slice_us` is
 * null; `then` runs here while the worker is still alive, with its result and tid.
 */
function inWorker<T>(slice_us: number | null, then: (r: SliceResult | null, tid: number) => T, setup = ''): Promise<T> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    Promise.all([import(workerData.slice), import(workerData.priority)]).then(([s, p]) => {
      ${setup}
      const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
      parentPort.postMessage({ tid, r: workerData.slice_us === null ? null : s.setThreadSlice(0, workerData.slice_us) });
      parentPort.once('message', () => process.exit(0));
    });`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { slice: SLICE_JS, priority: PRIORITY_JS, slice_us } });
    w.once('message', ({ tid, r }: { tid: number; r: SliceResult | null }) => {
      let out: T;
      try {
        out = then(r, tid);
      } catch (e) {
        w.terminate().then(() => reject(e), reject);
        return;
      }
      w.postMessage('bye');
      w.once('exit', () => resolve(out));
    });
    w.once('error', reject);
  });
}

describe.runIf(process.platform === 'linux')('thread slice (Linux)', () => {
  it('the module and dist are built', () => {
    expect(fs.existsSync(ADDON), `${ADDON}: run make native`).toBe(true);
    expect(fs.existsSync(SLICE_JS), `${SLICE_JS}: run npx tsc -p tsconfig.json`).toBe(true);
  });

  it('a thread asks for its own slice (tid 0); the kernel reports it for that thread only', async () => {
    const here = currentThreadId() as number;
    const here_before = kernelSliceNs(here);
    const seen = await inWorker(250, (r, tid) => ({ r, tid, slice_ns: kernelSliceNs(tid) }));
    const r = seen.r as SliceResult;
    expect(r.tid).toBe(seen.tid);
    expect(seen.tid).not.toBe(here);
    if (kernelTakesSlices()) {
      expect(r.applied, r.message).toBe(true);
      expect(r.now).toEqual({ policy: 0, nice: 0, slice_us: 250 });
      expect(r.message).toMatch(new RegExp(`^set to 250 µs \\(was \\d+(\\.\\d+)? µs; thread ${seen.tid}\\)$`));
      expect(seen.slice_ns).toBe(250_000);
    } else {
      // The call is taken and sched_runtime ignored: reported, not believed.
      expect(r.applied).toBe(false);
      expect(r.message).toMatch(/^not set to 250 µs: the kernel reports a slice of \d+(\.\d+)? µs afterwards/);
    }
    expect(kernelSliceNs(here)).toBe(here_before);
  });

  it('sets another thread of this process by its id (how the front sets the matcher\'s), keeping its nice value and policy', async () => {
    const seen = await inWorker(null, (_r, tid) => ({ r: setThreadSlice(tid, 300), slice_ns: kernelSliceNs(tid), tid }),
      'p.setCurrentThreadPriority({ nice: 4, policy: "batch" });');
    expect(seen.r.tid).toBe(seen.tid);
    if (kernelTakesSlices()) {
      expect(seen.r.applied, seen.r.message).toBe(true);
      expect(seen.r.now).toEqual({ policy: 3, nice: 4, slice_us: 300 });
      expect(seen.slice_ns).toBe(300_000);
    } else {
      expect(seen.r.applied).toBe(false);
    }
  });

  it('refuses (not applied, logged text) a slice the kernel clamps: read back, not believed', async () => {
    const seen = await inWorker(SLICE_US_MIN / 2, (r, tid) => ({ r, slice_ns: kernelSliceNs(tid) }));
    const r = seen.r as SliceResult;
    expect(r.applied).toBe(false);
    expect(r.message).toMatch(new RegExp(`^not set to 50 µs: the kernel reports a slice of (\\d+(\\.\\d+)?) µs afterwards \\(Linux >= 6.12 takes a slice of 100..100000 µs\\) \\(thread \\d+\\)$`));
    // On 6.12+ clamped to the minimum; before, the default (unchanged).
    if (kernelTakesSlices()) expect(r.now?.slice_us).toBe(SLICE_US_MIN);
    expect(r.now?.slice_us).not.toBe(SLICE_US_MIN / 2);
  });

  it('refuses a thread under SCHED_IDLE (no slice in that class) and leaves it as it was', async () => {
    const seen = await inWorker(200, (r, tid) => ({ r, tid }), 'p.setCurrentThreadPriority({ nice: 19, policy: "idle" });');
    const r = seen.r as SliceResult;
    expect(r.applied).toBe(false);
    expect(r.message).toBe(`not set to 200 µs: policy 5 takes no slice (only SCHED_OTHER and SCHED_BATCH do) (thread ${seen.tid})`);
    expect(r.now).toMatchObject({ policy: 5, nice: 19 });
  });

  it('reports a thread that is not there (ESRCH from the kernel), never throws', () => {
    const r = setThreadSlice(2 ** 30, 100);
    expect(r).toEqual({ applied: false, tid: 2 ** 30, now: null, message: `not set to 100 µs: sched_getattr: No such process (thread ${2 ** 30})` });
    expect(readThreadSlice(2 ** 30)).toBe('sched_getattr: No such process');
    expect(setThreadSlice(0, -1)).toMatchObject({ applied: false, message: 'not set to -1 µs: setSlice(tid >= 0, runtime_ns in [0, 1e12])' });
  });

  it('finds threads by name; applies nothing for null; reports a name no thread has', async () => {
    expect(applyThreadSlice('matcher', 'rb-none-such', null, 'threads.matcher_slice_us')).toBeNull();
    const r = applyThreadSlice('matcher', 'rb-none-such', 100, 'threads.matcher_slice_us');
    expect(r).toEqual({ applied: false, tid: null, now: null, message: 'not set to 100 µs: no threads named rb-none-such in this process' });
    const found = await inWorker(null, (_r, tid) => {
      fs.writeFileSync(`/proc/${process.pid}/task/${tid}/comm`, 'rb-slice-test');
      return { tid, ids: threadIdsNamed('rb-slice-test') };
    });
    expect(found.ids).toEqual([found.tid]);
  });
});

describe('config threads.matcher_slice_us', () => {
  const defaults = JSON.parse(fs.readFileSync(defaultConfigPath(), 'utf8')) as Record<string, unknown>;

  it('absent or null: off (the kernel\'s default slice)', () => {
    expect(threadSliceUs(undefined, 'k')).toBeNull();
    expect(threadSliceUs(null, 'k')).toBeNull();
    expect(validateConfig(defaults).threads.matcher_slice_us).toBeNull();
  });

  it('takes an integer within the kernel\'s range', () => {
    expect(threadSliceUs(SLICE_US_MIN, 'k')).toBe(100);
    expect(threadSliceUs(SLICE_US_MAX, 'k')).toBe(100_000);
    expect(validateConfig(mergeConfig(defaults, { threads: { matcher_slice_us: 250 } })).threads).toEqual({ background: { nice: 10, policy: 'batch' }, matcher_slice_us: 250, pipeline_cpu: null });
  });

  it('refuses what the kernel would clamp, fractions and other types', () => {
    const message = 'threads.matcher_slice_us must be null (the kernel\'s default slice) or an integer in [100, 100000] (µs)';
    for (const bad of [99, 100_001, 0, -100, 150.5, '200', true, { us: 200 }]) {
      expect(() => threadSliceUs(bad, 'threads.matcher_slice_us'), JSON.stringify(bad)).toThrow(new ConfigError(`config: ${message}`));
    }
    expect(() => validateConfig(mergeConfig(defaults, { threads: { matcher_slice_us: 50 } }))).toThrow(new ConfigError(`config: ${message}`));
  });
});
