// The verify queue under a bursty front thread (issue 11, the tail at half the max rate): how long
// a signature waits from the front's check call to its verdict, with main's verify policy before
// this change (tasks of 100, the worker checks everything) against the configured one (tasks of
// verify.task_items_max, the front checks a task that waited verify.steal_after_us, and at light
// load checks up to verify.inline_items_max per turn itself), and that policy with the front's
// medium-load inline rule (verify.inline_busy_max_pct, src/auth/verify_inline.ts), alternated
// phase by phase in one process so that all see the same machine.
//
// The model of the front (this thread): signatures arrive open-loop at --rate per second; the
// front spends --front-us of CPU per request on its own work (parse, admission, answer: ~40 µs
// at max rate, docs/benchmarks.md) before queueing its check, and every --pause-every-ms it is
// paused for --pause-ms (a scavenge), after which the requests that arrived meanwhile come in one
// turn, as on the server. A second, closed-loop phase keeps --in-flight checks outstanding and
// measures checks per second (the max-rate side: what the front's help costs or gives).
// Run: npx tsc -p tsconfig.json && node dist/bench/verify_queue.js [--rate 5700] [--rounds 3]
// Bounded: 3 policies x rounds x (open + closed) phases of --phase-ms each (~37 s by default).
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createVerifyPool, type VerifyPool } from '../src/auth/verify_pool.js';
import {
  INLINE_ITEMS_DEFAULT, STEAL_AFTER_US_DEFAULT, TASK_SIZE_DEFAULT,
} from '../src/auth/verify_limits.js';
import { SignatureBatcher } from '../src/gateway/signature_batcher.js';
import { runMain } from './cli_args.js';
import { Knobs } from './knobs.js';
import { medianLowerMiddle, quantileFloorRankOfSorted } from './quantile.js';
import { makeCases, type Case } from './verify_cases.js';

const knobs = new Knobs();
const RATE_PER_S = knobs.number('rate', 5700, 100, 100_000);
const ROUNDS = knobs.number('rounds', 3, 1, 20, { integer: true });
const PHASE_MS = knobs.number('phase-ms', 2000, 200, 60_000);
const FRONT_US = knobs.number('front-us', 40, 0, 10_000);
const PAUSE_MS = knobs.number('pause-ms', 10, 0, 1000);
const PAUSE_EVERY_MS = knobs.number('pause-every-ms', 200, 10, 60_000);
/** The third policy's verify.inline_busy_max_pct (the server's default is 0: off). */
const BUSY_MAX_PCT = knobs.number('busy-max-pct', 50, 1, 100, { integer: true });
const IN_FLIGHT = knobs.number('in-flight', 256, 1, 100_000, { integer: true });
knobs.finish();
/** What the server's batcher flushes at once (config limits.verify_batch_max, default). */
const BATCH_MAX = 128;
/** Main's policy before issue 11's verify-queue change: tasks of 100, no stealing. */
const BEFORE = { taskSize: 100, stealAfterUs: 0, inline_items: 0, busy_max_pct: 0 };
/** Tasks of 32, stealing, inline checks at light load only (inline_busy_max_pct 0). */
const AFTER = { taskSize: TASK_SIZE_DEFAULT, stealAfterUs: STEAL_AFTER_US_DEFAULT, inline_items: INLINE_ITEMS_DEFAULT, busy_max_pct: 0 };
/** AFTER with the medium-load inline rule on (--busy-max-pct). */
const BUSY = { ...AFTER, busy_max_pct: BUSY_MAX_PCT };

interface Policy {
  name: 'before' | 'after' | 'busy';
  pool: VerifyPool;
  batcher: SignatureBatcher;
  open_p50_ms: number[];
  open_p99_ms: number[];
  open_max_ms: number[];
  closed_per_s: number[];
  stolen: number;
}

function spinUs(us: number): void {
  const until = performance.now() + us / 1000;
  while (performance.now() < until) {
    // the front's own CPU
  }
}

const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** Waits (at most 60 s) until `done()`: the checks still queued when a phase ends. */
async function drain(done: () => boolean): Promise<void> {
  const until = performance.now() + 60_000;
  while (!done() && performance.now() < until) await new Promise((r) => setTimeout(r, 1));
}

/** Open loop at RATE_PER_S for PHASE_MS: latency from each request's scheduled arrival to its verdict. */
async function openPhase(p: Policy, cases: Case[]): Promise<void> {
  const lat: number[] = [];
  let answered = 0;
  let sent = 0;
  const t0 = performance.now();
  let next_pause = t0 + PAUSE_EVERY_MS;
  const gap_ms = 1000 / RATE_PER_S;
  while (performance.now() - t0 < PHASE_MS) {
    const now = performance.now();
    if (PAUSE_MS > 0 && now >= next_pause) {
      spinUs(PAUSE_MS * 1000);
      next_pause += PAUSE_EVERY_MS;
    }
    // Every request due by now comes in this turn (after a pause: all that queued in the socket).
    const due = Math.floor((performance.now() - t0) / gap_ms);
    for (; sent < due; sent++) {
      const at = t0 + sent * gap_ms;
      const c = cases[sent % cases.length];
      spinUs(FRONT_US);
      p.batcher.check(c.item.message, c.item.signature_hex, c.item.expected_address, null, (v) => {
        if (v !== 1) throw new Error('verify_queue bench: a valid signature was refused');
        lat.push(performance.now() - at);
        answered++;
      });
    }
    await nextTurn();
  }
  await drain(() => answered >= sent);
  if (answered < sent) throw new Error(`verify_queue bench: ${sent - answered} checks unanswered`);
  lat.sort((a, b) => a - b);
  p.open_p50_ms.push(quantileFloorRankOfSorted(lat, 0.5));
  p.open_p99_ms.push(quantileFloorRankOfSorted(lat, 0.99));
  p.open_max_ms.push(lat[lat.length - 1] ?? 0);
}

