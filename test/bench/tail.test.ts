// The load bench's tail attribution (bench/load/tail.ts): the native generator's per-answer
// records joined with the server's stage rows by the X-Request-Id number, against the real
// server (every answer joins, the parts add up to the latency, the two clocks agree), and the
// summary of the slowest answers on made-up rows (which part was largest, episodes, unjoined), and
// the same over several phases of one server pooled (bench/light_ab.ts).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../server/harness.js';
import { DEFAULT_MIX, loadNativeSecp256k1, walletKey, WalletFlow } from '../../bench/load/flow.js';
import type { AnswerRecords } from '../../bench/load/lanes.js';
import { depositLanes } from '../../bench/load/phases.js';
import { signedLanes } from './signed_lanes.js';
import { LOADGEN_BINARY, runNativePhase } from '../../bench/load/native_generator.js';
import { readStageRows } from '../../bench/load/targets.js';
import { batchesOf, behindPreviousUs, concatRecords, overlapUs, pausesWithin, TAIL_PARTS, tailFigures, tailFiguresOfPhases } from '../../bench/load/tail.js';
import { REQUEST_NO_AT, STAGE_ROW_F64, StageRecorder, StageStamps } from '../../src/gateway/stage_timings.js';

const WALLETS = 6;
const LANES = 3;
const ROUNDS = 10;

