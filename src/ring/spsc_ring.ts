// SpscRing: a single-producer single-consumer ring of fixed-size records over one
// SharedArrayBuffer (the request ring and the event ring of docs/architecture.md).
//
// Vocabulary (LMAX Disruptor):
//   sequence  a wrapping 32-bit counter of records. The producer sequence counts records
//             published, the consumer sequence counts records released. Sequences are
//             compared only by their difference `(a - b) | 0`, which is exact while the
//             two are less than 2^31 apart (capacity_slots <= 2^20 guarantees that).
//   slot      the fixed-size cell `sequence & (capacity_slots - 1)`, `slot_words` 32-bit
//             words long. A slot is addressed by its word offset into `i32`; the same
//             bytes are also visible through `f64` at index `offset / 2 + k`.
//   claim     the producer reserves free slots (tryClaim, claimBatch), writes records,
//             then publishes them in claim order (publish, publishBatch).
//   batch     one Atomics.store of the producer sequence publishes many records; the
//             consumer reads everything available and releases it with one store.
//   wait strategy  a short busy spin, then Atomics.wait (worker threads) or
//             Atomics.waitAsync (the event-loop thread), woken by Atomics.notify.
//
// Memory ordering. JS Atomics are sequentially consistent, and a plain (non-atomic)
// write that precedes an Atomics.store in program order happens-before any read that
// follows an Atomics.load observing that store. So:
//   producer: write slot words (plain)  ->  Atomics.store(producer sequence)
//   consumer: Atomics.load(producer sequence)  ->  read slot words (plain)
//   consumer: read slot words  ->  Atomics.store(consumer sequence)
//   producer: Atomics.load(consumer sequence)  ->  overwrite slot words
// A slot's words are therefore never read while being written, and never overwritten
// while being read. Each side keeps a private cached copy of the other side's sequence
// and reloads it only when the cache says "full" / "empty" (the Disruptor's cached
// gating sequence), so the hot path touches the other side's cache line rarely.
//
// Sleeping without lost wake-ups. A side that sleeps first increments its waiters word
// (Atomics.add), re-reads the sequence, and only then calls Atomics.wait(sequence,
// observed). The other side stores its sequence, then loads the waiters word and calls
// Atomics.notify only when it is non-zero. With sequentially consistent atomics either
// the notifier sees the waiter, or the waiter's re-read sees the new sequence; and
// Atomics.wait itself returns "not-equal" when the sequence moved before it slept.
//
// Sleeping on the doorbell (waitForDataOnce, the matcher's idle sleep). A consumer that must also
// wake for news that is not a record (a message the producer's thread posted) cannot sleep on the
// producer sequence: a notify made between its last check and its Atomics.wait would be lost, as
// the sequence did not move. So every wake-up of a doorbell sleeper (wakeConsumer, close) first
// bumps the doorbell word, and this sleep waits on the doorbell value read right after announcing
// itself: a wake-up after that point either finds it asleep or makes its Atomics.wait return at
// once ("not-equal"). The two kinds of consumer sleep announce themselves in two words (doorbell
// waiters, consumer waiters), so a wake-up notifies only the word a sleeper waits on: each
// Atomics.notify takes V8's one process-wide futex mutex, which the matcher thread was seen
// blocking on (~40 times a second at 1,000 requests/s, perf sched_switch, issue 11). The doorbell
// itself sleeps and wakes with a raw futex when native/build/ring_futex.node is built
// (src/util/futex.ts: one context switch per wake-up instead of ~1.45 through V8's mutex and
// condition variable); the ring's header records which, so both sides agree.
//
// Quiet publishing. publishBatchQuiet() publishes without the wake-up: for records the consumer
// cannot act on alone (a batch's events before its commit marker), so a sleeping consumer is
// woken once per batch, not once per flush. A consumer that is awake sees quiet records at once
// (available() reads the sequence); a sleeping one sees them at the next loud publish, or when
// the producer has to wait for space: every producer wait first wakes a sleeping consumer when
// quiet records are pending, so a full ring can never wait on a consumer that was not told.
//
// Waking an event-loop consumer (the front's event pump, ring_wake.ts). Atomics.waitAsync wakes it
// through V8 (a platform task and a promise per wake-up). With native/build/loop_bell.node it
// sleeps on a loop bell instead: setConsumerBell() puts the bell's id in the header, sleepOnBell()
// announces the sleep in the consumer waiters word and looks again (as above, so no wake-up is
// lost), and a producer that sees the announcement rings the bell (a uv_async_send to the
// consumer's loop, from any thread) where it would have notified; close() rings it too.
//
// Layout, limits and header checks live in ring_layout.ts (re-exported here). The class is one
// chain over four files: spsc_ring_core.ts (the state, the constructor, observers, close),
// spsc_ring_producer.ts (claim, publish, wake), spsc_ring_consumer.ts (read, release, the loop
// bell), and this file (create/attach, and every wait: the wait strategy below).
//
// Roles: one thread uses the producer methods, one thread uses the consumer methods,
// each through its own SpscRing object (create() on one side, attach() on the other).
// Observers (admin state) may call depth() from anywhere.

