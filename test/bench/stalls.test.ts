// The load bench's stall episodes (bench/load/stalls.ts) on made-up answers, stage rows, GC
// pauses and a thread timeline: the slow answers clustered into episodes, each laid over what
// overlapped it, and every absent source reported as null, not 0. Also the epoch placement of
// --trace-gc-nvp pauses (bench/load/gc_trace.ts pausesOnEpoch).
import { describe, expect, it } from 'vitest';
import { clockCheckMs, pausesOnEpoch } from '../../bench/load/gc_trace.js';
import type { AnswerRecords } from '../../bench/load/lanes.js';
import { batchesOf, EPISODES_REPORTED, journalIn, LEAD_IN_MS, MACHINE_WINDOW_MS_PER_CORE, SIGN_MS, stallFigures, stallLines, type StallSources } from '../../bench/load/stalls.js';
import type { Timeline } from '../../bench/load/thread_timeline.js';
import { STAGE_ROW_F64 } from '../../src/gateway/stage_timings.js';

const T0 = 1_700_000_000_000;
const N = 1000;

/**
 * N answers scheduled 1 ms apart from T0, each in its own batch; answer i has request number
 * i + 1 and takes 1 ms, except those in `slow` (index -> extra ms spent in the journal commit).
 */
function phase(slow: Map<number, number>): { rec: AnswerRecords; rows: Float64Array } {
  const rec: AnswerRecords = {
    sched_ms: new Float64Array(N), sent_ms: new Float64Array(N), done_ms: new Float64Array(N),
    request_no: new Float64Array(N), status: new Uint16Array(N).fill(200),
  };
  const rows = new Float64Array(N * STAGE_ROW_F64);
  for (let i = 0; i < N; i++) {
    const sched = T0 + i;
    const extra = slow.get(i) ?? 0;
    // arrive, parsed, verify_start, verify_end, published, batch_start, applied, durable, answered, request_no
    const stamps = [0.01, 0.02, 0.03, 0.1, 0.12, 0.15, 0.2, 0.6 + extra, 0.7 + extra].map((d) => sched + d);
    rows.set([...stamps, i + 1], i * STAGE_ROW_F64);
    rec.sched_ms[i] = sched;
    rec.sent_ms[i] = sched + 0.005;
    rec.done_ms[i] = sched + 0.75 + extra;
    rec.request_no[i] = i + 1;
  }
  return { rec, rows };
}

/** phase(), with usual answer i taking i µs more, so the usual latencies do not tie (p99 falls between them). */
function spread(slow: Map<number, number>): { rec: AnswerRecords; rows: Float64Array } {
  const p = phase(slow);
  for (let i = 0; i < N; i++) if (!slow.has(i)) p.rec.done_ms[i] += i / 1e3;
  return p;
}

/** Answers 300..304 wait 40 ms in the journal (one episode); 700 and 703 wait 20 ms (a second, 3 ms apart). */
const SLOW = new Map<number, number>([[300, 40], [301, 40], [302, 40], [303, 40], [304, 40], [700, 20], [703, 20]]);