/** Closed loop: IN_FLIGHT checks outstanding, a new one (with the front's own CPU) per verdict. */
async function closedPhase(p: Policy, cases: Case[]): Promise<void> {
  let done = 0;
  let k = 0;
  let stop = false;
  const t0 = performance.now();
  const one = (): void => {
    const c = cases[k++ % cases.length];
    spinUs(FRONT_US);
    p.batcher.check(c.item.message, c.item.signature_hex, c.item.expected_address, null, () => {
      done++;
      if (!stop) one();
    });
  };
  for (let i = 0; i < IN_FLIGHT; i++) one();
  while (performance.now() - t0 < PHASE_MS) await new Promise((r) => setTimeout(r, 5));
  const per_s = (done * 1000) / (performance.now() - t0);
  stop = true;
  await drain(() => p.batcher.pending === 0);
  p.closed_per_s.push(per_s);
}

const r2 = (x: number): number => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  console.log(`verify_queue bench: node ${process.version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.availableParallelism()}; ` +
    `open loop ${RATE_PER_S}/s, front ${FRONT_US} us per request, paused ${PAUSE_MS} ms every ${PAUSE_EVERY_MS} ms; ` +
    `closed loop ${IN_FLIGHT} in flight; ${ROUNDS} rounds of ${PHASE_MS} ms phases`);
  const cases = makeCases(256);
  const names = ['before', 'after', 'busy'] as const;
  const policies: Policy[] = [BEFORE, AFTER, BUSY].map((o, i) => {
    const pool = createVerifyPool({ taskSize: o.taskSize, stealAfterUs: o.stealAfterUs });
    return {
      name: names[i], pool, batcher: new SignatureBatcher(pool, BATCH_MAX, o.inline_items, o.busy_max_pct),
      open_p50_ms: [], open_p99_ms: [], open_max_ms: [], closed_per_s: [], stolen: 0,
    };
  });
  try {
    for (const p of policies) {
      // Start and warm each pool's worker (and this thread's recoverer, for the steals).
      await Promise.all(cases.map((c) => p.batcher.verify(c.item.message, c.item.signature_hex, c.item.expected_address)));
    }
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? policies : [...policies].reverse();
      for (const p of order) await openPhase(p, cases);
      for (const p of order) await closedPhase(p, cases);
    }
    for (const p of policies) p.stolen = p.pool.stolenChecked + p.pool.inlineChecked;
  } finally {
    for (const p of policies) await p.pool.close();
  }
  const [before, after, busy] = policies;
  for (const p of policies) {
    console.log(`  ${p.name.padEnd(6)} (tasks of ${p.pool.taskSize}, steal after ${p.pool.stealAfterUs} us): ` +
      `open loop p50 ${p.open_p50_ms.map(r2).join('/')} ms, p99 ${p.open_p99_ms.map(r2).join('/')} ms, max ${p.open_max_ms.map(r2).join('/')} ms; ` +
      `closed loop ${p.closed_per_s.map(Math.round).join('/')} checks/s; checked by the front ${p.stolen} (inline ${p.pool.inlineChecked})`);
  }
  console.log(JSON.stringify({
    bench: 'verify_queue',
    rate_per_s: RATE_PER_S,
    front_us: FRONT_US,
    pause_ms: PAUSE_MS,
    pause_every_ms: PAUSE_EVERY_MS,
    before_task_items: before.pool.taskSize,
    after_task_items: after.pool.taskSize,
    after_steal_after_us: after.pool.stealAfterUs,
    p99_ms_before: r2(medianLowerMiddle(before.open_p99_ms)),
    p99_ms_after: r2(medianLowerMiddle(after.open_p99_ms)),
    p50_ms_before: r2(medianLowerMiddle(before.open_p50_ms)),
    p50_ms_after: r2(medianLowerMiddle(after.open_p50_ms)),
    checks_per_s_before: Math.round(medianLowerMiddle(before.closed_per_s)),
    checks_per_s_after: Math.round(medianLowerMiddle(after.closed_per_s)),
    stolen_checks_after: after.pool.stolenChecked,
    front_checks_after: after.stolen,
    busy_max_pct: BUSY.busy_max_pct,
    p99_ms_busy: r2(medianLowerMiddle(busy.open_p99_ms)),
    p50_ms_busy: r2(medianLowerMiddle(busy.open_p50_ms)),
    checks_per_s_busy: Math.round(medianLowerMiddle(busy.closed_per_s)),
    front_checks_busy: busy.stolen,
  }));
}

runMain(main);
