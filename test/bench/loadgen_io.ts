// Which of loadgen's socket backends (native-bench/loadgen.c --io) this machine can run, for the
// tests that run each: epoll always; io_uring when the kernel gives it (not under a seccomp filter
// or io_uring_disabled, not before Linux 5.19).
import { LOADGEN_BINARY, runLoadgen } from '../../bench/load/native_generator.js';

/**
 * `--io io_uring` sets the ring up before it connects and exits naming the refused step when the
 * kernel says no; against port 1 (nothing listens) a ring that came up ends at the connect instead.
 */
export async function ioUringAvailable(binary = LOADGEN_BINARY): Promise<boolean> {
  try {
    await runLoadgen(['--target', '127.0.0.1:1', '--repeat-get', '/', '--connections', '1', '--io', 'io_uring'], 10_000, binary);
  } catch (e) {
    const msg = (e as Error).message;
    if (/connect to port 1/.test(msg)) return true;
    if (/--io io_uring:/.test(msg)) return false;
    throw e;
  }
  throw new Error('loadgen ran against 127.0.0.1:1');
}

/** The backends to test here: both when io_uring is available, else epoll alone. */
export async function loadgenIoCases(binary = LOADGEN_BINARY): Promise<Array<'io_uring' | 'epoll'>> {
  return (await ioUringAvailable(binary)) ? ['io_uring', 'epoll'] : ['epoll'];
}
