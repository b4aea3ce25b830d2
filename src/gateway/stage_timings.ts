// Latency per pipeline stage of signed requests (config `diagnostics.stage_timings`, off by
// default; bench/load.ts turns it on). Each signed request carries a pooled StageStamps from its
// route handler to its answer, owned by one holder at a time (its Reply, the verify stage, the
// matcher link: docs/architecture.md "Stage stamps: who owns them"); the verify worker and the
// matcher thread add their own stamps (the worker's task start/end come back with the verdicts,
// the matcher's batch start / applied / durable ride on the BATCH_COMMITTED event). Every stamp is epoch milliseconds from
// `performance.timeOrigin + performance.now()`, which is comparable across threads (each thread's
// timeOrigin is its own start on the same wall clock, with sub-microsecond resolution).
//
// Off, and with metrics off, the cost is one test per signed request (no stamps, no clock reads);
// metrics on (the default) stamp every signed request for their stage histograms
// (src/gateway/metrics/metrics.ts), and the rows are kept only when this is on.
// On, the rows are kept in memory (at most STAGE_ROWS_MAX), with the front thread's GC pauses,
// and written at a clean stop to `<data_dir>/stage_timings.f64`; the bench filters them by
// arrival time to its phase. Past STAGE_ROWS_MAX rows are counted, not kept, and the file says
// how many and from which batch on (`dropped`, `cut_off_ms`), so a reader can tell "no batch"
// from "no row kept".
//
// The eight stages are the intervals between consecutive stamps:
//   http_parse     route handler entry -> body read, JSON parsed, shape checked (verify asked)
//   verify_queue   -> the verify worker starts the task holding it (batching turn, pool queue)
//   verify         -> that task ends (the whole task: ~100 recoveries at max rate, 1-few at low rate)
//   request_ring   -> its record is published on the request ring (verdict back to the front,
//                     arrival order, rate limit, ring write, the turn's flush)
//   batch_wait     -> the matcher starts the batch holding it
//   matcher        -> the batch is applied (events written)
//   journal_fsync  -> the journal says the batch is durable (one synchronous LMDB commit)
//   answer         -> the front wrote the HTTP answer (event ring, read model, reply)
import { writeFileSync } from 'node:fs';
import { performance, PerformanceObserver } from 'node:perf_hooks';
import { percentileNearestRankOfSorted } from '../util/quantile.js';

export const STAGES = [
  'http_parse', 'verify_queue', 'verify', 'request_ring', 'batch_wait', 'matcher', 'journal_fsync', 'answer',
] as const;
export type StageName = (typeof STAGES)[number];

/** Stamps per row: one more than stages (the arrival). */
export const STAGE_STAMPS = STAGES.length + 1;
/**
 * Values per row: the stamps, then the request's number (the counter of its `X-Request-Id`,
 * src/gateway/request_id.ts), by which the load bench joins a slow answer it read with the
 * server's stamps of that request (bench/load/tail.ts).
 */
export const STAGE_ROW_F64 = STAGE_STAMPS + 1;
/** Index of the request number in a row. */
export const REQUEST_NO_AT = STAGE_STAMPS;
/** Rows kept at most (40 MB of f64): ~2 minutes at 4,000 signed requests/s; later ones are counted, not kept (the file's `dropped`, `cut_off_ms`). */
export const STAGE_ROWS_MAX = 1 << 19;
/** Index of `batch_start` in a row (arrive, parsed, verify_start, verify_end, published, batch_start, ...). */
const BATCH_START_STAMP = 5;
const FILE_MAGIC = 0x54534252; // "RBST"
/**
 * 3: the header also holds the rows dropped past STAGE_ROWS_MAX and the cut-off (the first
 * dropped row's batch start, 0: none dropped). 2: rows carry the request number, and the front's
 * GC pauses follow the rows. An older server's file (`bench/load --server-main`) still reads:
 * version 2 with the cut-off unknown, version 1 (a 4-value header, rows only) also with request
 * number 0 and no pauses.
 */
const FILE_VERSION = 3;
const HEADER_F64_V1 = 4;
const HEADER_F64_V2 = 5;
const HEADER_F64 = 7;
/** GC pauses of the front kept at most (start, duration pairs): over 18 hours at one per second. */
export const GC_PAUSES_MAX = 1 << 16;

