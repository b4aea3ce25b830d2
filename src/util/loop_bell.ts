// The loop bell (issue 11): native/build/loop_bell.node wakes a thread's event loop from another
// thread with a uv_async_t of that loop and calls a JS function there (native/loop_bell.c). The
// front sleeps on the event ring through it (ring_wake.ts): the matcher's wake-up of the front,
// once per committed batch at light load, then skips V8's Atomics.waitAsync route (its futex
// mutex on both sides, a platform task, a promise and two microtask hops per wake-up, and a new
// promise and waiter per sleep). Built by `make native`; without it the front uses Atomics.waitAsync.
//
// RINGBOOK_LOOP_BELL: `auto` (or unset) the bell when it loads, `native` the bell or no start,
// `atomics` Atomics.waitAsync even when it is built (an A/B, or a way out). A misspelt value is
// refused at start (config/load.ts, main.ts) and throws here. A ring records in its header the bell its
// consumer sleeps on (spsc_ring.ts setConsumerBell), so the producer rings what the consumer
// opened, whatever its own thread's switch says.
import { findNativeModule, loadNativeModule, nativeChoice, type NativeChoice } from './futex.js';

export interface NativeLoopBell {
  /** A bell on this thread's event loop that calls `fn` there when rung; its id (> 0). */
  open(fn: () => void): number;
  /** Any thread: wakes the bell's loop (rings before the call runs make one call); false when closed. */
  ring(id: number): boolean;
  /** On the thread that opened it: no call after this; false when it is not open here. */
  close(id: number): boolean;
}

export const LOOP_BELL_ENV = 'RINGBOOK_LOOP_BELL';
const LOOP_BELL_FILE = 'loop_bell.node';

/** The bell `env` asks for, or an error message naming the accepted values. */
export function loopBellChoice(env: NodeJS.ProcessEnv): { choice: NativeChoice } | { error: string } {
  return nativeChoice(env, LOOP_BELL_ENV);
}

let loaded: { module: NativeLoopBell } | { absent: string } | undefined;

/**
 * The loop bell module as RINGBOOK_LOOP_BELL asks, or null (Atomics.waitAsync). Throws for a value
 * outside auto/native/atomics, or for `native` when the module is not there.
 */
export function nativeLoopBell(): NativeLoopBell | null {
  loaded ??= loadNativeModule<NativeLoopBell>(LOOP_BELL_ENV, LOOP_BELL_FILE);
  return 'module' in loaded ? loaded.module : null;
}

let for_ringing: NativeLoopBell | null | undefined;

/**
 * The module for a producer whose ring's consumer sleeps on a bell, whatever this thread's switch
 * says (the consumer chose, and its thread loaded the file), or null when this thread cannot load it.
 */
export function loopBellForRinging(): NativeLoopBell | null {
  if (for_ringing === undefined) {
    const found = findNativeModule<NativeLoopBell>(LOOP_BELL_FILE);
    for_ringing = 'module' in found ? found.module : null;
  }
  return for_ringing;
}
