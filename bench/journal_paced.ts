// The journal's append path at a steady light rate (issue 11, docs/benchmarks.md "h21j"): `n`
// one-batch appends (two records each) with `afterAck`, one per ~`gap_ms`, as the matcher does at
// 1,000 requests/s, into a journal in `--dir` (default: a temporary one). Reports the CPU per
// append (user and system, this process: one thread writes) and the stores into LMDB. Run it
// under `perf record -e block:block_rq_issue -a` to count the block requests a file system adds
// per append (the inode-table writes of ext4 without a journal).
//
//   npx tsc -p tsconfig.json && node dist/bench/journal_paced.js [--dir D] [--appends N] [--gap-ms G]
// Ends with ONE JSON line {"bench":"journal_paced",...}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Journal } from '../src/journal/journal.js';
import { RECORD_WORDS } from '../src/ring/records.js';
import { Knobs } from './knobs.js';

const knobs = new Knobs();
const dir_asked = knobs.optionalString('dir');
const appends = knobs.number('appends', 2000, 1, 1_000_000);
const gap_ms = knobs.number('gap-ms', 1, 0, 1000);
knobs.finish();
const dir = dir_asked ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-journal-paced-'));
const journal = Journal.open(dir);
const records = new Int32Array(2 * RECORD_WORDS).fill(5);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0, id = journal.lastBatchId() + 1; i < appends; i++, id++) {
  journal.append(id, Date.now(), records, 2);
  journal.afterAck();
  if (gap_ms > 0) Atomics.wait(sleeper, 0, 0, gap_ms);
}
const cpu = process.cpuUsage(c0);
const wall_ms = performance.now() - t0;
const stores = journal.stores;
await journal.close();
if (dir_asked === undefined) fs.rmSync(dir, { recursive: true, force: true });
const r1 = (x: number): number => Math.round(x * 10) / 10;
const out = {
  bench: 'journal_paced', appends, gap_ms, dir: dir_asked ?? null,
  cpu_us_per_append: r1((cpu.user + cpu.system) / appends), system_us_per_append: r1(cpu.system / appends),
  ms_per_iteration: Math.round((wall_ms / appends) * 100) / 100, lmdb_stores: stores,
};
console.log(`journal_paced: ${appends} appends one per ~${gap_ms} ms: ${out.cpu_us_per_append} us CPU each (system ${out.system_us_per_append}), ` +
  `${out.ms_per_iteration} ms per iteration, ${stores} LMDB stores`);
console.log(JSON.stringify(out));
