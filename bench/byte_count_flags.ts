// The byte-counting benches (post_body_bytes, answer_bytes) count a path's allocation through
// V8's heap statistics: they need gc() and a young generation large enough that no scavenge runs
// inside a measured round. One way to get them: run under BYTE_COUNT_FLAGS, re-running the script
// under them when it was started without.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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
