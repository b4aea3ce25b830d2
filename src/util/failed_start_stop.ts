// A start that fails part way (a port in use, a broken verify pool, NATS refusing a role) stops
// what it started before it throws, so that its threads end and its files close before the process
// exits and a failed first start empties the data dir (src/journal/start_claim.ts). That stop is
// bounded here: before 2026-11-29 it was awaited as it was, and a stop that never finished (a
// thread that does not end) kept the process from ever exiting with the start's error.
import { componentLog } from './log.js';

const log = componentLog('server');

/**
 * 10 s: a failed start's stop ends its threads and closes the journal and the DA store; measured
 * at 0.14-0.35 s from the port found in use to the exit (a new data dir, the 2 vCPU VM shared with
 * other builds, load ~15), so ten seconds leave a loaded machine room. Shorter on purpose than the
 * waits inside the stop (Piscina's 30 s close timeout for a verify worker that does not end, the
 * DA thread's CLOSE_WAIT_MS 30 s): for a start that failed, its error matters more than a clean
 * close, and the process then exits as after a kill -9, which the journal and the DA store recover from.
 */
export const FAILED_START_STOP_WAIT_MS = 10_000;

/** The bound in use: FAILED_START_STOP_WAIT_MS, or a test's (RINGBOOK_TEST_FAILED_START_STOP_WAIT_MS, test seam only). */
function stopWaitMs(): number {
  const v = process.env.RINGBOOK_TEST_FAILED_START_STOP_WAIT_MS;
  const ms = v === undefined || v === '' ? NaN : Number(v);
  return Number.isSafeInteger(ms) && ms >= 0 ? ms : FAILED_START_STOP_WAIT_MS;
}

/**
 * Runs `stop` after a start failed with `start_error`, waiting for it at most the bound. Never
 * throws: the caller throws `start_error` next, whatever the stop did. A stop that fails or does
 * not finish in time is logged (the second says the process exits without it).
 */
export async function stopFailedStart(stop: () => Promise<void>, start_error: unknown): Promise<void> {
  const wait_ms = stopWaitMs();
  const why = start_error instanceof Error ? start_error.message : String(start_error);
  let timer: NodeJS.Timeout | null = null;
  const timed_out = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), wait_ms);
  });
  try {
    const ended = await Promise.race([stop().then(() => 'stopped' as const), timed_out]);
    if (ended === 'timed out') {
      log.error(`ringbook: the stop after the failed start did not finish within ${wait_ms} ms (FAILED_START_STOP_WAIT_MS): ` +
        `exiting with the start's error without it (${why})`, undefined, { wait_ms });
    }
  } catch (e) {
    log.error(`ringbook: the stop after the failed start failed (the start's error follows: ${why})`, e);
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}
