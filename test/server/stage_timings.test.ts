// Stage timings (config diagnostics.stage_timings): the real server stamps each signed request at
// every pipeline stage and writes the rows at a clean stop; off (the default) it writes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  parseStageFile, readStageFile, releaseStamps, STAGE_ROW_F64, STAGE_STAMPS, STAGES, stagePercentiles, StageRecorder, StageStamps,
  STAMPS_POOL_MAX, stampsGivenBackTwice, stampsOutstanding, stampsPooled, takeStamps,
} from '../../src/gateway/stage_timings.js';
import { api, deposit, startServer, Wallet, type StartedServer } from './harness.js';

/** SIGTERM, wait for the exit, and read the stage file before the harness removes the data dir. */
async function stopAndRead(s: StartedServer): Promise<{ rows: Float64Array | null; code: number | null }> {
  const exited = new Promise<number | null>((resolve) => s.proc.once('exit', (code) => resolve(code)));
  s.proc.kill('SIGTERM');
  const code = await exited;
  const file = path.join(s.data_dir, 'stage_timings.f64');
  const rows = fs.existsSync(file) ? parseStageFile(fs.readFileSync(file)) : null;
  await s.stop();
  return { rows, code };
}

describe('stage timings on the real server', () => {
  it('writes one ordered row per signed request that reached the matcher, none for refused signatures', async () => {
    const s = await startServer({ config: { diagnostics: { stage_timings: true } } });
    const t0 = performance.timeOrigin + performance.now();
    const a = api(s.url);
    const w = Wallet.random();
    expect((await deposit(s, w.address, 'USDC', '100000')).status).toBe(200);
    const others = Array.from({ length: 5 }, () => Wallet.random());
    for (const o of others) expect((await deposit(s, o.address, 'USDC', '100000')).status).toBe(200);
    const place = (x: Wallet, i: number): Promise<number> =>
      a.post('/orders', x.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000 + i * 10_000, quantity: 100_000 })).then((r) => r.status);
    // Six in flight at once, twice: the second round takes the stamps the first gave back
    // (stage_timings.ts takeStamps), so stamps given back while still in use would show as a
    // row shared by two requests; then six in turn, each reusing the one before's.
    for (let round = 0; round < 2; round++) {
      expect(await Promise.all([w, ...others].map((x, i) => place(x, round * 6 + i)))).toEqual(Array(6).fill(200));
    }
    for (let i = 0; i < 6; i++) expect(await place(w, 12 + i)).toBe(200);
    // A refused signature never reaches the matcher: no row.
    const bad = w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }, { signer: () => '0x' + '11'.repeat(65) });
    expect((await a.post('/orders', bad)).status).toBe(401);
    const t1 = performance.timeOrigin + performance.now();
    const { rows, code } = await stopAndRead(s);
    expect(code).toBe(0);
    expect(rows).not.toBeNull();
    const r = rows as Float64Array;
    expect(r.length).toBe(18 * STAGE_ROW_F64);
    const numbers = new Set<number>();
    for (let at = 0; at < r.length; at += STAGE_ROW_F64) {
      numbers.add(r[at + STAGE_STAMPS]); // the request's X-Request-Id number
      expect(r[at]).toBeGreaterThanOrEqual(t0 - 1);
      expect(r[at + STAGE_STAMPS - 1]).toBeLessThanOrEqual(t1 + 1);
      for (let k = 1; k < STAGE_STAMPS; k++) {
        // Stamps come from three threads' clocks (same epoch): allow 1 ms of skew between them.
        expect(r[at + k], `stamp ${k} (after ${STAGES[k - 1]})`).toBeGreaterThan(0);
        expect(r[at + k] - r[at + k - 1], `stage ${STAGES[k - 1]}`).toBeGreaterThan(-1);
      }
    }
    expect(numbers.size).toBe(18);
    for (const no of numbers) expect(no).toBeGreaterThan(0);
    const p = stagePercentiles(r, t0 - 1, t1 + 1);
    expect(p.count).toBe(18);
    expect(p.stages.journal_fsync.p99_us).toBeGreaterThan(0);
  });

  it('writes no file when off (the default)', async () => {
    const s = await startServer();
    const w = Wallet.random();
    expect((await deposit(s, w.address, 'USDC', '100000')).status).toBe(200);
    expect((await api(s.url).post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100_000 }))).status).toBe(200);
    const { rows, code } = await stopAndRead(s);
    expect(code).toBe(0);
    expect(rows).toBeNull();
  });
});

