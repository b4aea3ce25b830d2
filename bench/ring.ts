// Ring benchmark: SpscRing throughput and round-trip latency between two threads.
//
//   npx tsc -p tsconfig.json && node dist/bench/ring.js
//
// This file is both sides: the main thread orchestrates and consumes, and it starts
// itself again as a worker_threads producer / echo peer (see `isMainThread`).
//   1. throughput: a worker produces RECORDS_BATCH records with claimBatch/publishBatch
//      into a 4096-slot ring; the main thread drains in batches (waitForData, then
//      available/slotOffset/release) and checks the index word of every record.
//      A shorter run publishing one record at a time (tryClaim/publish) is printed
//      for comparison.
//   2. round trip: the main thread sends a ping over ring A, the worker copies it to
//      ring B, the main thread waits for the pong; HdrHistogram of the round trip
//      (process.hrtime.bigint). Default wait strategy (spin, then Atomics.wait), then
//      again with no spinning (every hand-off is an Atomics.wait/notify wake-up).
//   3. native: the C reference (native-bench/spsc_ring.c: the same protocol between two threads
//      over shared memory, the same words written and checked) at this bench's 32-byte slots and
//      at src/ring's record size (RECORD_WORDS x 4 = 192 bytes), beside a JS batch run at 192
//      bytes; native_ratio = JS / C at 192 bytes.
// Every phase is bounded by a record/ping count and a wall-clock deadline. The last
// line printed is one JSON object: {"bench":"ring","records_per_s":..,"rtt_us_p50":..,"rtt_us_p99":..,
// "native_records_per_s":..,"native_ratio":..}
import hdr from 'hdr-histogram-js';
import { cpus, loadavg } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { RECORD_WORDS } from '../src/ring/records.js';
import { RING_WAIT_SPIN_ITERATIONS_DEFAULT, SpscRing } from '../src/ring/spsc_ring.js';
import { runNativeRing } from './native.js';

const SLOT_WORDS = 8; // 32-byte records
const THROUGHPUT_CAPACITY_SLOTS = 4096;
const RECORDS_BATCH = 10_000_000;
const RECORDS_SINGLE = 2_000_000;
/** Runs at src/ring's record size (JS and C); fewer records: each is 6x larger. */
const RECORDS_RECORD_SIZE = 5_000_000;
const PRODUCER_BATCH_MAX = 256;
const THROUGHPUT_DEADLINE_MS = 20_000;
const RTT_CAPACITY_SLOTS = 64;
const RTT_WARMUP = 20_000;
const RTT_PINGS = 200_000;
const RTT_PINGS_NO_SPIN = 20_000;
const RTT_DEADLINE_MS = 10_000;
const WAIT_TIMEOUT_MS = 5_000;
const WORKER_EXIT_TIMEOUT_MS = 5_000;

type Job =
  | { kind: 'produce'; sab: SharedArrayBuffer; control: SharedArrayBuffer; count: number; batch: boolean }
  | { kind: 'echo'; ping: SharedArrayBuffer; pong: SharedArrayBuffer; spin_iterations: number };

// ------------------------------------------------------------------- worker side

function workerMain(job: Job): void {
  if (job.kind === 'produce') {
    const ring = SpscRing.attach(job.sab);
    const control = new Int32Array(job.control);
    parentPort?.postMessage('ready');
    Atomics.wait(control, 0, 0, WAIT_TIMEOUT_MS); // start gate
    const i32 = ring.i32;
    let index = 0;
    while (index < job.count) {
      if (job.batch) {
        const want = Math.min(PRODUCER_BATCH_MAX, job.count - index);
        let n = ring.claimBatch(want);
        if (n === 0) {
          if (ring.waitForSpace(WAIT_TIMEOUT_MS) === 0) break; // consumer gone: stop
          n = ring.claimBatch(want);
          if (n === 0) continue;
        }
        for (let i = 0; i < n; i++) {
          const off = ring.claimedSlotOffset(i);
          i32[off] = index;
          i32[off + 1] = index ^ 0x5a5a5a5a;
          ring.f64[(off >> 1) + 1] = index * 1_000_003;
          index++;
        }
        ring.publishBatch(n);
      } else {
        const off = ring.tryClaim();
        if (off < 0) {
          if (ring.waitForSpace(WAIT_TIMEOUT_MS) === 0) break;
          continue;
        }
        i32[off] = index;
        i32[off + 1] = index ^ 0x5a5a5a5a;
        ring.f64[(off >> 1) + 1] = index * 1_000_003;
        index++;
        ring.publish();
      }
    }
    parentPort?.postMessage({ produced: index, full: ring.producer_full_count });
    return;
  }
  // Echo: copy each ping record to the pong ring until the ping ring is closed.
  const ping = SpscRing.attach(job.ping, { spin_iterations: job.spin_iterations });
  const pong = SpscRing.attach(job.pong, { spin_iterations: job.spin_iterations });
  for (;;) {
    const n = ping.waitForData(WAIT_TIMEOUT_MS);
    if (n === 0) break; // closed (or the main thread went away)
    for (let i = 0; i < n; i++) {
      let off = pong.tryClaim();
      if (off < 0) {
        pong.waitForSpace(WAIT_TIMEOUT_MS);
        off = pong.tryClaim();
        if (off < 0) return;
      }
      const src = ping.slotOffset(i);
      for (let w = 0; w < SLOT_WORDS; w++) pong.i32[off + w] = ping.i32[src + w];
      pong.publish();
    }
    ping.release(n);
  }
}

