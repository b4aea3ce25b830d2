// The native-or-Atomics choice a thread makes when it loads a ring module (the doorbell's futex,
// the front's loop bell), asked of a fresh process: a thread loads such a module once and keeps
// what it chose, so each environment value needs a process of its own.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * What `loader()` of the compiled module `module_js` gives in a fresh process with `env_name` set
 * to `value` (removed when undefined): 'native', 'atomics' (it returned null), or
 * 'error: <message>' when it threw.
 */
export async function nativeChoiceIn(module_js: string, loader: string, env_name: string, value: string | undefined): Promise<string> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (value === undefined) delete env[env_name];
  else env[env_name] = value;
  const script = `import(${JSON.stringify(module_js)}).then((m) => {
    try { console.log(m[${JSON.stringify(loader)}]() === null ? 'atomics' : 'native'); } catch (e) { console.log('error: ' + e.message); }
  })`;
  const r = await run(process.execPath, ['-e', script], { env, timeout: 20_000 });
  return r.stdout.trim();
}
