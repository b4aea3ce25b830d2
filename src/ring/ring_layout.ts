// Ring layout: the named limits, the shared header of an SpscRing, and the checks that
// make create() and attach() agree on one codec. See spsc_ring.ts for the protocol.
//
// Shared header layout (Int32Array words; each group on its own 64-byte cache line, so
// the producer's and the consumer's stores never invalidate each other's line):
//   line 0  [0] magic  [1] version  [2] capacity_slots  [3] slot_words
//           [4] header_words  [5] total_words                       (read-only)
//   line 1  [16] producer sequence                                  (producer writes)
//   line 2  [32] consumer sequence                                  (consumer writes)
//   line 3  [48] consumer waiters  [49] producer waiters  [50] closed  [51] doorbell
//           [52] doorbell waiters  [53] doorbell futex  [54] consumer's loop bell
//                                                                   (written rarely)
// Slots follow the header at word 64 (byte 256): slot s starts at word
// RING_HEADER_WORDS + s * slot_words, 8-byte aligned because slot_words is even.

export const RING_MAGIC = 0x52494e47; // "RING"
export const RING_VERSION = 1;

/** Smallest and largest ring, in slots. Capacity must be a power of two. */
export const RING_CAPACITY_SLOTS_MIN = 2;
/** 2^20 keeps two sequences at most 2^20 apart, far inside the 2^31 that `(a - b) | 0` allows. */
export const RING_CAPACITY_SLOTS_MAX = 1 << 20;
/** Smallest and largest slot, in 32-bit words. Must be even (8-byte aligned slots). */
export const RING_SLOT_WORDS_MIN = 2;
export const RING_SLOT_WORDS_MAX = 256;
/** Largest SharedArrayBuffer a ring may take, header included. */
export const RING_BYTES_MAX = 256 * 1024 * 1024;
/** Largest wait a caller may ask for in one call. */
export const RING_WAIT_TIMEOUT_MS_MAX = 60_000;
/**
 * Default busy-spin iterations before a waiting thread sleeps. One iteration is one
 * Atomics.load (~20-50 ns in Node 20, which does not inline it), so about 5-10 us: long
 * enough to catch a peer that is running, short enough not to steal a shared core.
 * Latency-critical sides (the matcher) may raise it per ring with `spin_iterations`.
 */
export const RING_WAIT_SPIN_ITERATIONS_DEFAULT = 200;
export const RING_WAIT_SPIN_ITERATIONS_MAX = 10_000_000;

export const RING_CACHE_LINE_BYTES = 64;
export const RING_HEADER_WORDS = 64; // four cache lines
export const RING_HEADER_BYTES = RING_HEADER_WORDS * 4;

// Header word indices (shared with spsc_ring.ts only).
export const H_MAGIC = 0;
export const H_VERSION = 1;
export const H_CAPACITY_SLOTS = 2;
export const H_SLOT_WORDS = 3;
export const H_HEADER_WORDS = 4;
export const H_TOTAL_WORDS = 5;
export const H_PRODUCER_SEQUENCE = 16; // byte 64
export const H_CONSUMER_SEQUENCE = 32; // byte 128
/** Consumers asleep on the producer sequence (waitForData, waitForDataAsync). */
export const H_CONSUMER_WAITERS = 48; // byte 192
export const H_PRODUCER_WAITERS = 49;
export const H_CLOSED = 50;
/** Bumped by every wake-up of a sleeping consumer (spsc_ring.ts, waitForDataOnce). */
export const H_DOORBELL = 51;
/** Consumers asleep on the doorbell (waitForDataOnce). */
export const H_DOORBELL_WAITERS = 52;
/** 1: the doorbell sleeps and wakes with the native futex (src/util/futex.ts), 0: with Atomics. */
export const H_DOORBELL_FUTEX = 53;
/**
 * The loop bell (loop_bell.ts) an event-loop consumer sleeps on instead of Atomics.waitAsync, 0
 * for none: a producer wakes a consumer announced in H_CONSUMER_WAITERS by ringing it.
 */
export const H_CONSUMER_BELL = 54;

/** Thrown by the ring for a layout or usage error (never for a full ring: that is -1 / 0). */
export class RingError extends Error {
  override name = 'RingError';
}

export function ringAssert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new RingError(message);
}

function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

