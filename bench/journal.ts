// Journal benchmark: committed batches/s and requests/s with durable flush (the server's
// settings: `Journal.open`, overlappingSync off, sync on: a batch counts once its write promise
// resolved, i.e. after fsync), at batch sizes 1, 100 and 1000 request records.
//
//   npx tsc -p tsconfig.json && node dist/bench/journal.js
//
// Two modes per size:
//   - pipelined: up to 64 batches in flight, as the matcher keeps them (PENDING_COMMITS_MAX);
//     lmdb-js groups the queued writes into one transaction per flush (group commit);
//   - sequential (size 1 only): each append awaited before the next, i.e. one fsync per batch.
// Also: the input hash alone (keccak256 over a 1000-request batch, 192 KB), with @noble/hashes
// (what encodeBatch uses, on the matcher thread) and with src/da/keccak.ts, in MB/s.
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
const INFLIGHT = 64;

function records(n: number): Int32Array {
  const r = new Int32Array(n * RECORD_WORDS);
  for (let i = 0; i < r.length; i++) r[i] = (Math.imul(i, 2654435761) ^ (i >>> 3)) | 0;
  return r;
}

interface Result {
  batch_requests: number;
  mode: 'pipelined' | 'sequential';
  batches: number;
  seconds: number;
  batches_per_s: number;
  requests_per_s: number;
  mb_per_s: number;
  journal_mb: number;
}

async function measure(size: number, mode: 'pipelined' | 'sequential'): Promise<Result> {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-bench-journal-'));
  const j = Journal.open(dir);
  const recs = records(size);
  let next = 1;
  let done = 0;
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  if (mode === 'sequential') {
    while (performance.now() < deadline) {
      await j.append(next, Date.now(), recs, size);
      next++;
      done++;
    }
  } else {
    const inflight = new Set<Promise<void>>();
    while (performance.now() < deadline) {
      while (inflight.size < INFLIGHT && performance.now() < deadline) {
        const p: Promise<void> = j.append(next, Date.now(), recs, size).then(() => {
          done++;
          inflight.delete(p);
        });
        inflight.add(p);
        next++;
      }
      await Promise.race(inflight);
    }
    await Promise.all(inflight);
  }
  const seconds = (performance.now() - t0) / 1000;
  const journal_mb = j.sizeBytes() / 1e6;
  await j.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const bytes = done * (size * RECORD_WORDS * 4 + 64);
  return {
    batch_requests: size, mode, batches: done, seconds: round(seconds, 3),
    batches_per_s: Math.round(done / seconds), requests_per_s: Math.round((done * size) / seconds),
    mb_per_s: round(bytes / 1e6 / seconds, 1), journal_mb: round(journal_mb, 1),
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

async function main(): Promise<void> {
  const hash_noble = hashRate(keccak_256);
  const hash_da = hashRate(keccak256);
  console.log(`input hash of a 1000-request batch: @noble/hashes ${hash_noble} MB/s, src/da/keccak.ts ${hash_da} MB/s`);
  const results: Result[] = [];
  results.push(await measure(1, 'sequential'));
  for (const size of [1, 100, 1000]) results.push(await measure(size, 'pipelined'));
  for (const r of results) {
    console.log(`batch ${String(r.batch_requests).padStart(4)} ${r.mode.padEnd(10)} ${String(r.batches_per_s).padStart(7)} batches/s ` +
      `${String(r.requests_per_s).padStart(9)} requests/s ${String(r.mb_per_s).padStart(7)} MB/s (${r.batches} batches in ${r.seconds} s)`);
  }
  const by = (size: number, mode: string): Result => results.find((r) => r.batch_requests === size && r.mode === mode)!;
  console.log(JSON.stringify({
    bench: 'journal',
    inflight_max: INFLIGHT,
    seconds_per_run: SECONDS,
    sequential_1: { batches_per_s: by(1, 'sequential').batches_per_s },
    pipelined: Object.fromEntries([1, 100, 1000].map((s) => [String(s), {
      batches_per_s: by(s, 'pipelined').batches_per_s, requests_per_s: by(s, 'pipelined').requests_per_s, mb_per_s: by(s, 'pipelined').mb_per_s,
    }])),
    input_hash_mb_per_s: { noble: hash_noble, da_keccak: hash_da },
    node: process.version,
    cpus: os.cpus().length,
    load_avg_1m: round(os.loadavg()[0], 1),
  }));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
