// stampMs (stage_timings.ts) reads this thread's timeOrigin once and perf_hooks' performance.now()
// (issue 11, branch h22f: the global `performance` is an accessor run on every read): its stamps
// must stay the epoch-ms clock `performance.timeOrigin + performance.now()` the verify workers and
// the matcher stamp with, so the stage intervals between threads keep their meaning.
import { describe, expect, it } from 'vitest';
import { stampMs } from '../../src/gateway/stage_timings.js';

describe('stampMs', () => {
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
    // On the wall clock (epoch ms), within the clocks' drift since the thread started.
    expect(Math.abs(stampMs() - Date.now())).toBeLessThan(1000);
  });
});
