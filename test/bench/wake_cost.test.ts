// native-bench/wake_cost (docs/performance.md, "What a wake-up costs here"): its JSON line has
// every figure for both mechanisms and placements (a short run), and a bad option is refused with
// exit 2 and the option's range before anything runs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const BINARY = path.resolve('native-bench/build/wake_cost');
const STATS = ['waker_us_p50', 'waker_us_p99', 'waker_cpu_us_p50', 'wakee_delay_us_p50', 'wakee_delay_us_p99'];

function run(args: string[]): ReturnType<typeof spawnSync> {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: build it with \`make native\``);
  return spawnSync(BINARY, args, { encoding: 'utf8', timeout: 60_000 });
}

describe('wake_cost', () => {
  it('reports both mechanisms in both placements, medians over rounds', () => {
    const r = run(['--wakes', '50', '--gap-us', '200', '--rounds', '3']);
    expect(r.status, String(r.stderr)).toBe(0);
    const lines = String(r.stdout).trim().split('\n');
    const out = JSON.parse(lines[lines.length - 1]) as Record<string, unknown>;
    expect(out).toMatchObject({ bench: 'wake_cost', wakes: 50, gap_us: 200, rounds: 3 });
    const two_cpus = os.availableParallelism() >= 2;
    for (const mech of ['futex', 'eventfd']) {
      const m = out[mech] as Record<string, Record<string, number> | null>;
      for (const place of ['cross', 'same']) {
        if (place === 'cross' && !two_cpus) {
          expect(m[place]).toBeNull();
          continue;
        }
        const s = m[place] as Record<string, number>;
        for (const k of STATS) {
          expect(Number.isFinite(s[k]), `${mech}.${place}.${k}`).toBe(true);
          expect(s[k]).toBeGreaterThan(0);
        }
        // A percentile over the same samples: p99 is never below p50.
        expect(s.waker_us_p99).toBeGreaterThanOrEqual(s.waker_us_p50);
        expect(s.wakee_delay_us_p99).toBeGreaterThanOrEqual(s.wakee_delay_us_p50);
      }
    }
  });

  it.each([
    ['--wakes', '9', '10..100000'],
    ['--wakes', '5x', '10..100000'],
    ['--gap-us', '-1', '0..100000'],
    ['--gap-us', '100001', '0..100000'],
    ['--rounds', '0', '1..20'],
    ['--rounds', '21', '1..20'],
  ])('%s %s is refused', (option, value, range) => {
    const r = run([option, value]);
    expect(r.status).toBe(2);
    expect(String(r.stderr)).toContain(`${option} must be a whole number in ${range}`);
    expect(String(r.stdout)).toBe('');
  });

  it('refuses an unknown option and a missing value', () => {
    const unknown = run(['--wake', '10']);
    expect(unknown.status).toBe(2);
    expect(String(unknown.stderr)).toContain('unknown option');
    const missing = run(['--rounds']);
    expect(missing.status).toBe(2);
    expect(String(missing.stderr)).toContain('needs a value');
  });
});
