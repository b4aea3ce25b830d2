// A thread's scheduling priority (config threads.background): set in a worker thread, so the
// test runner's own threads keep theirs; the kernel's view (/proc/<pid>/task/<tid>/stat, parsed
// here independently of src/util/thread_priority.ts) is the judge.
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PriorityResult, ThreadPriority } from '../../src/util/thread_priority.js';
import { setThreadPriority } from '../../src/util/thread_priority.js';
import { currentThreadId } from '../../src/util/thread_name.js';
import { threadPriority, THREAD_BACKGROUND_DEFAULT } from '../../src/config/sections.js';
import { ConfigError } from '../../src/config/checks.js';

const PRIORITY_JS = fileURLToPath(new URL('../../dist/src/util/thread_priority.js', import.meta.url));

/** [nice, policy number] of one thread of this process, from field 19 and 41 of its stat line. */
function kernelView(tid: number): [number, number] {
  const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(f[16]), Number(f[38])];
}

/**
 * Runs setCurrentThreadPriority(want) in a fresh worker (with `env` as its environment) and reports
 * the result plus the kernel's view of that thread read from here while it is still alive.
 */
function inWorker(want: ThreadPriority, env?: Record<string, string>): Promise<{ r: PriorityResult; seen: [number, number] | null }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.file).then((m) => {
      parentPort.postMessage(m.setCurrentThreadPriority(workerData.want));
      parentPort.once('message', () => process.exit(0));
    });`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { file: PRIORITY_JS, want }, ...(env ? { env } : {}) });
    w.once('message', (r: PriorityResult) => {
      const seen = r.tid === null ? null : kernelView(r.tid);
      w.postMessage('bye');
      w.once('exit', () => resolve({ r, seen }));
    });
    w.once('error', reject);
  });
}

describe.runIf(process.platform === 'linux')('thread priority (Linux)', () => {
  it('dist is compiled', () => {
    expect(fs.existsSync(PRIORITY_JS), `${PRIORITY_JS}: run npx tsc -p tsconfig.json`).toBe(true);
  });

  it('sets nice and SCHED_BATCH on the calling thread only', async () => {
    const here = currentThreadId() as number;
    const here_before = kernelView(here);
    const { r, seen } = await inWorker({ nice: 7, policy: 'batch' });
    expect(r.applied, r.message).toBe(true);
    expect(r.tid).not.toBe(here);
    expect(seen).toEqual([7, 3]);
    expect(r.now).toEqual({ nice: 7, policy: 'batch' });
    expect(r.message).toBe(`set to nice 7, policy batch (thread ${r.tid})`);
    expect(kernelView(here)).toEqual(here_before);
  });

  it('sets SCHED_IDLE', async () => {
    const { r, seen } = await inWorker({ nice: 19, policy: 'idle' });
    expect(r.applied, r.message).toBe(true);
    expect(seen).toEqual([19, 5]);
  });

  it('reports a missing chrt (never throws) and leaves the thread as it was', async () => {
    const { r, seen } = await inWorker({ nice: 9, policy: 'batch' }, { PATH: '/nonexistent-ringbook-test' });
    expect(r.applied).toBe(false);
    expect(r.message).toMatch(/^not set to nice 9, policy batch: chrt \(util-linux\) is not installed \(thread \d+\)$/);
    // A new thread starts with its creator's priority: this thread's.
    expect(seen).toEqual(kernelView(currentThreadId() as number));
  });

  it('reports a thread that is not there', () => {
    const r = setThreadPriority(2 ** 30, { nice: 5, policy: 'other' });
    expect(r.applied).toBe(false);
    expect(r.message).toBe(`not set to nice 5, policy other: thread ${2 ** 30} is not in /proc/${process.pid}/task`);
  });
});

describe('config threads.background', () => {
  it('takes the default for what is absent', () => {
    expect(threadPriority(undefined, 'k', THREAD_BACKGROUND_DEFAULT)).toEqual(THREAD_BACKGROUND_DEFAULT);
    expect(threadPriority({ nice: 3 }, 'k', { nice: 10, policy: 'batch' })).toEqual({ nice: 3, policy: 'batch' });
    expect(threadPriority({ policy: 'idle' }, 'k', { nice: 10, policy: 'batch' })).toEqual({ nice: 10, policy: 'idle' });
  });

  it('refuses what setpriority/chrt cannot take', () => {
    expect(() => threadPriority({ nice: 20 }, 'threads.background', THREAD_BACKGROUND_DEFAULT)).toThrow(ConfigError);
    expect(() => threadPriority({ nice: 20 }, 'threads.background', THREAD_BACKGROUND_DEFAULT)).toThrow(/threads.background.nice must be an integer in \[-20, 19\]/);
    expect(() => threadPriority({ nice: 1.5 }, 'k', THREAD_BACKGROUND_DEFAULT)).toThrow(/nice must be an integer/);
    expect(() => threadPriority({ policy: 'fifo' }, 'k', THREAD_BACKGROUND_DEFAULT)).toThrow(/k.policy must be one of other, batch, idle/);
    expect(() => threadPriority(5, 'k', THREAD_BACKGROUND_DEFAULT)).toThrow(/k must be an object/);
  });
});
