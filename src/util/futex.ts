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
// always agree (spsc_ring.ts). The ring's other native module (loop_bell.ts) loads through
// loadNativeModule here too, with its own switch. RINGBOOK_RING_FUTEX takes only the values of NATIVE_CHOICES:
// a misspelt one (`atomic`) would otherwise silently leave the native futex on; the server
// refuses it at start (config/load.ts, main.ts), and a thread that meets it here throws.
import { findNativeModule } from './native_module.js';

/** NativeFutex.wait's result when the sleep ended by its timeout (native/ring_futex.c, ETIMEDOUT). */
export const FUTEX_WAIT_TIMED_OUT = 2;

export interface NativeFutex {
  /** Sleeps while `i32[index] === expected`, at most `timeout_ms`: 0 woken, 1 not equal, 2 timed out. */
  wait(i32: Int32Array, index: number, expected: number, timeout_ms: number): number;
  /** Wakes up to `count` sleepers of `i32[index]`; returns how many. */
  wake(i32: Int32Array, index: number, count: number): number;
}

const ADDON = 'ring_futex.node';

/**
 * The values of RINGBOOK_RING_FUTEX and of the other switches of the ring's native modules
 * (RINGBOOK_LOOP_BELL, loop_bell.ts); unset or empty: `auto`. `auto`: the native module when it
 * loads, else Atomics; `native`: the native module or no start; `atomics`: Atomics even when it is built.
 */
export const NATIVE_CHOICES = ['auto', 'native', 'atomics'] as const;
export type NativeChoice = (typeof NATIVE_CHOICES)[number];

/** What the switch `name` of `env` asks for, or an error message naming the accepted values. */
export function nativeChoice(env: NodeJS.ProcessEnv, name: string): { choice: NativeChoice } | { error: string } {
  const v = env[name];
  if (v === undefined || v === '') return { choice: 'auto' };
  if ((NATIVE_CHOICES as readonly string[]).includes(v)) return { choice: v as NativeChoice };
  return { error: `${name} must be one of ${NATIVE_CHOICES.join(', ')} (or unset: auto), not ${JSON.stringify(v)}` };
}

/** The doorbell `env` asks for, or an error message naming the accepted values. */
export function ringFutexChoice(env: NodeJS.ProcessEnv): { choice: NativeChoice } | { error: string } {
  return nativeChoice(env, 'RINGBOOK_RING_FUTEX');
}

/**
 * The native module `file` (in native/build/) as the switch `name` of this process's environment
 * asks: the module, or why there is none; throws for a value it must not guess at, and for
 * `native` when the module does not load.
 */
export function loadNativeModule<T>(name: string, file: string): { module: T } | { absent: string } {
  const asked = nativeChoice(process.env, name);
  if ('error' in asked) throw new Error(asked.error);
  if (asked.choice === 'atomics') return { absent: `${name}=atomics` };
  const found = findNativeModule<T>(file);
  if ('absent' in found && asked.choice === 'native') throw new Error(`${name}=native, but ${found.absent}`);
  return found;
}

/** native/build/`file_name` loaded, whatever the switches say, or why it cannot be (src/util/native_module.ts). */
export { findNativeModule };

let loaded: { module: NativeFutex } | { absent: string } | undefined;

/**
 * The native futex of this thread, or null (the ring then uses Atomics). Throws when
 * RINGBOOK_RING_FUTEX is not one of NATIVE_CHOICES, or is `native` and the module is not there.
 */
export function nativeFutex(): NativeFutex | null {
  loaded ??= loadNativeModule<NativeFutex>('RINGBOOK_RING_FUTEX', ADDON);
  return 'module' in loaded ? loaded.module : null;
}
