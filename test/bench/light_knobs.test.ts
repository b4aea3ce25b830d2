// The light-load A/B benches' shared knobs (bench/load/args.ts lightKnobs): the warm-up that
// lets V8's background compiles settle before the timed phases (docs/benchmarks.md h23o).
import { describe, expect, it } from 'vitest';
import { Knobs } from '../../bench/knobs.js';
import { LIGHT_WARMUP_PHASES_DEFAULT, lightKnobs } from '../../bench/load/args.js';

describe('lightKnobs', () => {
  it('warms up LIGHT_WARMUP_PHASES_DEFAULT phases unless told', () => {
    const k = lightKnobs(new Knobs([], {}), '/x/main.js', 6);
    expect(k.warmup_phases).toBe(LIGHT_WARMUP_PHASES_DEFAULT);
    expect(LIGHT_WARMUP_PHASES_DEFAULT).toBeGreaterThan(1);
    expect(k.rounds).toBe(6);
    expect(k.a_js).toBe('/x/main.js');
  });

  it('takes --warmup-phases or BENCH_WARMUP_PHASES, and refuses none or too many', () => {
    expect(lightKnobs(new Knobs(['--warmup-phases', '2'], {}), '/x/main.js', 6).warmup_phases).toBe(2);
    expect(lightKnobs(new Knobs([], { BENCH_WARMUP_PHASES: '7' }), '/x/main.js', 6).warmup_phases).toBe(7);
    expect(() => lightKnobs(new Knobs(['--warmup-phases', '0'], {}), '/x/main.js', 6)).toThrow('warmup-phases');
    expect(() => lightKnobs(new Knobs(['--warmup-phases', '21'], {}), '/x/main.js', 6)).toThrow('warmup-phases');
  });
});
