// A soak of the verify ring's loop-bell wake route (src/auth/verify_ring.ts) against its lost
// wake-up (h23o2's half-max stall, fixed by h25o): a "dawdle" worker (the real workerWake and
// codec, test/auth/fixtures/verify_worker_pauses.mjs) that, after a DONE store and before its
// answered() (the swap of FRONT_WAITS and the ring of the front's bell), spins a random
// 0..--dawdle-us µs with chance --dawdle-permille / 1000: a preemption at the racy point, made
// frequent. Per run: a fresh pool of --threads workers (default 1; taskSize 1, stealing off:
// nothing but the bell brings the answers back; with 2, one worker's ring makes the front look at
// both rings, the other way the front reads a DONE the worker has not rung for), --requests
// verifyBatch calls of 1..3 checks, --in-flight at a time.
// A run stalls when no call settles for --stall-ms (the per-run limit): it is counted, then the
// bench rings the pool's bell itself (the front reads the answers it missed) and the run goes on;
// a run that a ring does not unstick is counted stuck and ends there.
//
// Run: npx tsc -p tsconfig.json && make native && node dist/bench/verify_wake_soak.js
//   --runs 40 --requests 400 --in-flight 4 --dawdle-permille 300 --dawdle-us 300 --stall-ms 1000
// Ends with one JSON line {"bench":"verify_wake_soak","stalls":..,"runs":..,...}.
import { setEnvironmentData } from 'node:worker_threads';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runMain } from './cli_args.js';
import { Knobs } from './knobs.js';
import { makeCases } from './verify_cases.js';
import { createVerifyPool } from '../src/auth/verify_pool.js';
import { loopBellForRinging, nativeLoopBell } from '../src/util/loop_bell.js';
import {
  G_BELL_ID, G_DAWDLE_PERMILLE, G_DAWDLE_US_MAX, G_DAWDLES, G_MODE, G_WORDS, PAUSES_GATE_KEY,
} from '../test/auth/fixtures/verify_pauses_gate.js';
import type { SignedMessage } from '../src/auth/verify.js';

const DISTINCT = 64;
/** Checks per verifyBatch call: 1..CALL_ITEMS_MAX (taskSize 1: as many tasks). */
const CALL_ITEMS_MAX = 3;

interface RunResult {
  stalls: number;
  stuck: boolean;
  dawdles: number;
  wrong: number;
}

async function main(): Promise<void> {
  const knobs = new Knobs();
  const runs = knobs.number('runs', 40, 1, 100_000);
  const requests = knobs.number('requests', 400, 1, 1_000_000);
  const in_flight = knobs.number('in-flight', 4, 1, 64);
  const permille = knobs.number('dawdle-permille', 300, 0, 1000);
  const dawdle_us = knobs.number('dawdle-us', 300, 0, 100_000);
  const stall_ms = knobs.number('stall-ms', 1000, 10, 600_000);
  const threads = knobs.number('threads', 1, 1, 8);
  knobs.finish();
  if (nativeLoopBell() === null) throw new Error('the loop bell is not built (make native): the soak is of that route');
  const ringer = loopBellForRinging();
  if (ringer === null) throw new Error('the loop bell cannot be loaded for ringing');

  const here = path.dirname(fileURLToPath(import.meta.url));
  // dist/bench -> the repository: the fixture is not compiled (it imports dist/ itself).
  const worker_file = pathToFileURL(path.resolve(here, '../../test/auth/fixtures/verify_worker_pauses.mjs'));
  const items: SignedMessage[] = makeCases(DISTINCT, 1).map((c) => c.item);
  const gate = new Int32Array(new SharedArrayBuffer(G_WORDS * 4));
  setEnvironmentData(PAUSES_GATE_KEY, gate.buffer);

  const one = async (): Promise<RunResult> => {
    gate.fill(0);
    gate[G_MODE] = 1;
    gate[G_DAWDLE_PERMILLE] = permille;
    gate[G_DAWDLE_US_MAX] = dawdle_us;
    const pool = createVerifyPool({ threads, taskSize: 1, stealAfterUs: 0, wake: 'native', workerFile: worker_file });
    await pool.ready();
    const result: RunResult = { stalls: 0, stuck: false, dawdles: 0, wrong: 0 };
    let settled = 0;
    let started = 0;
    let i = 0;
    await new Promise<void>((resolve) => {
      let seen = -1;
      let rang = false;
      const watch = setInterval(() => {
        if (settled === requests) return;
        if (settled !== seen) {
          seen = settled;
          rang = false;
          return;
        }
        if (rang) { // a ring did not unstick it: give the run up
          result.stuck = true;
          clearInterval(watch);
          resolve();
          return;
        }
        result.stalls++; // --stall-ms without a settled call: the front waits for a bell that never rings
        rang = true;
        ringer.ring(Atomics.load(gate, G_BELL_ID));
      }, stall_ms);
      const next = (): void => {
        if (started === requests) return;
        started++;
        const count = 1 + (i % CALL_ITEMS_MAX);
        const batch: SignedMessage[] = [];
        for (let k = 0; k < count; k++) batch.push(items[i++ % DISTINCT]);
        void pool.verifyBatch(batch).then((v) => {
          for (const x of v) if (x !== 1) result.wrong++;
          settled++;
          if (settled === requests) {
            clearInterval(watch);
            resolve();
          } else next();
        });
      };
      for (let k = 0; k < in_flight; k++) next();
    });
    result.dawdles = Atomics.load(gate, G_DAWDLES);
    if (result.stuck) ringer.ring(Atomics.load(gate, G_BELL_ID));
    if (!result.stuck) await pool.close();
    return result;
  };

  let stalls = 0;
  let stalled_runs = 0;
  let stuck = 0;
  let dawdles = 0;
  let wrong = 0;
  for (let r = 0; r < runs; r++) {
    const res = await one();
    stalls += res.stalls;
    if (res.stalls > 0) stalled_runs++;
    if (res.stuck) stuck++;
    dawdles += res.dawdles;
    wrong += res.wrong;
    if (res.stuck) break; // a stuck pool cannot be closed cleanly: stop here
  }
  console.log(JSON.stringify({
    bench: 'verify_wake_soak', stalls, runs, stalled_runs, stuck, threads, requests_per_run: requests, in_flight,
    dawdle_permille: permille, dawdle_us_max: dawdle_us, dawdles, wrong_verdicts: wrong, stall_ms,
  }));
  if (stuck > 0) process.exit(0); // the stuck pool's worker would keep the process alive
}

runMain(main);
