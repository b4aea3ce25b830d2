// Cross-thread tests of SpscRing: a real worker_threads peer on the other side.
//
// Worker approach: worker_threads cannot run TypeScript, so the peer is the COMPILED
// dist/test/ring/ring_worker.js, which imports the compiled dist/src/ring/spsc_ring.js.
// Run `npx tsc -p tsconfig.json && npx vitest run` (the project's test command); this
// file refuses to run against a missing or stale dist with a message saying so. The
// test thread itself uses the TypeScript source via vitest, so the two sides are two
// builds of one codec that meet only through the SharedArrayBuffer.
import { describe, expect, it } from 'vitest';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { H_CONSUMER_WAITERS, H_PRODUCER_WAITERS } from '../../src/ring/ring_layout.js';
import { Rng, RECORD_WORDS, checkRecord, writeRecord } from './ring_records.js';
import { assertDistFresh, startWorker } from './ring_peer.js';
import type { RingWorkerResult } from './ring_worker.js';

// A wait gives up after WAIT_TIMEOUT_MS; a lost notify leaves its waiter asleep that long, and the
// ring counts a sleep that ended by its timeout (SpscRing.sleep_timeouts): the tests assert none on
// either side, a count, not a bound on how long a wait took (a worker's start-up on a loaded 2-core
// CI machine has taken over 2 s, and a 2 s bound on waits failed at random). WAKE_BOUND_MS only
// ends a poll for a state that never comes (`until`) with a message instead of a hang; it is longer
// than WAIT_TIMEOUT_MS, so a lost wake-up ends its sleep first and fails as counted. What the
// tests check beyond that is clock-free: every stall below waits for a state (ring full and the
// producer announced asleep; consumer drained and announced asleep; doorbell sleep armed), not for
// a time.
const WAIT_TIMEOUT_MS = 30_000;
const WAKE_BOUND_MS = 45_000;