import {
  H_CONSUMER_SEQUENCE,
  H_DOORBELL,
  H_DOORBELL_FUTEX,
  H_DOORBELL_WAITERS,
  H_PRODUCER_SEQUENCE,
  H_PRODUCER_WAITERS,
  H_CONSUMER_WAITERS,
  RING_WAIT_SPIN_ITERATIONS_DEFAULT,
  RING_WAIT_TIMEOUT_MS_MAX,
  ringAssert as assert,
  ringCheck,
  ringInit,
} from './ring_layout.js';
import { FUTEX_WAIT_TIMED_OUT, nativeFutex } from '../util/futex.js';
import { SpscRingConsumerPart } from './spsc_ring_consumer.js';

export {
  RING_BYTES_MAX,
  RING_CACHE_LINE_BYTES,
  RING_CAPACITY_SLOTS_MAX,
  RING_CAPACITY_SLOTS_MIN,
  RING_HEADER_BYTES,
  RING_HEADER_WORDS,
  RING_MAGIC,
  RING_SLOT_WORDS_MAX,
  RING_SLOT_WORDS_MIN,
  RING_VERSION,
  RING_WAIT_SPIN_ITERATIONS_DEFAULT,
  RING_WAIT_SPIN_ITERATIONS_MAX,
  RING_WAIT_TIMEOUT_MS_MAX,
  RingError,
} from './ring_layout.js';
export { RING_FULL } from './spsc_ring_producer.js';

export interface SpscRingOptions {
  /** Number of slots, a power of two in [RING_CAPACITY_SLOTS_MIN, RING_CAPACITY_SLOTS_MAX]. */
  capacity_slots: number;
  /** Words (int32) per slot, even, in [RING_SLOT_WORDS_MIN, RING_SLOT_WORDS_MAX]. */
  slot_words: number;
  /**
   * How the doorbell (waitForDataOnce) sleeps and wakes: 'futex' (the native futex, when this
   * thread can load it: src/util/futex.ts) or 'atomics'. Default: 'futex' when available.
   */
  doorbell?: 'futex' | 'atomics';
  /**
   * TEST ONLY: the value both sequences start at (any int32). Production rings start at
   * 0; tests start near 2^31 / 2^32 to cross the signed and unsigned wrap points.
   */
  initial_sequence?: number;
}

export interface SpscRingAttachOptions {
  /** Busy-spin iterations before sleeping in the wait methods. */
  spin_iterations?: number;
}

function assertTimeout(timeout_ms: number): void {
  assert(
    typeof timeout_ms === 'number' && timeout_ms >= 0 && timeout_ms <= RING_WAIT_TIMEOUT_MS_MAX,
    `ring wait timeout_ms must be in [0, ${RING_WAIT_TIMEOUT_MS_MAX}], got ${timeout_ms}`,
  );
}

