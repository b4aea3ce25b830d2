// The producer's methods of SpscRing (spsc_ring.ts has the vocabulary and the protocol; the state
// is in spsc_ring_core.ts): claim free slots, publish them loudly or quietly, wake the consumer.
// Its waits for space are in spsc_ring.ts with the consumer's waits (one wait strategy).
import {
  H_CONSUMER_BELL,
  H_CONSUMER_SEQUENCE as H_CONSUMER_SEQUENCE_,
  H_CONSUMER_WAITERS,
  H_DOORBELL,
  H_DOORBELL_WAITERS,
  H_PRODUCER_SEQUENCE,
  RING_HEADER_WORDS as RING_HEADER_WORDS_,
} from './ring_layout.js';
import { fail, ringLoopBell, SpscRingCore } from './spsc_ring_core.js';

// Module-local copies of the layout words tryClaim uses: an imported binding is a cell that
// optimized code loads and hole-checks at each use, and tryClaim is inlined into every event
// writer (~5 claims a replayed request; src/ring/event_writer.ts, docs/benchmarks.md h17r).
const H_CONSUMER_SEQUENCE = H_CONSUMER_SEQUENCE_;
const RING_HEADER_WORDS = RING_HEADER_WORDS_;

/** What tryClaim returns when every slot is taken (backpressure, never a drop). */
export const RING_FULL = -1;

export abstract class SpscRingProducerPart extends SpscRingCore {
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
   * Publish like publishBatch, without waking a sleeping consumer (see "Quiet publishing" in
   * spsc_ring.ts): it learns of these records at the next publishBatch or wakeConsumer, or a
   * producer wait.
   */
  publishBatchQuiet(n: number): void {
    this.publishQuietly(n);
    this.producer_quiet_pending = true;
  }

  /**
   * Wakes the consumer if it sleeps (nothing when it is awake), on the producer sequence and on the
   * doorbell (see "Sleeping on the doorbell" in spsc_ring.ts). Also the way to tell a sleeping
   * consumer of news that is not a record.
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

  private publishQuietly(n: number): void {
    if (!(Number.isInteger(n) && n > 0 && n <= ((this.producer_claimed - this.producer_published) | 0))) fail(`ring publishBatch(${n}) but ${this.claimed()} slots are claimed`);
    const sequence = (this.producer_published + n) | 0;
    this.producer_published = sequence;
    Atomics.store(this.i32, H_PRODUCER_SEQUENCE, sequence);
  }
}
