// light_ab's order of phases (bench/load/ab_servers.ts abRunOrder): neither side may get, by
// construction, more phases right after the other server's, longer idle gaps before its phases,
// or (even rounds) later positions. The order before h27l (A's warm-ups, B's warm-ups, then
// A B B A A B B A) gave A all three; docs/benchmarks.md "h27l". light_syscalls walks the same order
// (bench/load/syscalls_plan.ts, since h28s).
import { describe, expect, it } from 'vitest';
import { abFirstSide, abRunOrder, type AbSide } from '../../bench/load/ab_servers.js';
import { SYSCALLS_TURN_PHASES, syscallsPlan } from '../../bench/load/syscalls_plan.js';

/** Most rounds the bench takes (bench/load/args.ts lightKnobs). */
const ROUNDS_MAX = 40;

interface SideBalance {
  timed: number;
  /** Timed phases right after one of its own (timed or warm-up). */
  after_own: number;
  /** Per timed phase, the other server's phases since this side's previous one (warm-ups count), sorted. */
  gaps: number[];
  /** Sum of its timed phases' positions (0-based). */
  position_sum: number;
}

function balance(warmup: readonly AbSide[], timed: readonly AbSide[], side: AbSide): SideBalance {
  const all = [...warmup, ...timed];
  const out: SideBalance = { timed: 0, after_own: 0, gaps: [], position_sum: 0 };
  timed.forEach((s, i) => {
    if (s !== side) return;
    const at = warmup.length + i;
    out.timed++;
    out.position_sum += i;
    if (all[at - 1] === side) out.after_own++;
    const prev = all.lastIndexOf(side, at - 1);
    // No phase of its own before: as if idle since the run's start.
    out.gaps.push(prev < 0 ? at : at - prev - 1);
  });
  out.gaps.sort((x, y) => x - y);
  return out;
}

/** The pre-h27l order: every warm-up of A, then of B, then the rounds A B, B A, ... */
function oldRunOrder(rounds: number, warmup_phases: number): { warmup: AbSide[]; timed: AbSide[] } {
  const warmup: AbSide[] = [...Array<AbSide>(warmup_phases).fill('A'), ...Array<AbSide>(warmup_phases).fill('B')];
  const timed: AbSide[] = [];
  for (let r = 0; r < rounds; r++) timed.push(...(r % 2 === 0 ? ['A', 'B'] as const : ['B', 'A'] as const));
  return { warmup, timed };
}