// lib ES2022 does not declare Atomics.waitAsync; Node >= 16 has it.
type WaitAsyncResult =
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };
type WaitAsyncFn = (
  array: Int32Array,
  index: number,
  value: number,
  timeout_ms?: number,
) => WaitAsyncResult;
const atomicsWaitAsync: WaitAsyncFn | undefined = (
  Atomics as unknown as { waitAsync?: WaitAsyncFn }
).waitAsync;

export class SpscRing extends SpscRingConsumerPart {
  /** Private: a ring comes from create() or attach(). */
  private constructor(sab: SharedArrayBuffer, spin_iterations: number) {
    super(sab, spin_iterations);
  }

  /** Allocate and initialise a new ring. */
  static create(options: SpscRingOptions & SpscRingAttachOptions): SpscRing {
    const sab = ringInit(options.capacity_slots, options.slot_words, options.initial_sequence ?? 0);
    if (options.doorbell !== 'atomics' && nativeFutex() !== null) Atomics.store(new Int32Array(sab), H_DOORBELL_FUTEX, 1);
    return new SpscRing(sab, options.spin_iterations ?? RING_WAIT_SPIN_ITERATIONS_DEFAULT);
  }

  /** Attach to a ring made by create() (usually on another thread); the layout is checked. */
  static attach(sab: SharedArrayBuffer, options: SpscRingAttachOptions = {}): SpscRing {
    ringCheck(sab);
    return new SpscRing(sab, options.spin_iterations ?? RING_WAIT_SPIN_ITERATIONS_DEFAULT);
  }

  // ---------------------------------------------------------------- producer waits

  /**
   * Block (worker threads) until at least `min_slots` are free, the ring is closed, or
   * `timeout_ms` passes: spin, then Atomics.wait. Returns the free slot count (below
   * `min_slots` on timeout or close).
   */
  waitForSpace(timeout_ms: number, min_slots = 1): number {
    this.assertMinSlots(min_slots);
    return this.waitSync(true, min_slots, timeout_ms);
  }

  /** Event-loop form of waitForSpace (Atomics.waitAsync, no spin): never blocks the thread. */
  waitForSpaceAsync(timeout_ms: number, min_slots = 1): Promise<number> {
    this.assertMinSlots(min_slots);
    return this.waitAsync(true, min_slots, timeout_ms);
  }

  // ---------------------------------------------------------------- consumer waits

  /**
   * Block (worker threads) until a record is available, the ring is closed, or
   * `timeout_ms` passes: spin, then Atomics.wait. Returns available() (0 on timeout,
   * or on close with nothing left).
   */
  waitForData(timeout_ms: number): number {
    return this.waitSync(false, 1, timeout_ms);
  }

  /**
   * Worker threads: like waitForData, but sleeps at most once, on the doorbell, and returns
   * whatever woke it (a publish, a wakeConsumer() from a producer with other news, close, the
   * timeout). `before_sleep` runs after the sleep is announced and may cancel it (true): news it
   * checks for, posted before a wakeConsumer(), is never slept through. Returns available().
   */
  waitForDataOnce(timeout_ms: number, before_sleep?: () => boolean): number {
    assertTimeout(timeout_ms);
    let n = this.available();
    for (let spin = 0; n === 0 && spin < this.spin_iterations; spin++) n = this.available();
    if (n > 0 || this.isClosed()) return n;
    Atomics.add(this.i32, H_DOORBELL_WAITERS, 1); // announce, then re-check, then sleep
    const bell = Atomics.load(this.i32, H_DOORBELL);
    if (this.available() === 0 && !this.isClosed() && !(before_sleep !== undefined && before_sleep())) {
      this.consumer_sleep_count++;
      const timed_out = this.futex !== null
        ? this.futex.wait(this.i32, H_DOORBELL, bell, timeout_ms) === FUTEX_WAIT_TIMED_OUT
        : Atomics.wait(this.i32, H_DOORBELL, bell, timeout_ms) === 'timed-out';
      if (timed_out) this.sleep_timeouts++;
    }
    Atomics.sub(this.i32, H_DOORBELL_WAITERS, 1);
    return this.available();
  }