/**
 * This thread's performance.timeOrigin, read once: it is fixed at the thread's start. `performance`
 * is perf_hooks' (a module binding): the global `performance` is an accessor that runs Node's
 * lazy-property getter on every read, and timeOrigin another getter into C++; stampMs read both per
 * stamp, ~4 stamps per signed request on the front (bench/signed_front.ts, docs/benchmarks.md h22f).
 */
const TIME_ORIGIN_MS = performance.timeOrigin;

/** Epoch ms with sub-µs resolution, comparable across threads. */
export function stampMs(): number {
  return TIME_ORIGIN_MS + performance.now();
}

/** The stamps of one signed request, in pipeline order (0 until reached). */
export class StageStamps {
  arrive = 0;
  parsed = 0;
  verify_start = 0;
  verify_end = 0;
  published = 0;
  batch_start = 0;
  applied = 0;
  durable = 0;
  answered = 0;
  /** The counter of the request's X-Request-Id (0: unknown). */
  request_no = 0;
  /** Given back (releaseStamps) and not taken since: not a stamp, reset leaves it. */
  pooled = false;

  /** Every field back to 0, as new (a pooled one is reused: takeStamps). Keep beside the fields. */
  reset(): void {
    this.arrive = 0; this.parsed = 0; this.verify_start = 0; this.verify_end = 0; this.published = 0;
    this.batch_start = 0; this.applied = 0; this.durable = 0; this.answered = 0; this.request_no = 0;
  }
}

/**
 * StageStamps kept for reuse: metrics are on by default and stamp every signed request, and a
 * fresh StageStamps is its object plus ten boxed doubles (~285 bytes per request of the front's
 * ~10.3 KB at max rate, 2026-11-26). A reused one is written in place (V8 updates a double
 * field's box without allocating). Bounded: at most this many wait here (the requests in flight
 * at once; one in flight per connection).
 *
 * One owner at a time gives a StageStamps back (docs/architecture.md, "Stage stamps: who owns
 * them"): the Answer that holds it (envelope.ts: when it is answered or aborted), or the stage it
 * was handed to (signed_route.ts: the verify stage until the verdict, then the Answer again; the
 * matcher link from the ring write until the answer's stamps were read). A stamp object given
 * back while a stage still writes it would be handed to another request and mix two requests'
 * figures.
 */
export const STAMPS_POOL_MAX = 4096;
const stamps_pool: StageStamps[] = [];
let stamps_out = 0;
let given_back_twice = 0;

/** A StageStamps with every stamp 0: a released one when there is one, else a new one. */
export function takeStamps(): StageStamps {
  stamps_out++;
  const s = stamps_pool.pop();
  if (s === undefined) return new StageStamps();
  s.pooled = false;
  s.reset();
  return s;
}

/**
 * Gives `s` back for reuse: its owner calls this once nothing will read or write it any more.
 * A StageStamps already waiting in the pool is not taken twice (two requests would share it):
 * counted in stampsGivenBackTwice, which stays 0 unless an owner is wrong. It catches a second
 * give-back only while the object is still pooled (or dropped for the GC): once another request
 * took it, a late second give-back looks like that request's own and is not caught (the pooled
 * flag is all there is; the one-owner rule, envelope.ts and signed_route.ts, is what prevents it).
 */
export function releaseStamps(s: StageStamps): void {
  if (s.pooled) {
    given_back_twice++;
    return;
  }
  stamps_out--;
  s.pooled = true; // also when dropped for the GC (pool full): a later give-back is still caught
  if (stamps_pool.length < STAMPS_POOL_MAX) stamps_pool.push(s);
}

/** StageStamps waiting for reuse (tests, GET /admin/state). */
export function stampsPooled(): number {
  return stamps_pool.length;
}

/**
 * StageStamps taken and not given back: the stamped requests in flight. A request that lost its
 * stamps to the GC stays counted here for good (GET /admin/state `stage_stamps.outstanding`: 0 on
 * an idle server).
 */
export function stampsOutstanding(): number {
  return stamps_out;
}

/**
 * Give-backs refused because the StageStamps already waited in the pool (0 unless an owner is
 * wrong); a second give-back after the object was taken again is not seen (releaseStamps).
 */
export function stampsGivenBackTwice(): number {
  return given_back_twice;
}