describe('tail attribution against the real server', () => {
  it('joins every signed answer of an open-loop phase with its stage row; the parts add up to the latency', async () => {
    expect(existsSync(LOADGEN_BINARY), `${LOADGEN_BINARY} (make native)`).toBe(true);
    const secp = loadNativeSecp256k1();
    const flows = Array.from({ length: WALLETS }, (_, i) => new WalletFlow(walletKey(secp, 'tail-test', i), DEFAULT_MIX));
    const s = await startServer({ config: { diagnostics: { stage_timings: true } } });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ringbook-tail-test-'));
    try {
      const fund = depositLanes(flows.map((f) => f.key.address), LANES, s.admin_token);
      expect((await runNativePhase({ port: s.port, lanes: fund, mode: 'closed', duration_ms: Infinity })).stats.deposit.ok).toBe(WALLETS * 2);
      const { lanes } = signedLanes(secp, flows, LANES, ROUNDS);
      const n = WALLETS * ROUNDS;
      const res = await runNativePhase({ port: s.port, lanes, mode: 'open', rate: 200, duration_ms: (n / 200) * 1000, records: true });
      const rec = res.records as AnswerRecords;
      expect(rec.request_no.length).toBe(n);
      expect(new Set(rec.request_no).size).toBe(n); // one server request number per answer
      for (let i = 0; i < n; i++) {
        expect(rec.request_no[i]).toBeGreaterThan(0);
        expect(rec.sent_ms[i]).toBeGreaterThanOrEqual(rec.sched_ms[i]);
        expect(rec.done_ms[i]).toBeGreaterThan(rec.sent_ms[i]);
      }
      // The stage rows are written at the clean stop.
      const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)));
      s.proc.kill('SIGTERM');
      expect(await exited).toBe(0);
      const file = readStageRows(s.data_dir);
      expect(file).not.toBeNull();
      if (file === null) return;
      const t = tailFigures(file.rows, rec, file.gc_pauses);
      expect(t).not.toBeNull();
      if (t === null) return;
      // Every answer was a signed request that reached the matcher (orders and cancels): all join.
      expect([t.joined, t.unjoined]).toEqual([n, 0]);
      // The generator and the server stamp on the same wall clock: a request reaches the route
      // handler after it was written, and is read after the server wrote its answer.
      expect(t.clock_check_us.to_server_min).toBeGreaterThan(0);
      expect(t.above_p99.count).toBeGreaterThanOrEqual(1);
      const sum = TAIL_PARTS.reduce((a, k) => a + t.above_p99.mean_us[k], 0);
      expect(Math.abs(sum - t.above_p99.latency_us_mean)).toBeLessThan(1); // rounding of 11 parts to 0.1 µs
    } finally {
      await s.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('tail figures on made-up rows', () => {
  /** A stage row for request `no` arriving at `arrive` ms whose stage k lasts step_us[k] µs. */
  function row(no: number, arrive: number, step_us: number[]): StageStamps {
    const st = new StageStamps();
    const keys = ['arrive', 'parsed', 'verify_start', 'verify_end', 'published', 'batch_start', 'applied', 'durable', 'answered'] as const;
    let t = arrive;
    keys.forEach((k, i) => {
      if (i > 0) t += step_us[i - 1] / 1000;
      st[k] = t;
    });
    st.request_no = no;
    return st;
  }

  it('splits each answer into its parts, names the largest part of the slow ones, and counts episodes', () => {
    const rec = new StageRecorder();
    const N = 1000;
    const records: AnswerRecords = {
      sched_ms: new Float64Array(N + 1), sent_ms: new Float64Array(N + 1), done_ms: new Float64Array(N + 1),
      request_no: new Float64Array(N + 1), status: new Uint16Array(N + 1).fill(200),
    };
    for (let i = 0; i < N; i++) {
      const sched = 1_000_000 + i; // 1 ms apart
      const steps = [20 + i / 100, 10, 70, 10, 10, 10, 300, 80]; // parse 20..30 µs: no ties
      // Requests 500..504 (one episode) wait 5 ms in the journal; request 900 4 ms in the answer.
      if (i >= 500 && i < 505) steps[6] += 5000;
      if (i === 900) steps[7] += 4000;
      const st = row(i + 1, sched + 0.05, steps); // sent 10 µs late, 40 µs on the way in
      rec.record(st);
      records.sched_ms[i] = sched;
      records.sent_ms[i] = sched + 0.01;
      records.request_no[i] = i + 1;
      records.done_ms[i] = st.answered + 0.03; // 30 µs on the way out
    }
    // One answer the server has no row for (e.g. a GET): counted, not joined.
    records.sched_ms[N] = 2_000_000;
    records.sent_ms[N] = 2_000_000;
    records.done_ms[N] = 2_000_001;
    records.request_no[N] = 5000;
    const rows = rec.view();
    expect(rows.length).toBe(N * STAGE_ROW_F64);
    expect(rows[REQUEST_NO_AT]).toBe(1);
    // Front GC pauses: 3 ms from the written time of request 900 (its answer stage), and one
    // outside the phase.
    const gc = Float64Array.of(records.sent_ms[900] + 0.5, 3, 5_000_000, 1);
    const t = tailFigures(rows, records, gc);
    expect(t).not.toBeNull();
    if (t === null) return;
    expect([t.joined, t.unjoined]).toEqual([N, 1]);
    expect(t.median_us).toMatchObject({ send_delay: 10, to_server: 40, http_parse: 25, journal_fsync: 300, answer: 80, to_client: 30 });
    expect(t.clock_check_us.to_server_min).toBeCloseTo(40, 0);
    // p99 of 1,000 answers: the 990th value, so 11 at or above it: the six slow ones and the five
    // latest of the rest (their parse is slowest), whose largest part is the journal's usual 300 µs.
    expect(t.above_p99.count).toBe(11);
    expect(t.above_p99.largest).toEqual({ journal_fsync: 10, answer: 1 });
    expect(t.above_p99.episodes).toBe(3); // 500..504, 900, 995..999
    expect(t.front_gc).toEqual({ pauses: 1, total_ms: 3, max_ms: 3 });
    expect(t.above_p99.with_front_gc).toBe(1);
    expect(t.above_p99.front_gc_us_mean).toBeCloseTo(3000 / 11, 0);
    expect(t.above_p999.with_front_gc).toBe(0);
    // p999 (rank ceil(99.9 / 100 x 1,000) in floating point: the 1,000th): request 504 (a 5.3 ms journal commit).
    expect(t.above_p999.count).toBe(1);
    expect(t.above_p999.mean_us.journal_fsync).toBeCloseTo(5300, 0);
    expect(t.above_p999.episodes).toBe(1);
    expect(t.above_p999.latency_us_mean).toBeCloseTo(10 + 40 + 25.04 + 10 + 70 + 10 + 10 + 10 + 5300 + 80 + 30, 0);
    expect(t.above_p999.largest).toEqual({ journal_fsync: 1 });
  });

  it("splits batch_wait into the time behind the previous batch's commit and the rest", () => {
    // Three one-request batches (ms): the first commits slowly (start 100, durable 103); the
    // second's request is published at 101 and its batch starts at 103.02, so 2 ms of its
    // batch_wait is behind that commit (101 -> 103) and 0.02 ms the matcher's turn; the third's
    // is published at 110, long after the second's durable (103.3), and waits 2 ms for the matcher
    // to wake: none of it behind the previous batch.
    const rec = new StageRecorder();
    const stamps: [number, number, number, number][] = [ // published, batch_start, durable, answered
      [99.99, 100, 103, 103.1],
      [101, 103.02, 103.3, 103.4],
      [110, 112, 112.3, 112.4],
    ];
    stamps.forEach(([published, start, durable, answered], i) => {
      const st = row(i + 1, published - 0.1, [10, 10, 10, 70]);
      st.published = published;
      st.batch_start = start;
      st.applied = start + 0.01;
      st.durable = durable;
      st.answered = answered;
      rec.record(st);
    });
    const rows = rec.view();
    const batches = batchesOf(rows);
    expect(Array.from(batches.start_ms)).toEqual([100, 103.02, 112]);
    expect(Array.from(batches.durable_ms)).toEqual([103, 103.3, 112.3]);
    expect(behindPreviousUs(rows, 0, batches)).toBe(0); // the first batch: none before it
    expect(behindPreviousUs(rows, STAGE_ROW_F64, batches)).toBeCloseTo(2000, 6);
    expect(behindPreviousUs(rows, 2 * STAGE_ROW_F64, batches)).toBe(0);
    const records: AnswerRecords = {
      // The second request was scheduled earliest (99 ms: 4.45 ms to its answer), so it is the slowest.
      sched_ms: Float64Array.of(99.8, 99, 109.8), sent_ms: Float64Array.of(99.85, 99.05, 109.85),
      done_ms: Float64Array.of(103.15, 103.45, 112.45), request_no: Float64Array.of(1, 2, 3), status: new Uint16Array(3).fill(200),
    };
    const t = tailFigures(rows, records);
    expect(t).not.toBeNull();
    if (t === null) return;
    // p99 of 3 answers is the slowest: the second, 2,000 of its 2,020 µs of batch_wait behind the first's commit.
    expect(t.above_p99.count).toBe(1);
    expect(t.above_p99.mean_us.batch_wait).toBeCloseTo(2020, 0);
    expect(t.above_p99.behind_previous).toBe(1);
    expect(t.above_p99.batch_wait_behind_previous_us_mean).toBeCloseTo(2000, 0);
  });

  it("pools a server's phases (light_ab): one p99 over all their answers, only the GC pauses within a phase", () => {
    // Two phases of 100 answers, 1 ms apart, 3.9 s apart (the other build runs between them).
    // The slowest: request 31 of the first (6 ms in the journal) and request 161 of the second
    // (4 ms in the answer); parse grows with the request number (no ties).
    const rec = new StageRecorder();
    const phase = (first_no: number, from_ms: number): { records: AnswerRecords; from_ms: number; to_ms: number } => {
      const n = 100;
      const records: AnswerRecords = {
        sched_ms: new Float64Array(n), sent_ms: new Float64Array(n), done_ms: new Float64Array(n),
        request_no: new Float64Array(n), status: new Uint16Array(n).fill(200),
      };
      for (let i = 0; i < n; i++) {
        const no = first_no + i;
        const steps = [20 + no / 1000, 10, 70, 10, 10, 10, 300, 80];
        if (no === 31) steps[6] += 6000;
        if (no === 161) steps[7] += 4000;
        const st = row(no, from_ms + 10 + i + 0.05, steps);
        rec.record(st);
        records.sched_ms[i] = from_ms + 10 + i;
        records.sent_ms[i] = from_ms + 10 + i + 0.01;
        records.request_no[i] = no;
        records.done_ms[i] = st.answered + 0.03;
      }
      return { records, from_ms, to_ms: from_ms + 200 };
    };
    const phases = [phase(1, 1_000), phase(101, 5_000)];
    const both = concatRecords(phases.map((p) => p.records));
    expect(both.request_no.length).toBe(200);
    expect([both.request_no[0], both.request_no[99], both.request_no[100], both.request_no[199]]).toEqual([1, 100, 101, 200]);
    expect(both.sched_ms[100]).toBe(phases[1].records.sched_ms[0]);
    expect(both.status[199]).toBe(200);
    // GC pauses (start, ms): one inside each phase, one in the gap between them (the server idle).
    const gc = Float64Array.of(1_050, 2, 3_000, 40, 5_060, 1);
    expect(Array.from(pausesWithin(gc, phases))).toEqual([1_050, 2, 5_060, 1]);
    expect(Array.from(pausesWithin(Float64Array.of(999, 2), phases))).toEqual([999, 2]); // ends inside the first
    const rows = rec.view();
    const t = tailFiguresOfPhases(rows, phases, gc);
    expect(t).not.toBeNull();
    if (t === null) return;
    expect([t.joined, t.unjoined]).toEqual([200, 0]);
    // One p99 over both phases' 200 answers (the 198th): 3 at or above it, the slow one of each
    // phase and the slowest parse of the rest (request 200, its journal's usual 300 us largest).
    expect(t.above_p99.count).toBe(3);
    expect(t.above_p99.largest).toEqual({ journal_fsync: 2, answer: 1 });
    expect(t.above_p99.episodes).toBe(3);
    expect(t.above_p99.mean_us.journal_fsync).toBeCloseTo((6300 + 300 + 300) / 3, 0);
    expect(t.above_p99.mean_us.answer).toBeCloseTo((80 + 4080 + 80) / 3, 0);
    expect(t.above_p999.count).toBe(1);
    expect(t.above_p999.mean_us.journal_fsync).toBeCloseTo(6300, 0);
    expect(t.front_gc).toEqual({ pauses: 2, total_ms: 3, max_ms: 2 });
    // The same answers without the phases' windows would count the idle gap's 40 ms pause.
    expect(tailFigures(rows, both, gc)?.front_gc).toEqual({ pauses: 3, total_ms: 43, max_ms: 40 });
    expect(tailFiguresOfPhases(rows, [])).toBeNull();
  });

  it('counts the GC pause time inside a span, pauses in start order', () => {
    const p = Float64Array.of(10, 2, 20, 1, 30, 5); // [10,12], [20,21], [30,35] ms
    expect(overlapUs(p, 0, 9)).toBe(0);
    expect(overlapUs(p, 11, 20.5)).toBeCloseTo(1500, 6); // 1 ms of the first, 0.5 of the second
    expect(overlapUs(p, 0, 100)).toBeCloseTo(8000, 6);
    expect(overlapUs(p, 32, 33)).toBeCloseTo(1000, 6); // inside one pause
    expect(overlapUs(new Float64Array(0), 0, 100)).toBe(0);
  });

  it('is null when nothing joins (an older server whose rows carry no request numbers)', () => {
    const rec = new StageRecorder();
    const st = row(0, 1000, [1, 1, 1, 1, 1, 1, 1, 1]);
    rec.record(st);
    const one = (x: number): Float64Array => Float64Array.of(x);
    expect(tailFigures(rec.view(), { sched_ms: one(999), sent_ms: one(999), done_ms: one(1001), request_no: one(7), status: Uint16Array.of(200) })).toBeNull();
  });
});
