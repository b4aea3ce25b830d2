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
//
//   npx tsc -p tsconfig.json && node dist/bench/journal_paced.js [--dir D] [--appends N] [--gap-ms G] [--journal F]
// Ends with ONE JSON line {"bench":"journal_paced",...}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Journal } from '../src/journal/journal.js';
import { RECORD_WORDS } from '../src/ring/records.js';
import { Knobs } from './knobs.js';
import { quantileFloorRankOfSorted as quantileSorted } from './quantile.js';

const knobs = new Knobs();
const dir_asked = knobs.optionalString('dir');
const appends = knobs.number('appends', 2000, 1, 1_000_000);
const gap_ms = knobs.number('gap-ms', 1, 0, 1000);
const journal_module = knobs.optionalString('journal');
knobs.finish();
/** The journal class under test: this build's, or the compiled one named by --journal. */
const JournalClass: typeof Journal = journal_module === undefined ? Journal
  : ((await import(pathToFileURL(path.resolve(journal_module)).href)) as { Journal: typeof Journal }).Journal;
const dir = dir_asked ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-journal-paced-'));
const open_t0 = performance.now();
const journal = JournalClass.open(dir);
/** Journal.open's wall time (since h23m it starts the storer thread, without waiting for it). */
const open_ms = performance.now() - open_t0;
const records = new Int32Array(2 * RECORD_WORDS).fill(5);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
/** Wall time of each call (ms). */
const append_ms: number[] = [];
const after_ms: number[] = [];
/** Of them, the calls that stored (before h22j) or handed a store to the storer thread (since): afterAck returned true. */
const store_hold_ms: number[] = [];
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0, id = journal.lastBatchId() + 1; i < appends; i++, id++) {
  const a = performance.now();
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
const out = {
  bench: 'journal_paced', appends, gap_ms, dir: dir_asked ?? null, journal: journal_module ?? null,
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
};
console.log(`journal_paced: ${appends} appends one per ~${gap_ms} ms: ${out.cpu_us_per_append} us CPU each (system ${out.system_us_per_append}), ` +
  `${out.ms_per_iteration} ms per iteration, ${stores} LMDB stores; afterAck held ${out.after_ack_ms_total} ms in all ` +
  `(${out.after_ack_ms_per_store} per store, max ${out.after_ack_ms_max}); append p50 ${out.append_ms_p50} p99 ${out.append_ms_p99} max ${out.append_ms_max} ms`);
console.log(JSON.stringify(out));
