// A verify worker (a Piscina worker, loaded from the compiled dist/src/auth/verify_worker.js): its
// one task, `serveRing`, runs for the pool's whole life. It drains its verify ring
// (verify_ring.ts) batch by batch, answering each in place, and sleeps in Atomics.wait when the
// ring is empty; it returns when the front closes the ring. The thread does nothing else, so
// blocking its event loop is the point: no message per batch either way, one futex wake-up when
// the front finds it asleep, one ring of the front's loop bell per answered burst (verify_ring.ts).
import { createRecoverer, recovererLibrary, SECP256K1_LIBRARIES, type Recoverer } from './recover.js';
import { nameThisThread, THREAD_NAMES } from '../util/thread_name.js';
import { nativeFutex, type NativeFutex } from '../util/futex.js';
import { loopBellForRinging } from '../util/loop_bell.js';
import { verifyPackedInto } from './verify_codec.js';
import {
  VERIFY_RING_HEADER_BYTES, VR_CLAIM_OPEN, VR_CLAIM_WORKER, VR_CLOSED, VR_DONE, VR_DOORBELL, VR_FRONT_BELL, VR_FRONT_WAITS,
  VR_FUTEX, VR_FUTEX_SLEEP_MS_MAX, VR_PUBLISHED, VR_READY, VR_TASK_CLAIM_WORD, VR_LIBRARY, VR_TASK_HEADER_BYTES, VR_WAITERS,
  VR_WRAP_MARKER, type VerifyWorkerData,
} from './verify_ring.js';

/**
 * Sleeps until the front publishes past `done` or closes the ring (the native futex: at most
 * VR_FUTEX_SLEEP_MS_MAX, the caller looks again). Its own function so that CPU profiles can tell
 * the blocked time apart (bench/load/profile.ts BLOCKING_FUNCTIONS).
 */
function sleepUntilPublished(i32: Int32Array, done: number, futex: NativeFutex | null): void {
  const bell = Atomics.load(i32, VR_DOORBELL); // read before the announcement: a wake-up after it changes the word
  Atomics.store(i32, VR_WAITERS, 1); // announce, re-check, then sleep
  if (Atomics.load(i32, VR_PUBLISHED) === done && Atomics.load(i32, VR_CLOSED) === 0) {
    if (futex !== null) futex.wait(i32, VR_DOORBELL, bell, VR_FUTEX_SLEEP_MS_MAX);
    else Atomics.wait(i32, VR_PUBLISHED, done);
  }
  Atomics.store(i32, VR_WAITERS, 0);
}

/** How a worker sleeps on its ring and tells the front of answers, as the front set the ring's header (verify_ring.ts). */
export interface WorkerWake {
  /** Sleeps until the front publishes past `done` or closes the ring (or a bounded time passes: look again). */
  sleep(done: number): void;
  /** After DONE was stored: tells the front (its loop bell when it asked for one, else Atomics.notify). */
  answered(): void;
}

/**
 * The ring's choices with this thread's modules (exported for the test fixtures that serve a ring
 * their own way); throws when the front chose a module this thread cannot load.
 */
export function workerWake(i32: Int32Array): WorkerWake {
  const wants_futex = Atomics.load(i32, VR_FUTEX) === 1; // set by the front before the worker started: read once
  const futex = wants_futex ? nativeFutex() : null;
  if (wants_futex && futex === null) {
    throw new Error('verify ring: the front chose the native futex (native/build/ring_futex.node), which this worker cannot load');
  }
  const bell_id = Atomics.load(i32, VR_FRONT_BELL);
  const bell = bell_id !== 0 ? loopBellForRinging() : null;
  if (bell_id !== 0 && bell === null) {
    throw new Error('verify ring: the front waits on a loop bell (native/build/loop_bell.node), which this worker cannot load');
  }
  return {
    sleep: (done) => sleepUntilPublished(i32, done, futex),
    answered: bell === null
      ? () => void Atomics.notify(i32, VR_DONE) // the front's waitAsync, when it waits
      // Once per sleep of the front (a plain load first: no locked swap while it reads answers).
      : () => {
        if (Atomics.load(i32, VR_FRONT_WAITS) !== 0 && Atomics.exchange(i32, VR_FRONT_WAITS, 0) !== 0) bell.ring(bell_id);
      },
  };
}

function runRing(sab: SharedArrayBuffer, recoverer: Recoverer): void {
  const i32 = new Int32Array(sab, 0, VERIFY_RING_HEADER_BYTES / 4);
  const wake = workerWake(i32);
  Atomics.store(i32, VR_LIBRARY, 1 + SECP256K1_LIBRARIES.indexOf(recovererLibrary(recoverer)));
  Atomics.store(i32, VR_READY, 1);
  Atomics.notify(i32, VR_READY); // the front's VerifyPool.ready()
  const area = new Uint8Array(sab, VERIFY_RING_HEADER_BYTES);
  const words = new Uint32Array(sab, VERIFY_RING_HEADER_BYTES);
  let done = Atomics.load(i32, VR_DONE);
  let at = 0; // byte offset of the next task in the data area (the front starts at 0 too)
  for (;;) {
    if (Atomics.load(i32, VR_PUBLISHED) === done) {
      if (Atomics.load(i32, VR_CLOSED) !== 0) return;
      wake.sleep(done);
      continue;
    }
    if (at >= area.length) at = 0; // the last task ended exactly at the end
    let size = words[at >>> 2];
    if (size === VR_WRAP_MARKER) {
      at = 0;
      size = words[0];
    }
    const answer_bytes = words[(at >>> 2) + 1];
    const answer_at = at + VR_TASK_HEADER_BYTES;
    const batch_at = answer_at + answer_bytes;
    // The front may have taken a task that waited too long (verify_ring.ts "Claims"): then skip it.
    if (Atomics.compareExchange(words, (at >>> 2) + VR_TASK_CLAIM_WORD, VR_CLAIM_OPEN, VR_CLAIM_WORKER) === VR_CLAIM_OPEN) {
      verifyPackedInto(area, batch_at, answer_at, recoverer);
    }
    at += size;
    done = (done + 1) | 0;
    Atomics.store(i32, VR_DONE, done);
    wake.answered();
  }
}

/** The worker's one task: serves `data.ring` until the front closes it. */
export default function serveRing(data: VerifyWorkerData): number {
  nameThisThread(THREAD_NAMES.verify);
  runRing(data.ring, createRecoverer({ backend: data.backend }));
  return 0;
}
