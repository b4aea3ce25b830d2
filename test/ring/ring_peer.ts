// The worker peer of the cross-thread ring tests (ring_threads.test.ts, loop_bell.test.ts):
// worker_threads cannot run TypeScript, so the peer is the COMPILED dist/test/ring/ring_worker.js,
// which imports the compiled dist/src/ring/; the test thread uses the TypeScript source through
// vitest, so the two sides are two builds of one codec that meet only through the SharedArrayBuffer.
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RingWorkerData, RingWorkerResult } from './ring_worker.js';

const ROOT = new URL('../../', import.meta.url);
const WORKER_JS = new URL('dist/test/ring/ring_worker.js', ROOT);

/** Fail clearly when dist/ is missing or older than the sources the worker runs. */
export function assertDistFresh(): void {
  const pairs: Array<[string, string]> = [
    ['src/ring/spsc_ring.ts', 'dist/src/ring/spsc_ring.js'],
    ['src/ring/spsc_ring_core.ts', 'dist/src/ring/spsc_ring_core.js'],
    ['src/ring/spsc_ring_producer.ts', 'dist/src/ring/spsc_ring_producer.js'],
    ['src/ring/spsc_ring_consumer.ts', 'dist/src/ring/spsc_ring_consumer.js'],
    ['test/ring/ring_worker.ts', 'dist/test/ring/ring_worker.js'],
    ['test/ring/ring_records.ts', 'dist/test/ring/ring_records.js'],
  ];
  for (const [src, out] of pairs) {
    const srcPath = fileURLToPath(new URL(src, ROOT));
    const outPath = fileURLToPath(new URL(out, ROOT));
    let outTime: number;
    try {
      outTime = statSync(outPath).mtimeMs;
    } catch {
      throw new Error(`${out} is missing: run \`npx tsc -p tsconfig.json\` before vitest`);
    }
    if (outTime < statSync(srcPath).mtimeMs) {
      throw new Error(`${out} is older than ${src}: run \`npx tsc -p tsconfig.json\` first`);
    }
  }
}

/** Start the worker; `result` settles with its report, or rejects if it fails first. */
export function startWorker(data: RingWorkerData, onError: () => void): Promise<RingWorkerResult> {
  const worker = new Worker(WORKER_JS, { workerData: data });
  return new Promise<RingWorkerResult>((resolve, reject) => {
    let settled = false;
    worker.on('message', (m: RingWorkerResult) => {
      settled = true;
      resolve(m);
    });
    worker.on('error', (e) => {
      settled = true;
      onError();
      reject(e);
    });
    worker.on('exit', (code) => {
      if (!settled) {
        onError();
        reject(new Error(`ring worker exited with code ${code} before reporting`));
      }
    });
  });
}

