// Runs the C references of native-bench/ (built by `make native`, which `make bench` and
// `make test` run first) and parses the one JSON line each prints.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EventCounts } from './flow.js';

/** The repository root: the nearest folder above this file that holds native-bench/Makefile. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (existsSync(join(dir, 'native-bench', 'Makefile'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('native-bench/Makefile not found above ' + fileURLToPath(import.meta.url));
}

/** Path of a built tool; a clear error naming `make native` when it is missing. */
export function nativeTool(name: string): string {
  const path = join(repoRoot(), 'native-bench', 'build', name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`make native\` (make bench and make test build it first)`);
  return path;
}

/** Builds native-bench/ with the machine's cc (a no-op when up to date). */
export function buildNative(): void {
  execFileSync('make', ['-s', '-C', join(repoRoot(), 'native-bench')], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Native run bounded in time: a stuck tool fails the bench instead of hanging it. */
const NATIVE_TIMEOUT_MS = 300_000;

function runJson(tool: string, args: string[]): Record<string, unknown> {
  const out = execFileSync(nativeTool(tool), args, { encoding: 'utf8', timeout: NATIVE_TIMEOUT_MS, maxBuffer: 1 << 20 });
  const last = out.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as Record<string, unknown>;
}

function num(o: Record<string, unknown>, key: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`native output: ${key} is not a number`);
  return v;
}

export interface NativeBookResult {
  ops_per_s: number;
  ops_per_s_best: number;
  /** Ops per CPU-second of the C process (median). */
  cpu_ops_per_s: number;
  counts: EventCounts;
  digest: string;
}

/** native-bench/build/matcher_book on a flow file (bench/flow_file.ts): counts of the measured rows, digest of the end state. */
export function runNativeBook(flow_path: string, repeats: number, dump_state_path?: string): NativeBookResult {
  const args = [flow_path, '--repeats', String(repeats)];
  if (dump_state_path !== undefined) args.push('--dump-state', dump_state_path);
  const o = runJson('matcher_book', args);
  const digest = o.digest;
  if (typeof digest !== 'string' || !/^0x[0-9a-f]{64}$/.test(digest)) throw new Error('native output: digest is not a hash');
  return {
    ops_per_s: num(o, 'ops_per_s'),
    ops_per_s_best: num(o, 'ops_per_s_best'),
    cpu_ops_per_s: num(o, 'cpu_ops_per_s'),
    counts: {
      requests: num(o, 'ops'), accepted: num(o, 'accepted'), rejected: num(o, 'rejected'), fills: num(o, 'fills'),
      order_updates: num(o, 'order_updates'), balances: num(o, 'balances'),
    },
    digest,
  };
}

export interface NativeRingResult {
  records: number;
  slot_bytes: number;
  records_per_s: number;
}

/** native-bench/build/spsc_ring: producer and consumer threads over one shared ring. */
export function runNativeRing(records: number, capacity_slots: number, slot_bytes: number, batch_max: number): NativeRingResult {
  const o = runJson('spsc_ring', [String(records), String(capacity_slots), String(slot_bytes), String(batch_max)]);
  return { records: num(o, 'records'), slot_bytes: num(o, 'slot_bytes'), records_per_s: num(o, 'records_per_s') };
}
