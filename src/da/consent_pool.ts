// Recovers consent signatures across cores (docs/verifiability.md, "Consent"): one worker thread
// per core, each with the native secp256k1 recoverer (src/auth/recover.ts), fed jobs in chunks
// of hash || signature || expected signer (JOB_BYTES each). The jobs are split evenly over the workers, so a page of batches keeps
// every core busy; bench/verify_consent.ts measures the rate against one core's. Each worker
// compares the signer with the expected one and answers only the failures.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { toHex0x } from '../util/hex.js';
import type { RecoveryJob } from './consent_check.js';

/** hash (32) || signature (65) || expected signer (20). */
export const JOB_BYTES = 32 + 65 + 20;
/** u32 job index || recovered signer (20). */
export const FAILURE_BYTES = 4 + 20;
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

export interface RecoveryFailure {
  job: RecoveryJob;
  /** The address the signature recovers to (null: not a valid low-s signature). */
  recovered: string | null;
}

export class ConsentPool {
  private readonly workers: Worker[];
  readonly threads: number;

  constructor(threads = os.availableParallelism()) {
    this.threads = Math.max(1, threads);
    // Run from TypeScript source (vitest), the compiled worker is in the tsc output mirror dist/.
    const here = import.meta.url;
    const file = here.endsWith('.ts') ? new URL('../../dist/src/da/consent_worker.js', here) : new URL('./consent_worker.js', here);
    this.workers = Array.from({ length: this.threads }, () => new Worker(file));
    for (const w of this.workers) w.unref();
  }

  /**
   * The jobs whose signature does not recover to their expected signer. The workers compare, so
   * the calling thread only packs the jobs and reads back the (rare) failures.
   */
  async failures(jobs: readonly RecoveryJob[]): Promise<RecoveryFailure[]> {
    if (jobs.length === 0) return [];
    const per = Math.ceil(jobs.length / this.threads);
    const parts: Promise<Uint8Array>[] = [];
    for (let t = 0; t * per < jobs.length; t++) {
      const first = t * per;
      const n = Math.min(per, jobs.length - first);
      const input = new Uint8Array(n * JOB_BYTES);
      for (let i = 0; i < n; i++) {
        const j = jobs[first + i];
        const at = i * JOB_BYTES;
        input.set(j.hash, at);
        input.set(j.signature, at + 32);
        input.set(addressBytes(j.expected), at + 97);
      }
      parts.push(this.run(this.workers[t], input));
    }
    const bad: RecoveryFailure[] = [];
    const answers = await Promise.all(parts);
    answers.forEach((a, t) => {
      // Failures: u32 index (little-endian) || 20 recovered bytes (zeros: invalid signature).
      const view = new DataView(a.buffer, a.byteOffset, a.byteLength);
      for (let at = 0; at < a.length; at += FAILURE_BYTES) {
        const recovered = toHex0x(a.subarray(at + 4, at + FAILURE_BYTES));
        bad.push({ job: jobs[t * per + view.getUint32(at, true)], recovered: recovered === ZERO_ADDRESS ? null : recovered });
      }
    });
    return bad;
  }

  private run(w: Worker, input: Uint8Array): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: Uint8Array): void => {
        w.off('error', onError);
        resolve(m);
      };
      const onError = (e: unknown): void => {
        w.off('message', onMessage);
        reject(e);
      };
      w.once('message', onMessage);
      w.once('error', onError);
      w.postMessage(input, [input.buffer as ArrayBuffer]);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

function addressBytes(hex: string): Uint8Array {
  const out = new Uint8Array(20);
  for (let k = 0; k < 20; k++) out[k] = parseInt(hex.substr(2 + 2 * k, 2), 16);
  return out;
}
