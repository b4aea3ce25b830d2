// The byte-counting benches (post_body_bytes, answer_bytes, signed_parse) count a path's allocation through
// V8's heap statistics: they need gc() and a young generation large enough that no scavenge runs
// inside a measured round. One way to get them: run under BYTE_COUNT_FLAGS, re-running the script
// under them when it was started without.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

/** gc() between rounds; a 64 MB semi-space, so a round's garbage stays in the young generation. */
export const BYTE_COUNT_FLAGS: readonly string[] = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];

/**
 * Runs `main` when this process has every one of BYTE_COUNT_FLAGS; else runs the script at
 * `script_url` (the caller's import.meta.url) again under them with the same arguments, and
 * takes its exit status.
 */
export async function runWithByteCountFlags(script_url: string, main: () => Promise<void>): Promise<void> {
  if (BYTE_COUNT_FLAGS.every((f) => process.execArgv.includes(f))) {
    await main();
    return;
  }
  const run = spawnSync(process.execPath, [...BYTE_COUNT_FLAGS, fileURLToPath(script_url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exitCode = run.status ?? 1;
}

/** A full collection between rounds (needs --expose-gc, one of BYTE_COUNT_FLAGS). */
export function gc(): void {
  const f = (globalThis as { gc?: () => void }).gc;
  if (f === undefined) throw new Error('run with node --expose-gc');
  f();
}

/** Bytes in V8's young generation now: a round's allocation is the difference across it. */
export function newSpaceUsed(): number {
  const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  if (space === undefined) throw new Error('no new_space in v8.getHeapSpaceStatistics()');
  return space.space_used_size;
}