/** Check a layout against the limits; returns the ring's total size in words. */
export function ringTotalWords(capacity_slots: number, slot_words: number): number {
  ringAssert(
    isPowerOfTwo(capacity_slots) &&
      capacity_slots >= RING_CAPACITY_SLOTS_MIN &&
      capacity_slots <= RING_CAPACITY_SLOTS_MAX,
    `ring capacity_slots must be a power of two in [${RING_CAPACITY_SLOTS_MIN}, ` +
      `${RING_CAPACITY_SLOTS_MAX}], got ${capacity_slots}`,
  );
  ringAssert(
    Number.isInteger(slot_words) &&
      slot_words >= RING_SLOT_WORDS_MIN &&
      slot_words <= RING_SLOT_WORDS_MAX &&
      slot_words % 2 === 0,
    `ring slot_words must be an even integer in [${RING_SLOT_WORDS_MIN}, ` +
      `${RING_SLOT_WORDS_MAX}], got ${slot_words}`,
  );
  const total_words = RING_HEADER_WORDS + capacity_slots * slot_words;
  ringAssert(
    total_words * 4 <= RING_BYTES_MAX,
    `ring of ${capacity_slots} x ${slot_words} words exceeds RING_BYTES_MAX (${RING_BYTES_MAX} bytes)`,
  );
  return total_words;
}

/** Allocate a ring buffer and write its header; both sequences start at `initial_sequence`. */
export function ringInit(
  capacity_slots: number,
  slot_words: number,
  initial_sequence: number,
): SharedArrayBuffer {
  const total_words = ringTotalWords(capacity_slots, slot_words);
  ringAssert(
    Number.isInteger(initial_sequence) && initial_sequence === (initial_sequence | 0),
    `ring initial_sequence must be an int32, got ${initial_sequence}`,
  );
  const sab = new SharedArrayBuffer(total_words * 4);
  const header = new Int32Array(sab, 0, RING_HEADER_WORDS);
  header[H_MAGIC] = RING_MAGIC;
  header[H_VERSION] = RING_VERSION;
  header[H_CAPACITY_SLOTS] = capacity_slots;
  header[H_SLOT_WORDS] = slot_words;
  header[H_HEADER_WORDS] = RING_HEADER_WORDS;
  header[H_TOTAL_WORDS] = total_words;
  Atomics.store(header, H_PRODUCER_SEQUENCE, initial_sequence);
  Atomics.store(header, H_CONSUMER_SEQUENCE, initial_sequence);
  return sab;
}

/** Check that `sab` holds a ring this code can read: magic, version, limits, length, sequences. */
export function ringCheck(sab: SharedArrayBuffer): void {
  ringAssert(sab instanceof SharedArrayBuffer, 'ring attach needs a SharedArrayBuffer');
  ringAssert(
    sab.byteLength >= RING_HEADER_BYTES && sab.byteLength % 8 === 0,
    `ring buffer of ${sab.byteLength} bytes is too short or not 8-byte sized`,
  );
  const header = new Int32Array(sab, 0, RING_HEADER_WORDS);
  ringAssert(
    header[H_MAGIC] === RING_MAGIC,
    `ring magic mismatch: 0x${(header[H_MAGIC] >>> 0).toString(16)}`,
  );
  ringAssert(
    header[H_VERSION] === RING_VERSION,
    `ring version ${header[H_VERSION]}, expected ${RING_VERSION}`,
  );
  ringAssert(
    header[H_HEADER_WORDS] === RING_HEADER_WORDS,
    `ring header_words ${header[H_HEADER_WORDS]}, expected ${RING_HEADER_WORDS}`,
  );
  const total_words = ringTotalWords(header[H_CAPACITY_SLOTS], header[H_SLOT_WORDS]);
  ringAssert(
    header[H_TOTAL_WORDS] === total_words && sab.byteLength === total_words * 4,
    `ring length mismatch: header says ${header[H_TOTAL_WORDS]} words, layout needs ` +
      `${total_words}, buffer has ${sab.byteLength / 4}`,
  );
  const depth =
    (Atomics.load(header, H_PRODUCER_SEQUENCE) - Atomics.load(header, H_CONSUMER_SEQUENCE)) | 0;
  ringAssert(
    depth >= 0 && depth <= header[H_CAPACITY_SLOTS],
    `ring sequences inconsistent: depth ${depth} outside [0, ${header[H_CAPACITY_SLOTS]}]`,
  );
}
