// bench/knobs.ts: one way for every bench to take its knobs.
import { describe, expect, it } from 'vitest';
import { Knobs } from '../../bench/knobs.js';

describe('bench knobs', () => {
  it('takes --name value, else BENCH_NAME, else the default', () => {
    const k = new Knobs(['--ops', '2_000', '--only', 'fast'], { BENCH_OPS: '5', BENCH_REF_TARGET_MS: '700', BENCH_KEEP: '1' });
    expect(k.number('ops', 1, 1, 1e6)).toBe(2000);
    expect(k.number('ref-target-ms', 1500, 1, 1e6)).toBe(700);
    expect(k.number('repeats', 5, 1, 100)).toBe(5);
    expect(k.string('only', 'all')).toBe('fast');
    expect(k.flag('keep')).toBe(true);
    expect(k.flag('profile')).toBe(false);
    k.finish();
  });

  it('refuses values out of range, non-integers where integers are due, and unknown options', () => {
    expect(() => new Knobs(['--runs', '10']).number('runs', 3, 1, 9)).toThrow('runs must be an integer in [1, 9], got 10');
    expect(() => new Knobs(['--wallets', '1.5']).number('wallets', 4000, 16, 100_000)).toThrow('an integer');
    expect(new Knobs(['--seconds', '1.5']).number('seconds', 10, 0.5, 60, { integer: false })).toBe(1.5);
    expect(() => new Knobs(['--rate']).number('rate', 1, 1, 10)).toThrow('--rate needs a value');
    expect(new Knobs(['--subscribers', '10,20']).numbers('subscribers', [1], 1, 100)).toEqual([10, 20]);
    const k = new Knobs(['--sconds', '3']);
    k.number('seconds', 10, 0.5, 60);
    expect(() => k.finish()).toThrow('unknown option --sconds');
  });

  it('takes --name=value, the form for a value that starts with --', () => {
    const k = new Knobs(['--server-flags=--trace-gc --max-semi-space-size=32', '--runs=2']);
    expect(k.string('server-flags', '')).toBe('--trace-gc --max-semi-space-size=32');
    expect(k.number('runs', 3, 1, 9)).toBe(2);
    k.finish();
    expect(() => new Knobs(['--server-flags', '--trace-gc']).string('server-flags', '')).toThrow('goes as --server-flags=value');
    expect(() => new Knobs(['--runs=']).number('runs', 3, 1, 9)).toThrow('--runs needs a value');
    const typo = new Knobs(['--rnus=2']);
    typo.number('runs', 3, 1, 9);
    expect(() => typo.finish()).toThrow('unknown option --rnus');
  });
});