/** Yields to the event loop until `ready()`; throws after WAKE_BOUND_MS (a hang, not a slow machine). */
async function until(what: string, ready: () => boolean): Promise<void> {
  const deadline = performance.now() + WAKE_BOUND_MS;
  while (!ready()) {
    if (performance.now() > deadline) throw new Error(`still waiting, after ${WAKE_BOUND_MS} ms, for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/** The worker producer found the ring full and announced its sleep for space (it will sleep). */
const producerAsleepOnFull = (ring: SpscRing): boolean =>
  ring.depth() === ring.capacity_slots && Atomics.load(ring.i32, H_PRODUCER_WAITERS) > 0;

/** Main-thread consumer on the event loop: drains in batches, verifies every record. */
async function consumeAsync(
  ring: SpscRing,
  seed: number,
  count: number,
  opts: { max_batch: number; stall_every: number },
): Promise<{ received: number; batches: number }> {
  const rng = new Rng(seed);
  let index = 0;
  let batches = 0;
  let next_stall = opts.stall_every;
  while (index < count) {
    let n = ring.available();
    if (n === 0) n = await ring.waitForDataAsync(WAIT_TIMEOUT_MS);
    if (n === 0) throw new Error(`consumer: no data after record ${index} (closed: ${ring.isClosed()})`);
    if (n > count - index) throw new Error(`consumer: ${n} records available, more than sent`);
    n = Math.min(n, opts.max_batch);
    for (let i = 0; i < n; i++) {
      const error = checkRecord(ring, ring.slotOffset(i), index++, rng);
      if (error !== null) throw new Error(error);
    }
    ring.release(n);
    batches++;
    // A stall lasts until the producer has filled the ring and announced its sleep (so it counted
    // a full ring and sleeps): not a fixed time, which a descheduled producer could sleep through.
    if (index >= next_stall && count - index > ring.capacity_slots) {
      next_stall += opts.stall_every;
      await until(`the producer to fill the ring (record ${index})`, () => producerAsleepOnFull(ring));
    }
  }
  return { received: index, batches };
}

/**
 * After both sides are done (the worker producer has published all it will): nothing followed the
 * last record, and no sleep on either side ended by its timeout (a lost wake-up).
 */
function expectCleanEnd(ring: SpscRing, report: RingWorkerResult): void {
  expect(ring.available(), 'records after the last one').toBe(0);
  expect(report.sleep_timeouts, 'worker sleeps ended by their timeout (a lost wake-up)').toBe(0);
  expect(ring.sleep_timeouts, 'main-thread sleeps ended by their timeout (a lost wake-up)').toBe(0);
}

describe('SpscRing across threads', () => {
  it('worker producer -> main consumer: 2,000,000 records, 1024 slots, batches', async () => {
    assertDistFresh();
    const count = 2_000_000;
    const seed = 0x1badb002;
    // Start near the signed wrap so the 32-bit sequence wraps mid-run too.
    const ring = SpscRing.create({
      capacity_slots: 1024,
      slot_words: RECORD_WORDS,
      initial_sequence: 2 ** 31 - 1_000_000,
    });
    const t0 = performance.now();
    const worker = startWorker(
      {
        role: 'producer', sab: ring.sab, seed, count, mode: 'batch', batch_max: 64,
        wait_timeout_ms: WAIT_TIMEOUT_MS,
      },
      () => ring.close(),
    );
    const consumed = consumeAsync(ring, seed, count, { max_batch: 1 << 30, stall_every: 100_000 });
    const [report, got] = await Promise.all([worker, consumed]);
    const ms = performance.now() - t0;
    expect(report.error).toBeNull();
    expect(got.received).toBe(count);
    expect(ring.producerSequence()).toBe((2 ** 31 - 1_000_000 + count) | 0);
    expect(ring.consumerSequence()).toBe(ring.producerSequence());
    // The ring is 1024 slots: the producer must have run into a full ring repeatedly.
    expect(report.full_count).toBeGreaterThan(0);
    expectCleanEnd(ring, report);
    console.log(
      `ring threads: ${count} records in ${ms.toFixed(0)} ms, ${got.batches} consumer batches, ` +
        `producer full ${report.full_count}x, slept ${report.producer_sleep_count}x, ` +
        `consumer slept ${ring.consumer_sleep_count}x`,
    );
  });

  it('quiet publishing (one wake-up per 16 batches): no lost wake-up, a full ring wakes the consumer', async () => {
    assertDistFresh();
    const count = 400_000;
    const seed = 0x0dd5eed;
    const ring = SpscRing.create({ capacity_slots: 128, slot_words: RECORD_WORDS });
    const worker = startWorker(
      {
        role: 'producer', sab: ring.sab, seed, count, mode: 'quiet', loud_every: 16, batch_max: 24,
        wait_timeout_ms: WAIT_TIMEOUT_MS,
      },
      () => ring.close(),
    );
    // Stalls make the consumer fall asleep with quiet records pending and let the ring fill.
    const consumed = consumeAsync(ring, seed, count, { max_batch: 40, stall_every: 20_000 });
    const [report, got] = await Promise.all([worker, consumed]);
    expect(report.error).toBeNull();
    expect(got.received).toBe(count);
    expect(report.full_count).toBeGreaterThan(0);
    expect(ring.consumer_sleep_count).toBeGreaterThan(0);
    // Any lost wake-up would make a wait run into its timeout (counted).
    expectCleanEnd(ring, report);
    expect(ring.depth()).toBe(0);
  });

  it('slow main consumer: the producer sees a full ring and waits, nothing is dropped', async () => {
    assertDistFresh();
    const count = 20_000;
    const seed = 77;
    const ring = SpscRing.create({ capacity_slots: 64, slot_words: RECORD_WORDS });
    const worker = startWorker(
      {
        role: 'producer', sab: ring.sab, seed, count, mode: 'single', batch_max: 1,
        wait_timeout_ms: WAIT_TIMEOUT_MS,
      },
      () => ring.close(),
    );
    // Drain at most 16 at a time and stall every 500 records until the producer waits on a full ring.
    const consumed = consumeAsync(ring, seed, count, { max_batch: 16, stall_every: 500 });
    const [report, got] = await Promise.all([worker, consumed]);
    expect(report.error).toBeNull();
    expect(got.received).toBe(count);
    expect(report.records).toBe(count);
    expect(report.full_count).toBeGreaterThan(0);
    expect(report.wait_calls).toBeGreaterThan(0);
    expect(report.producer_sleep_count).toBeGreaterThan(0); // it slept in Atomics.wait
    // Every stall (at 500, 1000, ... 19,500) ended only once the producer had found the ring full.
    expect(report.full_count).toBeGreaterThanOrEqual(count / 500 - 1);
    expectCleanEnd(ring, report);
  });

  it.each(['futex', 'atomics'] as const)('a worker asleep in waitForDataOnce (doorbell: %s) is woken by wakeConsumer alone (the front nudging the matcher), then by a record', async (doorbell) => {
    assertDistFresh();
    const wakes = 50;
    const ring = SpscRing.create({ capacity_slots: 16, slot_words: RECORD_WORDS, doorbell });
    // `make native` builds native/build/ring_futex.node (Linux): the doorbell then uses it.
    expect(ring.doorbellFutex(), 'native/build/ring_futex.node loads (make native)').toBe(doorbell === 'futex' && process.platform === 'linux');
    const progress = new Int32Array(new SharedArrayBuffer(8));
    const worker = startWorker(
      {
        role: 'doorbell', sab: ring.sab, seed: 1, count: wakes, mode: 'batch', batch_max: 1, wait_timeout_ms: WAIT_TIMEOUT_MS,
        progress: progress.buffer as SharedArrayBuffer,
      },
      () => ring.close(),
    );
    // Each wake-up waits until the worker has armed its i-th sleep (progress word 1: it read the
    // doorbell value it sleeps on), then rings: either the worker is asleep and the notify wakes it,
    // or it is about to sleep and its wait returns at once on the moved doorbell. Half the rings
    // come 2 ms after arming, so most of those find it asleep; neither case is counted, both are
    // correct. Nothing else rings, publishes or closes until the wake-ups are done, and the worker
    // fails any wake-up whose doorbell did not move (a timeout or a spurious return).
    const armed = (i: number) => (): boolean => Atomics.load(progress, 1) === i && Atomics.load(progress, 0) === i - 1;
    for (let i = 0; i < wakes; i++) {
      await until(`the worker to arm sleep ${i + 1}`, armed(i + 1));
      if (i % 2 === 0) await new Promise((r) => setTimeout(r, 2));
      ring.wakeConsumer();
    }
    await until('the worker to arm its last sleep', armed(wakes + 1));
    writeRecord(ring, ring.tryClaim(), 0, new Rng(1));
    ring.publish();
    const report = await worker;
    expect(report.error).toBeNull();
    expect(report.records).toBe(1);
    // Every call armed a sleep (before_sleep ran, so it slept or returned at once on the moved bell).
    expect(report.consumer_sleep_count).toBe(wakes + 1);
    // A lost wake-up would have slept the whole WAIT_TIMEOUT_MS: counted, and none.
    expect(report.sleep_timeouts).toBe(0);
  });

  it('main producer -> worker consumer blocking in Atomics.wait: 500,000 records', async () => {
    assertDistFresh();
    const count = 500_000;
    const seed = -123456;
    const ring = SpscRing.create({
      capacity_slots: 256,
      slot_words: RECORD_WORDS,
      initial_sequence: -250_000, // crosses 2^32 -> 0
    });
    const worker = startWorker(
      {
        role: 'consumer', sab: ring.sab, seed, count, mode: 'batch', batch_max: 1,
        wait_timeout_ms: WAIT_TIMEOUT_MS,
      },
      () => ring.close(),
    );
    const rng = new Rng(seed);
    const sizes = new Rng(seed + 1);
    let index = 0;
    let space_waits = 0;
    while (index < count) {
      const n = ring.claimBatch(Math.min(sizes.int(1, 100), count - index));
      if (n === 0) {
        space_waits++;
        const free = await ring.waitForSpaceAsync(WAIT_TIMEOUT_MS);
        if (free === 0) {
          throw new Error(`producer: no space at record ${index} (closed: ${ring.isClosed()})`);
        }
        continue;
      }
      for (let i = 0; i < n; i++) writeRecord(ring, ring.claimedSlotOffset(i), index++, rng);
      ring.publishBatch(n);
      // Now and then let the worker drain to empty and announce its sleep (so it sleeps in Atomics.wait).
      if (index % 50_000 < n && index < count) {
        await until(`the worker to drain and sleep (record ${index})`, () => ring.depth() === 0 && Atomics.load(ring.i32, H_CONSUMER_WAITERS) > 0);
      }
    }
    const report = await worker;
    expect(report.error).toBeNull();
    expect(report.records).toBe(count);
    expect(report.consumer_sleep_count).toBeGreaterThan(0);
    expect(space_waits).toBeGreaterThan(0); // the ring filled before the worker started
    expect(report.sleep_timeouts, 'worker sleeps ended by their timeout (a lost wake-up)').toBe(0);
    expect(ring.sleep_timeouts, 'main-thread sleeps ended by their timeout (a lost wake-up)').toBe(0);
    expect(ring.depth()).toBe(0);
  });
});
