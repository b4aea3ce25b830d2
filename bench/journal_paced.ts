// The journal's append path at a steady light rate (issue 11, docs/benchmarks.md "h21j", "h22j"):
// `n` one-batch appends (two records each) with `afterAck`, one per ~`gap_ms`, as the matcher does
// at 1,000 requests/s, into a journal in `--dir` (default: a temporary one). Reports the CPU per
// append (user and system, this process's threads: the LMDB storer thread's too), the stores into
// LMDB, and the calling thread's hold: wall time inside `append` (the durable write, plus any wait
// for a store at a wrap) and inside `afterAck` (the store itself before h22j; since h22j handing the
// batches to the storer thread and checking its completion), with the largest holds, which are
// what a request arriving meanwhile waits for. `--journal F` loads another build's compiled
// journal.js (A/B: `--journal /work/wt/start/dist/src/journal/journal.js`). Run it under
// `perf record -e block:block_rq_issue -a` to count the block requests a file system adds per
// append (the inode-table writes of ext4 without a journal).
// `--da` (or `--da-interval-ms I`) adds a DA-like writer on the same file system (bench/journal_paced_da.ts:
// the real LmdbDaStore as the DA worker opens it, in `<dir>/da`, one commit of `--da-batches-per-s`
// x I / 1000 DA-sized batches every I ms, default DA_POST_INTERVAL_MS), to see what its flushes
// add to the appends' holds (issue 11, docs/benchmarks.md "h26j"). Hold percentiles: p50/p99/p999/max.
//
//   npx tsc -p tsconfig.json && node dist/bench/journal_paced.js [--dir D] [--appends N] [--gap-ms G] [--journal F]
//     [--da] [--da-interval-ms I] [--da-batches-per-s B] [--da-diff-bytes D] [--da-phantom] [--da-window-ms W] [--da-store F]
// Ends with ONE JSON line {"bench":"journal_paced",...}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { DA_POST_INTERVAL_MS } from '../src/da/da_thread.js';
import { Journal } from '../src/journal/journal.js';
import { RECORD_WORDS } from '../src/ring/records.js';
import { Knobs } from './knobs.js';
import { sharedNow, type DaWriterData, type DaWriterMessage } from './journal_paced_da.js';
import { quantileFloorRankOfSorted as quantileSorted } from './quantile.js';

const knobs = new Knobs();
const dir_asked = knobs.optionalString('dir');
const appends = knobs.number('appends', 2000, 1, 1_000_000);
const gap_ms = knobs.number('gap-ms', 1, 0, 1000);
const journal_module = knobs.optionalString('journal');
/** The DA writer's timer without its writes: windows after its ticks are the control (see splitByOverlap). */
const da_phantom = knobs.flag('da-phantom');
/** The DA writer's store from another build's compiled da_store.js (A/B: /work/wt/start/dist/src/da/da_store.js). */
const da_store_module = knobs.optionalString('da-store');
const da_on = da_phantom || knobs.flag('da') || knobs.optionalString('da-interval-ms') !== undefined;
/** The window after each DA tick whose appends are compared with the rest (ms; ~a 50-batch commit's p50 here). */
const da_window_ms = knobs.number('da-window-ms', 5, 0.1, 1000, { integer: false });
const da_interval_ms = knobs.number('da-interval-ms', DA_POST_INTERVAL_MS, 1, 60_000);
/** Journal batches per second the DA writer stores: one per request at the light 1,000/s. */
const da_batches_per_s = knobs.number('da-batches-per-s', 1000, 1, 100_000);
/** State-diff bytes per DA batch (a lone order changes ~10 leaves: bench/da_store_commit.ts uses 400). */
const da_diff_bytes = knobs.number('da-diff-bytes', 400, 0, 1_000_000);
knobs.finish();
const da_batches = Math.max(1, Math.round((da_batches_per_s * da_interval_ms) / 1000));
/** The journal class under test: this build's, or the compiled one named by --journal. */
const JournalClass: typeof Journal = journal_module === undefined ? Journal
  : ((await import(pathToFileURL(path.resolve(journal_module)).href)) as { Journal: typeof Journal }).Journal;