describe('stage rows and percentiles', () => {
  function stamps(arrive: number, step_ms: number): StageStamps {
    const s = new StageStamps();
    const keys = ['arrive', 'parsed', 'verify_start', 'verify_end', 'published', 'batch_start', 'applied', 'durable', 'answered'] as const;
    keys.forEach((k, i) => {
      s[k] = arrive + i * step_ms;
    });
    return s;
  }

  it('keeps the GC pauses of its thread when asked (start on the stamps\' clock, duration)', async () => {
    const rec = new StageRecorder({ observe_gc: true });
    const t0 = performance.timeOrigin + performance.now();
    let keep: unknown[] = [];
    for (let i = 0; i < 2_000_000; i++) { // ~100 MB of short-lived objects: several scavenges
      keep.push({ i, s: 'x' + i });
      if (keep.length > 1000) keep = [];
    }
    await new Promise((r) => setTimeout(r, 50)); // the observer reports asynchronously
    rec.close();
    expect(rec.gc_count).toBeGreaterThan(0);
    const p = rec.gcPauses();
    for (let k = 0; k < rec.gc_count; k++) {
      expect(p[2 * k]).toBeGreaterThanOrEqual(t0 - 1);
      expect(p[2 * k + 1]).toBeGreaterThan(0);
    }
    expect(new StageRecorder().gc_count).toBe(0);
  });

  it('gives released stamps back zeroed, and keeps at most STAMPS_POOL_MAX for reuse', () => {
    const before = stampsPooled();
    const outstanding = stampsOutstanding();
    const s = takeStamps();
    Object.assign(s, stamps(1234, 1));
    s.request_no = 77;
    expect(stampsOutstanding()).toBe(outstanding + 1);
    releaseStamps(s);
    expect(stampsPooled()).toBe(before + 1);
    expect(stampsOutstanding()).toBe(outstanding);
    const again = takeStamps();
    expect(again).toBe(s);
    expect({ ...again }).toEqual({ ...new StageStamps() });
    releaseStamps(again);
    const many = Array.from({ length: STAMPS_POOL_MAX + 10 }, () => new StageStamps());
    for (const x of many) releaseStamps(x);
    expect(stampsPooled()).toBe(STAMPS_POOL_MAX);
    for (let i = 0; i < STAMPS_POOL_MAX; i++) takeStamps();
    expect(stampsPooled()).toBe(0);
    expect(takeStamps()).toBeInstanceOf(StageStamps);
  });

  it('never holds one StageStamps twice: a second give-back is refused and counted', () => {
    const twice = stampsGivenBackTwice();
    const s = takeStamps();
    const pooled = stampsPooled();
    const outstanding = stampsOutstanding();
    releaseStamps(s);
    releaseStamps(s);
    expect(stampsPooled(), 'in the pool once').toBe(pooled + 1);
    expect(stampsOutstanding()).toBe(outstanding - 1);
    expect(stampsGivenBackTwice()).toBe(twice + 1);
    // Handed out once: the next two takes are two objects.
    const a = takeStamps();
    const b = takeStamps();
    expect(a).toBe(s);
    expect(b).not.toBe(a);
    releaseStamps(a);
    releaseStamps(b);
    expect(stampsGivenBackTwice()).toBe(twice + 1);
  });

  it('counts the batches the picked rows were applied in (distinct batch starts)', () => {
    const rec = new StageRecorder();
    for (let i = 0; i < 12; i++) {
      const s = stamps(2000 + i, 0.001);
      s.batch_start = 5000 + Math.floor(i / 4); // rows 0-3, 4-7, 8-11 share a batch
      rec.record(s);
    }
    const rows = rec.view();
    expect(stagePercentiles(rows, 0, 1e9)).toMatchObject({ count: 12, batches: 3 });
    expect(stagePercentiles(rows, 2006, 1e9)).toMatchObject({ count: 6, batches: 2 }); // rows 6..11
    expect(stagePercentiles(rows, 3000, 1e9)).toMatchObject({ count: 0, batches: 0 });
  });

  it('writes how many rows it did not keep and the batch start from which rows are missing', () => {
    const rec = new StageRecorder({ rows_max: 3 });
    for (let i = 0; i < 5; i++) rec.record(stamps(1000 + 10 * i, 1)); // batch starts 1005, 1015, ...
    expect(rec.count).toBe(3);
    expect(rec.dropped).toBe(2);
    expect(rec.cut_off_ms).toBe(1035); // the 4th row's batch start
    const dir = fs.mkdtempSync('/tmp/ringbook-stages-');
    try {
      const file = path.join(dir, 'stage_timings.f64');
      rec.writeFile(file);
      const f = readStageFile(fs.readFileSync(file));
      expect(f.rows.length).toBe(3 * STAGE_ROW_F64);
      expect(f.dropped).toBe(2);
      expect(f.cut_off_ms).toBe(1035);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps complete rows only, round-trips the file, and picks rows by arrival window', () => {
    const rec = new StageRecorder();
    for (let i = 0; i < 100; i++) rec.record(stamps(1000 + i, (i + 1) / 1000)); // stage i: (i+1) µs
    const incomplete = stamps(1050, 1);
    incomplete.durable = 0;
    rec.record(incomplete);
    expect(rec.count).toBe(100);
    const dir = fs.mkdtempSync('/tmp/ringbook-stages-');
    try {
      const file = path.join(dir, 'stage_timings.f64');
      rec.recordGcPause(1010.5, 1.25);
      rec.recordGcPause(1020, 0.5);
      rec.writeFile(file);
      const rows = parseStageFile(fs.readFileSync(file));
      expect(rows).toEqual(rec.view());
      expect(Array.from(readStageFile(fs.readFileSync(file)).gc_pauses)).toEqual([1010.5, 1.25, 1020, 0.5]);
      expect(readStageFile(fs.readFileSync(file))).toMatchObject({ dropped: 0, cut_off_ms: null });
      const all = stagePercentiles(rows, 0, 1e9);
      expect(all.count).toBe(100);
      for (const name of STAGES) expect(all.stages[name]).toEqual({ p50_us: 50, p99_us: 99, p999_us: 100 });
      // arrival to answer: 8 stages of (i+1) µs each for row i
      expect(all.server_total).toEqual({ p50_us: 400, p99_us: 792, p999_us: 800 });
      expect(all.batches).toBe(100); // every row its own batch start
      const late = stagePercentiles(rows, 1090, 1e9); // arrivals 1090..1099: steps 91..100 µs
      expect(late.count).toBe(10);
      expect(late.batches).toBe(10);
      expect(late.stages.answer).toEqual({ p50_us: 95, p99_us: 100, p999_us: 100 });
      const bytes = fs.readFileSync(file);
      expect(() => parseStageFile(bytes.subarray(0, bytes.length - 8))).toThrow(/truncated/);
      expect(() => parseStageFile(new Uint8Array(64))).toThrow(/header/);
      // A version 1 file (an older server's: 9 stamps per row, no request number) reads with number 0.
      const v1 = new Float64Array(4 + 2 * STAGE_STAMPS);
      v1.set([0x54534252, 1, STAGE_STAMPS, 2]);
      for (let k = 0; k < 2 * STAGE_STAMPS; k++) v1[4 + k] = 1000 + k;
      expect(readStageFile(new Uint8Array(v1.buffer)).gc_pauses.length).toBe(0);
      const old = parseStageFile(new Uint8Array(v1.buffer));
      expect(old.length).toBe(2 * STAGE_ROW_F64);
      expect(Array.from(old.subarray(STAGE_ROW_F64, 2 * STAGE_ROW_F64))).toEqual([...Array.from({ length: STAGE_STAMPS }, (_, k) => 1000 + STAGE_STAMPS + k), 0]);
      expect(stagePercentiles(old, 0, 1e9).count).toBe(2);
      expect(readStageFile(new Uint8Array(v1.buffer))).toMatchObject({ dropped: null, cut_off_ms: null });
      // A version 2 file (header of 5: no dropped count) reads with the cut-off unknown.
      const v2 = new Float64Array(5 + STAGE_ROW_F64 + 2);
      v2.set([0x54534252, 2, STAGE_ROW_F64, 1, 1]);
      v2.set([1010.5, 1.25], 5 + STAGE_ROW_F64);
      expect(readStageFile(new Uint8Array(v2.buffer))).toMatchObject({ dropped: null, cut_off_ms: null });
      expect(Array.from(readStageFile(new Uint8Array(v2.buffer)).gc_pauses)).toEqual([1010.5, 1.25]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
