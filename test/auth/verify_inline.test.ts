// The front's inline-check policy (src/auth/verify_inline.ts): which checks the front runs itself.
import { beforeEach, describe, expect, it } from 'vitest';
import { InlineCheckPolicy } from '../../src/auth/verify_inline.js';
import { INLINE_AFTER_LOAD_MS, INLINE_BUSY_WINDOW_MS, INLINE_BUSY_WINDOW_MS_MAX, INLINE_ITEMS_DEFAULT, INLINE_ITEMS_MAX } from '../../src/auth/verify_limits.js';

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
    const p = new InlineCheckPolicy(2, 0, clock);
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
    const p = new InlineCheckPolicy(2, 0, clock);
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
    const p = new InlineCheckPolicy(1, 0, clock);
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

  describe('at medium load (busy_max_pct): on the front\'s busy share', () => {
    /** A utilization source the test sets; counts its reads. */
    let busy = 0;
    let reads = 0;
    const utilization = (): number => {
      reads++;
      return busy;
    };
    // Whole ms from here (the clock above has moved by fractions): window sums stay exact.
    beforeEach(() => {
      now_ms = Math.ceil(now_ms) + 1000;
    });

    it('takes the turn\'s first checks with tasks in flight and after turns of load, while the front was quiet', () => {
      const p = new InlineCheckPolicy(2, 50, clock, utilization);
      busy = 0.2;
      // Before a window has closed nothing is known: the light-load rule alone (pool busy: none).
      expect(turn(p, 4, false)).toEqual([false, false, false, false]);
      now_ms += INLINE_BUSY_WINDOW_MS;
      expect(turn(p, 4, false)).toEqual([false, false, false, false]); // this turn's end closes the window: 20% busy
      expect(p.frontQuiet).toBe(true);
      // Now the first two of each turn run here, pool busy or not, right after a turn of load too.
      expect(turn(p, 4, false)).toEqual([true, true, false, false]);
      expect(turn(p, 3, true)).toEqual([true, true, false]);
      expect(turn(p, 1, false)).toEqual([true]);
    });

    it('backs off once the front was busy at or above the ceiling, and comes back when it is not', () => {
      const p = new InlineCheckPolicy(2, 50, clock, utilization);
      busy = 0.1;
      now_ms += INLINE_BUSY_WINDOW_MS;
      turn(p, 1, false);
      expect(p.frontQuiet).toBe(true);
      busy = 0.5;
      expect(turn(p, 3, false)).toEqual([true, true, false]); // the window is still open: quiet
      now_ms += INLINE_BUSY_WINDOW_MS;
      expect(turn(p, 3, false)).toEqual([true, true, false]); // closes it: 50% busy, not below 50
      expect(p.frontQuiet).toBe(false);
      expect(turn(p, 3, false)).toEqual([false, false, false]);
      // The light-load rule still applies on its own (pool idle, no load turn within its span).
      now_ms += INLINE_AFTER_LOAD_MS;
      expect(turn(p, 1, true)).toEqual([true]);
      busy = 0.3;
      now_ms += INLINE_BUSY_WINDOW_MS;
      turn(p, 1, false);
      expect(turn(p, 2, false)).toEqual([true, true]);
    });

    it('a window that spanned an idle spell is not measured: the front is not quiet until a window of the right length says so', () => {
      const p = new InlineCheckPolicy(2, 50, clock, utilization);
      busy = 0.2;
      now_ms += INLINE_BUSY_WINDOW_MS;
      turn(p, 1, false);
      expect(p.frontQuiet).toBe(true);
      // The front busy (80%) over a window, then a turn at the end of 5 s with no checks: the
      // utilization since the previous read covers the idle spell and reads 1.2% busy.
      busy = 0.8;
      now_ms += INLINE_BUSY_WINDOW_MS;
      turn(p, 1, false);
      expect(p.frontQuiet).toBe(false);
      busy = 0.012;
      now_ms += 5_000;
      reads = 0;
      expect(turn(p, 3, false)).toEqual([false, false, false]);
      expect(reads, 'read (its start moves to now), not believed').toBe(1);
      expect(p.frontQuiet, 'a 5 s window is not "the last 10 ms"').toBe(false);
      expect(turn(p, 3, false)).toEqual([false, false, false]);
      // Up to INLINE_BUSY_WINDOW_MS_MAX a window is measured: a quiet one turns the rule on again.
      busy = 0.2;
      now_ms += INLINE_BUSY_WINDOW_MS_MAX;
      turn(p, 1, false);
      expect(p.frontQuiet).toBe(true);
      expect(turn(p, 3, false)).toEqual([true, true, false]);
      // Just over it: unknown again.
      now_ms += INLINE_BUSY_WINDOW_MS_MAX + 1;
      turn(p, 1, false);
      expect(p.frontQuiet).toBe(false);
    });

    it('reads the utilization once per window, and never with the rule off', () => {
      const p = new InlineCheckPolicy(2, 50, clock, utilization);
      busy = 0.1;
      reads = 0;
      for (let t = 0; t < 40; t++) {
        now_ms += INLINE_BUSY_WINDOW_MS / 4;
        turn(p, 3, false);
      }
      expect(reads).toBe(10);
      const off = new InlineCheckPolicy(2, 0, clock, utilization);
      reads = 0;
      for (let t = 0; t < 40; t++) {
        now_ms += INLINE_BUSY_WINDOW_MS;
        expect(turn(off, 3, false)).toEqual([false, false, false]);
      }
      expect(reads).toBe(0);
      expect(off.frontQuiet).toBe(false);
      for (const bad of [-1, 101, 2.5, Number.NaN]) {
        expect(() => new InlineCheckPolicy(2, bad)).toThrow(/inline busy max pct must be an integer in 0\.\.100/);
      }
    });
  });
});
