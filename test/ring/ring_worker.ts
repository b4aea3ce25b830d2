// Worker side of the cross-thread ring tests. worker_threads cannot load TypeScript, so
// the tests spawn the COMPILED file dist/test/ring/ring_worker.js (the test command is
// `npx tsc -p tsconfig.json && npx vitest run`); it imports the compiled ring from
// dist/src/ring/, while the test's own thread uses the TypeScript source through vitest:
// two builds of one codec, meeting only through the SharedArrayBuffer header.
import { parentPort, workerData } from 'node:worker_threads';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { H_DOORBELL } from '../../src/ring/ring_layout.js';
import { Rng, checkRecord, writeRecord } from './ring_records.js';

export interface RingWorkerData {
  /**
   * 'doorbell': a consumer that sleeps in waitForDataOnce `count` times, each ended by a
   * wakeConsumer() with no record, then expects one record (the matcher's idle sleep).
   */
  role: 'producer' | 'consumer' | 'doorbell';
  sab: SharedArrayBuffer;
  seed: number;
  count: number;
  /**
   * Producer: 'batch' uses claimBatch/publishBatch with random batch sizes, 'single'
   * tryClaim/publish, 'quiet' like 'batch' but only every `loud_every`-th batch wakes the consumer
   * (publishBatchQuiet otherwise) and a final wakeConsumer, as the matcher does per commit marker.
   */
  mode: 'batch' | 'single' | 'quiet';
  loud_every?: number;
  batch_max: number;
  wait_timeout_ms: number;
  /**
   * Producer: after every this many records, a 0.2 ms pause (Atomics.wait), so an event-loop
   * consumer keeps going to sleep and must be woken (loop_bell.test.ts); absent: no pause.
   */
  pause_every?: number;
  /**
   * 'doorbell': word 0 counts the wake-ups the worker has returned from; word 1 counts the sleeps
   * it has armed (set from waitForDataOnce's before_sleep, so after it read the doorbell value it
   * will sleep on: a wakeConsumer() made once word 1 reads i + 1 cannot fall before that read).
   */
  progress?: SharedArrayBuffer;
}

export interface RingWorkerResult {
  done: true;
  records: number;
  error: string | null;
  full_count: number;
  producer_sleep_count: number;
  consumer_sleep_count: number;
  wait_calls: number;
  /** Sleeps of the worker's ring that ended by their timeout (SpscRing.sleep_timeouts): a lost wake-up shows here. */
  sleep_timeouts: number;
  elapsed_ms: number;
}

function produce(d: RingWorkerData, ring: SpscRing): number {
  const rng = new Rng(d.seed);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  let next_pause = d.pause_every ?? Infinity;
  const sizes = new Rng(d.seed ^ 0x5bd1e995);
  let wait_calls = 0;
  let index = 0;
  let batches = 0;
  while (index < d.count) {
    if (index >= next_pause) {
      next_pause += d.pause_every ?? Infinity;
      Atomics.wait(pause, 0, 0, 0.2);
    }
    if (d.mode === 'single') {
      const off = ring.tryClaim();
      if (off < 0) {
        wait_calls++;
        if (ring.waitForSpace(d.wait_timeout_ms) === 0) throw new Error(`producer: no space at ${index}`);
        continue;
      }
      writeRecord(ring, off, index++, rng);
      ring.publish();
    } else {
      const want = Math.min(sizes.int(1, d.batch_max), d.count - index);
      const n = ring.claimBatch(want);
      if (n === 0) {
        wait_calls++;
        if (ring.waitForSpace(d.wait_timeout_ms) === 0) throw new Error(`producer: no space at ${index}`);
        continue;
      }
      for (let i = 0; i < n; i++) writeRecord(ring, ring.claimedSlotOffset(i), index++, rng);
      batches++;
      if (d.mode === 'quiet' && batches % (d.loud_every ?? 8) !== 0) ring.publishBatchQuiet(n);
      else ring.publishBatch(n);
    }
  }
  if (d.mode === 'quiet') ring.wakeConsumer();
  return wait_calls;
}

function consume(d: RingWorkerData, ring: SpscRing): { records: number; error: string | null; wait_calls: number } {
  const rng = new Rng(d.seed);
  let wait_calls = 0;
  let index = 0;
  while (index < d.count) {
    let n = ring.available();
    if (n === 0) {
      wait_calls++;
      n = ring.waitForData(d.wait_timeout_ms);
      if (n === 0) return { records: index, error: `consumer: no data after record ${index}`, wait_calls };
    }
    if (n > d.count - index) return { records: index, error: `consumer: ${n} records, more than sent`, wait_calls };
    for (let i = 0; i < n; i++) {
      const error = checkRecord(ring, ring.slotOffset(i), index++, rng);
      if (error !== null) return { records: index, error, wait_calls };
    }
    ring.release(n);
  }
  return { records: index, error: null, wait_calls };
}

function doorbell(d: RingWorkerData, ring: SpscRing): { records: number; error: string | null; wait_calls: number } {
  let wait_calls = 0;
  const progress = new Int32Array(d.progress ?? new SharedArrayBuffer(8));
  let bell_armed = 0;
  const arm = (): boolean => {
    // Runs after waitForDataOnce read the doorbell it sleeps on, before it sleeps.
    bell_armed = Atomics.load(ring.i32, H_DOORBELL);
    Atomics.add(progress, 1, 1);
    return false;
  };
  for (let i = 0; i < d.count; i++) {
    wait_calls++;
    const n = ring.waitForDataOnce(d.wait_timeout_ms, arm);
    if (n !== 0) return { records: 0, error: `doorbell: ${n} records at wake-up ${i}, none were sent`, wait_calls };
    if (ring.isClosed()) return { records: 0, error: `doorbell: the ring closed at wake-up ${i}`, wait_calls };
    // Only a wakeConsumer() moves the doorbell here (no record, no close): an unmoved one means
    // the sleep ended some other way (its timeout, or a spurious return).
    if (Atomics.load(ring.i32, H_DOORBELL) === bell_armed) {
      return { records: 0, error: `doorbell: wake-up ${i} returned with the doorbell unmoved (not woken by wakeConsumer)`, wait_calls };
    }
    Atomics.store(progress, 0, i + 1);
  }
  let n = 0;
  for (let i = 0; i < 3 && n === 0; i++) {
    wait_calls++;
    n = ring.waitForDataOnce(d.wait_timeout_ms, arm);
  }
  if (n !== 1) return { records: n, error: `doorbell: ${n} records after the wake-ups, expected 1`, wait_calls };
  ring.release(1);
  return { records: 1, error: null, wait_calls };
}

const d = workerData as RingWorkerData;
const ring = SpscRing.attach(d.sab);
const t0 = performance.now();
let result: RingWorkerResult;
if (d.role === 'producer') {
  const wait_calls = produce(d, ring);
  result = {
    done: true, records: d.count, error: null, full_count: ring.producer_full_count,
    producer_sleep_count: ring.producer_sleep_count, consumer_sleep_count: 0, wait_calls, sleep_timeouts: ring.sleep_timeouts,
    elapsed_ms: performance.now() - t0,
  };
} else {
  const r = d.role === 'doorbell' ? doorbell(d, ring) : consume(d, ring);
  result = {
    done: true, records: r.records, error: r.error, full_count: 0, producer_sleep_count: 0,
    consumer_sleep_count: ring.consumer_sleep_count, wait_calls: r.wait_calls, sleep_timeouts: ring.sleep_timeouts,
    elapsed_ms: performance.now() - t0,
  };
}
parentPort?.postMessage(result);
