// The consumer's methods of SpscRing (spsc_ring.ts has the vocabulary and the protocol; the state
// is in spsc_ring_core.ts): read the available records, release them, and the loop-bell sleep of an
// event-loop consumer (ring_wake.ts). Its waits for data are in spsc_ring.ts.
import {
  H_CONSUMER_BELL,
  H_CONSUMER_SEQUENCE,
  H_CONSUMER_WAITERS,
  H_PRODUCER_SEQUENCE,
  H_PRODUCER_WAITERS,
  RING_HEADER_WORDS as RING_HEADER_WORDS_,
} from './ring_layout.js';
import { fail } from './spsc_ring_core.js';
import { SpscRingProducerPart } from './spsc_ring_producer.js';

// A module-local copy (an imported binding is loaded and hole-checked at each use: see
// spsc_ring_producer.ts).
const RING_HEADER_WORDS = RING_HEADER_WORDS_;

export abstract class SpscRingConsumerPart extends SpscRingProducerPart {
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

  /**
   * Slots from the one at word offset `o` to the ring's end (`o`'s own included): the records at
   * o, o + slot_words, ... lie one after the other in `i32` for that many slots, then wrap to the
   * first slot. So a walk over available records can run in plain strides (da/replay.ts's bare
   * drain, ~5 events a replayed request) and ask the ring only at each run's start.
   */
  slotsBeforeEnd(o: number): number {
    return (RING_HEADER_WORDS + this.capacity_slots * this.slot_words - o) / this.slot_words;
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
    Atomics.add(this.i32, H_CONSUMER_WAITERS, 1); // announce, then re-check (spsc_ring.ts, "Sleeping without lost wake-ups")
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
}
