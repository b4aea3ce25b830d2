// Journal benchmark: committed batches/s and requests/s with durable flush (the server's
// settings: `Journal.open`: a batch is acknowledged once `append` returned, i.e. once its
// write-ahead record is durable, then `afterAck` stores it into LMDB with a synchronous
// transaction, overlappingSync off, sync on), at batch sizes 1, 100 and 1000 request records, one
// append + store after the other as the matcher thread does (requests arriving meanwhile make the
// next batch larger); `append_us` is the acknowledgement's wait, `store_us` the store's.
//
// The acknowledgement path (issue 11, src/journal/wal.ts): one-request batches ~1 ms apart (as at
// 1,000 requests/s), alternating between a journal without write-ahead file (`append` = LMDB
// `putSync`: two device flushes, what the server did before) and the write-ahead file with an
// O_DSYNC descriptor and with pwritev + fdatasync; each variant's ack and store times.
//
//   npx tsc -p tsconfig.json && node dist/bench/journal.js
//
// The commit hop: the same batch of one request written durably by `Journal.append` (lmdb-js
// `putSync`, what the matcher does) and by lmdb-js's asynchronous `put` awaited (what the matcher
// did before issue 11: a setImmediate, a hop to a libuv pool thread for the commit and a callback
// back on the event loop), alternating in one loop so both see the same disk and machine.
// The reserve (src/journal/reserve.ts): appends of 1 and 20 requests ~1 ms apart, alternating
// between a journal that keeps written zeros ahead of LMDB's last page and one that does not; the
// count of appends that grew data.mdb (each such commit also writes the inode).
// Also: the input hash alone (keccak256 over a 1000-request batch, 192 KB), with @noble/hashes
// and with src/da/keccak.ts, in MB/s.
// Knobs: BENCH_SECONDS [2] per measurement; BENCH_DIR [os tmpdir] (same disk as the data dir
// matters: fsync cost is the disk's). The last line printed is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { keccak256 } from '../src/da/keccak.js';
import { open } from 'lmdb';
import { Journal } from '../src/journal/journal.js';
import { encodeBatch } from '../src/journal/journal_codec.js';
import { RECORD_WORDS } from '../src/ring/records.js';
import { runMain } from './cli_args.js';
import { Knobs } from './knobs.js';
import { quantileFloorRankOfSorted } from './quantile.js';

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
  /** The same for the store into LMDB after the acknowledgement (`afterAck`). */
  store_us_p50: number;
  store_us_p99: number;
  journal_mb: number;
}

/** p-quantile (0..1) of `xs` in µs, rounded. */
function quantile(xs: number[], p: number): number {
  return Math.round(quantileFloorRankOfSorted([...xs].sort((x, y) => x - y), p));
}

function measure(size: number): Result {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-bench-journal-'));
  const j = Journal.open(dir);
  const recs = records(size);
  const append_us: number[] = [];
  const store_us: number[] = [];
  let next = 1;
  const t0 = performance.now();
  const deadline = t0 + SECONDS * 1000;
  while (performance.now() < deadline) {
    const t = performance.now();
    j.append(next++, Date.now(), recs, size);
    const t1 = performance.now();
    j.afterAck();
    append_us.push((t1 - t) * 1000);
    store_us.push((performance.now() - t1) * 1000);
  }
  const seconds = (performance.now() - t0) / 1000;
  const done = append_us.length;
  const journal_mb = j.sizeBytes() / 1e6;
  void j.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const bytes = done * (size * RECORD_WORDS * 4 + 64);
  return {
    batch_requests: size, batches: done, seconds: round(seconds, 3),
    batches_per_s: Math.round(done / seconds), requests_per_s: Math.round((done * size) / seconds),
    mb_per_s: round(bytes / 1e6 / seconds, 1), append_us_p50: quantile(append_us, 0.5), append_us_p99: quantile(append_us, 0.99),
    store_us_p50: quantile(store_us, 0.5), store_us_p99: quantile(store_us, 0.99), journal_mb: round(journal_mb, 1),
  };
}

interface CommitHop {
  commits: number;
  sync_us_p50: number;
  sync_us_p99: number;
  async_us_p50: number;
  async_us_p99: number;
}