// ------------------------------------------------------------------- main side

function startWorker(job: Job): { worker: Worker; messages: unknown[]; exited: Promise<void> } {
  const worker = new Worker(new URL(import.meta.url), { workerData: job });
  const messages: unknown[] = [];
  worker.on('message', (m: unknown) => messages.push(m));
  const exited = new Promise<void>((resolve, reject) => {
    worker.on('error', reject);
    worker.on('exit', () => resolve());
  });
  return { worker, messages, exited };
}

async function untilMessage(messages: unknown[], count: number): Promise<void> {
  const deadline = performance.now() + WAIT_TIMEOUT_MS;
  while (messages.length < count) {
    if (performance.now() > deadline) throw new Error('bench worker did not answer');
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function stopWorker(w: { worker: Worker; exited: Promise<void> }): Promise<void> {
  const timer = setTimeout(() => void w.worker.terminate(), WORKER_EXIT_TIMEOUT_MS);
  await w.exited;
  clearTimeout(timer);
}

async function throughput(count: number, batch: boolean, slot_words = SLOT_WORDS): Promise<{ records: number; seconds: number; full: number }> {
  const ring = SpscRing.create({ capacity_slots: THROUGHPUT_CAPACITY_SLOTS, slot_words });
  const control = new SharedArrayBuffer(4);
  const w = startWorker({ kind: 'produce', sab: ring.sab, control, count, batch });
  await untilMessage(w.messages, 1);
  const i32 = ring.i32;
  const t0 = performance.now();
  const deadline = t0 + THROUGHPUT_DEADLINE_MS;
  Atomics.store(new Int32Array(control), 0, 1);
  Atomics.notify(new Int32Array(control), 0);
  let index = 0;
  while (index < count) {
    const n = ring.waitForData(WAIT_TIMEOUT_MS);
    if (n === 0) throw new Error(`throughput: no data after ${index} records`);
    for (let i = 0; i < n; i++) {
      if (i32[ring.slotOffset(i)] !== index) throw new Error(`throughput: record ${index} out of order`);
      index++;
    }
    ring.release(n);
    if ((index & 0xffff) < n && performance.now() > deadline) break; // bounded in time too
  }
  const seconds = (performance.now() - t0) / 1000;
  ring.close();
  await stopWorker(w);
  const report = w.messages[1] as { full: number } | undefined;
  return { records: index, seconds, full: report?.full ?? 0 };
}

interface Rtt {
  pings: number;
  p50_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
}

async function roundTrip(spin_iterations: number, pings: number): Promise<Rtt> {
  const ping = SpscRing.create({ capacity_slots: RTT_CAPACITY_SLOTS, slot_words: SLOT_WORDS, spin_iterations });
  const pong = SpscRing.create({ capacity_slots: RTT_CAPACITY_SLOTS, slot_words: SLOT_WORDS, spin_iterations });
  const w = startWorker({ kind: 'echo', ping: ping.sab, pong: pong.sab, spin_iterations });
  const histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000_000, // ns
    numberOfSignificantValueDigits: 3,
  });
  const deadline = performance.now() + RTT_DEADLINE_MS + WAIT_TIMEOUT_MS; // + worker start
  let sent = 0;
  for (let k = 0; k < RTT_WARMUP + pings; k++) {
    const t = process.hrtime.bigint();
    const off = ping.tryClaim();
    if (off < 0) throw new Error('round trip: ping ring full');
    ping.i32[off] = k;
    ping.publish();
    if (pong.waitForData(WAIT_TIMEOUT_MS) !== 1) throw new Error(`round trip: no pong ${k}`);
    if (pong.i32[pong.slotOffset(0)] !== k) throw new Error(`round trip: wrong pong ${k}`);
    pong.release(1);
    const ns = Number(process.hrtime.bigint() - t);
    if (k >= RTT_WARMUP) {
      histogram.recordValue(ns);
      sent++;
      if ((sent & 0x3ff) === 0 && performance.now() > deadline) break;
    }
  }
  ping.close();
  await stopWorker(w);
  const us = (q: number): number => Math.round(histogram.getValueAtPercentile(q) / 10) / 100;
  const result = { pings: sent, p50_us: us(50), p99_us: us(99), p999_us: us(99.9), max_us: Math.round(histogram.maxValue / 1000) };
  histogram.destroy();
  return result;
}