export class StageRecorder {
  private rows = new Float64Array(STAGE_ROW_F64 * 1024);
  count = 0;
  /** Complete rows not kept (over rows_max). */
  dropped = 0;
  /**
   * The batch start (epoch ms) of the first row not kept; 0 while none was dropped. The front
   * answers batches in commit order, so every batch that started before it has its rows kept;
   * batches from it on may have none (a reader must not take them for "no batch").
   */
  cut_off_ms = 0;
  private readonly rows_max: number;
  private gc = new Float64Array(2 * 256);
  gc_count = 0;
  private observer: PerformanceObserver | null = null;

  /**
   * `observe_gc`: also keep this thread's GC pauses (the server's front thread: a pause stops
   * every request it holds), so the load bench can tell a slow answer that waited for one.
   * `rows_max`: rows kept at most (STAGE_ROWS_MAX; tests use a few).
   */
  constructor(opts: { observe_gc?: boolean; rows_max?: number } = {}) {
    this.rows_max = Math.min(opts.rows_max ?? STAGE_ROWS_MAX, STAGE_ROWS_MAX);
    if (opts.observe_gc === true) {
      this.observer = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) this.recordGcPause(performance.timeOrigin + e.startTime, e.duration);
      });
      this.observer.observe({ type: 'gc' });
    }
  }

  /** One GC pause of this thread: start (epoch ms, the stamps' clock) and duration (ms). */
  recordGcPause(start_ms: number, duration_ms: number): void {
    if (this.gc_count >= GC_PAUSES_MAX) return;
    if (2 * this.gc_count + 2 > this.gc.length) {
      const grown = new Float64Array(Math.min(this.gc.length * 2, 2 * GC_PAUSES_MAX));
      grown.set(this.gc);
      this.gc = grown;
    }
    this.gc[2 * this.gc_count] = start_ms;
    this.gc[2 * this.gc_count + 1] = duration_ms;
    this.gc_count++;
  }

  /** The kept GC pauses, (start epoch ms, duration ms) pairs in the order they happened. */
  gcPauses(): Float64Array {
    return this.gc.subarray(0, 2 * this.gc_count);
  }

  /** Stops observing GC pauses. */
  close(): void {
    this.observer?.disconnect();
    this.observer = null;
  }

  /** Keeps a complete row (a request answered after its commit); incomplete ones are not stages. */
  record(s: StageStamps): void {
    if (s.durable === 0 || s.verify_end === 0) return;
    if (this.count >= this.rows_max) {
      if (this.dropped === 0) this.cut_off_ms = s.batch_start;
      this.dropped++;
      return;
    }
    let at = this.count * STAGE_ROW_F64;
    if (at + STAGE_ROW_F64 > this.rows.length) {
      const grown = new Float64Array(Math.min(this.rows.length * 2, STAGE_ROWS_MAX * STAGE_ROW_F64));
      grown.set(this.rows);
      this.rows = grown;
    }
    const r = this.rows;
    r[at++] = s.arrive; r[at++] = s.parsed; r[at++] = s.verify_start; r[at++] = s.verify_end;
    r[at++] = s.published; r[at++] = s.batch_start; r[at++] = s.applied; r[at++] = s.durable;
    r[at++] = s.answered; r[at] = s.request_no;
    this.count++;
  }

  /** The kept rows, STAGE_ROW_F64 values each. */
  view(): Float64Array {
    return this.rows.subarray(0, this.count * STAGE_ROW_F64);
  }

  /** Writes [magic, version, values per row, rows, GC pauses, dropped, cut_off_ms], the rows, then the pauses' pairs, as f64. */
  writeFile(file: string): void {
    const out = new Float64Array(HEADER_F64 + this.count * STAGE_ROW_F64 + 2 * this.gc_count);
    out[0] = FILE_MAGIC;
    out[1] = FILE_VERSION;
    out[2] = STAGE_ROW_F64;
    out[3] = this.count;
    out[4] = this.gc_count;
    out[5] = this.dropped;
    out[6] = this.cut_off_ms;
    out.set(this.view(), HEADER_F64);
    out.set(this.gcPauses(), HEADER_F64 + this.count * STAGE_ROW_F64);
    writeFileSync(file, new Uint8Array(out.buffer));
  }
}

/** A stage_timings.f64 file read back (readStageFile). */
export interface StageFile {
  rows: Float64Array;
  /** The front's GC pauses: start epoch ms, duration ms pairs. */
  gc_pauses: Float64Array;
  /** Rows the server counted and did not keep (over STAGE_ROWS_MAX); null: an older file that does not say. */
  dropped: number | null;
  /** The batch start (epoch ms) from which rows may be missing; null when none was dropped or the file does not say. */
  cut_off_ms: number | null;
}

