// State commitment benchmark (docs/verifiability.md, "State root"; docs/benchmarks.md).
//
//   npx tsc -p tsconfig.json && node dist/bench/state_root.js
//
// 1. keccak256 per call, 64 and 129 bytes (a binary and a 4-ary trie node): @noble/hashes
//    against src/da/keccak.ts (hash-wasm).
// 2. Cost per touched leaf at BENCH_SMALL [10,000] and BENCH_LARGE [1,000,000] leaves, in the
//    same run: a StateRootBuilder restored from a synthetic state (accounts with an account, a
//    nonce and two balance leaves, and as many open orders with their terms) closes batches of BENCH_BATCHES
//    [1,20,200] requests; each request is an order that fills a resting one (ACCEPTED, its own
//    ORDER_UPDATE resting, the maker's ORDER_UPDATE filled = removed, FILL, four BALANCE), so
//    the order count stays constant. Reported: CPU µs of apply + endBatch per leaf the batch
//    changed, and the ratio large / small per batch size (target <= 2).
// 3. The DA thread's CPU per request under a realistic batch: BENCH_REQUESTS [40,000] requests
//    (75% place, 25% cancel, BENCH_DA_ACCOUNTS [10,000] accounts: bench/journal_flow.ts, as
//    bench/recovery.ts) journaled in batches of BENCH_DA_BATCH [20], replayed through the real
//    Matcher; the DA core (DaPublisherCore: the state root, the fills tree, the journal read, the
//    submit to the DA store: in memory, or BENCH_DA_STORE=lmdb for the server's LMDB store opened
//    as the DA worker opens it: one commit on this thread per message, a message being
//    BENCH_DA_MESSAGE_REQUESTS [350: 50 ms at ~7,000 requests/s] requests' batches, after which
//    the replay yields to the event loop) consumes the events. Its CPU = CPU of the replay with it minus CPU without it (best of
//    BENCH_RUNS [3]). BENCH_DA_BATCH=70 BENCH_DA_ACCOUNTS=4000 BENCH_DA_STORE=lmdb is the load
//    bench's max-rate case (~70 requests per matcher batch, 4,000 wallets). The JSON carries the
//    replay's final state root and, with LMDB, a sha256 of every record the DA store holds:
//    equal between two builds that publish the same bytes.
// BENCH_PHASES [keccak,leaves,da] picks the phases (same-run A/B of one phase is quicker).
// BENCH_DA_OTHER=<another build's dist directory> (e.g. /work/wt/start/dist; its node_modules must
// resolve to the same lmdb package, so a copy of that dist beside a symlink to this checkout's
// node_modules): phase 3 replays the journal alternately through this build's DA core and the
// other's, in one process (BENCH_RUNS [3] rounds, order swapped every round), so both see the
// same machine load minute by minute; it reports each side's median CPU per request with the
// core, their ratio, and fails unless both published the same root and the same DA records.
// BENCH_DA_CORE [both]: `with` or `without` runs only that replay of phase 3 (one run each), so
// that a whole-process count (instructions under `valgrind --tool=callgrind`) of a `with` process
// minus a `without` process is the DA core's: a count that does not move with the machine's load.
// The last line printed is one JSON object.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { open as openLmdb } from 'lmdb';
import { loadConfig } from '../src/config/load.js';
import { engineConfigOf } from '../src/config/read.js';
import { LmdbDaStore } from '../src/da/da_store.js';
import { MemoryDaStore } from '../src/da/memory_da_store.js';
import { JournalReader } from '../src/da/journal_reader.js';
import { accountLeafId, balanceLeafId, nonceLeafId, orderLeafId, type LeafId } from '../src/da/leaf_ids.js';
import { orderTermsLeaf } from '../src/da/engine_leaves.js';
import { keccak256Into } from '../src/da/keccak.js';
import { DaPublisherCore } from '../src/da/publisher.js';
import { ReplayExecutor } from '../src/da/replay.js';
import {
  LeafKind, StateRootBuilder, accountKey, accountValue, balanceKey, balanceValue, marketKey, marketValue, nonceValue,
  orderKey, orderValue, type PendingLeaf,
} from '../src/da/state_root.js';
import { OrderStatus, RequestKind, Side } from '../src/engine/types.js';
import { Journal } from '../src/journal/journal.js';
import {
  AcceptedField, BalanceField, BatchField, EventType, FillField, OrderUpdateField, type EventFields,
} from '../src/ring/event_records.js';
import { mulberry32 as rng } from '../src/util/prng.js';
import { envInt, generateJournal } from './journal_flow.js';
import { medianMeanOfMiddleTwo } from './quantile.js';

