// The front thread's hand-off of one signature check to a verify worker and the verdict's way
// back (issue 11, branch h23o2): the real SignatureBatcher and VerifyPool of a build's dist/,
// one worker, the front's inline checks off, one check at a time as at light load (each request's
// check is the only one of its turn, the worker asleep when it comes). Per hand-off the front:
// queues the check, flushes it at the turn's end (setImmediate), encodes it into the worker's
// ring, publishes it, wakes the worker when it sleeps, and waits for DONE (Atomics.waitAsync);
// the worker checks, publishes DONE and notifies; the front collects the answer and calls the
// verdict, which starts the next hand-off after --gap-ms (0: the next turn, setImmediate).
//
// For instruction counts, two runs of the same warm-up and N or 10N hand-offs under callgrind,
// threads apart, the front's counts differenced (docs/benchmarks.md, h23o2):
//   valgrind --tool=callgrind --separate-threads=yes node --hash-seed=1 --random-seed=1 \
//     dist/bench/verify_handoff.js --handoffs 200 --steal-us 0
// (under valgrind the worker is ~50x slower, so the front would steal its tasks at the default
// steal_after_us: --steal-us 0 turns stealing off there). For syscalls: `strace -f -c` or
// `strace -f -o F` at N and 10N. Without a tool: wall time and the process's CPU per hand-off.
//
// Run: npx tsc -p tsconfig.json && node dist/bench/verify_handoff.js [--dist DIR] [--handoffs N]
//   --dist      a build's dist/ folder (default: this build), e.g. /work/wt/start/dist
//   --handoffs  timed hand-offs (default 2,000), after --warmup (default 500)
//   --gap-ms    pause between a verdict and the next check (default 0: the next turn)
//   --steal-us  the pool's steal_after_us (default 1,000, the server's; 0: off)
//   --stamps    0 to pass no stage stamps (default 1: as the server with metrics on)
//   --gate FILE  after the warm-up, print "gate: warm", wait until FILE exists, run the timed
//               hand-offs, print "gate: done", wait until FILE.done exists: a script turns
//               callgrind's collection on and off in between (callgrind_control -i on|off <pid>,
//               valgrind --collect-atstart=no), so one process's counts hold the timed hand-offs only
//   --alloc-profile FILE  the front's sampled allocations of the timed hand-offs, collected ones
//               included (inspector HeapProfiler, 128-byte interval), written to FILE
// Ends with one JSON line.
import { Session } from 'node:inspector/promises';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runMain } from './cli_args.js';
import { Knobs } from './knobs.js';
import { makeCases } from './verify_cases.js';
import type { SignedMessage } from '../src/auth/verify.js';
import type { StageStamps } from '../src/gateway/stage_timings.js';

interface Pool {
  ready(wait_ms_max?: number): Promise<void>;
  close(): Promise<void>;
  readonly stolenChecked: number;
  readonly inlineChecked: number;
}
interface Batcher {
  check(message: string, signature_hex: string, expected_address: string, stamps: StageStamps | null, verdict: (v: number) => void): void;
}
interface Build {
  createVerifyPool(options: { threads: number; stealAfterUs: number }): Pool;
  SignatureBatcher: new (pool: Pool, batch_max: number, inline_items_max: number, inline_busy_max_pct: number) => Batcher;
}

async function load(dist: string): Promise<Build> {
  const imp = async <T>(p: string): Promise<T> => await import(pathToFileURL(path.join(dist, p)).href) as T;
  const pool = await imp<Pick<Build, 'createVerifyPool'>>('src/auth/verify_pool.js');
  const batcher = await imp<Pick<Build, 'SignatureBatcher'>>('src/gateway/signature_batcher.js');
  return { createVerifyPool: pool.createVerifyPool, SignatureBatcher: batcher.SignatureBatcher };
}

const DISTINCT = 64;
/** The server's limits.verify_batch_max default (a lone check never reaches it). */
const BATCH_MAX = 128;

async function main(): Promise<void> {
  const knobs = new Knobs();
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = path.resolve(knobs.optionalString('dist') ?? path.resolve(here, '..'));
  const handoffs = knobs.number('handoffs', 2000, 1, 1_000_000);
  const warmup = knobs.number('warmup', 500, 0, 1_000_000);
  const gap_ms = knobs.number('gap-ms', 0, 0, 1000);
  const steal_us = knobs.number('steal-us', 1000, 0, 1_000_000);
  const with_stamps = knobs.number('stamps', 1, 0, 1) === 1;
  const alloc_profile = knobs.optionalString('alloc-profile');
  const gate = knobs.optionalString('gate');
  knobs.finish();

  const build = await load(dist);
  const items: SignedMessage[] = makeCases(DISTINCT, 1).map((c) => c.item);
  const pool = build.createVerifyPool({ threads: 1, stealAfterUs: steal_us });
  await pool.ready();
  const batcher = new build.SignatureBatcher(pool, BATCH_MAX, 0, 0);
  const stamps = with_stamps ? ({ verify_start: 0, verify_end: 0 } as StageStamps) : null;

  let valid = 0;
  const run = (count: number): Promise<void> => new Promise<void>((resolve) => {
    let left = count;
    let i = 0;
    const next = (): void => {
      if (left === 0) return resolve();
      left--;
      const item = items[i++ % DISTINCT];
      batcher.check(item.message, item.signature_hex, item.expected_address, stamps, verdict);
    };
    const verdict = (v: number): void => {
      if (v === 1) valid++;
      if (gap_ms === 0) setImmediate(next);
      else setTimeout(next, gap_ms);
    };
    next();
  });

  await run(warmup);
  /** Until `file` exists (polled every 20 ms: a few idle turns outside the timed hand-offs). */
  const until = async (file: string): Promise<void> => {
    while (!existsSync(file)) await new Promise((r) => setTimeout(r, 20));
  };
  if (gate !== undefined) {
    console.log('gate: warm');
    await until(gate);
  }
  const session = alloc_profile === undefined ? null : new Session();
  if (session !== null) {
    session.connect();
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 128, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true,
    } as object);
  }
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(handoffs);
  const wall_ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (gate !== undefined) {
    console.log('gate: done');
    await until(`${gate}.done`);
  }
  if (session !== null && alloc_profile !== undefined) {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    writeFileSync(alloc_profile, JSON.stringify(profile));
    session.disconnect();
  }
  const stolen = pool.stolenChecked;
  await pool.close();
  console.log(JSON.stringify({
    bench: 'verify_handoff', dist, handoffs, warmup, gap_ms, steal_us, stamps: with_stamps,
    valid_of_all: `${valid}/${warmup + handoffs}`, stolen, inline: pool.inlineChecked,
    wall_us_per_handoff: Number((1000 * wall_ms / handoffs).toFixed(1)),
    process_cpu_us_per_handoff: Number(((cpu.user + cpu.system) / handoffs).toFixed(1)),
  }));
}

runMain(main);
