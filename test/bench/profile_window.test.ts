import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cutProfile, frontProfileFile, perRequestText } from '../../bench/load/profile_window.js';

// A profile as V8 writes it: (root) -> outer -> inner, and (idle) under the root. Samples every
// 1,000 µs from startTime 5,000,000 µs (monotonic): 0..3 inner, 4..5 outer, 6..7 idle.
const frame = (functionName: string) => ({ functionName, url: '', lineNumber: 0, columnNumber: 0 });
const PROFILE = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4] },
    { id: 2, callFrame: frame('outer'), children: [3] },
    { id: 3, callFrame: frame('inner') },
    { id: 4, callFrame: frame('(idle)') },
  ],
  startTime: 5_000_000,
  endTime: 5_009_000,
  samples: [3, 3, 3, 3, 2, 2, 4, 4, 3],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
};

describe('cutProfile', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'profile-window-'));
    writeFileSync(path.join(dir, 'CPU.20261129.110000.42.0.001.cpuprofile'), JSON.stringify(PROFILE));
    writeFileSync(path.join(dir, 'CPU.20261129.110000.42.1.002.cpuprofile'), JSON.stringify(PROFILE));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('counts only the samples inside the windows, self and inclusive, with the clock offset applied', () => {
    // Epoch = monotonic + 1,000,000 ms. Sample i stands at 5,000 + (i + 1) ms monotonic.
    const offset_ms = 1_000_000;
    const file = path.join(dir, 'CPU.20261129.110000.42.0.001.cpuprofile');
    // Window over samples 2..6 (monotonic 5,003..5,007 ms, end excluded): inner x2, outer x2, idle x1.
    const cut = cutProfile(file, [{ from_ms: offset_ms + 5003, to_ms: offset_ms + 5008 }], offset_ms, dir);
    const row = (name: string) => cut.rows.find((r) => r.name === name);
    expect(cut.sampled_us).toBe(5000);
    expect(cut.idle_us).toBe(1000);
    expect(cut.busy_us).toBe(4000);
    expect(row('inner')).toMatchObject({ self_us: 2000, total_us: 2000 });
    expect(row('outer')).toMatchObject({ self_us: 2000, total_us: 4000 });
    // Two windows add up; outside every window nothing counts.
    const two = cutProfile(file, [{ from_ms: offset_ms + 5001, to_ms: offset_ms + 5002 }, { from_ms: offset_ms + 5005, to_ms: offset_ms + 5006 }], offset_ms, dir);
    expect(two.busy_us).toBe(2000);
    expect(cutProfile(file, [{ from_ms: 0, to_ms: 1 }], offset_ms, dir).sampled_us).toBe(0);
    // Per request: 4 requests over 4,000 µs busy.
    expect(perRequestText(cut, 4, 5)[0]).toContain('busy 1000.00 µs/request');
  });

  it('finds the main thread profile (thread 0) by its file name', () => {
    expect(frontProfileFile(dir)).toBe('CPU.20261129.110000.42.0.001.cpuprofile');
  });
});
