// The load bench's run-queue wait per thread role (bench/load/phase_cpu.ts schedByRole, and the
// /proc schedstat parse in server_child.ts): what tells a thread short of CPU from one short of work.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schedByRole } from '../../bench/load/phase_cpu.js';
import { runQueueWaitMs, type CpuDelta } from '../../bench/load/server_child.js';

describe('runQueueWaitMs', () => {
  it('reads the second schedstat field (ns) as ms', () => {
    expect(runQueueWaitMs('123456789 2500000 77\n')).toBe(2.5);
  });
  it('is 0 for a file without the three fields', () => {
    expect(runQueueWaitMs('')).toBe(0);
    expect(runQueueWaitMs('12 34')).toBe(0);
  });
  // /proc/<pid>/task/<tid>/schedstat exists on Linux only; elsewhere the bench reads no wait (0).
  it.skipIf(process.platform !== 'linux')('reads this process\'s own schedstat (skipped off Linux: no /proc/<pid>/task/<tid>/schedstat)', () => {
    const text = readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8');
    // Three numbers: ns on the CPU, ns waiting in the run queue, timeslices.
    const fields = text.trim().split(' ');
    expect(fields).toHaveLength(3);
    for (const f of fields) expect(f).toMatch(/^\d+$/);
    expect(runQueueWaitMs(text)).toBe(Number(fields[1]) / 1e6);
  });
});

describe('schedByRole', () => {
  const thread = (tid: number, cpu_ms: number, wait_ms: number) => ({ tid, comm: 'node', cpu_ms, pct: 0, start: tid, sleeps: 0, wait_ms });
  it('sums each role\'s running and waiting time as % of the wall time; unknown threads are "other"', () => {
    const d: CpuDelta = { wall_ms: 2000, cpu_ms: 0, pct: 0, threads: [thread(1, 500, 100), thread(2, 200, 300), thread(3, 40, 60), thread(4, 20, 0)] };
    const roles = new Map([[1, 'main (uWS front + gateway)'], [2, 'verify worker (by creation order)']]);
    expect(schedByRole(d, roles)).toEqual({
      main: { cpu_pct: 25, runq_wait_pct: 5 },
      'verify worker': { cpu_pct: 10, runq_wait_pct: 15 },
      other: { cpu_pct: 3, runq_wait_pct: 3 },
    });
  });
  it('is empty without a sample', () => {
    expect(schedByRole(null, new Map())).toEqual({});
  });
});