const SMALL = envInt('BENCH_SMALL', 10_000);
const LARGE = envInt('BENCH_LARGE', 1_000_000);
const BATCHES = (process.env.BENCH_BATCHES ?? '1,20,200').split(',').map(Number);
/** Requests timed per (state size, batch size): ~7 changed leaves each. */
const TIMED_REQUESTS = envInt('BENCH_TIMED_REQUESTS', 20_000);
const REQUESTS = envInt('BENCH_REQUESTS', 40_000);
const DA_BATCH = envInt('BENCH_DA_BATCH', 20);
const DA_ACCOUNTS = envInt('BENCH_DA_ACCOUNTS', 10_000);
const DA_LMDB = process.env.BENCH_DA_STORE === 'lmdb';
/**
 * Requests per DA message: the replay yields to the event loop after each run of batches this
 * long, where the LMDB store commits (the DA worker commits once per message, every 50 ms).
 */
const MESSAGE_REQUESTS = envInt('BENCH_DA_MESSAGE_REQUESTS', 350);
const RUNS = envInt('BENCH_RUNS', 3);
const DA_OTHER = process.env.BENCH_DA_OTHER ?? null;
const DA_CORE = process.env.BENCH_DA_CORE ?? 'both';
if (!['both', 'with', 'without'].includes(DA_CORE)) throw new Error(`BENCH_DA_CORE: ${DA_CORE} is not both, with or without`);
/** Which phases run (all by default): `keccak`, `leaves`, `da`; a skipped phase's JSON fields are left out. */
const PHASES = new Set((process.env.BENCH_PHASES ?? 'keccak,leaves,da').split(','));
for (const p of PHASES) if (!['keccak', 'leaves', 'da'].includes(p)) throw new Error(`BENCH_PHASES: unknown phase ${p} (keccak, leaves, da)`);
const round = (x: number, d = 2): number => Math.round(x * 10 ** d) / 10 ** d;
const cpuUs = (c: NodeJS.CpuUsage): number => c.user + c.system;

// ---------------------------------------------------------------------------------------------
// 1. keccak per call

function keccakPhase(): { noble_64: number; wasm_64: number; noble_129: number; wasm_129: number } {
  const out = new Uint8Array(32);
  const time = (n: number, f: (d: Uint8Array) => void): number => {
    const d = new Uint8Array(n).map((_, i) => i * 13);
    const calls = 50_000;
    for (let i = 0; i < 5_000; i++) f(d);
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) f(d);
    return ((performance.now() - t0) * 1000) / calls;
  };
  const noble = (d: Uint8Array): void => out.set(keccak_256(d));
  const wasm = (d: Uint8Array): void => keccak256Into(d, 0, d.length, out, 0);
  return { noble_64: time(64, noble), wasm_64: time(64, wasm), noble_129: time(129, noble), wasm_129: time(129, wasm) };
}

// ---------------------------------------------------------------------------------------------
// 2. Cost per touched leaf against the state size

/** One event at a time: its type and fields by name (the records.ts field tables). */
class Ev implements EventFields {
  t = 0;
  readonly f = new Float64Array(16);
  type(): number { return this.t; }
  field(k: number): number { return this.f[k]; }
  clientOrderId(): string { return ''; }
  addressHex(): string { return ''; }
  set<T extends Record<string, number>>(t: number, table: T, values: Partial<Record<keyof T, number>>): this {
    this.t = t;
    this.f.fill(0);
    for (const name in values) this.f[table[name]] = values[name]!;
    return this;
  }
}

const MARKET = { id: 'ETH-USDC', status: 0, base: 0, quote: 1, tick: 10_000, lot: 100, fee_override: 0, maker_bps: 1, taker_bps: 5, mark_price: 0 };