describe('stall episodes', () => {
  it('names each episode: start, length, answers, the largest parts and what overlapped it', () => {
    const { rec, rows } = spread(SLOW);
    // The front paused 5 ms inside the first episode and 3 ms before it; another isolate 7 ms
    // inside the second (and 1 ms long before).
    const front_gc = Float64Array.of(T0 + 250, 3, T0 + 310, 5);
    const other_gc = [Float64Array.of(T0 + 705, 7), Float64Array.of(T0 + 100, 1)];
    // A timeline over the whole phase, 1 ms apart: the main thread runs half the time, the
    // matcher waits for a core a quarter of it, the machine is busy 1.5 ms per ms (of 2 cores).
    const ticks = 2000;
    const tl: Timeline = {
      t_ms: Float64Array.from({ length: ticks }, (_, k) => T0 - 200 + k),
      machine_busy_ms: Float64Array.from({ length: ticks }, (_, k) => k * 1.5),
      machine_steal_ms: new Float64Array(ticks),
      cores: 2,
      threads: [
        { tid: 1, comm: 'node', role: 'main', run_ms: Float64Array.from({ length: ticks }, (_, k) => k / 2), wait_ms: new Float64Array(ticks), runnable: null },
        { tid: 2, comm: 'rb-matcher', role: 'matcher', run_ms: new Float64Array(ticks), wait_ms: Float64Array.from({ length: ticks }, (_, k) => k / 4), runnable: null },
      ],
    };
    const s = stallFigures(rec, { rows, rows_cut_off_ms: null, front_gc, other_gc, timeline: tl });
    expect(s).not.toBeNull();
    if (s === null) return;
    // p99 of 1,000 answers is the 990th smallest: the 993 usual answers hold ranks 1..993, so
    // their 4 largest (996..999) and the 7 slow ones are at or above it.
    expect(s.slow_answers).toBe(11);
    expect(s.episodes).toBe(3); // 300..304, 700 + 703 (3 ms apart), 996..999
    expect(s.reported_share).toBe(1);
    expect(s.top.map((e) => [e.start_ms, e.answers])).toEqual([[300, 5], [700, 2], [996, 4]]);
    const first = s.top[0];
    // From 300's schedule to 304's read: 4 + 40.75 ms.
    expect(first.length_ms).toBeCloseTo(44.8, 1);
    expect(first.latency_max_ms).toBeCloseTo(40.8, 1);
    expect(Object.keys(first.largest_parts_ms ?? {})[0]).toBe('journal_fsync');
    expect(first.largest_parts_ms?.journal_fsync).toBeCloseTo(40.4, 1);
    const o = first.overlapping;
    expect(o.front_gc_ms).toBe(5);
    expect(o.front_gc_max_ms).toBe(5);
    expect(o.other_isolates_gc_ms).toBe(0);
    expect(o.other_isolates_gc_max_ms).toBe(0);
    // Batches starting in the window: 300..344 (one per ms; 304's read ends the window at 344.75).
    expect(o.batches).toBe(45);
    expect(o.journal_commit_max_ms).toBeCloseTo(40.4, 1);
    // 44.75 ms of window: main ran half of it, the matcher waited a quarter; the machine's
    // 1.5 ms per ms less the server's 0.5 is the others'.
    expect(o.cpu_ms_by_thread).toEqual({ main: 22.4, matcher: 0 });
    expect(o.runqueue_ms_by_thread).toEqual({ main: 0, matcher: 11.2 });
    expect(o.others_cpu_ms).toBeCloseTo(44.75, 0);
    expect(o.machine_busy_pct).toBe(75);
    expect(o.machine_steal_pct).toBe(0);
    expect(o.machine_cores).toBe(2);
    // main 50% running, matcher 25% waiting: neither had no idle moment.
    expect(o.saturated_threads).toEqual([]);
    // The front's 3 ms pause at 250 ms lies in the lead-in (the LEAD_IN_MS before 300).
    expect(LEAD_IN_MS).toBeGreaterThanOrEqual(50);
    expect(first.lead_in.front_gc_ms).toBe(3);
    expect(first.lead_in.front_gc_max_ms).toBe(3);
    const second = s.top[1];
    expect(second.overlapping.other_isolates_gc_ms).toBe(7);
    expect(second.overlapping.other_isolates_gc_max_ms).toBe(7);
    expect(second.overlapping.front_gc_ms).toBe(0);
    expect(second.overlapping.front_gc_max_ms).toBe(0);
    // Signs over the three episodes: the first has a 5 ms front pause and a 40 ms commit, the
    // second a 20 ms commit and another isolate's 7 ms pause, the third neither; the machine
    // was 75% busy and the others took 1 ms per ms (at least half a core) throughout; every window
    // (and lead-in) is shorter than MACHINE_WINDOW_MS_PER_CORE x 2 cores: machine_saturated unknown.
    expect(s.signs).toEqual({ front_saturated: 0, machine_saturated: null, others_over_half_a_core: 3, front_gc: 1, other_isolates_gc: 1, journal_commit: 2 });
    const lines = stallLines(s, 'half the max rate');
    expect(lines[0]).toContain('11 answers >= p99');
    expect(lines.join('\n')).toContain('other isolates 7 ms');
  });

  it('reports absent sources as null: no rows, no GC trace, no timeline; no records at all gives null', () => {
    const { rec } = spread(SLOW);
    const none: StallSources = { rows: null, rows_cut_off_ms: null, front_gc: null, other_gc: null, timeline: null };
    const s = stallFigures(rec, none);
    expect(s).not.toBeNull();
    const o = s?.top[0].overlapping;
    expect(o).toEqual({
      front_gc_ms: null, front_gc_max_ms: null, other_isolates_gc_ms: null, other_isolates_gc_max_ms: null, batches: null, journal_commit_max_ms: null,
      journal_ms: null, batch_gap_max_ms: null, cpu_ms_by_thread: null, runqueue_ms_by_thread: null, others_cpu_ms: null, machine_busy_pct: null, machine_steal_pct: null, machine_cores: null,
      saturated_threads: null,
    });
    expect(s?.top[0].largest_parts_ms).toBeNull();
    expect(s?.signs).toEqual({ front_saturated: null, machine_saturated: null, others_over_half_a_core: null, front_gc: null, other_isolates_gc: null, journal_commit: null });
    expect(stallFigures(undefined, none)).toBeNull();
    expect(stallFigures(null, none)).toBeNull();
    const empty: AnswerRecords = { sched_ms: new Float64Array(0), sent_ms: new Float64Array(0), done_ms: new Float64Array(0), request_no: new Float64Array(0), status: new Uint16Array(0) };
    expect(stallFigures(empty, none)).toBeNull();
    expect(stallLines(null, '1,000/s')[0]).toContain('no answer records');
  });

  it('counts the front_gc sign by the longest front pause, not their sum: five 1 ms scavenges are no 5 ms pause', () => {
    const { rec, rows } = spread(SLOW);
    // Five 1 ms pauses inside the first episode (300..344.75 ms), none elsewhere.
    const front_gc = Float64Array.of(T0 + 305, 1, T0 + 310, 1, T0 + 315, 1, T0 + 320, 1, T0 + 325, 1);
    const s = stallFigures(rec, { rows, rows_cut_off_ms: null, front_gc, other_gc: null, timeline: null });
    const o = s?.top[0].overlapping;
    expect(o?.front_gc_ms).toBe(5);
    expect(o?.front_gc_max_ms).toBe(1);
    expect(s?.signs.front_gc).toBe(0);
    expect(stallLines(s ?? null, 'half the max rate').join('\n')).toContain('GC front 5 ms (longest 1)');
    // One pause of SIGN_MS in the same place is the sign; one straddling the window's start counts whole.
    const one = stallFigures(rec, { rows, rows_cut_off_ms: null, front_gc: Float64Array.of(T0 + 297, SIGN_MS), other_gc: null, timeline: null });
    expect(one?.top[0].overlapping.front_gc_ms).toBe(2);
    expect(one?.top[0].overlapping.front_gc_max_ms).toBe(SIGN_MS);
    expect(one?.signs.front_gc).toBe(1);
  });

  it('gives null journal fields for a window reaching the server\'s row cut-off (rows not kept), not 0 batches', () => {
    const { rec, rows } = spread(SLOW);
    // The server kept rows of the batches starting before 500 ms only (STAGE_ROWS_MAX): the file's
    // cut_off_ms. Its rows after that are gone, as they would be.
    const cut_off = T0 + 500;
    const kept = rows.slice(0, 500 * STAGE_ROW_F64);
    const s = stallFigures(rec, { rows: kept, rows_cut_off_ms: cut_off, front_gc: null, other_gc: null, timeline: null });
    const [first, second] = s?.top ?? [];
    expect(first.start_ms).toBe(300);
    expect(first.overlapping.batches).toBe(45); // before the cut-off: measured
    expect(first.overlapping.journal_commit_max_ms).toBeCloseTo(40.4, 1);
    expect(second.start_ms).toBe(700);
    expect(second.overlapping).toMatchObject({ batches: null, journal_commit_max_ms: null, journal_ms: null, batch_gap_max_ms: null });
    expect(second.lead_in.batches).toBeNull(); // 600..700 ms: past the cut-off too
    // Without the cut-off the same rows would read as a journal idle through the episode.
    const blind = stallFigures(rec, { rows: kept, rows_cut_off_ms: null, front_gc: null, other_gc: null, timeline: null });
    expect(blind?.top[1].overlapping.batches).toBe(0);
    // The sign counts what is known: the first episode's 40 ms commit.
    expect(s?.signs.journal_commit).toBe(1);
  });

  it('counts machine_saturated only over windows of MACHINE_WINDOW_MS_PER_CORE x cores or more (tick error), busy + stolen', () => {
    // One episode: slow answers every 8 ms from 300 to 484 ms, 30 ms each: 300 -> 514.75 ms.
    const slow = new Map<number, number>();
    for (let i = 300; i <= 484; i += 8) slow.set(i, 30);
    const { rec, rows } = spread(slow);
    const ticks = 2000;
    const timeline = (busy_per_ms: number, steal_per_ms: number): Timeline => ({
      t_ms: Float64Array.from({ length: ticks }, (_, k) => T0 - 200 + k),
      machine_busy_ms: Float64Array.from({ length: ticks }, (_, k) => k * busy_per_ms),
      machine_steal_ms: Float64Array.from({ length: ticks }, (_, k) => k * steal_per_ms),
      cores: 2,
      threads: [],
    });
    const at = (tl: Timeline): ReturnType<typeof stallFigures> => stallFigures(rec, { rows, rows_cut_off_ms: null, front_gc: null, other_gc: null, timeline: tl });
    const long = at(timeline(1.5, 0.5));
    expect(long?.episodes).toBe(1);
    expect(long?.top[0].length_ms).toBeGreaterThanOrEqual(MACHINE_WINDOW_MS_PER_CORE * 2);
    expect(long?.top[0].overlapping).toMatchObject({ machine_busy_pct: 75, machine_steal_pct: 25, machine_cores: 2 });
    expect(long?.signs.machine_saturated).toBe(1); // 75% busy + 25% stolen: no core idle
    expect(at(timeline(1.5, 0))?.signs.machine_saturated).toBe(0);
    // The same machine on 3 cores: 214.75 ms is under 300, so the reading is too coarse to say.
    expect(at({ ...timeline(1.5, 0.5), cores: 3 })?.signs.machine_saturated).toBeNull();
  });

  it('reports at most EPISODES_REPORTED episodes, the largest, in time order', () => {
    const slow = new Map<number, number>();
    // 8 episodes 100 ms apart; episode k has k + 1 slow answers.
    for (let k = 0; k < 8; k++) for (let j = 0; j <= k; j++) slow.set(100 + 100 * k + j, 30);
    const { rec, rows } = spread(slow);
    const s = stallFigures(rec, { rows, rows_cut_off_ms: null, front_gc: new Float64Array(0), other_gc: [], timeline: null });
    expect(s?.top.length).toBe(EPISODES_REPORTED);
    // 36 slow answers of one latency (30.75 ms): p99 (the 990th smallest) is that latency, and all 36 count.
    expect(s?.slow_answers).toBe(36);
    expect(s?.episodes).toBe(8);
    expect(s?.reported_share).toBeCloseTo(30 / 36, 3);
    expect(s?.top.map((e) => e.answers)).toEqual([4, 5, 6, 7, 8]);
    expect(s?.top.map((e) => e.start_ms)).toEqual([400, 500, 600, 700, 800]);
    expect(s?.top[0].overlapping.front_gc_ms).toBe(0); // measured: no pause (not null)
  });
});