async function main(): Promise<void> {
  const load = (): string => loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(
    `ring bench: node ${process.version}, ${cpus().length} cpus, load average ${load()}, ` +
      `slot ${SLOT_WORDS * 4} bytes`,
  );
  const batch = await throughput(RECORDS_BATCH, true);
  const records_per_s = Math.round(batch.records / batch.seconds);
  console.log(
    `throughput, batch publish (<= ${PRODUCER_BATCH_MAX}/store), ${THROUGHPUT_CAPACITY_SLOTS} slots: ` +
      `${batch.records} records in ${batch.seconds.toFixed(3)} s = ${(records_per_s / 1e6).toFixed(2)} M records/s ` +
      `(producer found the ring full ${batch.full}x)`,
  );
  const single = await throughput(RECORDS_SINGLE, false);
  console.log(
    `throughput, one publish per record:  ${single.records} records in ${single.seconds.toFixed(3)} s = ` +
      `${(single.records / single.seconds / 1e6).toFixed(2)} M records/s`,
  );
  const rtt = await roundTrip(RING_WAIT_SPIN_ITERATIONS_DEFAULT, RTT_PINGS);
  console.log(
    `round trip, spin ${RING_WAIT_SPIN_ITERATIONS_DEFAULT} then Atomics.wait: ${rtt.pings} pings p50 ${rtt.p50_us} us, p99 ${rtt.p99_us} us, ` +
      `p99.9 ${rtt.p999_us} us, max ${rtt.max_us} us`,
  );
  const sleepy = await roundTrip(0, RTT_PINGS_NO_SPIN);
  console.log(
    `round trip, Atomics.wait only (no spin): ${sleepy.pings} pings p50 ${sleepy.p50_us} us, ` +
      `p99 ${sleepy.p99_us} us, p99.9 ${sleepy.p999_us} us, max ${sleepy.max_us} us`,
  );
  const record_bytes = RECORD_WORDS * 4;
  const js_record = await throughput(RECORDS_RECORD_SIZE, true, RECORD_WORDS);
  const js_record_per_s = Math.round(js_record.records / js_record.seconds);
  const native_small = runNativeRing(RECORDS_BATCH, THROUGHPUT_CAPACITY_SLOTS, SLOT_WORDS * 4, PRODUCER_BATCH_MAX);
  const native_record = runNativeRing(RECORDS_RECORD_SIZE, THROUGHPUT_CAPACITY_SLOTS, record_bytes, PRODUCER_BATCH_MAX);
  const native_ratio = js_record_per_s / native_record.records_per_s;
  console.log(
    `native C ring (native-bench/spsc_ring.c), batch publish, ${THROUGHPUT_CAPACITY_SLOTS} slots: ` +
      `${SLOT_WORDS * 4}-byte slots ${(native_small.records_per_s / 1e6).toFixed(2)} M records/s (JS / C ${(records_per_s / native_small.records_per_s).toFixed(3)}); ` +
      `${record_bytes}-byte records (src/ring) ${(native_record.records_per_s / 1e6).toFixed(2)} M records/s vs JS ` +
      `${(js_record_per_s / 1e6).toFixed(2)} M records/s (JS / C ${native_ratio.toFixed(3)})`,
  );
  console.log(`load average at the end: ${load()} (figures are noisy when other processes share the cores)`);
  console.log(JSON.stringify({
    bench: 'ring', records_per_s, rtt_us_p50: rtt.p50_us, rtt_us_p99: rtt.p99_us,
    record_bytes, record_size_records_per_s: js_record_per_s,
    native_records_per_s: Math.round(native_record.records_per_s),
    native_ratio: Math.round(native_ratio * 1000) / 1000,
    native_records_per_s_32b: Math.round(native_small.records_per_s),
    native_ratio_32b: Math.round((records_per_s / native_small.records_per_s) * 1000) / 1000,
  }));
}

if (isMainThread) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
} else {
  workerMain(workerData as Job);
}