const dir = dir_asked ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-journal-paced-'));
const open_t0 = performance.now();
const journal = JournalClass.open(dir);
/** Journal.open's wall time (since h23m it starts the storer thread, without waiting for it). */
const open_ms = performance.now() - open_t0;
const da_writer = da_on ? await startDaWriter() : null;
const records = new Int32Array(2 * RECORD_WORDS).fill(5);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Wall time of each call (ms). */
const append_ms: number[] = [];
const after_ms: number[] = [];
/** Each append's start (sharedNow): which ones overlapped a DA commit. */
const append_at: number[] = [];
/** Of them, the calls that stored (before h22j) or handed a store to the storer thread (since): afterAck returned true. */
const store_hold_ms: number[] = [];
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0, id = journal.lastBatchId() + 1; i < appends; i++, id++) {
  const a = performance.now();
  if (da_writer !== null) append_at.push(sharedNow());
  journal.append(id, Date.now(), records, 2);
  const b = performance.now();
  const stored = journal.afterAck();
  const held = performance.now() - b;
  after_ms.push(held);
  if (stored) store_hold_ms.push(held);
  append_ms.push(b - a);
  if (gap_ms > 0) Atomics.wait(sleeper, 0, 0, gap_ms);
}
const cpu = process.cpuUsage(c0);
const wall_ms = performance.now() - t0;
const da = da_writer === null ? null : await da_writer.stop();
const stores = journal.stores;
/** This build's counters (absent from older builds' journals). */
const counters = journal as unknown as { stores_async?: number; store_waits?: number; store_wait_ms?: number };
const stores_async = counters.stores_async ?? null;
const store_waits = counters.store_waits ?? null;
const store_wait_ms = counters.store_wait_ms ?? null;
await journal.close();
if (dir_asked === undefined) fs.rmSync(dir, { recursive: true, force: true });
const r1 = (x: number): number => Math.round(x * 10) / 10;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const sum = (xs: number[]): number => xs.reduce((s, x) => s + x, 0);
const sorted_after = [...after_ms].sort((x, y) => x - y);
const sorted_append = [...append_ms].sort((x, y) => x - y);
/** afterAck calls that held the thread over 0.5 ms (the stores before h22j). */
const long_after = after_ms.filter((x) => x > 0.5);
/** What a request arriving meanwhile waits for: the whole call pair per iteration. */
const sorted_hold = append_ms.map((x, i) => x + after_ms[i]).sort((x, y) => x - y);
const q = (xs: number[], p: number): number => r3(quantileSorted(xs, p));
const sorted_commit = da === null ? [] : [...da.commit_ms].sort((x, y) => x - y);
const overlap = da === null ? null : splitByOverlap(da.spans, da.ticks, wall_ms);
const out = {
  bench: 'journal_paced', appends, gap_ms, dir: dir_asked ?? null, journal: journal_module ?? null, da_store: da_store_module ?? null,
  cpu_us_per_append: r1((cpu.user + cpu.system) / appends), system_us_per_append: r1(cpu.system / appends),
  ms_per_iteration: Math.round((wall_ms / appends) * 100) / 100, lmdb_stores: stores, lmdb_stores_async: stores_async,
  store_waits, store_wait_ms: store_wait_ms === null ? null : r3(store_wait_ms),
  after_ack_ms_over_0_5ms: long_after.map(r3),
  open_ms: r3(open_ms),
  first_store_hold_ms: store_hold_ms.length > 0 ? r3(store_hold_ms[0]) : null,
  store_hold_ms: store_hold_ms.map(r3),
  store_hold_ms_median: store_hold_ms.length > 0 ? r3(quantileSorted([...store_hold_ms].sort((x, y) => x - y), 0.5)) : null,
  store_hold_ms_min: store_hold_ms.length > 0 ? r3(Math.min(...store_hold_ms)) : null,
  after_ack_ms_total: r3(sum(after_ms)), after_ack_ms_per_store: stores > 0 ? r3(sum(after_ms) / stores) : null,
  after_ack_ms_max: r3(sorted_after[sorted_after.length - 1]), after_ack_over_0_5ms: long_after.length,
  after_ack_ms_p50_over_0_5ms: long_after.length > 0 ? r3(quantileSorted([...long_after].sort((x, y) => x - y), 0.5)) : null,
  append_ms_p50: r3(quantileSorted(sorted_append, 0.5)), append_ms_p99: r3(quantileSorted(sorted_append, 0.99)),
  append_ms_max: r3(sorted_append[sorted_append.length - 1]), append_ms_total: r3(sum(append_ms)),
  append_ms_p999: q(sorted_append, 0.999), append_over_1ms: append_ms.filter((x) => x > 1).length,
  hold_ms_p50: q(sorted_hold, 0.5), hold_ms_p99: q(sorted_hold, 0.99), hold_ms_p999: q(sorted_hold, 0.999),
  hold_ms_max: r3(sorted_hold[sorted_hold.length - 1]),
  da_interval_ms: da === null ? null : da_interval_ms, da_batches_per_commit: da === null ? null : da_batches,
  da_commits: da?.commits ?? null, da_bytes_per_commit: da === null || da.commits === 0 ? null : Math.round(da.batch_bytes / da.commits),
  da_commit_ms_p50: sorted_commit.length > 0 ? q(sorted_commit, 0.5) : null,
  da_commit_ms_max: sorted_commit.length > 0 ? r3(sorted_commit[sorted_commit.length - 1]) : null,
  ...overlap,
};
console.log(`journal_paced: ${appends} appends one per ~${gap_ms} ms: ${out.cpu_us_per_append} us CPU each (system ${out.system_us_per_append}), ` +
  `${out.ms_per_iteration} ms per iteration, ${stores} LMDB stores; afterAck held ${out.after_ack_ms_total} ms in all ` +
  `(${out.after_ack_ms_per_store} per store, max ${out.after_ack_ms_max}); append p50 ${out.append_ms_p50} p99 ${out.append_ms_p99} max ${out.append_ms_max} ms`);