describe('abRunOrder', () => {
  it('starts with the first side, ABBA BAAB (Thue–Morse), warm-ups alternated ending with the last timed side', () => {
    expect(abRunOrder(4, 2, 'A')).toEqual({ warmup: ['A', 'B', 'A', 'B'], timed: ['A', 'B', 'B', 'A', 'B', 'A', 'A', 'B'] });
    expect(abRunOrder(2, 1, 'B')).toEqual({ warmup: ['A', 'B'], timed: ['B', 'A', 'A', 'B'] });
    expect(abRunOrder(3, 1, 'A').timed.join('')).toBe('ABBABA');
  });

  it('gives both sides the same phases after their own, the same idle gaps and, for even rounds, the same positions', () => {
    for (let rounds = 1; rounds <= ROUNDS_MAX; rounds++) {
      for (const warmup_phases of [1, 2, 4, 7]) {
        for (const first of ['A', 'B'] as const) {
          const { warmup, timed } = abRunOrder(rounds, warmup_phases, first);
          const a = balance(warmup, timed, 'A');
          const b = balance(warmup, timed, 'B');
          const at = `rounds ${rounds}, warm-ups ${warmup_phases}, first ${first}`;
          expect(timed[0], at).toBe(first);
          expect(a.timed, at).toBe(rounds);
          expect(b.timed, at).toBe(rounds);
          expect(warmup.filter((s) => s === 'A').length, at).toBe(warmup_phases);
          expect(warmup.filter((s) => s === 'B').length, at).toBe(warmup_phases);
          expect(a.after_own, at).toBe(b.after_own);
          expect(a.gaps, at).toEqual(b.gaps);
          // An odd number of rounds cannot split the positions' sum (2r-1)r evenly: off by one at most.
          if (rounds % 2 === 0) expect(a.position_sum, at).toBe(b.position_sum);
          else expect(Math.abs(a.position_sum - b.position_sum), at).toBe(1);
          // No long idle before the first timed phases: at most two of the other's phases before any phase.
          expect(Math.max(...a.gaps, ...b.gaps), at).toBeLessThanOrEqual(2);
        }
      }
    }
  });

  it("the order before h27l was not balanced: A after B more often, and after B's whole warm-up", () => {
    const { warmup, timed } = oldRunOrder(4, 4);
    expect(timed.join('')).toBe('ABBAABBA');
    const a = balance(warmup, timed, 'A');
    const b = balance(warmup, timed, 'B');
    expect(a.after_own).toBe(1);
    expect(b.after_own).toBe(2);
    expect(a.gaps).toEqual([0, 2, 2, 4]);
    expect(b.gaps).toEqual([0, 0, 1, 2]);
  });

  it('refuses rounds under 1 and negative or fractional counts', () => {
    expect(() => abRunOrder(0, 1, 'A')).toThrow('rounds');
    expect(() => abRunOrder(2, -1, 'A')).toThrow('warmup_phases');
    expect(() => abRunOrder(1.5, 1, 'A')).toThrow('rounds');
  });
});

describe('abFirstSide', () => {
  it('is a function of the seed, and seeds give both sides', () => {
    const sides = Array.from({ length: 64 }, (_, seed) => abFirstSide(seed));
    expect(Array.from({ length: 64 }, (_, seed) => abFirstSide(seed))).toEqual(sides);
    expect(sides).toContain('A');
    expect(sides).toContain('B');
  });
});

describe('light_syscalls plan (bench/load/syscalls_plan.ts)', () => {
  it("walks the shared order: light_ab's warm-ups, one turn per timed entry, the seed's first side", () => {
    for (const rounds of [1, 2, 3, 4, 7]) {
      for (const warmup_phases of [1, 2, 4]) {
        for (const seed of [0, 1, 2, 3, 0xffff_ffff]) {
          const plan = syscallsPlan(rounds, warmup_phases, seed, false);
          const shared = abRunOrder(rounds, warmup_phases, abFirstSide(seed));
          const at = `rounds ${rounds}, warm-ups ${warmup_phases}, seed ${seed}`;
          expect(plan.order, at).toEqual(shared);
          expect(plan.turns.map((t) => t.side), at).toEqual(shared.timed);
          // Each side's turns counted 0, 1, ..., rounds - 1 in the order they run.
          for (const side of ['A', 'B'] as const) {
            expect(plan.turns.filter((t) => t.side === side).map((t) => t.own), at).toEqual([...Array(rounds).keys()]);
          }
          expect(plan.timed_phases_per_side, at).toBe(rounds * SYSCALLS_TURN_PHASES.length);
        }
      }
    }
    // Not light_syscalls' order before h28s (A B, B A, ... after A's and then B's warm-ups).
    expect(syscallsPlan(4, 4, 0, false).turns.map((t) => t.side).join('')).not.toBe(oldRunOrder(4, 4).timed.join(''));
  });

  it("traces B's first turn's front phase into --trace-file, and nothing without one", () => {
    for (const seed of [0, 1, 2, 3]) {
      const traced = syscallsPlan(3, 2, seed, true).turns.filter((t) => t.trace_front_to_file);
      expect(traced).toEqual([{ side: 'B', own: 0, trace_front_to_file: true }]);
      expect(syscallsPlan(3, 2, seed, false).turns.some((t) => t.trace_front_to_file)).toBe(false);
    }
  });
});