/**
 * A builder holding `leaves` leaves: leaves/6 accounts (account, nonce, 2 balances) and as many
 * open orders, each with its order-terms leaf as in a real state (leavesFromCanonical). Without
 * the terms leaves (before 2026-11-26) the two sizes measured different requests: at 10,000
 * leaves the run soon replaces every resting order by one placed with terms, so a fill also
 * removed a terms leaf (8.3 changed leaves per request), at 1,000,000 it mostly did not (6.9).
 */
function syntheticBuilder(leaves: number): Synthetic {
  const accounts = Math.max(2, Math.floor(leaves / 6));
  const entries: [LeafId, PendingLeaf][] = [];
  const addresses = new Map<number, string>([[0, '0x' + '00'.repeat(20)]]);
  for (let a = 1; a <= accounts; a++) {
    const address = '0x' + a.toString(16).padStart(40, '0');
    addresses.set(a, address);
    entries.push([accountLeafId(a), { kind: LeafKind.ACCOUNT, key: accountKey(a), value: accountValue(address) }]);
    entries.push([nonceLeafId(a), { kind: LeafKind.NONCE, key: accountKey(a), value: nonceValue(1) }]);
    for (const asset of [0, 1]) entries.push([balanceLeafId(a, asset), { kind: LeafKind.BALANCE, key: balanceKey(a, asset), value: balanceValue(1e9, 1e6) }]);
    entries.push([orderLeafId(a), { kind: LeafKind.OPEN_ORDER, key: orderKey(a), value: orderValue({ account: a, market: 0, side: 1, price: 2e9, quantity: 100, filled: 0, remaining: 100, status: 0, locked: 100, priority_seq: a, last_fill_price: 0 }) }]);
    entries.push(orderTermsLeaf(a, { order_type: 0, tif: 0, client_order_id: '' }));
  }
  entries.push(['5:0', { kind: LeafKind.MARKET, key: marketKey(0), value: marketValue(MARKET) }]);
  const builder = new StateRootBuilder(['ETH', 'USDC']);
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  builder.restore({ entries, markets: [MARKET], addresses }, 0);
  return {
    builder, accounts, resting: Array.from({ length: accounts }, (_, i) => i + 1), next_order: accounts + 1, fill_id: 1, nonce: 2,
    restore_ms: performance.now() - t0, restore_cpu_ms: cpuUs(process.cpuUsage(c0)) / 1000,
  };
}

/**
 * A synthetic state and where its flow stands: the resting order ids (order id a <= accounts
 * belongs to account a; a resting order's owner is read as ((id - 1) % accounts) + 1) and the
 * next ids, carried from one batch size's run to the next. (Before 2026-11-26 every run started
 * again from orders 1..accounts and the same new ids: the later runs filled orders an earlier run
 * had already closed and placed ids that already rested, changing fewer leaves than they claimed,
 * and fewer at 10,000 leaves than at 1,000,000.)
 */
interface Synthetic {
  builder: StateRootBuilder;
  accounts: number;
  resting: number[];
  next_order: number;
  fill_id: number;
  nonce: number;
  restore_ms: number;
  restore_cpu_ms: number;
}

interface LeafCost { leaves: number; batch: number; us_per_leaf: number; leaves_per_request: number; keccaks_per_leaf: number }

