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
// (src/ring/futex.ts: one context switch per wake-up instead of ~1.45 through V8's mutex and
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
// Layout, limits and header checks live in ring_layout.ts (re-exported here).
//
// Roles: one thread uses the producer methods, one thread uses the consumer methods,
// each through its own SpscRing object (create() on one side, attach() on the other).
// Observers (admin state) may call depth() from anywhere.

import {
  H_CAPACITY_SLOTS,
  H_CONSUMER_BELL,
  H_CLOSED,
  H_CONSUMER_SEQUENCE,
  H_CONSUMER_WAITERS,
  H_DOORBELL,
  H_DOORBELL_FUTEX,
  H_DOORBELL_WAITERS,
  H_PRODUCER_SEQUENCE,
  H_PRODUCER_WAITERS,
  H_SLOT_WORDS,
  RING_HEADER_WORDS,
  RING_WAIT_SPIN_ITERATIONS_DEFAULT,
  RING_WAIT_SPIN_ITERATIONS_MAX,
  RING_WAIT_TIMEOUT_MS_MAX,
  RingError,
  ringAssert as assert,
  ringCheck,
  ringInit,
} from './ring_layout.js';
import { nativeFutex, type NativeFutex } from './futex.js';
import { loopBellForRinging } from './loop_bell.js';

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

/** What tryClaim returns when every slot is taken (backpressure, never a drop). */
export const RING_FULL = -1;

