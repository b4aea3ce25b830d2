// A setting from the environment, and a file a setting names (RINGBOOK_NATS_NKEY_SEED_FILE, _CREDS_FILE, _TLS_*_FILE): read whole at
// start, so that an unreadable, empty or oversized one stops the start, naming the variable,
// before any connection; a bound, so that a wrong path to a large file is refused, not read.
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/checks.js';

/** The bytes of `file`, named by the setting `name`: 1..bytes_max of them, else a ConfigError saying it is not `what`. */
export function readSettingFile(name: string, file: string, bytes_max: number, what: string): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new ConfigError(`${name}: cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (bytes.length === 0 || bytes.length > bytes_max) {
    throw new ConfigError(`${name}: ${file} holds ${bytes.length} bytes, not ${what} (1..${bytes_max})`);
  }
  return bytes;
}

/** The environment variable `name`, or null when it is unset or empty (an empty one means "not given"). */
export function envSetting(env: NodeJS.ProcessEnv, name: string): string | null {
  const v = env[name];
  return v === undefined || v === '' ? null : v;
}
