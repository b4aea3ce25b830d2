// The core of SpscRing (spsc_ring.ts, whose header gives the vocabulary and the protocol): the
// shared memory and its views, both sides' private positions and counters, the constructor that
// checks the spin count and the doorbell kind, and what either side or an observer may call
// (depth, the sequences, close). The producer's methods are in spsc_ring_producer.ts, the
// consumer's in spsc_ring_consumer.ts, the waits in spsc_ring.ts: one class in four files, each
// part extending the one before (an object has every method; a thread uses its role's).
// Protected, not private, because the parts share them: `mask` with the producer and consumer
// parts, `futex` and `producer_quiet_pending` with SpscRing's waits (spsc_ring.ts), the producer_*
// positions with SpscRingProducerPart, consumer_released / consumer_available with
// SpscRingConsumerPart. Keep SpscRing the chain's only concrete class: a second one would make the
// ring's call sites (claim, publish, available, release on every record) polymorphic in V8.
import {
  H_CAPACITY_SLOTS,
  H_CONSUMER_BELL,
  H_CLOSED,
  H_CONSUMER_SEQUENCE,
  H_DOORBELL,
  H_DOORBELL_FUTEX,
  H_PRODUCER_SEQUENCE,
  H_SLOT_WORDS,
  RING_WAIT_SPIN_ITERATIONS_MAX,
  RingError,
  ringAssert as assert,
} from './ring_layout.js';
import { nativeFutex, type NativeFutex } from '../util/futex.js';
import { loopBellForRinging } from '../util/loop_bell.js';

/**
 * For checks on the per-record paths, as `if (!ok) fail(`...`)`: the message is built only on
 * failure. A template passed to assert() was built on every call: ~60 bytes per event, most of
 * the journal replay's garbage.
 */
export function fail(message: string): never {
  throw new RingError(message);
}

/**
 * Rings the consumer's loop bell `id`, read from the header word `i32[H_CONSUMER_BELL]`: this
 * thread must be able to load the module the consumer did, and see the same bell table. A ring
 * that finds no such bell while the header still names it is an error: the consumer sleeps on a
 * bell nobody can ring (a producer in another process, or another copy of the module), and it
 * would never wake. Not at a normal stop: the consumer clears the header before it closes the
 * bell (ring_wake.ts finish), and close() happens-before a ring that misses it (the bell table's
 * mutex), so such a ring reads 0 here.
 */
export function ringLoopBell(i32: Int32Array, id: number): void {
  const bell = loopBellForRinging();
  if (bell === null) throw new RingError('ring: its consumer sleeps on a loop bell (native/build/loop_bell.node), which this thread cannot load');
  if (!bell.ring(id) && Atomics.load(i32, H_CONSUMER_BELL) === id) {
    throw new RingError(`ring: its consumer sleeps on loop bell ${id}, which is not open in this thread's bell table (another process or module copy?)`);
  }
}

export abstract class SpscRingCore {
  /** The shared memory; post it to the other thread and attach() there. */
  declare readonly sab: SharedArrayBuffer;
  /** Whole-buffer views. Slot offsets index `i32`; `f64[offset / 2 + k]` is float64 word k. */
  declare readonly i32: Int32Array;
  declare readonly f64: Float64Array;
  declare readonly capacity_slots: number;
  declare readonly slot_words: number;
  /** Busy-spin iterations before sleeping (tunable per side; not shared). */
  declare spin_iterations: number;

  protected declare readonly mask: number;
  /** The doorbell's futex when the ring's header says it uses one, else null (Atomics). */
  protected declare readonly futex: NativeFutex | null;

  // Producer-private state.
  protected declare producer_published: number; // last value stored to the producer sequence
  protected declare producer_claimed: number; // next sequence to claim
  protected declare producer_cached_consumer: number; // consumer sequence as last loaded
  protected producer_quiet_pending = false; // records published without a wake-up since the last one

  // Consumer-private state.
  protected declare consumer_released: number; // last value stored to the consumer sequence
  protected declare consumer_available: number; // records readable at consumer_released (last seen)

  /** Times tryClaim/claimBatch found no free slot (backpressure seen by the producer). */
  producer_full_count = 0;
  /** Times the producer actually went to sleep waiting for space. */
  producer_sleep_count = 0;
  /** Times the consumer actually went to sleep waiting for data. */
  consumer_sleep_count = 0;
  /**
   * Sleeps (either side's, this instance's) that ended by their timeout rather than by a wake-up
   * or a moved word: with the other side live, a lost wake-up (test/ring/ring_threads.test.ts
   * asserts none, a count rather than a bound on how long a wait took).
   */
  sleep_timeouts = 0;

  protected constructor(sab: SharedArrayBuffer, spin_iterations: number) {
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

  /** Wakes every doorbell sleeper (after the doorbell word was bumped). */
  protected ringDoorbell(): void {
    if (this.futex !== null) this.futex.wake(this.i32, H_DOORBELL, 0x7fffffff);
    else Atomics.notify(this.i32, H_DOORBELL);
  }

  /** Whether the doorbell uses the native futex (src/util/futex.ts) rather than Atomics. */
  doorbellFutex(): boolean {
    return this.futex !== null;
  }
}