export interface SpscRingOptions {
  /** Number of slots, a power of two in [RING_CAPACITY_SLOTS_MIN, RING_CAPACITY_SLOTS_MAX]. */
  capacity_slots: number;
  /** Words (int32) per slot, even, in [RING_SLOT_WORDS_MIN, RING_SLOT_WORDS_MAX]. */
  slot_words: number;
  /**
   * How the doorbell (waitForDataOnce) sleeps and wakes: 'futex' (the native futex, when this
   * thread can load it: src/ring/futex.ts) or 'atomics'. Default: 'futex' when available.
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

/**
 * For checks on the per-record paths, as `if (!ok) fail(`...`)`: the message is built only on
 * failure. A template passed to assert() was built on every call: ~60 bytes per event, most of
 * the journal replay's garbage.
 */
function fail(message: string): never {
  throw new RingError(message);
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

/**
 * Rings the consumer's loop bell `id`, read from the header word `i32[H_CONSUMER_BELL]`: this
 * thread must be able to load the module the consumer did, and see the same bell table. A ring
 * that finds no such bell while the header still names it is an error: the consumer sleeps on a
 * bell nobody can ring (a producer in another process, or another copy of the module), and it
 * would never wake. Not at a normal stop: the consumer clears the header before it closes the
 * bell (ring_wake.ts finish), and close() happens-before a ring that misses it (the bell table's
 * mutex), so such a ring reads 0 here.
 */
function ringLoopBell(i32: Int32Array, id: number): void {
  const bell = loopBellForRinging();
  if (bell === null) throw new RingError('ring: its consumer sleeps on a loop bell (native/build/loop_bell.node), which this thread cannot load');
  if (!bell.ring(id) && Atomics.load(i32, H_CONSUMER_BELL) === id) {
    throw new RingError(`ring: its consumer sleeps on loop bell ${id}, which is not open in this thread's bell table (another process or module copy?)`);
  }
}

export class SpscRing {
  /** The shared memory; post it to the other thread and attach() there. */
  readonly sab: SharedArrayBuffer;
  /** Whole-buffer views. Slot offsets index `i32`; `f64[offset / 2 + k]` is float64 word k. */
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  readonly capacity_slots: number;
  readonly slot_words: number;
  /** Busy-spin iterations before sleeping (tunable per side; not shared). */
  spin_iterations: number;

  private readonly mask: number;
  /** The doorbell's futex when the ring's header says it uses one, else null (Atomics). */
  private readonly futex: NativeFutex | null;

  // Producer-private state.
  private producer_published: number; // last value stored to the producer sequence
  private producer_claimed: number; // next sequence to claim
  private producer_cached_consumer: number; // consumer sequence as last loaded
  private producer_quiet_pending = false; // records published without a wake-up since the last one

  // Consumer-private state.
  private consumer_released: number; // last value stored to the consumer sequence
  private consumer_available: number; // records readable at consumer_released (last seen)

  /** Times tryClaim/claimBatch found no free slot (backpressure seen by the producer). */
  producer_full_count = 0;
  /** Times the producer actually went to sleep waiting for space. */
  producer_sleep_count = 0;
  /** Times the consumer actually went to sleep waiting for data. */
  consumer_sleep_count = 0;

  private constructor(sab: SharedArrayBuffer, spin_iterations: number) {
    this.sab = sab;
    this.i32 = new Int32Array(sab);
    this.f64 = new Float64Array(sab);
    this.capacity_slots = this.i32[H_CAPACITY_SLOTS];
    this.slot_words = this.i32[H_SLOT_WORDS];
    this.mask = this.capacity_slots - 1;
    assert(
      Number.isInteger(spin_iterations) &&
        spin_iterations >= 0 &&
        spin_iterations <= RING_WAIT_SPIN_ITERATIONS_MAX,
      `ring spin_iterations must be an integer in [0, ${RING_WAIT_SPIN_ITERATIONS_MAX}], ` +
        `got ${spin_iterations}`,
    );
    this.spin_iterations = spin_iterations;
    if (Atomics.load(this.i32, H_DOORBELL_FUTEX) === 1) {
      this.futex = nativeFutex();
      // Both sides must sleep and wake the doorbell the same way, or a wake-up is lost.
      if (this.futex === null) throw new RingError('ring: its doorbell uses the native futex (native/build/ring_futex.node), which this thread cannot load');
    } else {
      this.futex = null;
    }
    const producer = Atomics.load(this.i32, H_PRODUCER_SEQUENCE);
    const consumer = Atomics.load(this.i32, H_CONSUMER_SEQUENCE);
    this.producer_published = producer;
    this.producer_claimed = producer;
    this.producer_cached_consumer = consumer;
    this.consumer_released = consumer;
    this.consumer_available = 0;
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

  // ---------------------------------------------------------------- observers

  /** Records published and not yet released (any thread; a snapshot). */
  depth(): number {
    return (
      (Atomics.load(this.i32, H_PRODUCER_SEQUENCE) - Atomics.load(this.i32, H_CONSUMER_SEQUENCE)) |
      0
    );
  }

  /** Current producer sequence (records published, wrapping int32). */
  producerSequence(): number {
    return Atomics.load(this.i32, H_PRODUCER_SEQUENCE);
  }

  /** Current consumer sequence (records released, wrapping int32). */
  consumerSequence(): number {
    return Atomics.load(this.i32, H_CONSUMER_SEQUENCE);
  }

  /** Mark the ring closed (either side) and wake any sleeper. Records already in it stay readable. */
  close(): void {
    Atomics.store(this.i32, H_CLOSED, 1);
    Atomics.add(this.i32, H_DOORBELL, 1);
    this.ringDoorbell();
    const bell = Atomics.load(this.i32, H_CONSUMER_BELL);
    if (bell !== 0) ringLoopBell(this.i32, bell);
    Atomics.notify(this.i32, H_PRODUCER_SEQUENCE);
    Atomics.notify(this.i32, H_CONSUMER_SEQUENCE);
  }

  isClosed(): boolean {
    return Atomics.load(this.i32, H_CLOSED) !== 0;
  }

  // ---------------------------------------------------------------- producer

  /** Free slots the producer may still claim (reloads the consumer sequence). */
  freeSlots(): number {
    this.producer_cached_consumer = Atomics.load(this.i32, H_CONSUMER_SEQUENCE);
    return this.capacity_slots - ((this.producer_claimed - this.producer_cached_consumer) | 0);
  }

  /** Claimed and not yet published slots. */
  claimed(): number {
    return (this.producer_claimed - this.producer_published) | 0;
  }

  /**
   * Claim one slot. Returns its word offset into `i32`, or RING_FULL (-1) when full:
   * the caller answers backpressure (wait, or a clear error); the ring never drops.
   */
  tryClaim(): number {
    const sequence = this.producer_claimed;
    if (((sequence - this.producer_cached_consumer) | 0) >= this.capacity_slots) {
      this.producer_cached_consumer = Atomics.load(this.i32, H_CONSUMER_SEQUENCE);
      if (((sequence - this.producer_cached_consumer) | 0) >= this.capacity_slots) {
        this.producer_full_count++;
        return RING_FULL;
      }
    }
    this.producer_claimed = (sequence + 1) | 0;
    return RING_HEADER_WORDS + (sequence & this.mask) * this.slot_words;
  }

  /**
   * Claim up to `max_slots` slots at once; returns how many were claimed (0 when full).
   * Address them with claimedSlotOffset(i) and publish them with publishBatch(n).
   */
  claimBatch(max_slots: number): number {
    if (!(Number.isInteger(max_slots) && max_slots > 0)) fail(`ring claimBatch needs a positive integer, got ${max_slots}`);
    let free = this.capacity_slots - ((this.producer_claimed - this.producer_cached_consumer) | 0);
    if (free < max_slots) {
      this.producer_cached_consumer = Atomics.load(this.i32, H_CONSUMER_SEQUENCE);
      free = this.capacity_slots - ((this.producer_claimed - this.producer_cached_consumer) | 0);
      if (free === 0) {
        this.producer_full_count++;
        return 0;
      }
    }
    const n = free < max_slots ? free : max_slots;
    this.producer_claimed = (this.producer_claimed + n) | 0;
    return n;
  }

  /** Word offset of the i-th claimed, unpublished slot (0 = the next to be published). */
  claimedSlotOffset(i: number): number {
    if (!(i >= 0 && i < ((this.producer_claimed - this.producer_published) | 0))) fail(`ring claimedSlotOffset(${i}) outside the ${this.claimed()} claimed slots`);
    return RING_HEADER_WORDS + ((this.producer_published + i) & this.mask) * this.slot_words;
  }

  /** Publish the oldest claimed slot. */
  publish(): void {
    this.publishBatch(1);
  }

  /** Publish the `n` oldest claimed slots with one Atomics.store (and at most one notify). */
  publishBatch(n: number): void {
    this.publishQuietly(n);
    this.wakeConsumer();
  }

  /**
   * Publish like publishBatch, without waking a sleeping consumer (see "Quiet publishing" above):
   * it learns of these records at the next publishBatch or wakeConsumer, or a producer wait.
   */
  publishBatchQuiet(n: number): void {
    this.publishQuietly(n);
    this.producer_quiet_pending = true;
  }

  /**
   * Wakes the consumer if it sleeps (nothing when it is awake), on the producer sequence and on the
   * doorbell (see "Sleeping on the doorbell"). Also the way to tell a sleeping consumer of news
   * that is not a record.
   */
  wakeConsumer(): void {
    this.producer_quiet_pending = false;
    if (Atomics.load(this.i32, H_DOORBELL_WAITERS) !== 0) {
      Atomics.add(this.i32, H_DOORBELL, 1);
      this.ringDoorbell();
    }
    if (Atomics.load(this.i32, H_CONSUMER_WAITERS) !== 0) {
      // An event-loop consumer on a loop bell (ring_wake.ts) sleeps on nothing Atomics can wake.
      const bell = Atomics.load(this.i32, H_CONSUMER_BELL);
      if (bell !== 0) ringLoopBell(this.i32, bell);
      else Atomics.notify(this.i32, H_PRODUCER_SEQUENCE);
    }
  }

  /** Wakes every doorbell sleeper (after the doorbell word was bumped). */
  private ringDoorbell(): void {
    if (this.futex !== null) this.futex.wake(this.i32, H_DOORBELL, 0x7fffffff);
    else Atomics.notify(this.i32, H_DOORBELL);
  }

  /** Whether the doorbell uses the native futex (src/ring/futex.ts) rather than Atomics. */
  doorbellFutex(): boolean {
    return this.futex !== null;
  }

  private publishQuietly(n: number): void {
    if (!(Number.isInteger(n) && n > 0 && n <= ((this.producer_claimed - this.producer_published) | 0))) fail(`ring publishBatch(${n}) but ${this.claimed()} slots are claimed`);
    const sequence = (this.producer_published + n) | 0;
    this.producer_published = sequence;
    Atomics.store(this.i32, H_PRODUCER_SEQUENCE, sequence);
  }

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

  // ---------------------------------------------------------------- consumer

  /** Records published and not yet released, readable now via slotOffset(0 .. n-1). */
  available(): number {
    const n = (Atomics.load(this.i32, H_PRODUCER_SEQUENCE) - this.consumer_released) | 0;
    this.consumer_available = n;
    return n;
  }

  /** Word offset of the i-th available record (0 = oldest), i < the last available(). */
  slotOffset(i: number): number {
    if (!(i >= 0 && i < this.consumer_available)) fail(`ring slotOffset(${i}) outside the ${this.consumer_available} available records`);
    return RING_HEADER_WORDS + ((this.consumer_released + i) & this.mask) * this.slot_words;
  }

  /** Free the `n` oldest available records with one Atomics.store (and at most one notify). */
  release(n: number): void {
    if (!(Number.isInteger(n) && n > 0 && n <= this.consumer_available)) fail(`ring release(${n}) but ${this.consumer_available} records are available`);
    const sequence = (this.consumer_released + n) | 0;
    this.consumer_released = sequence;
    this.consumer_available -= n;
    Atomics.store(this.i32, H_CONSUMER_SEQUENCE, sequence);
    if (Atomics.load(this.i32, H_PRODUCER_WAITERS) !== 0) {
      Atomics.notify(this.i32, H_CONSUMER_SEQUENCE);
    }
  }

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
      if (this.futex !== null) this.futex.wait(this.i32, H_DOORBELL, bell, timeout_ms);
      else Atomics.wait(this.i32, H_DOORBELL, bell, timeout_ms);
    }
    Atomics.sub(this.i32, H_DOORBELL_WAITERS, 1);
    return this.available();
  }

  /**
   * The consumer sleeps on the loop bell `id` (loop_bell.ts; 0: none): a producer waking it rings
   * the bell instead of notifying. Set it before the first sleepOnBell, clear it after the last.
   */
  setConsumerBell(id: number): void {
    Atomics.store(this.i32, H_CONSUMER_BELL, id);
  }

  /**
   * A loop-bell consumer going to sleep (ring_wake.ts): announces itself, then looks again. True:
   * asleep; the next waking publish (publish, publishBatch, wakeConsumer: a quiet publish rings
   * nothing until one of these or a producer wait) or close rings the bell, and the consumer calls
   * bellWoke() when it does. False: records arrived or the ring closed meanwhile; not asleep.
   */
  sleepOnBell(): boolean {
    Atomics.add(this.i32, H_CONSUMER_WAITERS, 1); // announce, then re-check (see "Sleeping without lost wake-ups")
    if (this.available() === 0 && !this.isClosed()) {
      this.consumer_sleep_count++;
      return true;
    }
    Atomics.sub(this.i32, H_CONSUMER_WAITERS, 1);
    return false;
  }

  /** The loop bell woke a consumer that sleepOnBell() put to sleep. */
  bellWoke(): void {
    Atomics.sub(this.i32, H_CONSUMER_WAITERS, 1);
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
        Atomics.wait(this.i32, index, observed, remaining);
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
          if (result.async) await result.value;
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
