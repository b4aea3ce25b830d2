// Single-thread unit tests of SpscRing's waits: one object plays producer and consumer in turn,
// the waiter and the one who wakes it (the same paths; across threads: ring_threads.test.ts).
import { describe, expect, it, vi } from 'vitest';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { drain, produce } from './spsc_ring_helpers.js';

// Waits that a correct ring ends at once (a publish, wakeConsumer, close) are given WAKE_WAIT_MS,
// and the elapsed time is held only under HANG_BOUND_MS: a lost wake-up sleeps the whole
// WAKE_WAIT_MS and fails, while a loaded CI machine's scheduling delays (ms, rarely seconds)
// cannot. The bound catches that hang and nothing finer.
const WAKE_WAIT_MS = 30_000;
const HANG_BOUND_MS = 20_000;

describe('SpscRing waits', () => {
  it('wait methods return at once when ready and time out when not', async () => {
    const ring = SpscRing.create({ capacity_slots: 2, slot_words: 2, spin_iterations: 10 });
    let t = performance.now();
    expect(ring.waitForData(20)).toBe(0);
    // Lower bounds on a timeout are one-sided (load only makes a wait end later): not flaky.
    expect(performance.now() - t).toBeGreaterThanOrEqual(15);
    t = performance.now();
    expect(await ring.waitForDataAsync(20)).toBe(0);
    expect(performance.now() - t).toBeGreaterThanOrEqual(15);
    expect(ring.waitForSpace(0, 2)).toBe(2);
    produce(ring, [1, 2]);
    expect(ring.waitForData(0)).toBe(2);
    expect(await ring.waitForDataAsync(0)).toBe(2);
    expect(ring.waitForSpace(10)).toBe(0);
    expect(await ring.waitForSpaceAsync(10)).toBe(0);
    // They slept (at least once each; a loaded machine may wake and re-sleep them).
    expect(ring.producer_sleep_count).toBeGreaterThanOrEqual(2);
    expect(ring.consumer_sleep_count).toBeGreaterThanOrEqual(2);
    // An async waiter is woken by a publish made later on the same thread.
    drain(ring);
    const pending = ring.waitForDataAsync(WAKE_WAIT_MS);
    setTimeout(() => produce(ring, [3]), 5);
    t = performance.now();
    expect(await pending).toBe(1);
    expect(performance.now() - t).toBeLessThan(HANG_BOUND_MS);
  });

  it('the untimed async wait ends only on a publish or on close', async () => {
    const ring = SpscRing.create({ capacity_slots: 4, slot_words: 2 });
    produce(ring, [1]);
    expect(await ring.waitForDataAsyncUntilClosed()).toBe(1); // data already there
    drain(ring);
    let settled = false;
    const sleeps = ring.consumer_sleep_count;
    const woken = ring.waitForDataAsyncUntilClosed().then((n) => {
      settled = true;
      return n;
    });
    // Nothing published: still waiting. Not a 30 ms look: it went to sleep (counted as it called
    // Atomics.waitAsync, with no timeout), and only a notify (a publish, close) or data ends that
    // wait; a later turn of the event loop shows it did not return instead of sleeping.
    expect(ring.consumer_sleep_count).toBe(sleeps + 1);
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    produce(ring, [2]);
    expect(await woken).toBe(1);
    drain(ring);
    const closed = ring.waitForDataAsyncUntilClosed();
    setTimeout(() => ring.close(), 5);
    expect(await closed).toBe(0);
  });

  it('a quiet publish leaves a sleeping consumer asleep; a loud one or wakeConsumer wakes it', async () => {
    const ring = SpscRing.create({ capacity_slots: 4, slot_words: 2 });
    const claimOne = (v: number): void => {
      expect(ring.claimBatch(1)).toBe(1);
      ring.i32[ring.claimedSlotOffset(0)] = v;
    };
    let woke_at = 0;
    const pending = ring.waitForDataAsync(WAKE_WAIT_MS).then((n) => {
      woke_at = performance.now();
      return n;
    });
    expect(ring.consumer_sleep_count).toBe(1); // asleep (Atomics.waitAsync), WAKE_WAIT_MS to its timeout
    claimOne(1);
    // Still asleep: nobody told it. Not a 60 ms look: the quiet publish notifies nobody (only a
    // notify, or the 30 s timeout, ends an Atomics.waitAsync), and a later turn shows it asleep.
    const notify = vi.spyOn(Atomics, 'notify');
    try {
      ring.publishBatchQuiet(1);
      expect(notify).not.toHaveBeenCalled();
    } finally {
      notify.mockRestore();
    }
    await new Promise((r) => setImmediate(r));
    expect(woke_at).toBe(0);
    expect(ring.available()).toBe(1); // yet an awake reader sees the record at once
    const t = performance.now();
    ring.wakeConsumer();
    expect(await pending).toBe(1);
    expect(woke_at - t).toBeLessThan(HANG_BOUND_MS);
    // A producer that must wait for space first wakes the consumer it kept quiet.
    drain(ring);
    const consumer = ring.waitForDataAsync(WAKE_WAIT_MS);
    for (let v = 0; v < 4; v++) {
      claimOne(v);
      ring.publishBatchQuiet(1);
    }
    const t2 = performance.now();
    const space = ring.waitForSpaceAsync(WAKE_WAIT_MS);
    expect(await consumer).toBe(4);
    expect(performance.now() - t2).toBeLessThan(HANG_BOUND_MS);
    drain(ring);
    expect(await space).toBe(4);
  });

  it('waitForDataOnce: data at once, one sleep that a wake-up after the last check cannot be lost to, before_sleep may cancel it', () => {
    const ring = SpscRing.create({ capacity_slots: 4, slot_words: 2, spin_iterations: 5 });
    produce(ring, [7]);
    expect(ring.waitForDataOnce(WAKE_WAIT_MS)).toBe(1);
    drain(ring);
    // Nothing and no news: one sleep, to the timeout.
    let t = performance.now();
    expect(ring.waitForDataOnce(20)).toBe(0);
    expect(performance.now() - t).toBeGreaterThanOrEqual(15);
    expect(ring.consumer_sleep_count).toBe(1);
    // News found after announcing the sleep cancels it.
    let asked = 0;
    t = performance.now();
    expect(ring.waitForDataOnce(WAKE_WAIT_MS, () => ++asked > 0)).toBe(0);
    expect(asked).toBe(1);
    expect(ring.consumer_sleep_count).toBe(1);
    expect(performance.now() - t).toBeLessThan(HANG_BOUND_MS);
    // A producer's wake-up that lands between the last check and the sleep (here: inside
    // before_sleep, the worst moment) ends the sleep at once: it rang the doorbell first. Had the
    // sleep been on the producer sequence, which did not move, it would have slept WAKE_WAIT_MS.
    t = performance.now();
    expect(ring.waitForDataOnce(WAKE_WAIT_MS, () => {
      ring.wakeConsumer();
      return false;
    })).toBe(0);
    expect(ring.consumer_sleep_count).toBe(2);
    expect(performance.now() - t).toBeLessThan(HANG_BOUND_MS);
    // The same for a record published at that moment: it is returned.
    expect(ring.waitForDataOnce(WAKE_WAIT_MS, () => {
      const off = ring.tryClaim();
      ring.i32[off] = 9;
      ring.publish();
      return false;
    })).toBe(1);
    expect(drain(ring)).toEqual([9]);
    // And for close.
    t = performance.now();
    expect(ring.waitForDataOnce(WAKE_WAIT_MS, () => {
      ring.close();
      return false;
    })).toBe(0);
    expect(performance.now() - t).toBeLessThan(HANG_BOUND_MS);
    expect(ring.waitForDataOnce(WAKE_WAIT_MS)).toBe(0); // closed: no sleep at all
  });

  it('close wakes waiters and leaves records readable', async () => {
    const ring = SpscRing.create({ capacity_slots: 4, slot_words: 2 });
    const pending = ring.waitForDataAsync(5_000);
    setTimeout(() => ring.close(), 5);
    expect(await pending).toBe(0);
    expect(ring.isClosed()).toBe(true);
    expect(ring.waitForData(5_000)).toBe(0);
    produce(ring, [1]);
    expect(ring.waitForData(5_000)).toBe(1);
  });
});
