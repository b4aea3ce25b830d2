// The load bench's per-thread timeline (bench/load/thread_timeline.ts): the /proc parsers on
// real-format texts, the window sums on a made-up timeline (interpolation, roles summed, absent
// data as null), and the sampler on this test process itself (a busy spell shows as the main
// thread running). The suite runs on Linux: without /proc the sampler tests fail, they do not skip.
import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  parseMachineStat, parseSchedstat, parseTaskState, SAMPLE_MS, sampledAround, waitSoFarMs, roleOfThread, SATURATED_PCT, ThreadSampler, windowSched, type Timeline,
} from '../../bench/load/thread_timeline.js';

describe('thread timeline parsers', () => {
  it('reads schedstat as ms running and ms waiting; null for a short or foreign text', () => {
    expect(parseSchedstat('54991447 131429935 205\n')).toEqual({ run_ms: 54.991447, wait_ms: 131.429935 });
    expect(parseSchedstat('')).toBeNull();
    expect(parseSchedstat('1 2')).toBeNull();
    expect(parseSchedstat('a b c')).toBeNull();
  });

  it('reads the machine busy time from /proc/stat (idle, iowait and steal left out), steal apart, cores from the cpuN lines; null without a cpu line', () => {
    // user nice system idle iowait irq softirq steal (guest fields after them are inside user)
    const text = 'cpu  100 5 50 1000 20 3 2 10 0 0\ncpu0 50 2 25 500 10 1 1 5 0 0\ncpu1 50 3 25 500 10 2 1 5 0 0\nintr 1 2\n';
    expect(parseMachineStat(text, 100)).toEqual({ busy_ms: (100 + 5 + 50 + 3 + 2) * 10, steal_ms: 100, cores: 2 });
    // The cores are the cpuN lines the first line sums, whatever this process may run on.
    const four = 'cpu  4 0 0 4 0 0 0 0 0 0\n' + [0, 1, 2, 3].map((k) => `cpu${k} 1 0 0 1 0 0 0 0 0 0\n`).join('');
    expect(parseMachineStat(four, 100)?.cores).toBe(4);
    expect(parseMachineStat('intr 1 2 3\n', 100)).toBeNull();
    expect(parseMachineStat('cpu  1 2 x 4 5 6 7 8\n', 100)).toBeNull();
  });

  it('reads a thread\'s state letter after its name, whatever the name holds; null for a foreign text', () => {
    expect(parseTaskState('4242 (rb-matcher) R 4240 4240 1 0 -1 4194368 12 0 0 0 5 1 0 0 20 0 9 0 100 0 0\n')).toBe('R');
    expect(parseTaskState('4243 (a) b) (c) S 1 2 3\n')).toBe('S');
    expect(parseTaskState('')).toBeNull();
    expect(parseTaskState('4244 (x)R 1')).toBeNull();
  });

  it('names roles by thread name, the main thread by its tid', () => {
    expect(roleOfThread(10, 10, 'node')).toBe('main');
    expect(roleOfThread(10, 11, 'rb-matcher')).toBe('matcher');
    expect(roleOfThread(10, 12, 'rb-da')).toBe('DA worker');
    expect(roleOfThread(10, 13, 'rb-verify')).toBe('verify worker');
    expect(roleOfThread(10, 14, 'node')).toBe('other');
  });
});

