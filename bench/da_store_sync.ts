// The DA store's commits against the journal's (issue 11): both are LMDB environments on the
// same disk, and every flush the DA store asks for queues with the journal's, whose commit every
// answer waits for. This measures a one-request journal commit (`Journal.append`, what the
// matcher does per batch at 1,000 requests/s) while a DA store (`LmdbDaStore`, the real class)
// takes a batch per journal batch, handed over every 5 ms as the DA thread does
// (DA_POST_INTERVAL_MS), for several commit intervals of the DA store (0: one commit per
// hand-over, as the server's DA worker commits; DA_STORE_COMMIT_INTERVAL_MS the store's own
// grouping), each commit durable (LMDB's two flushes, as before h25d) or noMetaSync (the DA
// store's options since h25d: one flush), and with no DA writer at all. The variants alternate
// in rounds so each sees the same disk and machine; `--variants none,commit_0_ms` runs only those
// (one per process, e.g. under `strace -f -c -e trace=fdatasync,fsync,msync`).
//
//   npx tsc -p tsconfig.json && node dist/bench/da_store_sync.js [--seconds 2] [--rounds 4] [--dir D]
//
// Per variant: journal commit p50/p99/p999 (µs, every commit of every round), the DA store's
// commits, and the DA lag (submit -> stored, ms p50/p99: how long a root waits before it is
// reported). The disk's side of a commit is counted from outside, e.g.
//   perf stat -e syscalls:sys_enter_fdatasync,block:block_rq_issue node dist/bench/da_store_sync.js
// Ends with one JSON line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DA_POST_INTERVAL_MS } from '../src/da/da_thread.js';
import { DA_STORE_COMMIT_INTERVAL_MS, LmdbDaStore } from '../src/da/da_store.js';
import type { PublishedBatch } from '../src/da/published.js';
import { Journal } from '../src/journal/journal.js';
import { RECORD_WORDS } from '../src/ring/records.js';
import { Knobs } from './knobs.js';
import { percentileNearestRankOfSorted } from './quantile.js';

const knobs = new Knobs();
const SECONDS = knobs.number('seconds', 2, 0.1, 600, { integer: false });
const ROUNDS = knobs.number('rounds', 4, 1, 100);
const BASE = knobs.string('dir', os.tmpdir());
const ONLY = knobs.string('variants', '');
knobs.finish();

/** One journal batch per tick: 1,000 requests/s, one request per batch (the light-load case). */
const TICK_MS = 1;
/** Request records (and consent slot) per batch, as a lone signed order journals them. */
const RECORDS_PER_BATCH = 2;
/** State leaves a lone order changes (balances, nonce, order, market): ~10 changes of ~40 bytes. */
const DIFF_BYTES = 400;

/**
 * A DA writer variant: its commit interval (ms; 0: one commit per hand-over, as the server's DA
 * worker does) and whether each commit is durable when it returns (LMDB's two flushes, as before
 * h25d) or noMetaSync (DA_STORE_LMDB_OPTIONS: one flush, the meta page left to the next).
 */
interface Variant {
  key: string;
  name: string;
  commit_interval_ms: number;
  durable_commits: boolean;
}

/** null: no DA writer. */
const VARIANTS: (Variant | null)[] = [
  null,
  { key: 'commit_0_ms', name: 'DA commit 0 ms', commit_interval_ms: 0, durable_commits: true },
  { key: 'commit_0_ms_nometasync', name: 'DA 0 ms noMeta', commit_interval_ms: 0, durable_commits: false },
  { key: `commit_${DA_STORE_COMMIT_INTERVAL_MS}_ms`, name: `DA commit ${DA_STORE_COMMIT_INTERVAL_MS} ms`, commit_interval_ms: DA_STORE_COMMIT_INTERVAL_MS, durable_commits: true },
];
const nameOf = (v: Variant | null): string => (v === null ? 'no DA writer' : v.name);
const keyOf = (v: Variant | null): string => (v === null ? 'none' : v.key);
const CHOSEN = ONLY === '' ? VARIANTS : VARIANTS.filter((v) => ONLY.split(',').includes(keyOf(v)));
if (CHOSEN.length === 0) throw new Error(`--variants: none of ${ONLY} (known: ${VARIANTS.map(keyOf).join(', ')})`);

interface Rig {
  journal: Journal;
  store: LmdbDaStore | null;
  next_id: number;
  commit_us: number[];
  lag_ms: number[];
}

function records(n: number, seed: number): Int32Array {
  const r = new Int32Array(n * RECORD_WORDS);
  for (let i = 0; i < r.length; i++) r[i] = (Math.imul(i + seed, 2654435761) ^ (i >>> 3)) | 0;
  return r;
}