  /** Event-loop form of waitForData (Atomics.waitAsync, no spin): never blocks the thread. */
  waitForDataAsync(timeout_ms: number): Promise<number> {
    return this.waitAsync(false, 1, timeout_ms);
  }

  /**
   * waitForDataAsync without a timeout: resolves once a record is available or the ring is closed
   * (close() notifies the sequence this waits on). For a consumer that waits all its life (the
   * front's event pump): V8 arms a platform timer for every timed Atomics.waitAsync, which cost a
   * uv timer start and stop and a task allocation per wake-up.
   */
  waitForDataAsyncUntilClosed(): Promise<number> {
    return this.waitAsync(false, 1, Infinity);
  }

  // ---------------------------------------------------------------- wait strategy
  // `producer` true: wait on the consumer sequence until `min` slots are free.
  // `producer` false: wait on the producer sequence until `min` records are available.

  private count(producer: boolean): number {
    return producer ? this.freeSlots() : this.available();
  }

  private sleeping(producer: boolean): void {
    if (producer) this.producer_sleep_count++;
    else this.consumer_sleep_count++;
  }

  private waitSync(producer: boolean, min: number, timeout_ms: number): number {
    assertTimeout(timeout_ms);
    if (producer && this.producer_quiet_pending) this.wakeConsumer();
    let n = this.count(producer);
    for (let spin = 0; n < min && spin < this.spin_iterations; spin++) n = this.count(producer);
    if (n >= min) return n;
    const index = producer ? H_CONSUMER_SEQUENCE : H_PRODUCER_SEQUENCE;
    const waiters = producer ? H_PRODUCER_WAITERS : H_CONSUMER_WAITERS;
    const deadline = performance.now() + timeout_ms;
    for (;;) {
      const remaining = deadline - performance.now();
      if (remaining <= 0 || this.isClosed()) return n;
      Atomics.add(this.i32, waiters, 1); // announce, then re-check, then sleep
      const observed = Atomics.load(this.i32, index);
      if (this.count(producer) < min && !this.isClosed()) {
        this.sleeping(producer);
        if (Atomics.wait(this.i32, index, observed, remaining) === 'timed-out') this.sleep_timeouts++;
      }
      Atomics.sub(this.i32, waiters, 1);
      n = this.count(producer);
      if (n >= min) return n;
    }
  }

  /** `timeout_ms` Infinity: no timeout (waitForDataAsyncUntilClosed). */
  private async waitAsync(producer: boolean, min: number, timeout_ms: number): Promise<number> {
    if (timeout_ms !== Infinity) assertTimeout(timeout_ms);
    if (producer && this.producer_quiet_pending) this.wakeConsumer();
    assert(atomicsWaitAsync !== undefined, 'Atomics.waitAsync is not available on this runtime');
    const index = producer ? H_CONSUMER_SEQUENCE : H_PRODUCER_SEQUENCE;
    const waiters = producer ? H_PRODUCER_WAITERS : H_CONSUMER_WAITERS;
    // No deadline and no clock read per wake-up when there is no timeout (the front's event pump).
    const bounded = timeout_ms !== Infinity;
    const deadline = bounded ? performance.now() + timeout_ms : Infinity;
    for (;;) {
      const n = this.count(producer);
      const remaining = bounded ? deadline - performance.now() : Infinity;
      if (n >= min || remaining <= 0 || this.isClosed()) return n;
      Atomics.add(this.i32, waiters, 1);
      try {
        const observed = Atomics.load(this.i32, index);
        if (this.count(producer) < min && !this.isClosed()) {
          this.sleeping(producer);
          const result = atomicsWaitAsync(this.i32, index, observed, remaining);
          if (result.async && (await result.value) === 'timed-out') this.sleep_timeouts++;
        }
      } finally {
        Atomics.sub(this.i32, waiters, 1);
      }
    }
  }

  private assertMinSlots(min_slots: number): void {
    assert(
      Number.isInteger(min_slots) && min_slots > 0 && min_slots <= this.capacity_slots,
      `ring min_slots must be in [1, ${this.capacity_slots}], got ${min_slots}`,
    );
  }
}
