// bench/load/thread_rows.ts: the per-thread CPU and wake-ups per request of bench/light_threads.ts,
// keyed by thread name and creation rank so that two runs (different tids) line up.
import { describe, expect, it } from 'vitest';
import { sampleThreads, threadRows, type ThreadTick } from '../../bench/load/thread_rows.js';

const tick = (comm: string, start: number, run_ns: number, wakes: number): ThreadTick => ({ comm, start, run_ns, wakes });

describe('threadRows', () => {
  it('keys threads by name and creation rank (start, then tid), the main thread as "main", per answered request', () => {
    const pid = 100;
    const a = new Map([[100, tick('node', 1, 0, 0)], [103, tick('node', 5, 1_000_000, 10)], [101, tick('node', 5, 0, 0)], [102, tick('rb-da', 3, 0, 0)]]);
    const b = new Map([[100, tick('node', 1, 4_000_000, 20)], [103, tick('node', 5, 3_000_000, 30)], [101, tick('node', 5, 500_000, 1)], [102, tick('rb-da', 3, 2_000_000, 4)]]);
    expect(threadRows(pid, a, b, 1000)).toEqual([
      { key: 'main', us_per_request: 4, wakes_per_request: 0.02 },
      { key: 'rb-da#0', us_per_request: 2, wakes_per_request: 0.004 },
      // same start: the lower tid is created first
      { key: 'node#0', us_per_request: 0.5, wakes_per_request: 0.001 },
      { key: 'node#1', us_per_request: 2, wakes_per_request: 0.02 },
    ]);
  });
  it('counts a thread new since the first sample from 0, and no answered request as one', () => {
    const b = new Map([[7, tick('rb-storer', 9, 2_000, 3)]]);
    expect(threadRows(1, new Map(), b, 0)).toEqual([{ key: 'rb-storer#0', us_per_request: 2, wakes_per_request: 3 }]);
  });
});

describe('sampleThreads', () => {
  it.skipIf(process.platform !== 'linux')('reads this process\'s threads, the main one among them (skipped off Linux: no /proc)', () => {
    const s = sampleThreads(process.pid);
    const me = s.get(process.pid);
    expect(me).toBeDefined();
    expect(me!.run_ns).toBeGreaterThan(0);
    expect(me!.comm.length).toBeGreaterThan(0);
  });
});
