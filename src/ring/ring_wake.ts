// An event-loop consumer of an SpscRing (the front's event pump): `drain` runs on this thread
// whenever the ring may hold records, and the consumer sleeps in between without blocking the loop.
//
// Two ways to sleep, one behaviour:
//   loop bell   native/build/loop_bell.node (loop_bell.ts): the consumer announces its sleep in the
//               ring's consumer-waiters word and returns to the loop; a producer that sees it rings
//               the bell, whose uv_async_t wakes this loop and calls `drain` directly.
//   atomics     Atomics.waitAsync on the producer sequence (SpscRing.waitForDataAsyncUntilClosed):
//               V8 wakes the loop with a platform task that resolves a promise.
// The bell saves V8's route per wake-up (its process-wide futex mutex taken by the notifier and
// again by the woken side, a platform task, a promise with two microtask hops, a new promise and
// waiter per sleep): measured in docs/benchmarks.md, "The front's wake-up".
import type { SpscRing } from './spsc_ring.js';
import { nativeLoopBell } from '../util/loop_bell.js';

/**
 * Drains in a row before the loop gets a turn (the bell path; a producer that never stops must
 * not starve the loop's I/O). Each drain takes everything published, so at light load one round
 * empties the ring; 16 is far above what a burst of committed batches needs.
 */
export const LOOP_DRAIN_ROUNDS_MAX = 16;

export interface LoopConsumer {
  /** Resolves once the ring is closed and drained; rejects with what `drain` threw (it stops then). */
  readonly done: Promise<void>;
  /** Whether it sleeps on the loop bell (else Atomics.waitAsync). */
  readonly bell: boolean;
  /**
   * Ends a sleep on the bell from this thread: the consumer looks at the ring at the loop's next
   * turn, and asks keepAwake there (a no-op while awake, on Atomics.waitAsync, or once finished).
   * The front calls it when it writes a request with the answer spin on: a commit awaited from a
   * sleep would otherwise come through the bell, which is what the spin avoids.
   */
  rouse(): void;
}

/**
 * Calls `drain` (which reads available(), handles and releases the records) whenever records may
 * be there. `how`: 'bell' (the loop bell when this thread can load it, RINGBOOK_LOOP_BELL
 * permitting) or 'atomics'. `keepAwake` (bell only): asked each time the ring is found empty; while
 * it answers true the consumer does not sleep but looks again at the loop's next turn
 * (setImmediate: the loop still polls its I/O, with a zero timeout), so a record published
 * meanwhile is read without a wake-up, and the producer, finding no sleeper, rings nothing.
 * On Atomics.waitAsync it is never asked (the front's link warns at start: matcher_link_events.ts).
 */
export function consumeOnLoop(ring: SpscRing, drain: () => void, how: 'bell' | 'atomics' = 'bell', keepAwake?: () => boolean): LoopConsumer {
  const bell = how === 'bell' ? nativeLoopBell() : null;
  if (bell === null) return { done: consumeAsync(ring, drain), bell: false, rouse: () => undefined };
  let asleep = false;
  let finished = false;
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const finish = (error: unknown): void => {
    finished = true;
    ring.setConsumerBell(0);
    bell.close(id);
    if (error === undefined) resolve();
    else reject(error);
  };
  const run = (): void => {
    try {
      for (let round = 0; round < LOOP_DRAIN_ROUNDS_MAX; round++) {
        if (ring.available() > 0) drain();
        else if (ring.isClosed()) return finish(undefined);
        if (keepAwake !== undefined && ring.available() === 0 && keepAwake()) {
          setImmediate(run);
          return;
        }
        if (ring.sleepOnBell()) {
          asleep = true;
          return;
        }
      }
      setImmediate(run);
    } catch (e) {
      finish(e);
    }
  };
  // From the bell's uv callback: a ring that finds the consumer awake (a ring is coalesced, or
  // comes after the consumer looked again) wakes nothing.
  const wake = (): void => {
    if (!asleep || finished) return;
    asleep = false;
    ring.bellWoke();
    run();
  };
  // From this thread: the same as the bell's call, at the next turn (never inside the caller's
  // stack). A ring of the bell already on its way then finds the consumer awake and wakes nothing.
  const rouse = (): void => {
    if (!asleep || finished) return;
    asleep = false;
    ring.bellWoke();
    setImmediate(run);
  };
  const id = bell.open(wake);
  ring.setConsumerBell(id);
  setImmediate(run);
  return { done, bell: true, rouse };
}

async function consumeAsync(ring: SpscRing, drain: () => void): Promise<void> {
  for (;;) {
    const n = await ring.waitForDataAsyncUntilClosed();
    if (n === 0) {
      if (ring.isClosed()) return;
      continue;
    }
    drain();
  }
}