/** Batches of `batch` requests on the builder; every request fills a resting order and rests a new one. */
function touchPhase(s: Synthetic, batch: number, seed: number): LeafCost {
  const { builder, accounts, resting } = s;
  const r = rng(seed);
  const e = new Ev();
  let { next_order, fill_id, nonce } = s;
  let batch_id = builder.currentBatchId();
  const run = (requests: number): { us: number; changed: number; keccaks: number } => {
    let changed = 0;
    const k0 = builder.hashCount();
    // One CPU reading per run: a cpuUsage() per batch cost 14% of the run (profiled).
    const c0 = process.cpuUsage();
    for (let done = 0; done < requests; done += batch) {
      builder.apply(e.set(EventType.BATCH_BEGIN, BatchField, { BATCH_ID: ++batch_id, TIME_MS: 1_700_000_000_000 + batch_id }));
      for (let i = 0; i < batch; i++) {
        const taker = 1 + Math.floor(r() * accounts);
        const slot = Math.floor(r() * resting.length);
        const maker_order = resting[slot];
        const maker = ((maker_order - 1) % accounts) + 1;
        const order = next_order++;
        resting[slot] = order;
        builder.apply(e.set(EventType.ACCEPTED, AcceptedField, {
          KIND: RequestKind.PLACE, ACCOUNT: taker, ORDER_ID: order, NONCE: nonce++, PRICE_UNITS: 2e9, QUANTITY_UNITS: 200,
        }));
        builder.apply(e.set(EventType.FILL, FillField, {
          FILL_ID: fill_id++, TAKER_ORDER_ID: order, MAKER_ORDER_ID: maker_order, TAKER_ACCOUNT: taker, MAKER_ACCOUNT: maker,
          PRICE_UNITS: 2e9, QUANTITY_UNITS: 100, TAKER_FEE_UNITS: 5, MAKER_FEE_UNITS: 1,
        }));
        builder.apply(e.set(EventType.ORDER_UPDATE, OrderUpdateField, {
          ORDER_ID: maker_order, ACCOUNT: maker, SIDE: Side.ASK, STATUS: OrderStatus.FILLED, PRICE_UNITS: 2e9,
          QUANTITY_UNITS: 100, FILLED_UNITS: 100, LAST_FILL_PRICE_UNITS: 2e9,
        }));
        builder.apply(e.set(EventType.ORDER_UPDATE, OrderUpdateField, {
          ORDER_ID: order, ACCOUNT: taker, SIDE: Side.BID, STATUS: OrderStatus.PARTIALLY_FILLED, PRICE_UNITS: 2e9,
          QUANTITY_UNITS: 200, FILLED_UNITS: 100, REMAINING_UNITS: 100, LAST_FILL_PRICE_UNITS: 2e9,
        }));
        for (const [a, asset] of [[taker, 0], [taker, 1], [maker, 0], [maker, 1]]) {
          builder.apply(e.set(EventType.BALANCE, BalanceField, { ACCOUNT: a, ASSET: asset, AVAILABLE_UNITS: 1e9 + fill_id, LOCKED_UNITS: 1e6 + i }));
        }
      }
      // state_diff_bytes: the diff the publisher hands the DA store with every batch.
      const roots = builder.endBatch();
      if (roots.state_diff_bytes.length === 0 && roots.leaves_changed > 0) throw new Error('state diff lost');
      changed += roots.leaves_changed;
    }
    return { us: cpuUs(process.cpuUsage(c0)), changed, keccaks: builder.hashCount() - k0 };
  };
  run(Math.min(2_000, TIMED_REQUESTS)); // warm-up
  const m = run(TIMED_REQUESTS);
  Object.assign(s, { next_order, fill_id, nonce });
  return { leaves: builder.leafCount(), batch, us_per_leaf: m.us / m.changed, leaves_per_request: m.changed / TIMED_REQUESTS, keccaks_per_leaf: m.keccaks / m.changed };
}

// ---------------------------------------------------------------------------------------------
// 3. The DA core's CPU per request

/**
 * sha256 over every key and value of the LMDB DA store's databases (`batches`, `order_fills`, the
 * msgpack structures they share): two builds that publish the same bytes give the same digest.
 */
async function storeDigest(da_dir: string): Promise<string> {
  const env = openLmdb({ path: da_dir, compression: false });
  const h = createHash('sha256');
  try {
    for (const name of ['batches', 'order_fills']) {
      const db = env.openDB<Buffer, Buffer>({ name, encoding: 'binary', keyEncoding: 'binary' });
      for (const { key, value } of db.getRange({})) {
        h.update(key);
        h.update(value);
      }
    }
  } finally {
    await env.close();
  }
  return h.digest('hex');
}

interface ReplayRun { us: number; requests: number; published: number; root: string | null; records_sha256: string | null }

/** The classes a DA replay uses: this build's, or another build's (BENCH_DA_OTHER). */
interface DaBuild {
  LmdbDaStore: typeof LmdbDaStore;
  MemoryDaStore: typeof MemoryDaStore;
  JournalReader: typeof JournalReader;
  DaPublisherCore: typeof DaPublisherCore;
  ReplayExecutor: typeof ReplayExecutor;
  engineConfigOf: typeof engineConfigOf;
  loadConfig: typeof loadConfig;
  Journal: typeof Journal;
}
const THIS_BUILD: DaBuild = { LmdbDaStore, MemoryDaStore, JournalReader, DaPublisherCore, ReplayExecutor, engineConfigOf, loadConfig, Journal };

