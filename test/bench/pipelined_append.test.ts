// native-bench/pipelined_append (docs/benchmarks.md h30j): bad options exit 2 with their range
// before any file is written; a one-second run of two modes prints the JSON line the section reads
// (every mode's figures, the serial mode never issuing a second append during a first) and
// removes its files.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BINARY = path.resolve('native-bench/build/pipelined_append');
const dir = mkdtempSync(path.join(os.tmpdir(), 'pipelined-append-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[]): ReturnType<typeof spawnSync> & { stdout: string; stderr: string } {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: build it with \`make native\``);
  return spawnSync(BINARY, [...args, '--dir', dir], { encoding: 'utf8', timeout: 20_000 });
}

describe('pipelined_append', () => {
  it.each([
    [['--rounds', '0'], '--rounds must be a whole number in 1..20'],
    [['--seconds', '2x'], '--seconds must be a whole number in 1..600'],
    [['--slow-us', '-1'], '--slow-us must be a whole number in 100..100000'],
    [['--modes', 'pipe9'], "--modes: unknown mode 'pipe9'"],
    [['--min-bytes', '900', '--max-bytes', '800'], '--min-bytes must not exceed --max-bytes'],
    [['--rate', '100', '--seconds', '1'], '--rate x --seconds must be in 201..'],
  ])('%j is refused', (args, message) => {
    const r = run(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('runs serial and pipe2 and reports both', () => {
    const r = run(['--rounds', '1', '--seconds', '1', '--rate', '300', '--modes', 'serial,pipe2']);
    expect(r.status, r.stderr).toBe(0);
    const line = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '') as {
      bench: string;
      modes: Record<string, { depth: number; request_p50_us: number; append_p50_us: number; second_after_slow_first: number }>;
    };
    expect(line.bench).toBe('pipelined_append');
    expect(Object.keys(line.modes)).toEqual(['serial', 'pipe2']);
    expect(line.modes.serial.depth).toBe(0);
    expect(line.modes.pipe2.depth).toBe(2);
    for (const m of Object.values(line.modes)) {
      // acknowledgeable no earlier than the append's own completion after the request arrived
      expect(m.request_p50_us).toBeGreaterThan(0);
      expect(m.append_p50_us).toBeGreaterThan(0);
    }
    expect(line.modes.serial.second_after_slow_first).toBe(0);
    expect(readdirSync(dir)).toEqual([]);
  });
});
