// The ring's doorbell futex (issue 11): native/build/ring_futex.node, a raw FUTEX_WAIT/FUTEX_WAKE
// on a word of the ring's SharedArrayBuffer, built by `make native`. Atomics.wait/notify go
// through V8's FutexEmulation: one process-wide mutex in both, and a sleeper woken through a
// condition variable it must then re-lock, so a wake-up often costs two context switches (1.45
// per wake-up of a sleeping worker here, against 1.00 with the futex; a ping-pong of two hand-offs
// 16 us p50 against 10.5 us; native/ring_futex.c). The matcher sleeps on its request ring's
// doorbell between batches, and the front rings it for every batch at light load.
//
// Loaded once per thread; null off Linux, when not built, or with RINGBOOK_RING_FUTEX=atomics (the
// ring then uses Atomics). A ring records at create() which one its doorbell uses, so both sides
// always agree (spsc_ring.ts).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface NativeFutex {
  /** Sleeps while `i32[index] === expected`, at most `timeout_ms`: 0 woken, 1 not equal, 2 timed out. */
  wait(i32: Int32Array, index: number, expected: number, timeout_ms: number): number;
  /** Wakes up to `count` sleepers of `i32[index]`; returns how many. */
  wake(i32: Int32Array, index: number, count: number): number;
}

const ADDON = path.join('native', 'build', 'ring_futex.node');

function load(): NativeFutex | null {
  if (process.platform !== 'linux' || process.env.RINGBOOK_RING_FUTEX === 'atomics') return null;
  // src/ring and dist/src/ring both sit below the repository root.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = path.join(dir, ADDON);
    if (existsSync(file)) {
      try {
        return createRequire(import.meta.url)(file) as NativeFutex;
      } catch {
        return null;
      }
    }
    dir = path.dirname(dir);
  }
  return null;
}

let loaded: NativeFutex | null | undefined;

/** The native futex of this thread, or null (the ring then uses Atomics). */
export function nativeFutex(): NativeFutex | null {
  if (loaded === undefined) loaded = load();
  return loaded;
}
