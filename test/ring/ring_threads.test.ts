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
import { H_DOORBELL_WAITERS } from '../../src/ring/ring_layout.js';
import { Rng, RECORD_WORDS, checkRecord, writeRecord } from './ring_records.js';
import { assertDistFresh, startWorker } from './ring_peer.js';

// A wait gives up after WAIT_TIMEOUT_MS. Every legitimate wait here is short (consumer
// stalls of a few ms, worker start-up), so a wait longer than WAKE_BOUND_MS means a
// notify was lost and the waiter only woke from its timeout: that fails the test.
const WAIT_TIMEOUT_MS = 3_000;
const WAKE_BOUND_MS = 2_000;

/** Main-thread consumer on the event loop: drains in batches, verifies every record. */
async function consumeAsync(
  ring: SpscRing,
  seed: number,
  count: number,
  opts: { max_batch: number; stall_every: number; stall_ms: number },
): Promise<{ received: number; batches: number; max_wait_ms: number }> {
  const rng = new Rng(seed);
  let max_wait_ms = 0;
  let index = 0;
  let batches = 0;
  let next_stall = opts.stall_every;
  while (index < count) {
    let n = ring.available();
    if (n === 0) {
      const t = performance.now();
      n = await ring.waitForDataAsync(WAIT_TIMEOUT_MS);
      max_wait_ms = Math.max(max_wait_ms, performance.now() - t);
    }
    if (n === 0) throw new Error(`consumer: no data after record ${index} (closed: ${ring.isClosed()})`);
    if (n > count - index) throw new Error(`consumer: ${n} records available, more than sent`);
    n = Math.min(n, opts.max_batch);
    for (let i = 0; i < n; i++) {
      const error = checkRecord(ring, ring.slotOffset(i), index++, rng);
      if (error !== null) throw new Error(error);
    }
    ring.release(n);
    batches++;
    if (index >= next_stall && index < count) {
      next_stall += opts.stall_every;
      await new Promise((r) => setTimeout(r, opts.stall_ms));
    }
  }
  // Nothing may follow the last record.
  await new Promise((r) => setTimeout(r, 20));
  expect(ring.available()).toBe(0);
  return { received: index, batches, max_wait_ms };
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
    const consumed = consumeAsync(ring, seed, count, { max_batch: 1 << 30, stall_every: 100_000, stall_ms: 2 });
    const [report, got] = await Promise.all([worker, consumed]);
    const ms = performance.now() - t0;
    expect(report.error).toBeNull();
    expect(got.received).toBe(count);
    expect(ring.producerSequence()).toBe((2 ** 31 - 1_000_000 + count) | 0);
    expect(ring.consumerSequence()).toBe(ring.producerSequence());
    // The ring is 1024 slots: the producer must have run into a full ring repeatedly.
    expect(report.full_count).toBeGreaterThan(0);
    expect(report.max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
    expect(got.max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
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
    const consumed = consumeAsync(ring, seed, count, { max_batch: 40, stall_every: 20_000, stall_ms: 2 });
    const [report, got] = await Promise.all([worker, consumed]);
    expect(report.error).toBeNull();
    expect(got.received).toBe(count);
    expect(report.full_count).toBeGreaterThan(0);
    expect(ring.consumer_sleep_count).toBeGreaterThan(0);
    // Any lost wake-up would make a wait run into its 3 s timeout.
    expect(report.max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
    expect(got.max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
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
    // Drain at most 16 at a time and stall 1 ms every 500 records: the producer outruns us.
    const consumed = consumeAsync(ring, seed, count, { max_batch: 16, stall_every: 500, stall_ms: 1 });
    const [report, got] = await Promise.all([worker, consumed]);
    expect(report.error).toBeNull();
    expect(got.received).toBe(count);
    expect(report.records).toBe(count);
    expect(report.full_count).toBeGreaterThan(0);
    expect(report.wait_calls).toBeGreaterThan(0);
    expect(report.producer_sleep_count).toBeGreaterThan(0); // it slept in Atomics.wait
    expect(report.full_count).toBeGreaterThanOrEqual(count / 500 - 1);
    expect(report.max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
    expect(got.max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
  });

  it.each(['futex', 'atomics'] as const)('a worker asleep in waitForDataOnce (doorbell: %s) is woken by wakeConsumer alone (the front nudging the matcher), then by a record', async (doorbell) => {
    assertDistFresh();
    const wakes = 50;
    const ring = SpscRing.create({ capacity_slots: 16, slot_words: RECORD_WORDS, doorbell });
    // `make native` builds native/build/ring_futex.node (Linux): the doorbell then uses it.
    expect(ring.doorbellFutex(), 'native/build/ring_futex.node loads (make native)').toBe(doorbell === 'futex' && process.platform === 'linux');
    const progress = new Int32Array(new SharedArrayBuffer(4));
    const worker = startWorker(
      {
        role: 'doorbell', sab: ring.sab, seed: 1, count: wakes, mode: 'batch', batch_max: 1, wait_timeout_ms: WAIT_TIMEOUT_MS,
        progress: progress.buffer as SharedArrayBuffer,
      },
      () => ring.close(),
    );
    // Each wake-up waits until the worker is in its i-th sleep (it returned from i wake-ups and
    // announced itself in the doorbell waiters word), then rings; the ones rung without the 2 ms
    // pause may land between its announcement and its Atomics.wait.
    const waiters = ring.i32.subarray(H_DOORBELL_WAITERS, H_DOORBELL_WAITERS + 1);
    const sleepingAfter = async (i: number): Promise<void> => {
      const deadline = performance.now() + WAKE_BOUND_MS;
      while ((Atomics.load(progress, 0) !== i || Atomics.load(waiters, 0) === 0) && performance.now() < deadline) {
        await new Promise((r) => setImmediate(r));
      }
    };
    for (let i = 0; i < wakes; i++) {
      await sleepingAfter(i);
      if (i % 2 === 0) await new Promise((r) => setTimeout(r, 2));
      ring.wakeConsumer();
    }
    await sleepingAfter(wakes);
    writeRecord(ring, ring.tryClaim(), 0, new Rng(1));
    ring.publish();
    const report = await worker;
    expect(report.error).toBeNull();
    expect(report.records).toBe(1);
    // A lost wake-up would have slept the whole WAIT_TIMEOUT_MS.
    expect(report.max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
    expect(report.consumer_sleep_count).toBeGreaterThanOrEqual(wakes);
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
    let max_wait_ms = 0;
    while (index < count) {
      const n = ring.claimBatch(Math.min(sizes.int(1, 100), count - index));
      if (n === 0) {
        space_waits++;
        const t = performance.now();
        const free = await ring.waitForSpaceAsync(WAIT_TIMEOUT_MS);
        max_wait_ms = Math.max(max_wait_ms, performance.now() - t);
        if (free === 0) {
          throw new Error(`producer: no space at record ${index} (closed: ${ring.isClosed()})`);
        }
        continue;
      }
      for (let i = 0; i < n; i++) writeRecord(ring, ring.claimedSlotOffset(i), index++, rng);
      ring.publishBatch(n);
      // Now and then let the worker drain to empty so it goes to sleep in Atomics.wait.
      if (index % 50_000 < n) await new Promise((r) => setTimeout(r, 5));
    }
    const report = await worker;
    expect(report.error).toBeNull();
    expect(report.records).toBe(count);
    expect(report.consumer_sleep_count).toBeGreaterThan(0);
    expect(space_waits).toBeGreaterThan(0); // the ring filled before the worker started
    expect(report.max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
    expect(max_wait_ms).toBeLessThan(WAKE_BOUND_MS);
    expect(ring.depth()).toBe(0);
  });
});
