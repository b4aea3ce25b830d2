// Front wake-up benchmark (issue 11): the matcher -> front hand-back at light load. A worker
// thread (the matcher's role) publishes one record at a time on a ring whose consumer is the main
// thread's event loop (the front's event pump, src/ring/ring_wake.ts); the main thread's drain
// answers on a second ring, on which the worker sleeps (waitForDataOnce, the futex doorbell). The
// worker pauses 0.3 ms before each record, so the main thread's loop is asleep when it comes.
// Alternating runs with the front asleep on the loop bell (native/loop_bell.c, `make native`) and
// in Atomics.waitAsync, and a third way, `spin`: the bell with the front kept awake (ring_wake.ts
// keepAwake, the front's answer spin: front.answer_spin_us) for up to SPIN_MS after each drain, so
// the next record (0.3 ms later) finds it turning its loop. Reports, per wake-up: the hand-off (the worker's publish -> the drain
// running on the main thread) p50/p99, the main thread's CPU (its schedstat run time, the loop's
// own wake-up work included) and its voluntary context switches.
//
//   npx tsc -p tsconfig.json && make native && node dist/bench/front_wake.js   # --pings N [5000] --runs N [3]
//
// The last line printed is one JSON object: {"bench":"front_wake",...}.
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { nativeLoopBell } from '../src/util/loop_bell.js';
import { consumeOnLoop } from '../src/ring/ring_wake.js';
import { SpscRing } from '../src/ring/spsc_ring.js';
import { runMain } from './cli_args.js';
import { alternating, medians, pingRunKnobs, voluntarySwitches } from './ab_runs.js';
import { quantileFloorRankOfSorted } from './quantile.js';

interface PeerData {
  ping: SharedArrayBuffer;
  pong: SharedArrayBuffer;
  pings: number;
}

/**
 * Bounds each of the peer's waits for the pong: a lost wake-up of the front never answers its ping,
 * so the run fails after three such waits ("no answer to ping i"); it is never timed as a hand-off.
 */
const WAIT_MS = 1000;

/** This thread's CPU time (ns, Linux schedstat) and voluntary context switches. */
function threadCounters(): { cpu_ns: number; switches: number } {
  const cpu_ns = Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  return { cpu_ns, switches: voluntarySwitches() };
}

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The matcher's role: publish a stamped record, wait for the answer, pause, again. */
function peer(d: PeerData): void {
  const ping = SpscRing.attach(d.ping, { spin_iterations: 0 });
  const pong = SpscRing.attach(d.pong, { spin_iterations: 0 });
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 1; i <= d.pings; i++) {
    Atomics.wait(pause, 0, 0, 0.3);
    const o = ping.tryClaim();
    if (o < 0) throw new Error('ping ring full');
    ping.i32[o] = i;
    ping.f64[o / 2 + 1] = epochMs();
    ping.publish();
    let n = 0;
    for (let tries = 0; n === 0 && tries < 3; tries++) n = pong.waitForDataOnce(WAIT_MS);
    if (n === 0 || pong.i32[pong.slotOffset(0)] !== i) throw new Error(`no answer to ping ${i}`);
    pong.release(1);
  }
  ping.close();
  parentPort?.postMessage('done');
}

type Way = 'bell' | 'atomics' | 'spin';
/** The spin way's bound after each drain: above the peer's 0.3 ms pause, as the answer spin covers a commit. */
const SPIN_MS = 1;

interface RunResult {
  wake: Way;
  handoff_us_p50: number;
  handoff_us_p99: number;
  front_cpu_us_per_wake: number;
  front_switches_per_wake: number;
}

async function run(wake: Way, pings: number): Promise<RunResult> {
  const ping = SpscRing.create({ capacity_slots: 16, slot_words: 8, spin_iterations: 0 });
  const pong = SpscRing.create({ capacity_slots: 16, slot_words: 8, spin_iterations: 0 });
  const handoff_us: number[] = [];
  let drained_ms = 0;
  const drain = (): void => {
    const now = epochMs();
    drained_ms = performance.now();
    const n = ping.available();
    for (let k = 0; k < n; k++) {
      const o = ping.slotOffset(k);
      handoff_us.push((now - ping.f64[o / 2 + 1]) * 1000);
      const p = pong.tryClaim();
      if (p < 0) throw new Error('pong ring full');
      pong.i32[p] = ping.i32[o];
      pong.publish();
    }
    ping.release(n);
  };
  const keepAwake = wake === 'spin' ? (): boolean => performance.now() - drained_ms < SPIN_MS : undefined;
  const consumer = consumeOnLoop(ping, drain, wake === 'atomics' ? 'atomics' : 'bell', keepAwake);
  if (consumer.bell !== (wake !== 'atomics')) throw new Error(`asked for ${wake}, the consumer sleeps ${consumer.bell ? 'on the bell' : 'in Atomics.waitAsync'}`);
  const before = threadCounters();
  const worker = new Worker(new URL(import.meta.url), { workerData: { ping: ping.sab, pong: pong.sab, pings } satisfies PeerData });
  const exited = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', () => resolve());
  });
  await consumer.done;
  const after = threadCounters();
  await exited;
  if (handoff_us.length !== pings) throw new Error(`${handoff_us.length} of ${pings} pings arrived`);
  handoff_us.sort((a, b) => a - b);
  const at = (p: number): number => Math.round(quantileFloorRankOfSorted(handoff_us, p) * 10) / 10;
  return {
    wake, handoff_us_p50: at(0.5), handoff_us_p99: at(0.99),
    // The worker's start and end are in it too (the same for both ways, small over 5,000 pings).
    front_cpu_us_per_wake: Math.round((after.cpu_ns - before.cpu_ns) / 1000 / pings * 10) / 10,
    front_switches_per_wake: Math.round(((after.switches - before.switches) / pings) * 100) / 100,
  };
}

async function main(): Promise<void> {
  const { pings, runs } = pingRunKnobs(3);
  const built = nativeLoopBell() !== null;
  if (!built) console.log('native/build/loop_bell.node is not built (make native): Atomics.waitAsync only');
  const results = await alternating(built ? (['bell', 'atomics', 'spin'] as const) : (['atomics'] as const), runs, (w: Way) => run(w, pings),
    (w, res) => `${w.padEnd(7)} hand-off p50 ${res.handoff_us_p50} us p99 ${res.handoff_us_p99} us; ` +
      `front CPU per wake-up ${res.front_cpu_us_per_wake} us, context switches ${res.front_switches_per_wake}`);
  const fields = ['handoff_us_p50', 'handoff_us_p99', 'front_cpu_us_per_wake', 'front_switches_per_wake'] as const;
  const summary = (w: Way): Record<string, number> | null => medians(results, w, fields);
  console.log(JSON.stringify({ bench: 'front_wake', pings, runs, loop_bell: built, bell: summary('bell'), atomics: summary('atomics'), spin: summary('spin') }));
}

if (isMainThread) {
  runMain(main);
} else {
  peer(workerData as PeerData);
}
