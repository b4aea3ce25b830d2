// What one DA store commit costs the process, asynchronous (lmdb-js `transaction`: the write on a
// libuv pool thread, the sync on another, the caller's loop woken when done) against synchronous
// (`sync_commits`: lmdb-js `transactionSync` on the calling thread, as the DA worker commits since
// issue 11's branch h11l). The light-load shape: one message's batches every `interval-ms`
// (50 = DA_POST_INTERVAL_MS), `batches` per commit. Counted per commit, process-wide: voluntary
// context switches (/proc/self/task/*/status: every thread that slept, pool threads included) and
// CPU (process.cpuUsage: the idle timer turns between commits included, the same in both ways, so
// only the difference counts). Ways alternate, `rounds` rounds of `commits` commits each.
//
//   npx tsc -p tsconfig.json && node dist/bench/da_store_commit.js [--commits 60] [--rounds 2] [--interval-ms 50] [--batches 1]
// Ends with ONE JSON line {"bench":"da_store_commit",...}.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DA_POST_INTERVAL_MS } from '../src/da/da_thread.js';
import { LmdbDaStore } from '../src/da/da_store.js';
import { daBatch } from './da_batches.js';
import { Knobs } from './knobs.js';
import { medianMeanOfMiddleTwo } from './quantile.js';

const knobs = new Knobs();
const COMMITS = knobs.number('commits', 60, 5, 10_000);
const ROUNDS = knobs.number('rounds', 2, 1, 50);
const INTERVAL_MS = knobs.number('interval-ms', DA_POST_INTERVAL_MS, 0, 1_000);
const BATCHES = knobs.number('batches', 1, 1, 1_000);
knobs.finish();

function switches(): number {
  let n = 0;
  for (const t of fs.readdirSync('/proc/self/task')) {
    try {
      const m = /^voluntary_ctxt_switches:\s+(\d+)/m.exec(fs.readFileSync(`/proc/self/task/${t}/status`, 'utf8'));
      if (m !== null) n += Number(m[1]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return n;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Figures { switches_per_commit: number; cpu_us_per_commit: number }

async function run(sync_commits: boolean): Promise<Figures> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-da-commit-'));
  const store = LmdbDaStore.open(dir, { commit_interval_ms: 0, sync_commits });
  let id = 0;
  const commitOnce = async (): Promise<void> => {
    const submitted: Promise<void>[] = [];
    for (let b = 0; b < BATCHES; b++) submitted.push(store.submit(daBatch(++id, 400)));
    await Promise.all(submitted);
  };
  try {
    for (let i = 0; i < 5; i++) await commitOnce(); // warm-up
    const s0 = switches();
    const c0 = process.cpuUsage();
    for (let i = 0; i < COMMITS; i++) {
      await sleep(INTERVAL_MS);
      await commitOnce();
    }
    const c = process.cpuUsage(c0);
    return { switches_per_commit: (switches() - s0) / COMMITS, cpu_us_per_commit: (c.user + c.system) / COMMITS };
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const r1 = (x: number): number => Math.round(x * 10) / 10;

const results: Record<'async' | 'sync', Figures[]> = { async: [], sync: [] };
for (let round = 0; round < ROUNDS; round++) {
  // A B, then B A: neither way always runs first.
  const order: ('async' | 'sync')[] = round % 2 === 0 ? ['async', 'sync'] : ['sync', 'async'];
  for (const way of order) {
    const f = await run(way === 'sync');
    results[way].push(f);
    console.log(`round ${round + 1} ${way}: ${r1(f.switches_per_commit)} switches, ${Math.round(f.cpu_us_per_commit)} us CPU per commit`);
  }
}
const summary = (way: 'async' | 'sync'): { switches_per_commit: number; cpu_us_per_commit: number } => ({
  switches_per_commit: r1(medianMeanOfMiddleTwo(results[way].map((f) => f.switches_per_commit))),
  cpu_us_per_commit: Math.round(medianMeanOfMiddleTwo(results[way].map((f) => f.cpu_us_per_commit))),
});
console.log(JSON.stringify({
  bench: 'da_store_commit', commits: COMMITS, rounds: ROUNDS, interval_ms: INTERVAL_MS, batches_per_commit: BATCHES,
  async: summary('async'), sync: summary('sync'),
}));
