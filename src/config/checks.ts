// The value checks every section reader uses: each throws ConfigError naming the key and the
// rule (`config: limits.x must be a positive integer`), so a bad config stops the start with one line.
import { absentSection, isPlainObject as isObject } from '../util/config_keys.js';

export class ConfigError extends Error {}

export function need<T>(ok: boolean, value: T, what: string): T {
  if (!ok) throw new ConfigError(`config: ${what}`);
  return value;
}

/**
 * An optional section (`verify`, `threads`, ...): absent is `{}` (every key at its default);
 * anything else but an object (`"verify": 3`, `null`, an array) is refused, naming the key, instead
 * of silently running on the defaults.
 */
export function section(r: Record<string, unknown>, key: string): Record<string, unknown> {
  const x = r[key];
  if (x === undefined) return absentSection(r, key);
  return need(isObject(x), x as Record<string, unknown>, `${key} must be an object`);
}

export function posInt(x: unknown, what: string): number {
  return need(typeof x === 'number' && Number.isSafeInteger(x) && x > 0, x as number, `${what} must be a positive integer`);
}

export function int(x: unknown, what: string): number {
  return need(typeof x === 'number' && Number.isSafeInteger(x), x as number, `${what} must be an integer`);
}

/** An integer in lo..hi; the message names the range and `note` (what the ends mean). */
export function intIn(x: unknown, lo: number, hi: number, what: string, note = ''): number {
  return need(typeof x === 'number' && Number.isSafeInteger(x) && x >= lo && x <= hi, x as number, `${what} must be an integer in ${lo}..${hi}${note}`);
}

export function str(x: unknown, what: string, pattern: RegExp): string {
  return need(typeof x === 'string' && pattern.test(x), x as string, `${what} must match ${pattern}`);
}

export const SYMBOL = /^[A-Z0-9]{1,12}$/;
// A name or IPv4 address (no colon), or an IPv6 address (two colons at least, brackets allowed).
// Any colon was taken: '127.0.0.1:9000' passed and the start failed at the listen call, with a stack.
export const HOST_PATTERN = /^(?:[0-9a-zA-Z.-]+|\[?[0-9a-fA-F.]*:[0-9a-fA-F.]*:[0-9a-fA-F:.]*\]?)$/;
