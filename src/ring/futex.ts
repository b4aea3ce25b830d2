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
// always agree (spsc_ring.ts). RINGBOOK_RING_FUTEX takes only the values of RING_FUTEX_CHOICES:
// a misspelt one (`atomic`) would otherwise silently leave the native futex on; the server
// refuses it at start (config.ts, main.ts), and a thread that meets it here throws.
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

/**
 * RINGBOOK_RING_FUTEX's values (unset or empty: `auto`). `auto`: the native futex when it loads,
 * else Atomics; `native`: the native futex or no start; `atomics`: Atomics even when it is built.
 */
export const RING_FUTEX_CHOICES = ['auto', 'native', 'atomics'] as const;
export type RingFutexChoice = (typeof RING_FUTEX_CHOICES)[number];

/** The doorbell `env` asks for, or an error message naming the accepted values. */
export function ringFutexChoice(env: NodeJS.ProcessEnv): { choice: RingFutexChoice } | { error: string } {
  const v = env.RINGBOOK_RING_FUTEX;
  if (v === undefined || v === '') return { choice: 'auto' };
  if ((RING_FUTEX_CHOICES as readonly string[]).includes(v)) return { choice: v as RingFutexChoice };
  return { error: `RINGBOOK_RING_FUTEX must be one of ${RING_FUTEX_CHOICES.join(', ')} (or unset: auto), not ${JSON.stringify(v)}` };
}

/** The module, or why there is none; throws for a RINGBOOK_RING_FUTEX it must not guess at. */
function load(): { futex: NativeFutex } | { absent: string } {
  const asked = ringFutexChoice(process.env);
  if ('error' in asked) throw new Error(asked.error);
  if (asked.choice === 'atomics') return { absent: 'RINGBOOK_RING_FUTEX=atomics' };
  const found = find();
  if ('absent' in found && asked.choice === 'native') throw new Error(`RINGBOOK_RING_FUTEX=native, but ${found.absent}`);
  return found;
}

function find(): { futex: NativeFutex } | { absent: string } {
  if (process.platform !== 'linux') return { absent: `the native futex is Linux only (this is ${process.platform})` };
  // src/ring and dist/src/ring both sit below the repository root.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = path.join(dir, ADDON);
    if (existsSync(file)) {
      try {
        return { futex: createRequire(import.meta.url)(file) as NativeFutex };
      } catch (e) {
        return { absent: `${file} does not load: ${(e as Error).message}` };
      }
    }
    dir = path.dirname(dir);
  }
  return { absent: `${ADDON} is not built (make native)` };
}

let loaded: { futex: NativeFutex } | { absent: string } | undefined;

/**
 * The native futex of this thread, or null (the ring then uses Atomics). Throws when
 * RINGBOOK_RING_FUTEX is not one of RING_FUTEX_CHOICES, or is `native` and the module is not there.
 */
export function nativeFutex(): NativeFutex | null {
  loaded ??= load();
  return 'futex' in loaded ? loaded.futex : null;
}