/** Another build's DA classes, from its compiled `dist` (BENCH_DA_OTHER). */
async function loadBuild(dist: string): Promise<DaBuild> {
  const m = async (rel: string): Promise<Record<string, unknown>> => (await import(path.resolve(dist, rel))) as Record<string, unknown>;
  const [store, memory, reader, publisher, replay, read, load, journal] = await Promise.all([
    m('src/da/da_store.js'), m('src/da/memory_da_store.js'), m('src/da/journal_reader.js'), m('src/da/publisher.js'),
    m('src/da/replay.js'), m('src/config/read.js'), m('src/config/load.js'), m('src/journal/journal.js'),
  ]);
  return {
    LmdbDaStore: store.LmdbDaStore as DaBuild['LmdbDaStore'], MemoryDaStore: memory.MemoryDaStore as DaBuild['MemoryDaStore'],
    JournalReader: reader.JournalReader as DaBuild['JournalReader'], DaPublisherCore: publisher.DaPublisherCore as DaBuild['DaPublisherCore'],
    ReplayExecutor: replay.ReplayExecutor as DaBuild['ReplayExecutor'], engineConfigOf: read.engineConfigOf as DaBuild['engineConfigOf'],
    loadConfig: load.loadConfig as DaBuild['loadConfig'], Journal: journal.Journal as DaBuild['Journal'],
  };
}

