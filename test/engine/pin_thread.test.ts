// Pinning a thread to one CPU (config matcher.cpu): done in a worker thread, so the test runner's
// own thread keeps its affinity; the kernel's view (/proc/.../status) is the judge.
import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PinResult } from '../../src/matcher/pin_thread.js';

const PIN_JS = fileURLToPath(new URL('../../dist/src/matcher/pin_thread.js', import.meta.url));

/** Runs pinCurrentThread(cpu) in a fresh worker; also reports the worker's tid as seen there. */
function pinInWorker(cpu: number): Promise<{ pin: PinResult; tid: number | null }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.file).then((m) => {
      const pin = m.pinCurrentThread(workerData.cpu);
      parentPort.postMessage({ pin, tid: m.currentThreadId() });
    });`;
  return new Promise((resolve, reject) => {
    const w = new Worker(code, { eval: true, workerData: { file: PIN_JS, cpu } });
    w.once('message', (m) => {
      resolve(m);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

function allowedOf(tid: number): string | null {
  const m = /^Cpus_allowed_list:\s*(\S+)/m.exec(fs.readFileSync(`/proc/${process.pid}/task/${tid}/status`, 'utf8'));
  return m ? m[1] : null;
}

describe.runIf(process.platform === 'linux')('pinCurrentThread (Linux)', () => {
  it('dist is compiled', () => {
    expect(fs.existsSync(PIN_JS), `${PIN_JS}: run npx tsc -p tsconfig.json`).toBe(true);
  });

  it('pins only the calling thread to the CPU asked for', async () => {
    const before = allowedOf(process.pid);
    const cpu = os.availableParallelism() - 1;
    const { pin, tid } = await pinInWorker(cpu);
    expect(pin.pinned, pin.message).toBe(true);
    expect(pin.tid).toBe(tid);
    expect(pin.tid).not.toBe(process.pid);
    expect(pin.cpus_allowed).toBe(String(cpu));
    expect(pin.message).toBe(`pinned to CPU ${cpu} (thread ${tid})`);
    // The process's main thread is untouched.
    expect(allowedOf(process.pid)).toBe(before);
  });

  it('reports (never throws) a CPU the kernel refuses, and leaves the thread as it was', async () => {
    const { pin } = await pinInWorker(4095);
    expect(pin.pinned).toBe(false);
    expect(pin.message).toMatch(/^not pinned to CPU 4095: /);
    expect(pin.cpus_allowed).toBe(allowedOf(process.pid));
  });
});
