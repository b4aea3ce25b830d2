// How long a journal reserve top-up (src/journal/reserve.ts, JournalReserve.reserveAhead) holds the
// matcher thread, per call that writes, and what the next commit's flush costs after it (h25p).
//
// Each variant is a JournalReserve module (this build's, and optionally a baseline's compiled
// reserve.js: `--baseline-module /work/wt/start/dist/src/journal/reserve.js`) driving its own
// file, LMDB faked: a file of `used` bytes (sparse) whose "commits" append `--commit-kb` of data
// at the used end (a pwrite + fdatasync, what a store's LMDB commit does to data.mdb: it lands in
// the reserve's zeros) and are followed by idle top-up calls until one writes nothing, as the
// matcher's idle loop does. Cycles alternate between the variants so both see the same disk.
// Per variant: the calls that wrote (count, bytes each, µs p50/p99), the node:fs calls each made
// (each one syscall: open, fstat, pwrite, fdatasync), and the commit's flush µs p50/p99 (all
// commits, and those right after a top-up: an unsynced top-up's zeros are flushed there).
//
//   npx tsc -p tsconfig.json && node dist/bench/journal_topup.js --dir $(mktemp -d) \
//     --baseline-module /work/wt/start/dist/src/journal/reserve.js
//
// Knobs: --cycles [300] commits per variant; --commit-kb [128] data per commit (a store of ~0.5 s
// at 1,000 one-request batches/s is ~150 KB); --used-mb [64] the journal's size at the start (an
// eighth of it, capped at 8 MB, is the reserve's target); --dir [os tmpdir]. Wall-clock times on a
// shared machine are noisy: compare the variants within one run. The last line is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runMain } from './cli_args.js';
import { Knobs } from './knobs.js';
import { quantileFloorRankOfSorted } from './quantile.js';

const knobs = new Knobs();
const CYCLES = knobs.number('cycles', 300, 1, 100_000);
const COMMIT_KB = knobs.number('commit-kb', 128, 4, 64 << 10);
const USED_MB = knobs.number('used-mb', 64, 1, 4096);
const BASE = knobs.string('dir', os.tmpdir());
const BASELINE_MODULE = knobs.optionalString('baseline-module');
knobs.finish();

const PAGE_BYTES = 4096;
/** Idle calls after a commit before a reserve that never fills is reported (8 MB / 4 KB pages). */
const CALLS_PER_CYCLE_MAX = 2048;

/** The part of a reserve module this bench drives (both builds export it). */
interface ReserveLike {
  reserveAhead(idle: boolean): boolean;
  consumed(value_bytes: number): void;
  close(): void;
  written_bytes: number;
  failures: number;
}
type ReserveCtor = new (file: string, lmdb: () => { used_bytes: number; page_bytes: number }) => ReserveLike;

async function loadReserve(file: string): Promise<ReserveCtor> {
  const mod: unknown = await import(pathToFileURL(path.resolve(file)).href);
  const ctor = (mod as { JournalReserve?: unknown }).JournalReserve;
  if (typeof ctor !== 'function') throw new TypeError(`${file} exports no JournalReserve`);
  return ctor as ReserveCtor;
}

/** node:fs calls made inside a top-up call (the reserve writes through the module object). */
const COUNTED = ['openSync', 'fstatSync', 'writeSync', 'fdatasyncSync', 'fsyncSync', 'closeSync'] as const;
let counting = false;
const fs_calls: Record<string, number> = Object.fromEntries(COUNTED.map((n) => [n, 0]));
function countFsCalls(): void {
  const target = fs as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const name of COUNTED) {
    const real = target[name];
    target[name] = (...a: unknown[]): unknown => {
      if (counting) fs_calls[name]++;
      return real.apply(fs, a);
    };
  }
}

interface Variant {
  name: string;
  reserve: ReserveLike;
  fd: number;
  used_bytes: number;
  topup_us: number[];
  topup_bytes: number[];
  calls: Record<string, number>;
  commit_us: number[];
  commit_after_topup_us: number[];
  topped_up_since_commit: boolean;
}

function makeVariant(name: string, ctor: ReserveCtor, dir: string): Variant {
  const file = path.join(dir, `${name}.mdb`);
  const used_bytes = USED_MB << 20;
  fs.writeFileSync(file, '');
  fs.truncateSync(file, used_bytes);
  const v: Variant = {
    name, fd: fs.openSync(file, 'r+'), used_bytes, topup_us: [], topup_bytes: [],
    calls: Object.fromEntries(COUNTED.map((n) => [n, 0])), commit_us: [], commit_after_topup_us: [],
    topped_up_since_commit: false,
    reserve: undefined as unknown as ReserveLike,
  };
  v.reserve = new ctor(file, () => ({ used_bytes: v.used_bytes, page_bytes: PAGE_BYTES }));
  return v;
}

const data = Buffer.alloc(COMMIT_KB << 10, 0x5a);

