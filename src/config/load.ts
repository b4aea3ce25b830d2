// Configuration: config/default.json (the embedded defaults), merged with the JSON file named by
// RINGBOOK_CONFIG, then the RINGBOOK_* environment variables. The merged JSON is checked by
// validateConfig (read.ts: every value, then every key), the variables here.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { ringFutexChoice } from '../util/futex.js';
import { loopBellChoice } from '../util/loop_bell.js';
import { secp256k1Choice } from '../auth/secp256k1_choice.js';
import { isPlainObject as isObject } from '../util/config_keys.js';
import { LOG_LEVELS, parseLogLevel } from '../util/log.js';
import { ConfigError, HOST_PATTERN } from './checks.js';
import { validateConfig } from './read.js';
import type { RingbookConfig } from './types.js';

export function defaultConfigPath(): string {
  // src/config/load.ts and dist/src/config/load.js sit three and four levels below the repo root.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../config/default.json'), path.resolve(here, '../../../config/default.json')];
  for (const c of candidates) {
    try {
      readFileSync(c);
      return c;
    } catch {
      // try the next one
    }
  }
  throw new ConfigError('config/default.json not found next to the program');
}

/**
 * Objects merge key by key; arrays and scalars replace. A key is set as an own data property, so a
 * file's `"__proto__"` neither changes a prototype nor vanishes: validateConfig refuses it as an
 * unknown key like any other.
 */
export function mergeConfig(base: unknown, over: unknown): unknown {
  if (!isObject(base) || !isObject(over)) return over;
  const out: Record<string, unknown> = {};
  for (const [k, v] of [...Object.entries(base), ...Object.entries(over)]) {
    const merged = Object.hasOwn(out, k) ? mergeConfig(out[k], v) : v;
    Object.defineProperty(out, k, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read config ${file}: ${(e as Error).message}`);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): RingbookConfig {
  let raw = readJson(defaultConfigPath());
  if (env.RINGBOOK_CONFIG) raw = mergeConfig(raw, readJson(env.RINGBOOK_CONFIG));
  const cfg = validateConfig(raw);
  if (env.RINGBOOK_HOST) {
    // The pattern server.host is held to: `not a host` once reached the listen call and stopped
    // the start with a stack ('cannot listen on not a host:0') instead of a line naming the variable.
    if (!HOST_PATTERN.test(env.RINGBOOK_HOST)) throw new ConfigError('RINGBOOK_HOST must be an IP address or a host name (no port: RINGBOOK_PORT)');
    cfg.server.host = env.RINGBOOK_HOST;
  }
  if (env.RINGBOOK_PORT !== undefined && env.RINGBOOK_PORT !== '') {
    const port = Number(env.RINGBOOK_PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError('RINGBOOK_PORT must be 0..65535');
    cfg.server.port = port;
  }
  if (env.RINGBOOK_DATA_DIR) cfg.server.data_dir = env.RINGBOOK_DATA_DIR;
  cfg.admin_token = env.RINGBOOK_ADMIN_TOKEN ? env.RINGBOOK_ADMIN_TOKEN : null;
  if (env.RINGBOOK_OPERATOR_KEY) {
    if (!/^(0x)?[0-9a-fA-F]{64}$/.test(env.RINGBOOK_OPERATOR_KEY)) throw new ConfigError('RINGBOOK_OPERATOR_KEY must be 32 bytes of hex');
    cfg.operator_key = env.RINGBOOK_OPERATOR_KEY.startsWith('0x') ? env.RINGBOOK_OPERATOR_KEY : '0x' + env.RINGBOOK_OPERATOR_KEY;
  }
  if (env.RINGBOOK_CLOCK_OFFSET_MS !== undefined && env.RINGBOOK_CLOCK_OFFSET_MS !== '') {
    const offset = Number(env.RINGBOOK_CLOCK_OFFSET_MS);
    if (!/^-?[0-9]+$/.test(env.RINGBOOK_CLOCK_OFFSET_MS) || !Number.isSafeInteger(offset)) {
      throw new ConfigError('RINGBOOK_CLOCK_OFFSET_MS must be an integer number of milliseconds');
    }
    cfg.clock_offset_ms = offset;
  }
  if (env.RINGBOOK_LOG_LEVEL) {
    const level = parseLogLevel(env.RINGBOOK_LOG_LEVEL);
    if (level === null) throw new ConfigError(`RINGBOOK_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
    cfg.log.level = level;
  }
  if (env.RINGBOOK_LOG_PRETTY !== undefined && env.RINGBOOK_LOG_PRETTY !== '') {
    if (env.RINGBOOK_LOG_PRETTY !== '0' && env.RINGBOOK_LOG_PRETTY !== '1') throw new ConfigError('RINGBOOK_LOG_PRETTY must be 1 (pretty lines) or 0 (JSON lines)');
    cfg.log.pretty = env.RINGBOOK_LOG_PRETTY === '1';
  }
  // Read by each thread that makes or attaches a ring (util/futex.ts); refused here so that a
  // misspelt value stops the start instead of silently leaving the native futex on.
  const futex = ringFutexChoice(env);
  if ('error' in futex) throw new ConfigError(futex.error);
  // The same for the front's sleep on the event ring (util/loop_bell.ts).
  const bell = loopBellChoice(env);
  if ('error' in bell) throw new ConfigError(bell.error);
  // And for the library recovering signers (auth/secp256k1_choice.ts).
  const secp = secp256k1Choice(env);
  if ('error' in secp) throw new ConfigError(secp.error);
  return cfg;
}
