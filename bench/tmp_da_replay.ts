// tmp (h11a): DA core CPU per request over a journal flow, LMDB DA store, in-process.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { engineConfigOf, loadConfig } from '../src/config.js';
import { LmdbDaStore, MemoryDaStore } from '../src/da/da_store.js';
import { JournalReader } from '../src/da/journal_reader.js';
import { DaPublisherCore } from '../src/da/publisher.js';
import { ReplayExecutor } from '../src/da/replay.js';
import { Journal } from '../src/journal/journal.js';
import { EventType } from '../src/ring/event_records.js';
import { envInt, generateJournal } from './journal_flow.js';

const REQUESTS = envInt('BENCH_REQUESTS', 40_000);
const BATCH = envInt('BENCH_DA_BATCH', 70);
const ACCOUNTS = envInt('BENCH_ACCOUNTS', 4_000);
const RUNS = envInt('BENCH_RUNS', 3);
const LMDB = process.env.BENCH_LMDB !== '0';
const cpuUs = (c: NodeJS.CpuUsage): number => c.user + c.system;

async function replay(dir: string, first_timed: number, with_core: boolean): Promise<{ us: number; requests: number; root: string | null; hashes: number }> {
  const da_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'h11a-da-'));
  const store = LMDB ? LmdbDaStore.open(da_dir) : new MemoryDaStore();
  const reader = with_core ? JournalReader.open(dir) : null;
  const core = with_core ? new DaPublisherCore({ assets: ['ETH', 'BTC', 'USDC'], store, journal: reader, log: (m) => console.error(m) }) : null;
  const exec = new ReplayExecutor(engineConfigOf(loadConfig({})), {
    state_root: false, event_ring_slots: 1 << 14,
    onEvent: core === null ? undefined : (e) => {
      core.onEvent(e);
      if (e.type() === EventType.BATCH_COMMITTED) core.onBatch(e.field(0), e.field(1));
    },
  });
  exec.genesis();
  const journal = Journal.open(dir);
  let requests = 0;
  let c0: NodeJS.CpuUsage | null = null;
  let n = 0;
  for (const b of journal.read(1)) {
    if (b.batch_id === first_timed) c0 = process.cpuUsage();
    exec.apply(b.batch_id, b.time_ms, b.records, b.count);
    if (b.batch_id >= first_timed) requests += b.count;
    // let lmdb's async writes resolve now and then, as the worker does between messages
    if (++n % 4 === 0) await new Promise((r) => setImmediate(r));
  }
  if (core !== null) await core.settled();
  const us = c0 === null ? 0 : cpuUs(process.cpuUsage(c0));
  void journal.close();
  if (core !== null && core.failure !== null) throw new Error(`DA core failed: ${core.failure}`);
  const root = core?.stateRoot() ?? null;
  await store.close();
  fs.rmSync(da_dir, { recursive: true, force: true });
  const b = (core as unknown as { builder?: { hashCount(): number; leafCount(): number } } | null)?.builder;
  if (b) console.log('hashes per request', (b.hashCount() / requests).toFixed(1), 'leaves', b.leafCount());
  return { us, requests, root, hashes: 0 };
}

const dir = process.env.BENCH_JOURNAL ?? fs.mkdtempSync(path.join(os.tmpdir(), 'h11a-journal-'));
const meta = path.join(dir, 'h11a-meta.json');
let first: number;
if (fs.existsSync(meta)) first = JSON.parse(fs.readFileSync(meta, 'utf8')).first;
else {
  first = (await generateJournal(dir, { accounts: ACCOUNTS, requests: REQUESTS, batch: BATCH })).first_request_batch;
  fs.writeFileSync(meta, JSON.stringify({ first }));
}
const withs: number[] = [];
const withouts: number[] = [];
let reqs = 0;
let root: string | null = null;
for (let i = 0; i < RUNS; i++) {
  const a = process.env.BENCH_ONLY_WITH === "1" ? { us: 0, requests: 0, root: null, hashes: 0 } : await replay(dir, first, false);
  const b = await replay(dir, first, true);
  withouts.push(a.us); withs.push(b.us); reqs = b.requests; root = b.root;
}
const best = (xs: number[]): number => Math.min(...xs);
console.log(JSON.stringify({ da_us_per_request: Math.round(((best(withs) - best(withouts)) / reqs) * 10) / 10, replay_us: Math.round(best(withouts) / reqs * 10) / 10, requests: reqs, batch: BATCH, root, withs: withs.map((x) => Math.round(x / reqs)), withouts: withouts.map((x) => Math.round(x / reqs)) }));