/** One store's commit (its pages at LMDB's end, then the flush), then idle top-ups until none writes. */
function cycle(v: Variant): void {
  const t0 = process.hrtime.bigint();
  let done = 0;
  while (done < data.length) done += fs.writeSync(v.fd, data, done, data.length - done, v.used_bytes + done);
  fs.fdatasyncSync(v.fd);
  const commit_us = Number(process.hrtime.bigint() - t0) / 1000;
  v.commit_us.push(commit_us);
  if (v.topped_up_since_commit) v.commit_after_topup_us.push(commit_us);
  v.topped_up_since_commit = false;
  v.used_bytes += data.length;
  v.reserve.consumed(data.length);
  for (let calls = 0; calls < CALLS_PER_CYCLE_MAX; calls++) {
    const written_before = v.reserve.written_bytes;
    for (const n of COUNTED) fs_calls[n] = 0;
    counting = true;
    const s = process.hrtime.bigint();
    const wrote = v.reserve.reserveAhead(true);
    const us = Number(process.hrtime.bigint() - s) / 1000;
    counting = false;
    if (!wrote) return;
    v.topup_us.push(us);
    v.topup_bytes.push(v.reserve.written_bytes - written_before);
    for (const n of COUNTED) v.calls[n] += fs_calls[n];
    v.topped_up_since_commit = true;
  }
  throw new Error(`${v.name}: reserve not full after ${CALLS_PER_CYCLE_MAX} calls`);
}

const round = (x: number, digits = 0): number => Number(x.toFixed(digits));
function q(samples: number[], p: number): number | null {
  if (samples.length === 0) return null;
  return round(quantileFloorRankOfSorted(Float64Array.from(samples).sort(), p));
}

function summary(v: Variant): Record<string, unknown> {
  const n = v.topup_us.length;
  const per_call = Object.fromEntries(COUNTED.filter((c) => v.calls[c] > 0).map((c) => [c, n === 0 ? 0 : round(v.calls[c] / n, 2)]));
  return {
    topup_calls: n,
    topup_bytes_per_call_p50: q(v.topup_bytes, 0.5),
    topup_us_p50: q(v.topup_us, 0.5),
    topup_us_p99: q(v.topup_us, 0.99),
    topup_us_max: q(v.topup_us, 1),
    syscalls_per_call: n === 0 ? 0 : round(COUNTED.reduce((s, c) => s + v.calls[c], 0) / n, 2),
    fs_calls_per_call: per_call,
    commit_us_p50: q(v.commit_us, 0.5),
    commit_us_p99: q(v.commit_us, 0.99),
    commit_after_topup: v.commit_after_topup_us.length,
    commit_after_topup_us_p50: q(v.commit_after_topup_us, 0.5),
    commit_after_topup_us_p99: q(v.commit_after_topup_us, 0.99),
    reserve_failures: v.reserve.failures,
  };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(BASE, 'journal-topup-'));
  try {
    countFsCalls();
    const here = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'src', 'journal', 'reserve.js');
    const variants = [makeVariant('this_build', await loadReserve(here), dir)];
    if (BASELINE_MODULE !== undefined) variants.push(makeVariant('baseline', await loadReserve(BASELINE_MODULE), dir));
    // The first fill (from empty to the target) and the commit that flushes it are not the
    // steady state: done before timing (two cycles).
    for (const v of variants) {
      cycle(v);
      cycle(v);
      v.topped_up_since_commit = false;
      v.topup_us.length = 0;
      v.topup_bytes.length = 0;
      v.commit_us.length = 0;
      v.commit_after_topup_us.length = 0;
      for (const n of COUNTED) v.calls[n] = 0;
    }
    for (let i = 0; i < CYCLES; i++) for (const v of i % 2 === 0 ? variants : [...variants].reverse()) cycle(v);
    const results = Object.fromEntries(variants.map((v) => [v.name, summary(v)]));
    for (const [name, r] of Object.entries(results)) {
      console.log(`${name}: ${String(r.topup_calls)} top-up calls of ${String(r.topup_bytes_per_call_p50)} B, held p50 ${String(r.topup_us_p50)} us ` +
        `p99 ${String(r.topup_us_p99)} us, ${String(r.syscalls_per_call)} syscalls/call; commit flush p50 ${String(r.commit_us_p50)} us, ` +
        `after a top-up p50 ${String(r.commit_after_topup_us_p50)} us p99 ${String(r.commit_after_topup_us_p99)} us`);
    }
    for (const v of variants) {
      v.reserve.close();
      fs.closeSync(v.fd);
    }
    console.log(JSON.stringify({
      bench: 'journal_topup',
      cycles: CYCLES, commit_kb: COMMIT_KB, used_mb_start: USED_MB,
      baseline_module: BASELINE_MODULE ?? null,
      ...results,
      node: process.version, cpus: os.cpus().length, load_avg_1m: round(os.loadavg()[0], 1),
    }));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
