// The lost wake-up of h23o2's verify wake route (reverted in 464696d after a half-max load stall,
// re-landed by h25o), placed step by step, no timing: a worker fixture that pauses between its
// DONE store and its answered() (the swap of FRONT_WAITS 1 -> 0 that takes the front's ask back,
// and the ring of the front's loop bell). The interleaving:
//   1. the front publishes T1 and asks for the bell (FRONT_WAITS = 1)
//   2. the worker answers T1, stores DONE = 1 and is preempted (the pause)
//   3. the front reads DONE = 1 anyway (here a ring of the bell from elsewhere, as another worker's;
//      with one worker the front's own re-check after a collect reads it the same way) and collects T1
//   4. the front publishes T2 and asks again (FRONT_WAITS = 1)
//   5. the worker goes on: its late swap takes the new ask (1 -> 0) and rings; the front's bell
//      callback finds nothing new on the ring
//   6. the worker answers T2: FRONT_WAITS is 0, so it does not ring, and the front, which waits for
//      the bell, never reads T2: the stall. Fixed: the callback of step 5 asks again, then re-reads
//      DONE (verify_pool.ts #rung), so the worker finds the ask at step 6 and rings.
import { setEnvironmentData } from 'node:worker_threads';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { addressFromPrivateKey, signPersonalMessage } from '../../src/auth/sign.js';
import type { SignedMessage } from '../../src/auth/verify.js';
import { createVerifyPool, type VerifyPool } from '../../src/auth/verify_pool.js';
import { nativeFutex } from '../../src/util/futex.js';
import { loopBellForRinging, nativeLoopBell, type NativeLoopBell } from '../../src/util/loop_bell.js';
import {
  G_ANSWERED, G_FW_SEEN, G_GO, G_MODE, G_PAUSE_AT, G_PAUSED, G_RELEASE, G_WORDS, PAUSES_GATE_KEY,
} from './fixtures/verify_pauses_gate.js';

// The pool's loop bell, seen from the test: its id (to ring it "from elsewhere") and the runs of
// its callback (the native module's properties cannot be spied on: the module is wrapped).
const spy = vi.hoisted(() => ({ bell_id: 0, calls: 0, on_call: (): void => undefined }));
vi.mock('../../src/util/loop_bell.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/util/loop_bell.js')>();
  let wrapped: NativeLoopBell | null = null;
  return {
    ...real,
    nativeLoopBell: (): NativeLoopBell | null => {
      const b = real.nativeLoopBell();
      if (b === null) return null;
      wrapped ??= {
        open: (fn) => (spy.bell_id = b.open(() => {
          fn();
          spy.calls++;
          spy.on_call();
        })),
        ring: (id) => b.ring(id),
        close: (id) => b.close(id),
      };
      return wrapped;
    },
  };
});

const KEY = '0x' + '5a'.repeat(32);
const ADDRESS = addressFromPrivateKey(KEY);

function check(i: number): SignedMessage {
  const message = `ringbook:order:ETH-USDC:bid:2000000000:${500_000 + i}:${i}`;
  return { message, signature_hex: signPersonalMessage(KEY, message), expected_address: ADDRESS };
}

// lib ES2022 does not declare Atomics.waitAsync; Node >= 16 has it.
type WaitAsyncFn = (array: Int32Array, index: number, value: number) =>
  | { async: false; value: 'not-equal' | 'timed-out' }
  | { async: true; value: Promise<'ok' | 'timed-out'> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsyncFn }).waitAsync;

/** Resolves once gate[at] >= n (the fixture notifies each store). */
async function gateReaches(gate: Int32Array, at: number, n: number): Promise<void> {
  for (;;) {
    const v = Atomics.load(gate, at);
    if (v >= n) return;
    const r = waitAsync(gate, at, v);
    if (r.async) await r.value;
  }
}

function setGate(gate: Int32Array, at: number, v: number): void {
  Atomics.store(gate, at, v);
  Atomics.notify(gate, at);
}

const pools: VerifyPool[] = [];
/** The pool's bell, rung once more before its close: a pool stalled by the race would never be idle. */
let unstick: () => void = () => undefined;
afterAll(async () => {
  vi.restoreAllMocks();
  unstick();
  for (const p of pools.splice(0)) await p.close();
});

describe('the verify ring\'s loop-bell wake route against a late swap of FRONT_WAITS', () => {
  it('keeps the front\'s ask standing after a late ring that found nothing new, so the next answer rings (no lost wake-up)', async () => {
    const bell = nativeLoopBell();
    const ringer = loopBellForRinging();
    if (bell === null || ringer === null || nativeFutex() === null) {
      return expect.fail('make native builds ring_futex.node and loop_bell.node');
    }
    const callAfter = (seen: number): Promise<void> =>
      spy.calls > seen ? Promise.resolve() : new Promise((r) => { spy.on_call = () => { if (spy.calls > seen) r(); }; });

    const gate = new Int32Array(new SharedArrayBuffer(G_WORDS * 4));
    gate[G_MODE] = 0; // step mode
    gate[G_PAUSE_AT] = 1; // pause after T1's DONE store
    setEnvironmentData(PAUSES_GATE_KEY, gate.buffer);
    const pool = createVerifyPool({
      threads: 1, taskSize: 1, stealAfterUs: 0, wake: 'native',
      workerFile: new URL('./fixtures/verify_worker_pauses.mjs', import.meta.url),
    });
    pools.push(pool);
    await pool.ready();
    const bell_id = spy.bell_id;
    expect(bell_id).toBeGreaterThan(0);
    unstick = () => void ringer.ring(bell_id);

    // 1-2. T1 published (the front asks), the worker answers it and pauses after DONE = 1.
    const p1 = pool.verifyBatch([check(1)]);
    setGate(gate, G_GO, 1);
    await gateReaches(gate, G_PAUSED, 1);
    // 3. A ring from elsewhere: the front reads DONE = 1 and collects T1 (the worker has not rung).
    let seen = spy.calls;
    ringer.ring(bell_id);
    await callAfter(seen);
    expect(Array.from(await p1)).toEqual([1]);
    // 4. T2 published: the front asks again.
    const p2 = pool.verifyBatch([check(2)]);
    // 5. The worker's late swap takes that ask back and rings; the front's callback runs.
    seen = spy.calls;
    setGate(gate, G_RELEASE, 1);
    await gateReaches(gate, G_ANSWERED, 1);
    await callAfter(seen);
    // 6. The worker answers T2: the front's ask must be standing, or nothing ever rings for T2.
    setGate(gate, G_GO, 2);
    await gateReaches(gate, G_ANSWERED, 2);
    expect(Atomics.load(gate, G_FW_SEEN)).toBe(1);
    expect(Array.from(await p2)).toEqual([1]);
    expect(pool.pendingTasks).toBe(0);
  });
});
