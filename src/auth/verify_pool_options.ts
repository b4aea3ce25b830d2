// The verify pool's options (their defaults and bounds) and what it tells operators about itself:
// the secp256k1 library of each checking thread, and its workers' health (VerifyPoolState). The
// pool itself, its rings and its threads, is verify_pool.ts.
import os from 'node:os';
import type { RecoverBackendName, Secp256k1Library } from './recover.js';

export interface VerifyPoolOptions {
  /** Worker threads; default max(1, availableParallelism - 1): one core stays with the front thread. */
  threads?: number;
  /** Items per task; default TASK_SIZE_DEFAULT, at most TASK_SIZE_MAX. */
  taskSize?: number;
  /**
   * The front checks a published task itself once it has waited this long unclaimed (µs; default
   * 0: never). See STEAL_AFTER_US_DEFAULT.
   */
  stealAfterUs?: number;
  /** Force the workers' recovery backend (default: native, else noble). */
  backend?: RecoverBackendName;
  /** Bytes of each worker's ring data area (default VERIFY_RING_DATA_BYTES_DEFAULT). */
  ringBytes?: number;
  /** The compiled worker module; default dist's verify_worker.js next to this module. */
  workerFile?: string | URL;
  /**
   * How the workers sleep and the front learns of answers: 'native' (default: the native futex and
   * the front's loop bell, each when this thread can load it, RINGBOOK_RING_FUTEX and
   * RINGBOOK_LOOP_BELL permitting: verify_ring.ts) or 'atomics' (Atomics.wait/notify/waitAsync).
   */
  wake?: 'native' | 'atomics';
}

export const THREADS_MAX = 256;

/** Which secp256k1 library each thread that checks signatures calls (GET /admin/state `secp256k1`, the start log, metrics). */
export interface Secp256k1Threads {
  /** The front thread's (its inline and stolen checks). */
  front: Secp256k1Library;
  /** Each verify worker's, as the worker reported it; null for one that has not started serving yet. */
  verify_workers: (Secp256k1Library | null)[];
}

/** The pool's health for operators (GET /admin/state `verify_pool`, GET /health, metrics). */
export interface VerifyPoolState {
  threads: number;
  /** Workers serving their ring now (a replacement that is still loading is not counted). */
  workers_ready: number;
  /** Workers that died after they served and were replaced, since the start. */
  worker_restarts: number;
  /** Why the pool refuses every check (a worker that could not load), null while it works. */
  broken: string | null;
  /** When it broke (epoch ms), null while it works. */
  broken_at_ms: number | null;
}

/** For the start log: `front system, 2 verify workers system` (`not started` for a worker that has not reported). */
export function describeSecp256k1Threads(t: Secp256k1Threads): string {
  const workers = new Map<string, number>();
  for (const library of t.verify_workers) workers.set(library ?? 'not started', (workers.get(library ?? 'not started') ?? 0) + 1);
  const parts = [`front ${t.front}`];
  for (const [library, n] of workers) parts.push(`${n} verify worker${n === 1 ? '' : 's'} ${library}`);
  return parts.join(', ');
}

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

export function positiveInt(value: number | undefined, fallback: number, min: number, max: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer in [${min}, ${max}]`);
  }
  return value;
}
