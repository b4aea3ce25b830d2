// Runs the built ringbook CLI (dist/src/cli/ringbook.js) as a child process: its exit code and output.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../server/harness.js';

const run = promisify(execFile);
const CLI = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'ringbook.js');

/** Where the CLI runs (default the repo root) and a bound on its run (killed with SIGKILL after it). */
export interface CliOptions {
  cwd?: string;
  timeout_ms?: number;
}

/** `ringbook <args>` with `env` over this process's environment. */
export async function cli(args: string[], env: NodeJS.ProcessEnv = {}, opts: CliOptions = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [CLI, ...args], {
      cwd: opts.cwd ?? REPO_ROOT, env: { ...process.env, ...env }, timeout: opts.timeout_ms ?? 0, killSignal: 'SIGKILL',
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
