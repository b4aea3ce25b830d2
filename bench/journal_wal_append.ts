// The write-ahead record's user-side cost (issue 11, docs/benchmarks.md "h23m"): `n` one-page
// appends (a one-request batch's body, 244 bytes) through a build's WalWriter into a file under
// `--parent-dir` (default /dev/shm: tmpfs, where the O_DSYNC write is a memory copy, so what is
// measured is the header, the CRC-32 and the write call's JavaScript). Reports CPU per append
// (user and system, this thread) over the second half (the first warms the JIT). `--wal F` loads
// another build's compiled wal.js (A/B: `--wal /work/wt/start/dist/src/journal/wal.js`).
//
//   npx tsc -p tsconfig.json && node dist/bench/journal_wal_append.js [--appends N] [--wal F] [--parent-dir D]
// Ends with ONE JSON line {"bench":"journal_wal_append",...}.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { WalWriter } from '../src/journal/wal.js';
import { Knobs } from './knobs.js';

const knobs = new Knobs();
const appends = knobs.number('appends', 200_000, 2, 10_000_000, { integer: true });
const wal_module = knobs.optionalString('wal');
const parent_dir = knobs.string('parent-dir', '/dev/shm');
knobs.finish();
const Writer: typeof WalWriter = wal_module === undefined ? WalWriter
  : ((await import(pathToFileURL(path.resolve(wal_module)).href)) as { WalWriter: typeof WalWriter }).WalWriter;
const dir = fs.mkdtempSync(path.join(parent_dir, 'ringbook-wal-append-'));
const w = Writer.open(dir, 64 << 20);
const body = Buffer.alloc(244, 7);
w.restart(0);
let id = 0;
const half = Math.floor(appends / 2);
for (let i = 0; i < half; i++) {
  if (!w.fits(body.length)) w.restart(id);
  w.append(++id, body);
}
const c0 = process.cpuUsage();
for (let i = half; i < appends; i++) {
  if (!w.fits(body.length)) w.restart(id);
  body.writeUInt32LE(i, 0);
  w.append(++id, body);
}
const cpu = process.cpuUsage(c0);
w.close();
fs.rmSync(dir, { recursive: true, force: true });
const measured = appends - half;
const r2 = (x: number): number => Math.round(x * 100) / 100;
const out = {
  bench: 'journal_wal_append', appends: measured, wal: wal_module ?? null, parent_dir,
  user_us_per_append: r2(cpu.user / measured), system_us_per_append: r2(cpu.system / measured),
};
console.log(JSON.stringify(out));