async function commitHop(): Promise<CommitHop> {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-bench-journal-'));
  // LMDB alone (no write-ahead file): what putSync costs against the asynchronous put.
  const j = Journal.open(path.join(dir, 'sync'), { wal_bytes: 0 });
  // The journal's own settings, as Journal.open sets them.
  const root = open({ path: path.join(dir, 'async'), overlappingSync: false, noSync: false, compression: false, mapSize: 1 << 30 });
  const db = root.openDB<Buffer, number>({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
  const recs = records(1);
  const sync_us: number[] = [];
  const async_us: number[] = [];
  const deadline = performance.now() + SECONDS * 1000;
  for (let id = 1; performance.now() < deadline; id++) {
    let t = performance.now();
    j.append(id, Date.now(), recs, 1);
    sync_us.push((performance.now() - t) * 1000);
    t = performance.now();
    await db.put(id, encodeBatch(id, Date.now(), recs, 1));
    async_us.push((performance.now() - t) * 1000);
  }
  await j.close();
  await root.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    commits: sync_us.length, sync_us_p50: quantile(sync_us, 0.5), sync_us_p99: quantile(sync_us, 0.99),
    async_us_p50: quantile(async_us, 0.5), async_us_p99: quantile(async_us, 0.99),
  };
}

interface ReserveVariant {
  appends: number;
  /** Appends after which data.mdb was longer than before (LMDB grew it: the inode is written too). */
  grew_file: number;
  append_us_p50: number;
  append_us_p99: number;
}

/**
 * The journal's reserve (src/journal/reserve.ts): two journals filled alike (~16 MB, so the
 * reserve is 2 MB), then appends of `size` requests alternating between them, ~1 ms apart as at
 * 1,000 batches/s; one tops its reserve up between appends as the matcher does, the other never.
 */
function reservePhase(size: number): { with_reserve: ReserveVariant; without: ReserveVariant } {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-bench-journal-'));
  const fill = records(200);
  const variants = ['with', 'without'].map((name) => {
    const d = path.join(dir, name);
    // LMDB alone (the reserve is about its commits; the write-ahead file never grows).
    const j = Journal.open(d, { wal_bytes: 0 });
    for (let id = 1; id <= 400; id++) j.append(id, Date.now(), fill, 200);
    if (name === 'with') while (j.reserveAhead(true));
    return { name, file: path.join(d, 'data.mdb'), j, next: 401, us: [] as number[], grew: 0 };
  });
  const recs = records(size);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = performance.now() + SECONDS * 1000;
  while (performance.now() < deadline) {
    for (const v of variants) {
      const before = fs.statSync(v.file).size;
      const t = performance.now();
      v.j.append(v.next++, Date.now(), recs, size);
      v.us.push((performance.now() - t) * 1000);
      if (fs.statSync(v.file).size > before) v.grew++;
      if (v.name === 'with') v.j.reserveAhead(true);
      Atomics.wait(pause, 0, 0, 1);
    }
  }
  const out = variants.map((v): ReserveVariant => {
    void v.j.close();
    return { appends: v.us.length, grew_file: v.grew, append_us_p50: quantile(v.us, 0.5), append_us_p99: quantile(v.us, 0.99) };
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return { with_reserve: out[0], without: out[1] };
}

interface AckVariant {
  batches: number;
  /** What an acknowledgement waits for (`append`). */
  ack_us_p50: number;
  ack_us_p99: number;
  ack_us_p999: number;
  /** The store into LMDB after it (`afterAck`; 0 without write-ahead file). */
  store_us_p50: number;
  store_us_p99: number;
}

/**
 * The acknowledgement path: one-request batches ~1 ms apart, alternating between the journal
 * without write-ahead file (LMDB putSync acknowledges) and with it (O_DSYNC, fdatasync).
 */
function ackPath(): Record<'lmdb_put_sync' | 'wal_dsync' | 'wal_fdatasync', AckVariant> {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-bench-journal-'));
  const variants = ([
    ['lmdb_put_sync', { wal_bytes: 0 }], ['wal_dsync', { wal_sync: 'dsync' }], ['wal_fdatasync', { wal_sync: 'fdatasync' }],
  ] as const).map(([name, options]) => ({ name, j: Journal.open(path.join(dir, name), options), ack: [] as number[], store: [] as number[] }));
  const recs = records(1);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = performance.now() + SECONDS * 1000;
  for (let id = 1; performance.now() < deadline; id++) {
    for (const v of variants) {
      const t = performance.now();
      v.j.append(id, Date.now(), recs, 1);
      const t1 = performance.now();
      v.j.afterAck();
      v.ack.push((t1 - t) * 1000);
      v.store.push((performance.now() - t1) * 1000);
      Atomics.wait(pause, 0, 0, 1);
    }
  }
  const out = Object.fromEntries(variants.map((v) => {
    void v.j.close();
    return [v.name, {
      batches: v.ack.length, ack_us_p50: quantile(v.ack, 0.5), ack_us_p99: quantile(v.ack, 0.99), ack_us_p999: quantile(v.ack, 0.999),
      store_us_p50: quantile(v.store, 0.5), store_us_p99: quantile(v.store, 0.99),
    }];
  }));
  fs.rmSync(dir, { recursive: true, force: true });
  return out as Record<'lmdb_put_sync' | 'wal_dsync' | 'wal_fdatasync', AckVariant>;
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
  const results = [1, 100, 1000].map((size) => measure(size));
  for (const r of results) {
    console.log(`batch ${String(r.batch_requests).padStart(4)} ${String(r.batches_per_s).padStart(7)} batches/s ` +
      `${String(r.requests_per_s).padStart(9)} requests/s ${String(r.mb_per_s).padStart(7)} MB/s, append p50 ${r.append_us_p50} us ` +
      `p99 ${r.append_us_p99} us, store p50 ${r.store_us_p50} us p99 ${r.store_us_p99} us (${r.batches} batches in ${r.seconds} s)`);
  }
  const ack = ackPath();
  for (const [name, v] of Object.entries(ack)) {
    console.log(`ack path ${name.padEnd(13)} (${v.batches} one-request batches ~1 ms apart, alternating): ack p50 ${v.ack_us_p50} us ` +
      `p99 ${v.ack_us_p99} us p999 ${v.ack_us_p999} us; store after it p50 ${v.store_us_p50} us p99 ${v.store_us_p99} us`);
  }
  const hop = await commitHop();
  console.log(`commit of a one-request batch, alternating (${hop.commits} each): Journal.append (putSync) p50 ${hop.sync_us_p50} us ` +
    `p99 ${hop.sync_us_p99} us; lmdb-js put awaited p50 ${hop.async_us_p50} us p99 ${hop.async_us_p99} us`);
  const reserve = Object.fromEntries([1, 20].map((size) => [String(size), reservePhase(size)]));
  for (const [size, r] of Object.entries(reserve)) {
    console.log(`reserve, ${size}-request batches ~1 ms apart, alternating: with it p50 ${r.with_reserve.append_us_p50} us ` +
      `p99 ${r.with_reserve.append_us_p99} us, file grew on ${r.with_reserve.grew_file}/${r.with_reserve.appends} appends; ` +
      `without p50 ${r.without.append_us_p50} us p99 ${r.without.append_us_p99} us, grew on ${r.without.grew_file}/${r.without.appends}`);
  }
  console.log(JSON.stringify({
    bench: 'journal',
    commit_hop: hop,
    ack_path: ack,
    reserve,
    seconds_per_run: SECONDS,
    sequential_1: { batches_per_s: results[0].batches_per_s },
    sequential: Object.fromEntries(results.map((r) => [String(r.batch_requests), {
      batches_per_s: r.batches_per_s, requests_per_s: r.requests_per_s, mb_per_s: r.mb_per_s,
      append_us_p50: r.append_us_p50, append_us_p99: r.append_us_p99, store_us_p50: r.store_us_p50, store_us_p99: r.store_us_p99,
    }])),
    input_hash_mb_per_s: { noble: hash_noble, da_keccak: hash_da },
    node: process.version,
    cpus: os.cpus().length,
    load_avg_1m: round(os.loadavg()[0], 1),
  }));
}

runMain(main);