describe('journal figures per window', () => {
  it('counts batches starting in the window, the longest commit, the commit time inside it and the longest gap', () => {
    // [start, applied, durable]: batches at 0, 10, 40 (a 20 ms commit), 70.
    const b = Float64Array.of(0, 1, 3, 10, 11, 13, 40, 41, 61, 70, 71, 72);
    expect(journalIn(b, 5, 65)).toEqual({ batches: 2, commit_max_ms: 20, journal_ms: 2 + 20, gap_max_ms: 27 });
    expect(journalIn(b, 80, 100)).toEqual({ batches: 0, commit_max_ms: 0, journal_ms: 0, gap_max_ms: 20 });
  });

  it('takes each batch once from the stage rows (several requests share one), sorted by start', () => {
    const rows = new Float64Array(3 * STAGE_ROW_F64);
    const put = (k: number, start: number): void => rows.set([0, 0, 0, 0, 0, start, start + 1, start + 2, start + 3, k + 1], k * STAGE_ROW_F64);
    put(0, 50);
    put(1, 20);
    put(2, 50);
    expect([...batchesOf(rows)]).toEqual([20, 21, 22, 50, 51, 52]);
  });
});

describe('GC pauses of every isolate on the epoch clock', () => {
  it('places each pause by its stamp plus the isolate\'s least lag, ending at the stamp', () => {
    const events = [
      { iso: '0xa', stamp_ms: 100, pause_ms: 2 },
      { iso: '0xb', stamp_ms: 10, pause_ms: 5 },
      { iso: '0xa', stamp_ms: 50, pause_ms: 1 },
      { iso: '0xc', stamp_ms: 7, pause_ms: 1 }, // no lag known: left out
    ];
    const lag = new Map([['0xa', 1000], ['0xb', 1100]]);
    const p = pausesOnEpoch(events, lag, T0);
    expect([...p.keys()].sort()).toEqual(['0xa', '0xb']);
    expect([...(p.get('0xa') ?? [])]).toEqual([T0 + 1049, 1, T0 + 1098, 2]); // in start order
    expect([...(p.get('0xb') ?? [])]).toEqual([T0 + 1105, 5]);
  });
});

describe('the GC trace clock check', () => {
  it('gives the median distance from each observed pause of 1 ms or more to the nearest traced start; null without either', () => {
    const observed = Float64Array.of(100, 2, 200, 0.5, 300, 4, 400, 1);
    const traced = Float64Array.of(99.5, 2, 301, 4, 420, 1);
    // 100 -> 0.5, 300 -> 1, 400 -> 20 (200 is under 1 ms): median 1.
    expect(clockCheckMs(observed, traced)).toBe(1);
    expect(clockCheckMs(observed, new Float64Array(0))).toBeNull();
    expect(clockCheckMs(Float64Array.of(5, 0.2), traced)).toBeNull();
  });
});