describe('waits still going on (state R, no run time since the last sample)', () => {
  // Samples every 10 ms from 1000. The thread runs 5 ms per 10 until 1040, then sits on the run
  // queue (state R, run time flat) from ~1045 until it gets a core at ~1085; schedstat adds the
  // whole 40 ms wait only then (at the sample at 1090).
  const t_ms = Float64Array.from({ length: 11 }, (_, k) => 1000 + 10 * k);
  const run_ms = Float64Array.of(0, 5, 10, 15, 20, 20, 20, 20, 20, 25, 30);
  const wait_ms = Float64Array.of(0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 40);
  const runnable = Uint8Array.of(0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0);

  it('credits the wait as it goes, never more than schedstat adds at its end, never falling', () => {
    // The streak starts at 1050 (R, no run since 1040): 0, 10, 20, 30 ms by 1080; then schedstat's 40.
    expect([...waitSoFarMs(t_ms, run_ms, wait_ms, runnable)]).toEqual([0, 0, 0, 0, 0, 0, 10, 20, 30, 40, 40]);
    // A thread in R whose run time grows is running, not waiting.
    const running = Float64Array.from({ length: 11 }, (_, k) => 10 * k);
    expect([...waitSoFarMs(t_ms, running, new Float64Array(11), new Uint8Array(11).fill(1))]).toEqual(new Array(11).fill(0));
  });

  it('puts a wait spanning a window\'s end in that window (schedstat alone put it in the next one)', () => {
    const th = { tid: 9, comm: 'rb-matcher', role: 'matcher', run_ms, wait_ms };
    const tl = (r: Uint8Array | null): Timeline => ({ t_ms, machine_busy_ms: null, machine_steal_ms: null, cores: 0, threads: [{ ...th, runnable: r }] });
    // An episode 1040..1080: the thread waited through its second half and beyond.
    expect(windowSched(tl(runnable), 1040, 1080)?.runqueue_ms_by_thread).toEqual({ matcher: 30 });
    expect(windowSched(tl(null), 1040, 1080)?.runqueue_ms_by_thread).toEqual({ matcher: 0 });
    // The next window gets the rest, not the whole 40; over both the total is schedstat's.
    expect(windowSched(tl(runnable), 1080, 1100)?.runqueue_ms_by_thread).toEqual({ matcher: 10 });
    expect(windowSched(tl(runnable), 1000, 1100)?.runqueue_ms_by_thread).toEqual({ matcher: 40 });
  });
});

describe('window sums', () => {
  // Samples at 0, 10, 20, 30 ms: the main thread runs 5 ms per 10, the matcher waits 8 ms per 10
  // from 10 ms on; two "other" threads; the machine is busy 15 ms per 10 ms (2 cores).
  const tl: Timeline = {
    t_ms: Float64Array.of(1000, 1010, 1020, 1030),
    machine_busy_ms: Float64Array.of(0, 15, 30, 45),
    machine_steal_ms: Float64Array.of(0, 1, 2, 3),
    cores: 2,
    threads: [
      { tid: 1, comm: 'node', role: 'main', run_ms: Float64Array.of(0, 5, 10, 15), wait_ms: Float64Array.of(0, 1, 2, 3), runnable: null },
      { tid: 2, comm: 'rb-matcher', role: 'matcher', run_ms: Float64Array.of(0, 0, 1, 2), wait_ms: Float64Array.of(0, 0, 8, 16), runnable: null },
      { tid: 3, comm: 'node', role: 'other', run_ms: Float64Array.of(0, 1, 2, 3), wait_ms: Float64Array.of(0, 0, 0, 0), runnable: null },
      { tid: 4, comm: 'node', role: 'other', run_ms: Float64Array.of(0, 1, 2, 3), wait_ms: Float64Array.of(0, 0, 0, 0), runnable: null },
    ],
  };

  it('sums each role over a window, interpolating between samples', () => {
    const w = windowSched(tl, 1005, 1025);
    expect(w).not.toBeNull();
    expect(w?.cpu_ms_by_thread).toEqual({ main: 10, matcher: 1.5, other: 4 });
    expect(w?.runqueue_ms_by_thread).toEqual({ main: 2, matcher: 12, other: 0 });
    // 30 ms of the machine busy in 20 ms, minus the server's 15.5 ms.
    expect(w?.others_cpu_ms).toBe(14.5);
    expect(w?.machine_busy_pct).toBe(75);
    expect(w?.machine_steal_pct).toBe(5); // 2 ms stolen of 40 core-ms
    expect(w?.machine_cores).toBe(2);
    // The matcher waited 12 of 20 ms and ran 1.5: 67.5%, under SATURATED_PCT; nobody saturated.
    expect(w?.saturated_threads).toEqual([]);
  });

  it('names a thread running or waiting for a core >= SATURATED_PCT of the window', () => {
    const busy: Timeline = { ...tl, threads: [...tl.threads, { tid: 5, comm: 'rb-da', role: 'DA worker', run_ms: Float64Array.of(0, 6, 12, 18), wait_ms: Float64Array.of(0, 3.5, 7, 10.5), runnable: null }] };
    expect(SATURATED_PCT).toBeLessThan(100);
    expect(windowSched(busy, 1000, 1030)?.saturated_threads).toEqual(['DA worker']); // 9.5 of 10 ms per 10
  });

  it('is null outside the sampled span and without a timeline; a missing machine series gives null, not 0', () => {
    expect(windowSched(tl, 990, 1010)).toBeNull();
    expect(windowSched(tl, 1020, 1040)).toBeNull();
    expect(windowSched(null, 1000, 1010)).toBeNull();
    const w = windowSched({ ...tl, machine_busy_ms: null, machine_steal_ms: null }, 1000, 1010);
    expect(w?.others_cpu_ms).toBeNull();
    expect(w?.machine_busy_pct).toBeNull();
    expect(w?.machine_steal_pct).toBeNull();
    expect(w?.cpu_ms_by_thread.main).toBe(5);
  });

  it('leaves out a thread with an unreadable sample around the window', () => {
    const broken: Timeline = { ...tl, threads: [tl.threads[0], { ...tl.threads[1], run_ms: Float64Array.of(0, NaN, 1, 2) }] };
    const w = windowSched(broken, 1000, 1010);
    expect(w?.cpu_ms_by_thread).toEqual({ main: 5 });
    expect(windowSched(broken, 1020, 1030)?.cpu_ms_by_thread).toEqual({ main: 5, matcher: 1 });
  });
});