function daBatch(id: number, inputs: Int32Array): PublishedBatch {
  const hex = (n: number): string => '0x' + n.toString(16).padStart(64, '0');
  const diff = new Uint8Array(DIFF_BYTES);
  for (let i = 0; i < diff.length; i++) diff[i] = (id * 31 + i) & 0xff;
  return {
    header: { batch_id: id, prev_state_root: hex(id - 1), state_root: hex(id), fills_root: hex(0), input_hash: hex(id * 7), timestamp: 1_764_000_000_000 + id },
    inputs_hex: Buffer.from(inputs.buffer, inputs.byteOffset, inputs.byteLength).toString('hex'),
    fills: [],
    state_diff_bytes: diff,
  };
}

/** The nearest-rank `p` percentile of `values` (unsorted); 0 of none. */
function pct(values: number[], p: number): number {
  return values.length === 0 ? 0 : percentileNearestRankOfSorted(Float64Array.from(values).sort(), p);
}

/** Runs one variant for SECONDS: a journal commit per tick, the DA batches handed over every 5 ms. */
async function runFor(rig: Rig): Promise<void> {
  const end = performance.now() + SECONDS * 1000;
  let waiting: PublishedBatch[] = [];
  let last_post = performance.now();
  const inputs = records(RECORDS_PER_BATCH, rig.next_id);
  const hand = (): void => {
    last_post = performance.now();
    for (const b of waiting) {
      const t = performance.now();
      void rig.store?.submit(b, new Uint8Array(inputs.buffer)).then(() => rig.lag_ms.push(performance.now() - t));
    }
    waiting = [];
  };
  while (performance.now() < end) {
    const id = rig.next_id++;
    const t0 = performance.now();
    rig.journal.append(id, Date.now(), inputs, RECORDS_PER_BATCH);
    rig.commit_us.push((performance.now() - t0) * 1000);
    rig.journal.reserveAhead(true);
    if (rig.store !== null) {
      waiting.push(daBatch(id, inputs));
      if (performance.now() - last_post >= DA_POST_INTERVAL_MS) hand();
    }
    await new Promise((r) => setTimeout(r, TICK_MS));
  }
  hand();
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-da-sync-'));
  console.log(`da_store_sync: ${new Date().toISOString()}, ${os.cpus()[0]?.model ?? '?'} x ${os.availableParallelism()}, dir ${dir}, ` +
    `${ROUNDS} rounds x ${SECONDS} s per variant, load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  const rigs = new Map<Variant | null, Rig>();
  try {
    for (const v of CHOSEN) {
      const store = v === null ? null : LmdbDaStore.open(path.join(dir, `${v.key}-da`), { commit_interval_ms: v.commit_interval_ms, durable_commits: v.durable_commits });
      rigs.set(v, { journal: Journal.open(path.join(dir, `${keyOf(v)}-journal`)), store, next_id: 1, commit_us: [], lag_ms: [] });
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const v of CHOSEN) {
        const rig = rigs.get(v) as Rig;
        const from = rig.commit_us.length;
        await runFor(rig);
        await rig.store?.written();
        const mine = rig.commit_us.slice(from);
        console.log(`  round ${r + 1} ${nameOf(v).padEnd(16)} journal commit p50 ${pct(mine, 50).toFixed(0).padStart(6)} us  p99 ${pct(mine, 99).toFixed(0).padStart(6)} us  (${mine.length} commits)`);
      }
    }
    const out: Record<string, unknown> = {};
    for (const v of CHOSEN) {
      const rig = rigs.get(v) as Rig;
      const c = rig.commit_us;
      out[keyOf(v)] = {
        journal_commit_us_p50: Math.round(pct(c, 50)), journal_commit_us_p99: Math.round(pct(c, 99)), journal_commit_us_p999: Math.round(pct(c, 99.9)),
        commits: c.length, da_commits: rig.store?.commits ?? 0, da_batches: rig.store === null ? 0 : rig.next_id - 1, da_lag_ms_p50: rig.store === null ? null : Math.round(pct(rig.lag_ms, 50) * 10) / 10,
        da_lag_ms_p99: rig.store === null ? null : Math.round(pct(rig.lag_ms, 99) * 10) / 10,
      };
        console.log(`${nameOf(v).padEnd(16)} journal commit p50 ${Math.round(pct(c, 50))} us, ` +
        `p99 ${Math.round(pct(c, 99))} us, p999 ${Math.round(pct(c, 99.9))} us over ${c.length} commits` +
        (rig.store === null ? '' : `; ${rig.store.commits} DA commits for ${rig.next_id - 1} batches, DA lag p50 ${pct(rig.lag_ms, 50).toFixed(1)} ms, p99 ${pct(rig.lag_ms, 99).toFixed(1)} ms`));
    }
    console.log(JSON.stringify({ bench: 'da_store_sync', seconds: SECONDS, rounds: ROUNDS, variants: out }));
  } finally {
    for (const rig of rigs.values()) {
      await rig.store?.close();
      await rig.journal.close();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error('da_store_sync: failed:', e instanceof Error ? e.message : e);
  process.exit(1);
});
