// stampMs (stage_timings.ts) reads this thread's timeOrigin once and perf_hooks' performance.now()
// (issue 11, branch h22f: the global `performance` is an accessor run on every read): its stamps
// must stay the epoch-ms clock `performance.timeOrigin + performance.now()` the verify workers and
// the matcher stamp with, so the stage intervals between threads keep their meaning.
// No wall-clock bound here (a shared 2-core machine makes those noise): the clock is driven
// through a spy on performance.now, and the real one is only bracketed (monotonic reads).
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stampMs } from '../../src/gateway/stage_timings.js';

/** 2020-01-01 in epoch ms: a stamp below it would be ms since the thread's start, not epoch ms. */
const EPOCH_MS_FLOOR = Date.UTC(2020, 0, 1);

describe('stampMs', () => {
  afterEach(() => { vi.restoreAllMocks(); });

  it('is performance.timeOrigin + performance.now() of the global performance, and never goes back', () => {
    let last = 0;
    for (let i = 0; i < 1000; i++) {
      const before = globalThis.performance.timeOrigin + globalThis.performance.now();
      const s = stampMs();
      const after = globalThis.performance.timeOrigin + globalThis.performance.now();
      expect(s).toBeGreaterThanOrEqual(before);
      expect(s).toBeLessThanOrEqual(after);
      expect(s).toBeGreaterThanOrEqual(last);
      last = s;
    }
  });

  it('adds the driven performance.now() to this thread\'s timeOrigin exactly (epoch ms, not ms since start)', () => {
    // perf_hooks' performance is the global one: the spy drives the clock stampMs reads.
    expect(performance).toBe(globalThis.performance);
    const now = vi.spyOn(performance, 'now');
    for (const driven_ms of [0, 0.001, 123.456, 86_400_000.5]) {
      now.mockReturnValue(driven_ms);
      expect(stampMs()).toBe(globalThis.performance.timeOrigin + driven_ms);
    }
    expect(now).toHaveBeenCalledTimes(4);
    expect(stampMs()).toBeGreaterThan(EPOCH_MS_FLOOR);
  });
});
