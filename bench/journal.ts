// Journal benchmark: committed batches/s and requests/s with durable flush (the server's
// settings: `Journal.open`, overlappingSync off, sync on: a batch counts once `append` returned,
// i.e. after its synchronous transaction's fdatasync and O_DSYNC meta write), at batch sizes 1,
// 100 and 1000 request records, one append after the other as the matcher thread does (a batch
// is durable before the next is written; requests arriving meanwhile make the next batch larger).
//
//   npx tsc -p tsconfig.json && node dist/bench/journal.js
//
// Also: the input hash alone (keccak256 over a 1000-request batch, 192 KB), with @noble/hashes
// and with src/da/keccak.ts, in MB/s.
// Knobs: BENCH_SECONDS [2] per measurement; BENCH_DIR [os tmpdir] (same disk as the data dir
// matters: fsync cost is the disk's). The last line printed is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { keccak256 } from '../src/da/keccak.js';
import { Journal } from '../src/journal/journal.js';
import { RECORD_WORDS } from '../src/ring/records.js';
import { Knobs } from './knobs.js';

// bench/knobs.ts: `--seconds S` or BENCH_SECONDS=S; `--dir D` or BENCH_DIR=D.
const knobs = new Knobs();
const SECONDS = knobs.number('seconds', 2, 0.1, 600, { integer: false });
const BASE = knobs.string('dir', os.tmpdir());
knobs.finish();

function records(n: number): Int32Array {
  const r = new Int32Array(n * RECORD_WORDS);
  for (let i = 0; i < r.length; i++) r[i] = (Math.imul(i, 2654435761) ^ (i >>> 3)) | 0;
  return r;
}

interface Result {
  batch_requests: number;
  batches: number;
  seconds: number;
  batches_per_s: number;
  requests_per_s: number;
  mb_per_s: number;
  /** Median and 99th percentile of one append (µs): what a batch waits for its durability. */
  append_us_p50: number;
  append_us_p99: number;
  journal_mb: number;
}

function measure(size: number): Result {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-bench-journal-'));
  const j = Journal.open(dir);
  const recs = records(size);
  const append_us: number[] = [];
  let next = 1;
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  while (performance.now() < deadline) {
    const t = performance.now();
    j.append(next++, Date.now(), recs, size);
    append_us.push((performance.now() - t) * 1000);
  }
  const seconds = (performance.now() - t0) / 1000;
  const done = append_us.length;
  const journal_mb = j.sizeBytes() / 1e6;
  void j.close();
  fs.rmSync(dir, { recursive: true, force: true });
  append_us.sort((a, b) => a - b);
  const at = (p: number): number => Math.round(append_us[Math.min(done - 1, Math.floor(done * p))]);
  const bytes = done * (size * RECORD_WORDS * 4 + 64);
  return {
    batch_requests: size, batches: done, seconds: round(seconds, 3),
    batches_per_s: Math.round(done / seconds), requests_per_s: Math.round((done * size) / seconds),
    mb_per_s: round(bytes / 1e6 / seconds, 1), append_us_p50: at(0.5), append_us_p99: at(0.99), journal_mb: round(journal_mb, 1),
  };
}

function round(x: number, digits: number): number {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}

function hashRate(fn: (b: Uint8Array) => Uint8Array): number {
  const bytes = new Uint8Array(records(1000).buffer);
  fn(bytes);
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 500) {
    fn(bytes);
    n++;
  }
  return round((n * bytes.length) / 1e6 / ((performance.now() - t0) / 1000), 1);
}

function main(): void {
  const hash_noble = hashRate(keccak_256);
  const hash_da = hashRate(keccak256);
  console.log(`input hash of a 1000-request batch: @noble/hashes ${hash_noble} MB/s, src/da/keccak.ts ${hash_da} MB/s`);
  const results = [1, 100, 1000].map((size) => measure(size));
  for (const r of results) {
    console.log(`batch ${String(r.batch_requests).padStart(4)} ${String(r.batches_per_s).padStart(7)} batches/s ` +
      `${String(r.requests_per_s).padStart(9)} requests/s ${String(r.mb_per_s).padStart(7)} MB/s, append p50 ${r.append_us_p50} us ` +
      `p99 ${r.append_us_p99} us (${r.batches} batches in ${r.seconds} s)`);
  }
  console.log(JSON.stringify({
    bench: 'journal',
    seconds_per_run: SECONDS,
    sequential_1: { batches_per_s: results[0].batches_per_s },
    sequential: Object.fromEntries(results.map((r) => [String(r.batch_requests), {
      batches_per_s: r.batches_per_s, requests_per_s: r.requests_per_s, mb_per_s: r.mb_per_s,
      append_us_p50: r.append_us_p50, append_us_p99: r.append_us_p99,
    }])),
    input_hash_mb_per_s: { noble: hash_noble, da_keccak: hash_da },
    node: process.version,
    cpus: os.cpus().length,
    load_avg_1m: round(os.loadavg()[0], 1),
  }));
}

try {
  main();
} catch (e: unknown) {
  console.error(e);
  process.exit(1);
}
