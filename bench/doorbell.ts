// Doorbell benchmark (issue 11): the cost of waking a thread asleep on an SPSC ring's doorbell,
// as the front wakes the matcher once per batch at light load. Two threads ping-pong one record
// over two rings, each side sleeping in `waitForDataOnce` (no spin) between pings and woken by the
// other's publish; the main thread pauses 0.3 ms before each ping so the worker is asleep when
// it comes. Alternating runs with the doorbell on the native futex (native/ring_futex.c, built by
// `make native`) and on Atomics.wait/notify (V8's FutexEmulation). Reports the round trip (two
// hand-offs) p50/p99 and the worker's voluntary context switches per wake-up (1.00 is one sleep
// and one wake; more is V8's mutex hand-off).
//
//   npx tsc -p tsconfig.json && make native && node dist/bench/doorbell.js     # --pings N [5000] --runs N [2]
//
// The last line printed is one JSON object: {"bench":"doorbell",...}.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { nativeFutex } from '../src/util/futex.js';
import { SpscRing } from '../src/ring/spsc_ring.js';
import { runMain } from './cli_args.js';
import { alternating, medians, pingRunKnobs, voluntarySwitches } from './ab_runs.js';
import { quantileFloorRankOfSorted } from './quantile.js';

interface PeerData {
  ping: SharedArrayBuffer;
  pong: SharedArrayBuffer;
}

/** Bounds every wait (a lost wake-up shows as a round trip of this length). */
const WAIT_MS = 1000;

function peer(d: PeerData): void {
  const ping = SpscRing.attach(d.ping, { spin_iterations: 0 });
  const pong = SpscRing.attach(d.pong, { spin_iterations: 0 });
  const switches0 = voluntarySwitches();
  let wakes = 0;
  for (;;) {
    const n = ping.waitForDataOnce(WAIT_MS);
    if (n === 0) {
      if (ping.isClosed()) break;
      continue;
    }
    wakes++;
    const value = ping.i32[ping.slotOffset(0)];
    ping.release(1);
    const o = pong.tryClaim();
    if (o < 0) throw new Error('pong ring full');
    pong.i32[o] = value;
    pong.publish();
  }
  parentPort?.postMessage({ wakes, switches: voluntarySwitches() - switches0 });
}

interface RunResult {
  doorbell: 'futex' | 'atomics';
  rtt_us_p50: number;
  rtt_us_p99: number;
  worker_switches_per_wake: number;
}

async function run(doorbell: 'futex' | 'atomics', pings: number): Promise<RunResult> {
  const ping = SpscRing.create({ capacity_slots: 16, slot_words: 8, doorbell, spin_iterations: 0 });
  const pong = SpscRing.create({ capacity_slots: 16, slot_words: 8, doorbell, spin_iterations: 0 });
  const worker = new Worker(new URL(import.meta.url), { workerData: { ping: ping.sab, pong: pong.sab } satisfies PeerData });
  const done = new Promise<{ wakes: number; switches: number }>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const rtt_us: number[] = [];
  for (let i = 1; i <= pings; i++) {
    Atomics.wait(pause, 0, 0, 0.3);
    const t = performance.now();
    const o = ping.tryClaim();
    if (o < 0) throw new Error('ping ring full');
    ping.i32[o] = i;
    ping.publish();
    if (pong.waitForDataOnce(WAIT_MS) === 0 && pong.waitForDataOnce(WAIT_MS) === 0) throw new Error(`no pong for ping ${i}`);
    if (pong.i32[pong.slotOffset(0)] !== i) throw new Error(`pong ${pong.i32[pong.slotOffset(0)]} for ping ${i}`);
    pong.release(1);
    rtt_us.push((performance.now() - t) * 1000);
  }
  ping.close();
  const peer_report = await done;
  await worker.terminate();
  rtt_us.sort((a, b) => a - b);
  const at = (p: number): number => Math.round(quantileFloorRankOfSorted(rtt_us, p) * 10) / 10;
  return {
    doorbell, rtt_us_p50: at(0.5), rtt_us_p99: at(0.99),
    worker_switches_per_wake: Math.round((peer_report.switches / Math.max(1, peer_report.wakes)) * 100) / 100,
  };
}

async function main(): Promise<void> {
  const { pings, runs } = pingRunKnobs(2);
  const futex = nativeFutex() !== null;
  if (!futex) console.log('native/build/ring_futex.node is not built (make native): Atomics only');
  const results = await alternating(futex ? (['futex', 'atomics'] as const) : (['atomics'] as const), runs, (d) => run(d, pings),
    (d, res) => `${d.padEnd(7)} round trip (two hand-offs) p50 ${res.rtt_us_p50} us p99 ${res.rtt_us_p99} us; ` +
      `worker context switches per wake-up ${res.worker_switches_per_wake}`);
  const fields = ['rtt_us_p50', 'rtt_us_p99', 'worker_switches_per_wake'] as const;
  const summary = (d: 'futex' | 'atomics'): Record<string, number> | null => medians(results, d, fields);
  console.log(JSON.stringify({ bench: 'doorbell', pings, runs, native_futex: futex, futex: summary('futex'), atomics: summary('atomics') }));
}

if (isMainThread) {
  runMain(main);
} else {
  peer(workerData as PeerData);
}
