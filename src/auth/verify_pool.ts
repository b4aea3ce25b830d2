// The verify pool: Piscina workers that check EIP-191 signatures in batch tasks (~100 per task),
// so the front thread pays one message post per batch, not per signature.
import { existsSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { RecoverBackendName } from './recover.js';
import { encodePackedBatch, splitTaskAnswer, type VerifyTask, type VerifyTransport } from './verify_codec.js';
import type { SignedMessage } from './verify.js';

export interface VerifyPoolOptions {
  /** Worker threads; default max(1, availableParallelism - 1): one core stays with the front thread. */
  threads?: number;
  /** Items per task; default 100, at most MAX_TASK_SIZE. */
  taskSize?: number;
  /** Force the workers' recovery backend (default: native, else noble). */
  backend?: RecoverBackendName;
  /** How a batch travels to a worker; default 'packed' (see verify_codec.ts, bench/verify.ts). */
  transport?: VerifyTransport;
  /** The compiled worker module; default dist's verify_worker.js next to this module. */
  workerFile?: string | URL;
}

export const DEFAULT_TASK_SIZE = 100;
export const MAX_TASK_SIZE = 10_000;

/**
 * The compiled worker next to this module. Run from TypeScript source (vitest, tsx), this module
 * lives in src/auth/, so the worker is taken from the tsc output mirror dist/src/auth/.
 */
export function defaultWorkerFile(): URL {
  const here = import.meta.url;
  return here.endsWith('.ts')
    ? new URL('../../dist/src/auth/verify_worker.js', here)
    : new URL('./verify_worker.js', here);
}

export function defaultThreadCount(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

function positiveInt(value: number | undefined, fallback: number, max: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new RangeError(`${name} must be an integer in [1, ${max}]`);
  }
  return value;
}

export class VerifyPool {
  readonly threads: number;
  readonly taskSize: number;
  readonly transport: VerifyTransport;
  readonly #pool: Piscina<VerifyTask, Uint8Array>;
  #closed = false;
  #inFlight = 0;

  constructor(options: VerifyPoolOptions = {}) {
    this.threads = positiveInt(options.threads, defaultThreadCount(), 256, 'threads');
    this.taskSize = positiveInt(options.taskSize, DEFAULT_TASK_SIZE, MAX_TASK_SIZE, 'taskSize');
    this.transport = options.transport ?? 'packed';
    if (this.transport !== 'packed' && this.transport !== 'clone') throw new RangeError('unknown transport');
    const file = options.workerFile ?? defaultWorkerFile();
    const url = typeof file === 'string' && !file.startsWith('file:') ? null : new URL(file);
    const path = url === null ? (file as string) : fileURLToPath(url);
    if (!existsSync(path)) {
      throw new Error(`verify worker not found at ${path}: compile first (npx tsc -p tsconfig.json)`);
    }
    this.#pool = new Piscina<VerifyTask, Uint8Array>({
      filename: url === null ? path : url.href,
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: Infinity,
      workerData: { backend: options.backend },
    });
  }

  /**
   * Verdicts for `items`, in order: 1 when the message was signed (EIP-191, low-s) by the item's
   * expected address, else 0. Malformed items are 0; the promise rejects only if a worker dies or
   * the pool is closed. With `times_ms` (2 per item), item i gets the worker's start and end of the
   * task that checked it at [2i] and [2i + 1] (epoch ms; the per-stage latency of the load bench).
   */
  async verifyBatch(items: readonly SignedMessage[], times_ms?: Float64Array): Promise<Uint8Array> {
    if (this.#closed) throw new Error('verify pool is closed');
    if (!Array.isArray(items)) throw new TypeError('items must be an array');
    const out = new Uint8Array(items.length);
    const runs: Promise<void>[] = [];
    for (let start = 0; start < items.length; start += this.taskSize) {
      const end = Math.min(items.length, start + this.taskSize);
      runs.push(this.#runTask(items, start, end).then((answer) => {
        const { verdicts, start_ms, end_ms } = splitTaskAnswer(answer);
        out.set(verdicts, start);
        if (times_ms !== undefined) {
          for (let i = start; i < end; i++) {
            times_ms[2 * i] = start_ms;
            times_ms[2 * i + 1] = end_ms;
          }
        }
      }));
    }
    await Promise.all(runs);
    return out;
  }

  async #runTask(items: readonly SignedMessage[], start: number, end: number): Promise<Uint8Array> {
    this.#inFlight++;
    try {
      if (this.transport === 'clone') {
        return await this.#pool.run({ kind: 'clone', items: items.slice(start, end) });
      }
      const buffer = encodePackedBatch(items, start, end);
      return await this.#pool.run({ kind: 'packed', buffer }, { transferList: [buffer] });
    } finally {
      this.#inFlight--;
    }
  }

  /** Tasks submitted and not yet answered (queued or running): for back-pressure in the caller. */
  get pendingTasks(): number {
    return this.#inFlight;
  }

  /** Tasks waiting for a free worker thread (Piscina's queue; metrics). */
  get queuedTasks(): number {
    return this.#pool.queueSize;
  }

  /** Waits for running tasks, then stops the workers. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#pool.close();
  }
}

export function createVerifyPool(options: VerifyPoolOptions = {}): VerifyPool {
  return new VerifyPool(options);
}
