// Verify-stage benchmark: single-thread recoveries/s on native libsecp256k1 vs @noble/curves, then
// signatures/s through the verify pool (one SharedArrayBuffer ring per worker, src/auth/verify_ring.ts).
// Run: npx tsc -p tsconfig.json && node dist/bench/verify.js [--pool-items N]
// Bounded: each single-thread phase runs ~1.5 s, each pool phase a fixed item count.
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createRecoverer, nativeBackendAvailable, type Recoverer } from '../src/auth/recover.js';
import type { SignedMessage } from '../src/auth/verify.js';
import { encodePackedBatch, splitTaskAnswer, verifyPackedBatch } from '../src/auth/verify_codec.js';
import { createVerifyPool } from '../src/auth/verify_pool.js';
import type { VerifyPoolOptions } from '../src/auth/verify_pool_options.js';
import { runMain } from './cli_args.js';
import { Knobs } from './knobs.js';
import { makeCases, type Case } from './verify_cases.js';

const DISTINCT = 256; // distinct signed messages (keys and texts), cycled
const PHASE_MS = 1500;
// bench/knobs.ts: `--pool-items N` or BENCH_POOL_ITEMS=N.
const knobs = new Knobs();
const POOL_ITEMS = knobs.number('pool-items', 20_000, 2000, 1_000_000);
knobs.finish();

/** Recoveries per second on one thread for ~PHASE_MS, after a short warm-up. */
function singleThread(r: Recoverer, cases: Case[]): number {
  for (let i = 0; i < 200; i++) r.recoverAddress(cases[i % cases.length].hash, cases[i % cases.length].sig);
  let ops = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < PHASE_MS) {
    for (let k = 0; k < 100; k++) {
      const c = cases[ops % cases.length];
      if (r.recoverAddress(c.hash, c.sig) !== c.address) throw new Error(`${r.backend}: wrong address`);
      ops++;
    }
    t = performance.now();
  }
  return (ops * 1000) / (t - t0);
}

async function poolRun(
  options: VerifyPoolOptions,
  items: SignedMessage[],
): Promise<{ perS: number; threads: number; ms: number }> {
  const pool = createVerifyPool(options);
  try {
    await pool.verifyBatch(items.slice(0, 2000)); // start and warm the workers
    const t0 = performance.now();
    const verdicts = await pool.verifyBatch(items);
    const ms = performance.now() - t0;
    if (verdicts.some((v) => v !== 1)) throw new Error('pool refused a valid signature');
    return { perS: (items.length * 1000) / ms, threads: pool.threads, ms };
  } finally {
    await pool.close();
  }
}

/** Front-thread cost per item of preparing tasks (what the gateway thread pays). */
function encodeCostUs(items: SignedMessage[]): number {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    for (let s = 0; s < items.length; s += 100) encodePackedBatch(items, s, Math.min(items.length, s + 100));
    best = Math.min(best, ((performance.now() - t0) * 1000) / items.length);
  }
  return best;
}

/** The worker's whole per-item job (hex parse, EIP-191 hash, recover, compare) on this thread. */
function inThreadPacked(r: Recoverer, items: SignedMessage[]): number {
  const n = Math.min(items.length, 4000);
  const buffers: ArrayBuffer[] = [];
  for (let s = 0; s < n; s += 100) buffers.push(encodePackedBatch(items, s, Math.min(n, s + 100)));
  const t0 = performance.now();
  for (const b of buffers) {
    if (splitTaskAnswer(verifyPackedBatch(b, r)).verdicts.includes(0)) throw new Error('in-thread verify refused a valid signature');
  }
  return (n * 1000) / (performance.now() - t0);
}

const round = (x: number, d = 0): number => Number(x.toFixed(d));

async function main(): Promise<void> {
  console.log(`verify bench: node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.availableParallelism()}`);
  const cases = makeCases(DISTINCT);
  if (!nativeBackendAvailable()) console.log('native secp256k1 unavailable: native figure is noble');
  const nativeR = createRecoverer(nativeBackendAvailable() ? { backend: 'native' } : { backend: 'noble' });
  const nobleR = createRecoverer({ backend: 'noble' });
  const nativePerS = singleThread(nativeR, cases);
  const noblePerS = singleThread(nobleR, cases);
  console.log(`single thread recover+address: native ${round(nativePerS)}/s, noble ${round(noblePerS)}/s, ratio ${round(nativePerS / noblePerS, 2)}x`);

  const items: SignedMessage[] = [];
  for (let i = 0; i < POOL_ITEMS; i++) items.push(cases[i % cases.length].item);
  console.log(`packed encode on the front thread: ${round(encodeCostUs(items), 3)} us/item`);

  console.log(`in-thread full verify (packed, native): ${round(inThreadPacked(nativeR, items))}/s`);

  const packed = await poolRun({}, items);
  console.log(`pool (verify rings): ${POOL_ITEMS} sigs in ${round(packed.ms)} ms on ${packed.threads} thread(s): ${round(packed.perS)}/s`);
  // The comparison on half the items, to keep the run bounded.
  const half = items.slice(0, Math.max(2000, items.length >> 1));
  const all = os.availableParallelism();
  if (all > packed.threads) {
    const full = await poolRun({ threads: all }, half);
    console.log(`pool packed, all ${all} cores: ${round(full.perS)}/s (front thread shares a core)`);
  }

  console.log(
    JSON.stringify({
      bench: 'verify',
      native_per_s: round(nativePerS),
      noble_per_s: round(noblePerS),
      native_vs_noble: round(nativePerS / noblePerS, 2),
      pool_per_s: round(packed.perS),
    }),
  );
}

runMain(main);
