// native-bench/durable_append's options (docs/benchmarks.md h23m2): a bad number is refused with
// exit 2 and the option's range before any file is written, not read as 0 (atoi) or as a negative pause.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BINARY = path.resolve('native-bench/build/durable_append');
const dir = mkdtempSync(path.join(os.tmpdir(), 'durable-append-args-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('durable_append options', () => {
  it.each([
    ['--pace-us', '-5', '0..1000000'],
    ['--pace-us', 'abc', '0..1000000'],
    ['--pace-us', '1000001', '0..1000000'],
    ['--rounds', '0', '1..'],
    ['--appends', '5x', '10..'],
    ['--file-mb', '65', '1..64'],
  ])('%s %s is refused', (option, value, range) => {
    if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: build it with \`make native\``);
    const r = spawnSync(BINARY, [option, value, '--dir', dir], { encoding: 'utf8', timeout: 10_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${option} must be a whole number in ${range}`);
    expect(readdirSync(dir)).toEqual([]);
  });
});