console.log(`  hold p50 ${out.hold_ms_p50} p99 ${out.hold_ms_p99} p999 ${out.hold_ms_p999} max ${out.hold_ms_max} ms` +
  (da === null ? ', no DA writer' : `; DA writer: ${da.commits} commits of ${da_batches} batches every ${da_interval_ms} ms, commit p50 ${out.da_commit_ms_p50} max ${out.da_commit_ms_max} ms`));
console.log(JSON.stringify(out));

/**
 * The appends split by whether their hold overlapped a DA commit (its writes and fdatasync): the
 * comparison within one run that the disk's other users (noise shared by both halves) cannot fake.
 * If the DA flushes make the tail, the slow appends overlap commits far more often than the share
 * of time the commits take.
 */
function splitByOverlap(spans: Float64Array, ticks: Float64Array, wall: number): Record<string, number | null> {
  const inside: number[] = [];
  const outside: number[] = [];
  let busy_ms = 0;
  for (let k = 0; k < spans.length; k += 2) busy_ms += spans[k + 1] - spans[k];
  let k = 0;
  for (let i = 0; i < append_at.length; i++) {
    const s = append_at[i];
    const e = s + append_ms[i] + after_ms[i];
    while (k < spans.length && spans[k + 1] < s) k += 2; // spans end in order (one commit at a time)
    const hit = k < spans.length && spans[k] <= e;
    (hit ? inside : outside).push(append_ms[i] + after_ms[i]);
  }
  const all = [...inside, ...outside].sort((x, y) => x - y);
  const p99 = quantileSorted(all, 0.99);
  const si = inside.sort((x, y) => x - y);
  const so = outside.sort((x, y) => x - y);
  const slow = (xs: number[]): number => xs.filter((x) => x > 1).length;
  return {
    da_busy_share: r3(busy_ms / wall), appends_overlapping_da: si.length,
    hold_ms_p50_overlapping: si.length > 0 ? q(si, 0.5) : null, hold_ms_p99_overlapping: si.length > 0 ? q(si, 0.99) : null,
    hold_ms_p50_not_overlapping: so.length > 0 ? q(so, 0.5) : null, hold_ms_p99_not_overlapping: so.length > 0 ? q(so, 0.99) : null,
    holds_over_1ms: slow(si) + slow(so), holds_over_1ms_overlapping_da: slow(si),
    slow_share_overlapping: slow(si) + slow(so) > 0 ? r3(slow(si) / (slow(si) + slow(so))) : null,
    // The tail itself: of the holds at or above this run's p99, how many overlapped a commit
    // (against appends_overlapping_da / appends, the share chance alone would give).
    holds_at_p99_or_more: all.filter((x) => x >= p99).length, holds_at_p99_or_more_overlapping_da: si.filter((x) => x >= p99).length,
    ...splitByWindow(ticks, p99),
  };
}

/**
 * The same split by fixed windows [tick, tick + da_window_ms]: a commit's span grows when the disk
 * stalls for everyone, so "overlapped a commit" leans towards the slow appends even without any
 * effect of the commit; the timer's ticks do not depend on the disk, and a window of fixed length
 * after each does not either. With --da-phantom (ticks, no writes) the windows' share of the tail
 * is what chance gives.
 */
function splitByWindow(ticks: Float64Array, p99: number): Record<string, number> {
  let k = 0;
  let in_window = 0;
  let tail = 0;
  let tail_in_window = 0;
  const inside: number[] = [];
  const outside: number[] = [];
  for (let i = 0; i < append_at.length; i++) {
    const s = append_at[i];
    const hold = append_ms[i] + after_ms[i];
    while (k < ticks.length && ticks[k] + da_window_ms < s) k++;
    const hit = k < ticks.length && ticks[k] <= s + hold;
    if (hit) in_window++;
    (hit ? inside : outside).push(hold);
    if (hold >= p99) {
      tail++;
      if (hit) tail_in_window++;
    }
  }
  return {
    da_window_ms, appends_in_window: in_window, appends_in_window_share: r3(in_window / append_at.length),
    tail_in_window_share: tail > 0 ? r3(tail_in_window / tail) : 0,
    hold_ms_p99_in_window: inside.length > 0 ? q(inside.sort((x, y) => x - y), 0.99) : 0,
    hold_ms_p99_out_of_window: outside.length > 0 ? q(outside.sort((x, y) => x - y), 0.99) : 0,
  };
}

/** The DA-like writer (bench/journal_paced_da.ts), started and ready; stop() ends it and returns its figures. */
async function startDaWriter(): Promise<{ stop: () => Promise<Extract<DaWriterMessage, { type: 'done' }>> }> {
  const worker = new Worker(new URL('./journal_paced_da.js', import.meta.url), {
    workerData: { dir, interval_ms: da_interval_ms, batches: da_batches, diff_bytes: da_diff_bytes, phantom: da_phantom, store_module: da_store_module ?? null } satisfies DaWriterData,
  });
  const next = (): Promise<DaWriterMessage> => new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await next();
  return {
    stop: async () => {
      const done = next();
      worker.postMessage({ type: 'stop' });
      const m = await done;
      await worker.terminate();
      if (m.type !== 'done') throw new Error('journal_paced: the DA writer did not report');
      return m;
    },
  };
}
