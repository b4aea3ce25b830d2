// The front's inline-check policy (src/auth/verify_inline.ts): which checks the front runs itself.
import { describe, expect, it } from 'vitest';
import { InlineCheckPolicy } from '../../src/auth/verify_inline.js';
import { INLINE_AFTER_LOAD_MS, INLINE_ITEMS_DEFAULT, INLINE_ITEMS_MAX } from '../../src/auth/verify_limits.js';

/** A clock the test moves (ms). */
let now_ms = 0;
const clock = (): number => now_ms;

/** takeHere for `n` arrivals of one turn with the pool idle, counting what went to the pool. */
function turn(p: InlineCheckPolicy, n: number, pool_idle = true): boolean[] {
  const here: boolean[] = [];
  let queued = 0;
  for (let i = 0; i < n; i++) {
    const h = p.takeHere(pool_idle, queued);
    here.push(h);
    if (!h) queued++;
  }
  p.passed(queued);
  p.endTurn();
  return here;
}

describe('InlineCheckPolicy', () => {
  it('takes up to its budget per turn while the pool is idle, the rest goes to the pool', () => {
    const p = new InlineCheckPolicy(2, clock);
    expect(turn(p, 1)).toEqual([true]);
    expect(turn(p, 2)).toEqual([true, true]);
    // A third arrival in the turn: the pool's; and a turn right after a turn of 3 (> 2) is load.
    expect(turn(p, 3)).toEqual([true, true, false]);
    now_ms += INLINE_AFTER_LOAD_MS / 2;
    expect(turn(p, 1)).toEqual([false]);
    expect(turn(p, 1)).toEqual([false]); // light turns do not end the load's span, time does
    now_ms += INLINE_AFTER_LOAD_MS / 2;
    expect(turn(p, 1)).toEqual([true]);
    expect(turn(p, 2)).toEqual([true, true]);
  });

  it('never while a task is in flight, nor after a check of the turn was queued for the pool', () => {
    const p = new InlineCheckPolicy(2, clock);
    expect(turn(p, 2, false)).toEqual([false, false]);
    expect(p.takeHere(true, 1)).toBe(false);
    // The turn's queued checks went to the pool (a full batch, mid-turn): still the pool's turn.
    p.passed(1);
    expect(p.takeHere(true, 0)).toBe(false);
    p.endTurn();
    expect(p.takeHere(true, 0)).toBe(true);
    p.endTurn();
  });

  it('stays with the pool under sustained load (turns back to back) and comes back after a gap', () => {
    const p = new InlineCheckPolicy(1, clock);
    expect(turn(p, 50)).toEqual([true, ...new Array(49).fill(false)]);
    for (let t = 0; t < 20; t++) {
      now_ms += 0.9 * INLINE_AFTER_LOAD_MS; // each turn a little shorter than the span
      expect(turn(p, 40).every((h) => !h)).toBe(true);
    }
    now_ms += 0.9 * INLINE_AFTER_LOAD_MS;
    expect(turn(p, 1)).toEqual([false]);
    now_ms += 0.2 * INLINE_AFTER_LOAD_MS;
    expect(turn(p, 1)).toEqual([true]);
  });

  it('0 turns it off; the budget is bounded', () => {
    const p = new InlineCheckPolicy(0);
    expect(turn(p, 1)).toEqual([false]);
    expect(turn(p, 1)).toEqual([false]);
    expect(new InlineCheckPolicy(INLINE_ITEMS_MAX).items_max).toBe(INLINE_ITEMS_MAX);
    expect(INLINE_ITEMS_DEFAULT).toBeLessThanOrEqual(INLINE_ITEMS_MAX);
    for (const bad of [-1, 1.5, INLINE_ITEMS_MAX + 1, Number.NaN]) {
      expect(() => new InlineCheckPolicy(bad)).toThrow(/inline items max must be an integer in 0\.\./);
    }
  });
});