describe('the sampler\'s files', () => {
  it('closes /proc/stat when no thread\'s schedstat opens (no timer started), and on a second stop', () => {
    // A made-up /proc: one thread with a name but no schedstat, and a machine stat file.
    const root = mkdtempSync(path.join(tmpdir(), 'ringbook-proc-'));
    try {
      mkdirSync(path.join(root, '77', 'task', '78'), { recursive: true });
      writeFileSync(path.join(root, '77', 'task', '78', 'comm'), 'node\n');
      writeFileSync(path.join(root, 'stat'), 'cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 1 0 1 10 0 0 0 0 0 0\n');
      const stat = path.join(root, 'stat');
      const openOnStat = (): number => readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === stat;
        } catch {
          return false; // the directory listing's own fd, gone by now
        }
      }).length;
      const s = new ThreadSampler(77, { proc_root: root });
      s.start();
      expect(openOnStat()).toBe(0);
      expect(s.stop()).toBeNull();
      expect(s.stop()).toBeNull();
      expect(openOnStat()).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the sampler on this process', () => {
  it('sees a busy spell of the main thread as running time', async () => {
    const s = new ThreadSampler(process.pid, { period_ms: 2 });
    s.start();
    await new Promise((r) => setTimeout(r, 20));
    const from = performance.timeOrigin + performance.now();
    const until = performance.now() + 60;
    let x = 0;
    while (performance.now() < until) x += Math.sqrt(x + 1);
    const to = performance.timeOrigin + performance.now();
    await new Promise((r) => setTimeout(r, 20));
    const tl = s.stop();
    expect(x).toBeGreaterThan(0);
    expect(tl).not.toBeNull();
    if (tl === null) return;
    expect(tl.threads.some((t) => t.role === 'main')).toBe(true);
    // The busy loop blocked the timer: the samples around it bracket it.
    const w = windowSched(tl, from, to);
    expect(w).not.toBeNull();
    // 60 ms of wall time: the main thread ran most of it (or waited for a core on a busy machine).
    expect((w?.cpu_ms_by_thread.main ?? 0) + (w?.runqueue_ms_by_thread.main ?? 0)).toBeGreaterThan(45);
    expect(s.stop()).toBeNull(); // stopped once
  });
});

describe('sampling around a phase', () => {
  it('starts the sampler the lead-in before the phase, so a window reaching back that far from its start is sampled', async () => {
    const lead_in_ms = 60;
    let started = 0;
    const r = await sampledAround(process.pid, lead_in_ms, async () => {
      started = performance.timeOrigin + performance.now();
      await new Promise((res) => setTimeout(res, 4 * SAMPLE_MS));
      return 7;
    });
    expect(r.value).toBe(7);
    expect(r.from_ms).toBeLessThanOrEqual(started);
    expect(r.to_ms).toBeGreaterThanOrEqual(started + 4 * SAMPLE_MS - 1);
    expect(r.timeline).not.toBeNull();
    if (r.timeline === null) return;
    expect(r.timeline.t_ms[0]).toBeLessThanOrEqual(r.from_ms - lead_in_ms);
    // The lead-in of an episode at the phase's very start: inside the samples, not null.
    expect(windowSched(r.timeline, r.from_ms - lead_in_ms, r.from_ms)).not.toBeNull();
  });
});
