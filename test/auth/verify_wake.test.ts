// How a verify worker sleeps and how the front hears of its answers (src/auth/verify_ring.ts,
// issue 11, h23o2): the native futex and the front's loop bell by default, Atomics.wait/notify
// and waitAsync with `wake: 'atomics'` (or without the native modules). Both ways must give
// every verdict, one check at a time (the worker asleep for each, the light-load hand-off) and in
// bursts; the worker's side of the protocol (workerWake) rings the front once per ask.
import { afterAll, describe, expect, it } from 'vitest';
import { addressFromPrivateKey, signPersonalMessage } from '../../src/auth/sign.js';
import type { SignedMessage } from '../../src/auth/verify.js';
import { createVerifyPool, type VerifyPool } from '../../src/auth/verify_pool.js';
import {
  VERIFY_RING_HEADER_BYTES, VR_CLOSED, VR_DONE, VR_FRONT_BELL, VR_FRONT_WAITS, VR_FUTEX, VR_PUBLISHED, VR_WAITERS,
} from '../../src/auth/verify_ring.js';
import { workerWake } from '../../src/auth/verify_worker.js';
import { nativeFutex } from '../../src/util/futex.js';
import { nativeLoopBell } from '../../src/util/loop_bell.js';

const KEY = '0x' + '5a'.repeat(32);
const ADDRESS = addressFromPrivateKey(KEY);
const OTHER = addressFromPrivateKey('0x' + '6b'.repeat(32));

/** `count` checks, alternately signed by ADDRESS (verdict 1) and claimed for OTHER (verdict 0). */
function checks(count: number): { items: SignedMessage[]; expected: number[] } {
  const items: SignedMessage[] = [];
  const expected: number[] = [];
  for (let i = 0; i < count; i++) {
    const message = `ringbook:order:ETH-USDC:bid:2000000000:${500_000 + i}:${i}`;
    const signature_hex = signPersonalMessage(KEY, message);
    items.push({ message, signature_hex, expected_address: i % 2 === 0 ? ADDRESS : OTHER });
    expected.push(i % 2 === 0 ? 1 : 0);
  }
  return { items, expected };
}

const pools: VerifyPool[] = [];
afterAll(async () => {
  for (const p of pools.splice(0)) await p.close();
});

describe.each(['native', 'atomics'] as const)('a verify pool with wake %s', (wake) => {
  it('answers checks one at a time (the worker asleep for each) and in a burst, every verdict right, then closes', async () => {
    const pool = createVerifyPool({ threads: 1, wake });
    pools.push(pool);
    await pool.ready();
    const { items, expected } = checks(40);
    const one_by_one: number[] = [];
    for (const item of items) {
      // A turn apart, as light-load requests: the worker has gone back to sleep in between.
      await new Promise((r) => setImmediate(r));
      one_by_one.push((await pool.verifyBatch([item]))[0]);
    }
    expect(one_by_one).toEqual(expected);
    const burst = await Promise.all([pool.verifyBatch(items.slice(0, 20)), pool.verifyBatch(items.slice(20))]);
    expect([...burst[0], ...burst[1]]).toEqual(expected);
    expect(pool.pendingTasks).toBe(0);
    await pool.close();
    await expect(pool.verifyBatch(items.slice(0, 1))).rejects.toThrow(/closed/);
  });
});

describe('the worker side of the wake protocol (workerWake)', () => {
  function header(futex: number, bell_id: number): Int32Array {
    const i32 = new Int32Array(new SharedArrayBuffer(VERIFY_RING_HEADER_BYTES));
    i32[VR_FUTEX] = futex;
    i32[VR_FRONT_BELL] = bell_id;
    return i32;
  }

  it('rings the front\'s bell when it asked (and takes the ask back), not again until it asks again', async () => {
    const bell = nativeLoopBell();
    if (bell === null || nativeFutex() === null) return expect.fail('make native builds ring_futex.node and loop_bell.node');
    let calls = 0;
    let heard: () => void = () => undefined;
    const id = bell.open(() => {
      calls++;
      heard();
    });
    try {
      const i32 = header(1, id);
      const wake = workerWake(i32);
      i32[VR_DONE] = 1;
      wake.answered(); // nobody asked: the word stays 0
      expect(Atomics.load(i32, VR_FRONT_WAITS)).toBe(0);
      Atomics.store(i32, VR_FRONT_WAITS, 1); // the front asks
      const rung = new Promise<void>((r) => { heard = r; });
      wake.answered();
      expect(Atomics.load(i32, VR_FRONT_WAITS)).toBe(0);
      await rung;
      expect(calls).toBe(1);
    } finally {
      bell.close(id);
    }
  });

  it('does not sleep when the front has published past `done` or closed the ring (either sleep)', () => {
    for (const futex of [0, 1]) {
      const i32 = header(futex, 0);
      const wake = workerWake(i32);
      i32[VR_PUBLISHED] = 1;
      wake.sleep(0); // returns at once: a task waits
      expect(Atomics.load(i32, VR_WAITERS)).toBe(0);
      i32[VR_PUBLISHED] = 0;
      i32[VR_CLOSED] = 1;
      wake.sleep(0); // returns at once: closed
      expect(Atomics.load(i32, VR_WAITERS)).toBe(0);
    }
  });

  it('refuses a bad wake option', () => {
    expect(() => createVerifyPool({ threads: 1, wake: 'futex' as unknown as 'native' })).toThrow(/wake must be/);
  });
});
