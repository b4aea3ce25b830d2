// Recovers consent signatures across cores (docs/verifiability.md, "Consent"): one worker thread
// per core, each with the native secp256k1 recoverer (src/auth/recover.ts), fed jobs in chunks
// of hash || signature (97 bytes each) and answering the 20-byte signer (or 20 zero bytes for an
// invalid signature). The jobs are split evenly over the workers, so a page of batches keeps
// every core busy; bench/verify_consent.ts measures the rate against one core's.
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { bytesToHex0x } from './hex.js';
import type { RecoveryJob } from './consent_check.js';

const JOB_BYTES = 32 + 65;
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

  /** Recovered signer per job (lowercase 0x address, or null for an invalid signature), in job order. */
  async recover(jobs: readonly RecoveryJob[]): Promise<(string | null)[]> {
    if (jobs.length === 0) return [];
    const per = Math.ceil(jobs.length / this.threads);
    const parts: Promise<Uint8Array>[] = [];
    for (let t = 0; t * per < jobs.length; t++) {
      const slice = jobs.slice(t * per, (t + 1) * per);
      const input = new Uint8Array(slice.length * JOB_BYTES);
      slice.forEach((j, i) => {
        input.set(j.hash, i * JOB_BYTES);
        input.set(j.signature, i * JOB_BYTES + 32);
      });
      parts.push(this.run(this.workers[t], input));
    }
    const out: (string | null)[] = [];
    for (const p of await Promise.all(parts)) {
      for (let i = 0; i < p.length; i += 20) {
        const a = bytesToHex0x(p.subarray(i, i + 20));
        out.push(a === ZERO_ADDRESS ? null : a);
      }
    }
    return out;
  }

  /** The jobs whose signature does not recover to their expected signer. */
  async failures(jobs: readonly RecoveryJob[]): Promise<RecoveryFailure[]> {
    const got = await this.recover(jobs);
    const bad: RecoveryFailure[] = [];
    jobs.forEach((job, i) => {
      if (got[i] !== job.expected) bad.push({ job, recovered: got[i] });
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