/** CPU µs of replaying batches >= first_timed, with the DA core fed or not (and what it published). */
async function replayCpu(dir: string, first_timed: number, with_core: boolean, build: DaBuild = THIS_BUILD): Promise<ReplayRun> {
  const { LmdbDaStore, MemoryDaStore, JournalReader, DaPublisherCore, ReplayExecutor, engineConfigOf, loadConfig, Journal } = build;
  const da_dir = DA_LMDB ? fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-state-root-da-')) : null;
  // The DA worker's options (da_worker.ts): a commit at the end of each message's turn, on this thread.
  const store = da_dir === null ? new MemoryDaStore() : LmdbDaStore.open(da_dir, { commit_interval_ms: 0, sync_commits: true });
  const reader = with_core ? JournalReader.open(dir) : null;
  const core = with_core ? new DaPublisherCore({ assets: ['ETH', 'BTC', 'USDC'], store, journal: reader, log: (m) => console.error(m) }) : null;
  const exec = new ReplayExecutor(engineConfigOf(loadConfig({})), {
    state_root: false,
    event_ring_slots: 1 << 14,
    onEvent: core === null ? undefined : (e) => {
      core.onEvent(e);
      if (e.type() === EventType.BATCH_COMMITTED) core.onBatch(e.field(0), e.field(1));
    },
  });
  exec.genesis();
  const journal = Journal.open(dir);
  let requests = 0;
  let c0: NodeJS.CpuUsage | null = null;
  let since_yield = 0;
  for (const b of journal.read(1)) {
    // One CPU reading for the timed part (the deposits before it are set-up).
    if (b.batch_id === first_timed) c0 = process.cpuUsage();
    exec.apply(b.batch_id, b.time_ms, b.records, b.count);
    if (b.batch_id >= first_timed) requests += b.count;
    since_yield += b.count;
    if (since_yield >= MESSAGE_REQUESTS) {
      since_yield = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  // The store's last group is committed at the end of this turn (its wait does not keep the loop alive).
  if (core !== null) await core.settled();
  const us = c0 === null ? 0 : cpuUs(process.cpuUsage(c0));
  void journal.close();
  if (core !== null && core.failure !== null) throw new Error(`DA core failed: ${core.failure}`);
  await store.close();
  const records_sha256 = core !== null && da_dir !== null ? await storeDigest(da_dir) : null;
  if (da_dir !== null) fs.rmSync(da_dir, { recursive: true, force: true });
  return { us, requests, published: core?.published ?? 0, root: core?.stateRoot() ?? null, records_sha256 };
}

/** Phase 2 at both sizes: JSON fields, per batch size. */
function leavesPhase(): Record<string, number> {
  const per_size: LeafCost[][] = [];
  const restore_cpu_ms: number[] = [];
  for (const size of [SMALL, LARGE]) {
    const s = syntheticBuilder(size);
    console.log(`state of ${s.builder.leafCount().toLocaleString('en-US')} leaves restored (snapshot path) in ${round(s.restore_ms, 0)} ms, ${round(s.restore_cpu_ms, 0)} ms CPU`);
    restore_cpu_ms.push(s.restore_cpu_ms);
    const costs = BATCHES.map((b, i) => touchPhase(s, b, 100 + i));
    for (const c of costs) {
      console.log(`  batch of ${c.batch} requests: ${round(c.us_per_leaf)} µs CPU per changed leaf (${round(c.keccaks_per_leaf, 1)} keccaks, ${round(c.leaves_per_request, 1)} leaves per request)`);
    }
    per_size.push(costs);
  }
  const ratios = BATCHES.map((_, i) => per_size[1][i].us_per_leaf / per_size[0][i].us_per_leaf);
  console.log(`ratio ${LARGE.toLocaleString('en-US')} / ${SMALL.toLocaleString('en-US')} leaves per changed leaf: ${BATCHES.map((b, i) => `batch ${b}: ${round(ratios[i])}`).join(', ')} (target <= 2)`);
  const fields: Record<string, number> = {
    small_leaves: per_size[0][0].leaves, large_leaves: per_size[1][0].leaves,
    restore_cpu_ms_small: round(restore_cpu_ms[0], 0), restore_cpu_ms_large: round(restore_cpu_ms[1], 0),
  };
  BATCHES.forEach((b, i) => {
    fields[`us_per_leaf_small_batch${b}`] = round(per_size[0][i].us_per_leaf);
    fields[`us_per_leaf_large_batch${b}`] = round(per_size[1][i].us_per_leaf);
    fields[`ratio_large_small_batch${b}`] = round(ratios[i]);
  });
  fields.ratio_large_small_max = round(Math.max(...ratios));
  return fields;
}

/** Phase 3: JSON fields. */
async function daPhase(): Promise<Record<string, number | string>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-state-root-'));
  try {
    const first_timed = (await generateJournal(dir, { accounts: DA_ACCOUNTS, requests: REQUESTS, batch: DA_BATCH })).first_request_batch;
    let best_with = Infinity;
    let best_without = Infinity;
    let requests = 0;
    let published = 0;
    let root: string | null = null;
    let records: string | null = null;
    if (DA_OTHER !== null) return await daAbPhase(dir, first_timed, await loadBuild(DA_OTHER));
    if (DA_CORE !== 'both') {
      // One replay only, for a whole-process count (see BENCH_DA_CORE above).
      const r = await replayCpu(dir, first_timed, DA_CORE === 'with');
      console.log(`DA replay ${DA_CORE} the core: ${r.requests.toLocaleString('en-US')} requests, ${round(r.us / r.requests, 1)} µs CPU per request`);
      return {
        da_core: DA_CORE, da_replay_us_per_request: round(r.us / r.requests, 1), da_requests: r.requests, da_batch_requests: DA_BATCH, da_accounts: DA_ACCOUNTS,
        da_store: DA_LMDB ? 'lmdb' : 'memory', da_final_root: r.root ?? '', ...(r.records_sha256 === null ? {} : { da_records_sha256: r.records_sha256 }),
      };
    }
    for (let i = 0; i < RUNS; i++) {
      const a = await replayCpu(dir, first_timed, false);
      const b = await replayCpu(dir, first_timed, true);
      best_without = Math.min(best_without, a.us);
      best_with = Math.min(best_with, b.us);
      requests = b.requests;
      published = b.published;
      if (i > 0 && (b.root !== root || b.records_sha256 !== records)) throw new Error('DA phase: two replays of one journal published different bytes');
      root = b.root;
      records = b.records_sha256;
    }
    const da_us = (best_with - best_without) / requests;
    console.log(`DA core per request (batches of ${DA_BATCH}, ${DA_ACCOUNTS.toLocaleString('en-US')} accounts, ${DA_LMDB ? 'LMDB' : 'memory'} DA store, ${requests.toLocaleString('en-US')} requests, ${published.toLocaleString('en-US')} batches published): ${round(da_us, 1)} µs CPU (replay alone ${round(best_without / requests, 1)} µs)`);
    return {
      da_cpu_us_per_request: round(da_us, 1), da_batch_requests: DA_BATCH, da_accounts: DA_ACCOUNTS, da_store: DA_LMDB ? 'lmdb' : 'memory',
      da_message_requests: MESSAGE_REQUESTS,
      // The journal is generated from a fixed seed: same build inputs, same bytes. An A/B of two
      // builds that must publish the same bytes compares these.
      da_final_root: root ?? '', ...(records === null ? {} : { da_records_sha256: records }),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Phase 3 as an A/B in one process (BENCH_DA_OTHER): after a warm-up replay through each build,
 * per round, one replay with the core through
 * each build (the order swapped every round), then the replay without the core (this build's
 * Matcher; the part both subtract). Fails unless both builds published the same bytes.
 */
async function daAbPhase(dir: string, first_timed: number, other: DaBuild): Promise<Record<string, number | string>> {
  const mine: number[] = [];
  const theirs: number[] = [];
  const bare: number[] = [];
  let requests = 0;
  let published: { root: string | null; records: string | null } | null = null;
  // One replay through each build first, not counted (its code is compiled meanwhile).
  for (const build of [THIS_BUILD, other]) await replayCpu(dir, first_timed, true, build);
  for (let i = 0; i < RUNS; i++) {
    const sides: [DaBuild, number[]][] = i % 2 === 0 ? [[THIS_BUILD, mine], [other, theirs]] : [[other, theirs], [THIS_BUILD, mine]];
    for (const [build, into] of sides) {
      const r = await replayCpu(dir, first_timed, true, build);
      if (published === null) published = { root: r.root, records: r.records_sha256 };
      else if (r.root !== published.root || r.records_sha256 !== published.records) {
        throw new Error(`DA A/B: the builds published different bytes (root ${r.root} against ${published.root}, records ${r.records_sha256} against ${published.records})`);
      }
      into.push(r.us / r.requests);
      requests = r.requests;
    }
    const b = await replayCpu(dir, first_timed, false);
    bare.push(b.us / b.requests);
    console.log(`round ${i + 1}: with the core, this build ${round(mine[i], 1)} µs, other ${round(theirs[i], 1)} µs per request; without ${round(bare[i], 1)} µs`);
  }
  const m = medianMeanOfMiddleTwo(mine) - medianMeanOfMiddleTwo(bare);
  const t = medianMeanOfMiddleTwo(theirs) - medianMeanOfMiddleTwo(bare);
  const wins = mine.filter((x, i) => x < theirs[i]).length;
  console.log(`DA core per request (medians of ${RUNS} rounds, replay alone subtracted): this build ${round(m, 1)} µs, other ${round(t, 1)} µs, ratio ${round(m / t, 3)}; this build lower in ${wins} of ${RUNS} rounds`);
  return {
    da_ab_us_per_request: round(m, 1), da_ab_other_us_per_request: round(t, 1), da_ab_ratio: round(m / t, 3), da_ab_rounds: RUNS, da_ab_wins: wins,
    da_ab_this_with_core_us: mine.map((x) => round(x, 1)).join(' '), da_ab_other_with_core_us: theirs.map((x) => round(x, 1)).join(' '),
    da_requests: requests, da_batch_requests: DA_BATCH, da_accounts: DA_ACCOUNTS, da_store: DA_LMDB ? 'lmdb' : 'memory',
    da_final_root: published?.root ?? '', ...(published?.records == null ? {} : { da_records_sha256: published.records }),
  };
}

async function main(): Promise<void> {
  let fields: Record<string, number | string> = {};
  if (PHASES.has('keccak')) {
    const k = keccakPhase();
    console.log(`keccak256 per call: 64 bytes noble ${round(k.noble_64)} µs, hash-wasm ${round(k.wasm_64)} µs; 129 bytes noble ${round(k.noble_129)} µs, hash-wasm ${round(k.wasm_129)} µs`);
    fields = { keccak_us_64_noble: round(k.noble_64), keccak_us_64: round(k.wasm_64), keccak_us_129: round(k.wasm_129) };
  }
  if (PHASES.has('leaves')) fields = { ...fields, ...leavesPhase() };
  if (PHASES.has('da')) fields = { ...fields, ...(await daPhase()) };
  console.log(JSON.stringify({ bench: 'state_root', ...fields }));
}

await main();