/**
 * A stage_timings.f64 file: its rows, STAGE_ROW_F64 values each, the front's GC pauses and what
 * was dropped. A version 1 or 2 file, written by an older server that `bench/load --server-main`
 * may run, gets dropped / cut_off_ms null (unknown); version 1 also request number 0 and no
 * pauses. Throws on a foreign or truncated file.
 */
export function readStageFile(bytes: Uint8Array): StageFile {
  if (bytes.byteLength < HEADER_F64_V1 * 8 || bytes.byteLength % 8 !== 0) throw new Error('stage timings file: bad size');
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const f = new Float64Array(copy.buffer);
  const version = f[1];
  const per_row = version === 1 ? STAGE_STAMPS : STAGE_ROW_F64;
  const header = version === 1 ? HEADER_F64_V1 : version === 2 ? HEADER_F64_V2 : HEADER_F64;
  if (f[0] !== FILE_MAGIC || !(version === 1 || version === 2 || version === FILE_VERSION) || f[2] !== per_row || f.length < header) {
    throw new Error('stage timings file: bad header');
  }
  const rows = f[3];
  const pauses = version === 1 ? 0 : f[4];
  if (f.length !== header + rows * per_row + 2 * pauses) throw new Error('stage timings file: truncated');
  const gc_pauses = f.subarray(header + rows * per_row);
  const dropped = version === FILE_VERSION ? f[5] : null;
  const cut_off_ms = version === FILE_VERSION && f[5] > 0 ? f[6] : null;
  if (version !== 1) return { rows: f.subarray(header, header + rows * per_row), gc_pauses, dropped, cut_off_ms };
  const out = new Float64Array(rows * STAGE_ROW_F64);
  for (let i = 0; i < rows; i++) out.set(f.subarray(header + i * per_row, header + (i + 1) * per_row), i * STAGE_ROW_F64);
  return { rows: out, gc_pauses, dropped, cut_off_ms };
}

/** The rows of a stage_timings.f64 file (readStageFile). */
export function parseStageFile(bytes: Uint8Array): Float64Array {
  return readStageFile(bytes).rows;
}

export interface StagePercentiles {
  p50_us: number;
  p99_us: number;
  p999_us: number;
}

/**
 * p50/p99 of each stage (µs, rounded to 0.1) over the rows that arrived in [from_ms, to_ms), how
 * many rows that was, and in how many matcher batches they were applied (distinct batch start
 * stamps: every DA root and journal commit is per batch, so requests per batch sets their cost).
 */
export function stagePercentiles(rows: Float64Array, from_ms: number, to_ms: number): {
  count: number; batches: number; stages: Record<StageName, StagePercentiles>; server_total: StagePercentiles;
} {
  const picked: number[] = [];
  const batch_starts = new Set<number>();
  for (let at = 0; at + STAGE_ROW_F64 <= rows.length; at += STAGE_ROW_F64) {
    if (rows[at] >= from_ms && rows[at] < to_ms) {
      picked.push(at);
      batch_starts.add(rows[at + BATCH_START_STAMP]);
    }
  }
  const stages = {} as Record<StageName, StagePercentiles>;
  const values = new Float64Array(picked.length);
  const round = (x: number): number => Math.round(x * 10) / 10;
  const summary = (): StagePercentiles => {
    // No rows in the window: zeros (count says 0).
    if (values.length === 0) return { p50_us: 0, p99_us: 0, p999_us: 0 };
    const sorted = values.slice().sort();
    const at = (p_pct: number): number => round(percentileNearestRankOfSorted(sorted, p_pct));
    return { p50_us: at(50), p99_us: at(99), p999_us: at(99.9) };
  };
  STAGES.forEach((name, k) => {
    for (let i = 0; i < picked.length; i++) values[i] = (rows[picked[i] + k + 1] - rows[picked[i] + k]) * 1000;
    stages[name] = summary();
  });
  // Arrival to answer: what the server's stamps see of a request (a stall before the route
  // handler runs, or after the answer is written, is only in the client's latency).
  for (let i = 0; i < picked.length; i++) values[i] = (rows[picked[i] + STAGE_STAMPS - 1] - rows[picked[i]]) * 1000;
  const server_total = summary();
  return { count: picked.length, batches: batch_starts.size, stages, server_total };
}
