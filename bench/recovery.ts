// Recovery benchmark: the time to replay a journal of 1,000,000 order requests through a Matcher
// (the matcher thread's start-up path: Journal.read -> Matcher.replay), and the state-root cost
// per batch (StateRootBuilder over the replayed events, as the DA publisher and the verifier do).
//
//   npx tsc -p tsconfig.json && node dist/bench/recovery.js
//
// 1. Generation (untimed): BENCH_ACCOUNTS [10000] accounts get three deposits each, then
//    BENCH_REQUESTS [1000000] order requests: 75% PLACE (limit GTC, random side, price within
//    +-20 ticks of a fixed mid, 1-10 lots, 80% ETH-USDC / 20% BTC-USDC, a client order id) and
//    25% CANCEL (by the client id of one of the account's recent orders). Records are written
//    with RequestWriter (the front's codec) into a ring, copied out in batches of BENCH_BATCH
//    [1000] and appended to a real Journal (durable, pipelined).
// 2. Replay (timed, target < 1.5 s): a fresh FastEngine + Matcher replays every journaled batch
//    as the matcher thread's start does (Journal.readTransient: each batch's header and the CRC-32
//    of its records checked, the records copied into one reused aligned buffer; no input hash,
//    which only the DA thread computes); events are drained from an in-process ring and only
//    counted (fills: the engine's fill ids, read after the clock stops). Reported: total, of
//    which journal read + CRC check, and apply (JSON
//    `replay_read_and_hash_s` keeps its old name: it is the read + CRC check). Then, untimed, the
//    same journal is replayed again through Journal.read (a fresh copy per batch): the final
//    state digest, events and fills must be identical (`replay_digest_agrees`), else exit 1.
//    `--replay-only` (BENCH_REPLAY_ONLY=1) stops after this phase (profiles, A/B pairs). The main
//    thread's GC pauses inside the timed replay are reported too (`replay_scavenges`,
//    `replay_scavenge_ms`, `replay_mark_compacts`, `replay_mark_compact_ms`; PerformanceObserver),
//    and the journal's CRC-32 implementation (`journal_crc`: clmul or zlib, src/journal/crc32.ts).
// 3. State root per batch (timed, at most BENCH_ROOT_SECONDS [30]): the same replay feeding a
//    StateRootBuilder that closes every batch with its root (the DA publisher's live path, the
//    verifier); the builder's time per batch is the state-root cost.
// 4. State root deferred (timed): the same replay applying events only, then one root at the end
//    (the publisher's restart path for batches already published).
// 5. Journal reads alone (timed, no apply), over the journal phase 2 already read (and checked):
//    every batch as the matcher's replay reads it (Journal.read, decodeBatch: header, CRC-32,
//    copy; `journal_read_checked_s`), and as the DA thread's reader reads it
//    (src/da/journal_reader.ts, decodeCheckedBatch: header only, no CRC, no copy; plus the keccak
//    input hash it computes for the published header; `journal_read_da_s`). Before 2026-11-26 this
//    phase reported `journal_read_raw_s` and `journal_read_da_keccak_s`: the reader already
//    computed the hash in both, and the second compared it with itself.
// 6. Snapshot (timed): after a replay that also feeds the front's read model and market data, a
//    snapshot at the last batch as the server takes one: the matcher's capture (state walk) and
//    msgpackr packing (its whole pause), the front's export + packing, the atomic write; then
//    recovery from that file: read + digest check, engine restore (restoreFastEngine + registry),
//    read model import, and the state leaves from the canonical state with their root (checked
//    equal to the replayed root). On the server the last three run in three threads at once.
// Wall-clock figures suffer from a shared machine; CPU seconds of the process (everything runs
// on its main thread) are reported next to them. BENCH_KEEP=1 keeps the generated journal and
// prints its directory; BENCH_JOURNAL=<dir> replays an existing one instead of generating.
// The last line printed is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { constants as perf_constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { loadConfig } from '../src/config/load.js';
import { engineConfigOf } from '../src/config/read.js';
import { JournalReader } from '../src/da/journal_reader.js';
import { ReplayExecutor } from '../src/da/replay.js';
import { Journal } from '../src/journal/journal.js';
import { JOURNAL_CRC_IMPL } from '../src/journal/crc32.js';
import { stateDigest } from '../src/engine/state.js';
import { runMain } from './cli_args.js';
import { generateJournal } from './journal_flow.js';
import { snapshotPhase, type SnapshotFigures } from './recovery_snapshot.js';
import { Knobs } from './knobs.js';

// bench/knobs.ts: `--requests N` or BENCH_REQUESTS=N, and so on.
const knobs = new Knobs();
const REQUESTS = knobs.number('requests', 1_000_000, 1, 100_000_000);
const ACCOUNTS = knobs.number('accounts', 10_000, 2, 1_000_000);
const BATCH = knobs.number('batch', 1000, 1, 1_000_000);
const ROOT_SECONDS = knobs.number('root-seconds', 30, 0, 3600);
const REPLAY_SECONDS = knobs.number('replay-seconds', 300, 0, 3600);
// Issue 15: replay of 1,000,000 journaled requests in under 1.5 s (it was 3.2-3.7 s; 10 s before that).
const TARGET_S = 1.5;
const BASE = knobs.string('dir', os.tmpdir());
/** Replay this journal instead of writing one; keep the written journal. */
const REUSE_JOURNAL = knobs.optionalString('journal');
const KEEP = knobs.flag('keep');
/** Phase 2 only (the timed replay), then the JSON line: for profiles and A/B pairs of the replay. */
const REPLAY_ONLY = knobs.flag('replay-only');
knobs.finish();


interface ReplayResult {
  batches: number;
  requests: number;
  seconds: number;
  cpu_s: number;
  root_cpu_ms: number;
  read_s: number;
  apply_s: number;
  events: number;
  fills: number;
  root_ms: number;
  leaves: number;
  hashes: number;
  state_root: string;
  complete: boolean;
  /** stateDigest of the engine after the replay (computed after the clock stops). */
  digest: string;
  /** The replay's window on the performance.now() clock, for the GC pauses inside it (`gcInside`). */
  t0_ms: number;
  t1_ms: number;
}

/**
 * `reader`: 'transient' reads as the matcher's start-up replay does (Journal.readTransient, one
 * reused buffer); 'copying' through Journal.read (a fresh copy per batch), the check replay's.
 */
function replay(dir: string, state_root: boolean | 'deferred', deadline_s: number, reader: 'transient' | 'copying' = 'transient'): ReplayResult {
  const engine_config = engineConfigOf(loadConfig({}));
  // No per-event callback: the events are drained (each record's type read, the count kept) as
  // the executor does, and the fills are read from the engine's state after the clock stops (its
  // next fill id). A closure call per event was bench-only work inside the timed replay (~5% of
  // its instructions, 5.3 events a request; docs/benchmarks.md, h15p).
  const exec = new ReplayExecutor(engine_config, {
    state_root,
    event_ring_slots: 1 << 14,
  });
  exec.genesis();
  exec.root_ms = 0;
  exec.root_cpu_ms = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  let requests = 0;
  const journal = Journal.open(dir);
  let apply_ms = 0;
  let batches = 0;
  let last_root = '';
  let complete = true;
  for (const b of reader === 'transient' ? journal.readTransient(1) : journal.read(1)) {
    const a0 = performance.now();
    last_root = exec.apply(b.batch_id, b.time_ms, b.records, b.count).state_root;
    apply_ms += performance.now() - a0;
    batches++;
    requests += b.count;
    if ((performance.now() - t0) / 1000 > deadline_s) {
      complete = false;
      break;
    }
  }
  if (state_root === 'deferred') last_root = exec.finishDeferred().state_root;
  const t1 = performance.now();
  const seconds = (t1 - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  void journal.close();
  const canonical = exec.engine.canonicalState();
  // Fill ids start at 1 and every fill takes the next one.
  const fills = canonical.next_fill_id - 1;
  return {
    batches, requests, seconds, cpu_s: (cpu.user + cpu.system) / 1e6, root_cpu_ms: exec.root_cpu_ms, read_s: seconds - apply_ms / 1000, apply_s: (apply_ms - exec.root_ms) / 1000, events: exec.events, fills,
    root_ms: exec.root_ms, leaves: exec.builder.leafCount(), hashes: exec.builder.hashCount(), state_root: last_root, complete,
    digest: stateDigest(canonical),
    t0_ms: t0, t1_ms: t1,
  };
}

/**
 * The main thread's GC pauses (PerformanceObserver 'gc' entries, delivered on the event loop after
 * the synchronous replay): scavenges and mark-compacts are part of the replay's wall and CPU time,
 * and their count and pause total vary less with the host's load than the wall does.
 */
const gc_entries: PerformanceEntry[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gc_entries.push(e);
}).observe({ entryTypes: ['gc'] });

interface GcFigures { scavenges: number; scavenge_ms: number; mark_compacts: number; mark_compact_ms: number }

/** The GC pauses that started inside [t0_ms, t1_ms] (call after an await, so their entries have arrived). */
function gcInside(t0_ms: number, t1_ms: number): GcFigures {
  const g: GcFigures = { scavenges: 0, scavenge_ms: 0, mark_compacts: 0, mark_compact_ms: 0 };
  for (const e of gc_entries) {
    if (e.startTime < t0_ms || e.startTime > t1_ms) continue;
    const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind === perf_constants.NODE_PERFORMANCE_GC_MINOR) {
      g.scavenges++;
      g.scavenge_ms += e.duration;
    } else {
      // Major, incremental marking steps and weak-callback processing: all old-generation work.
      g.mark_compacts += kind === perf_constants.NODE_PERFORMANCE_GC_MAJOR ? 1 : 0;
      g.mark_compact_ms += e.duration;
    }
  }
  return g;
}

/** Seconds to read every batch as the matcher's replay does (CRC checked, copied). */
function readChecked(dir: string): number {
  const journal = Journal.open(dir);
  const t0 = performance.now();
  let records = 0;
  for (const b of journal.readTransient(1)) records += b.count;
  const s = (performance.now() - t0) / 1000;
  void journal.close();
  if (records === 0) throw new Error('journal read: no records');
  return s;
}

/** Seconds to read every batch as the DA thread's reader does (header checked, input hash computed). */
function readDa(dir: string): number {
  const reader = JournalReader.open(dir);
  const last = reader.lastBatchId();
  const t0 = performance.now();
  for (let id = 1; id <= last; id++) {
    const b = reader.get(id);
    if (b === undefined) throw new Error(`batch ${id} missing`);
    if (b.input_hash.length !== 66) throw new Error(`batch ${id}: input hash ${b.input_hash}`);
  }
  const s = (performance.now() - t0) / 1000;
  void reader.close();
  return s;
}

function round(x: number, d = 2): number {
  const k = 10 ** d;
  return Math.round(x * k) / k;
}

async function main(): Promise<void> {
  const reuse = REUSE_JOURNAL;
  const dir = reuse ?? fs.mkdtempSync(path.join(BASE, 'ringbook-bench-recovery-'));
  try {
    let gen = { batches: 0, records: 0, seconds: 0 };
    if (reuse === undefined) {
      gen = await generateJournal(dir, { accounts: ACCOUNTS, requests: REQUESTS, batch: BATCH });
      console.log(`generated ${gen.records.toLocaleString('en-US')} records (${REQUESTS.toLocaleString('en-US')} orders + ${(ACCOUNTS * 3).toLocaleString('en-US')} deposits) in ${gen.batches} batches of <= ${BATCH}, journaled in ${round(gen.seconds)} s`);
    }
    const bare = replay(dir, false, REPLAY_SECONDS);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const gc = gcInside(bare.t0_ms, bare.t1_ms);
    if (reuse !== undefined) gen = { batches: bare.batches, records: bare.requests, seconds: 0 };
    const rps = Math.round(bare.requests / bare.seconds);
    console.log(`replay: ${round(bare.seconds)} s wall, ${round(bare.cpu_s)} s CPU (journal read + CRC check ${round(bare.read_s)} s, apply ${round(bare.apply_s)} s), ${rps.toLocaleString('en-US')} requests/s, ${bare.events.toLocaleString('en-US')} events, ${bare.fills.toLocaleString('en-US')} fills${bare.complete ? '' : ` (stopped after ${REPLAY_SECONDS} s at batch ${bare.batches})`}; target < ${TARGET_S} s: ${bare.complete && bare.seconds < TARGET_S ? 'PASS' : 'MISS'}`);
    console.log(`replay GC (main thread): ${gc.scavenges} scavenges ${round(gc.scavenge_ms, 1)} ms, ${gc.mark_compacts} mark-compacts ${round(gc.mark_compact_ms, 1)} ms (with incremental steps); journal CRC-32: ${JOURNAL_CRC_IMPL}`);
    // The same journal replayed again, untimed, through the copying reader (Journal.read): the
    // final engine state (digest), the events and the fills must be identical, or the bench fails.
    const check = replay(dir, false, REPLAY_SECONDS, 'copying');
    const digest_agrees = bare.complete && check.complete && check.digest === bare.digest && check.events === bare.events && check.fills === bare.fills;
    console.log(`check replay (Journal.read, untimed): state digest ${digest_agrees ? 'identical' : `DIFFERENT (${bare.digest} / ${bare.events} events vs ${check.digest} / ${check.events})`}`);
    if (!digest_agrees) process.exitCode = 1;
    if (REPLAY_ONLY) {
      console.log(JSON.stringify({
        bench: 'recovery', replay_only: true, requests: bare.requests, batches: bare.batches, replay_complete: bare.complete,
        replay_s: round(bare.seconds), replay_cpu_s: round(bare.cpu_s), replay_read_and_hash_s: round(bare.read_s),
        replay_apply_s: round(bare.apply_s), replay_requests_per_s: rps, target_s: TARGET_S,
        replay_scavenges: gc.scavenges, replay_scavenge_ms: round(gc.scavenge_ms, 1), replay_mark_compacts: gc.mark_compacts, replay_mark_compact_ms: round(gc.mark_compact_ms, 1), journal_crc: JOURNAL_CRC_IMPL,
        target_met: bare.complete && bare.seconds < TARGET_S, events: bare.events, fills: bare.fills,
        replay_state_digest: bare.digest, replay_digest_agrees: digest_agrees,
        node: process.version, cpus: os.cpus().length, load_avg_1m: round(os.loadavg()[0], 1),
      }));
      return;
    }
    const rooted = replay(dir, true, ROOT_SECONDS);
    const per_batch = rooted.root_ms / rooted.batches;
    const per_batch_cpu = rooted.root_cpu_ms / rooted.batches;
    console.log(`state root per batch: ${round(per_batch, 1)} ms wall, ${round(per_batch_cpu, 1)} ms CPU per batch of <= ${BATCH} requests over ${rooted.batches} batches${rooted.complete ? '' : ` (stopped after ${ROOT_SECONDS} s)`}; ${rooted.leaves.toLocaleString('en-US')} leaves at the end, ${Math.round(rooted.hashes / rooted.batches)} keccak calls per batch`);
    const deferred = replay(dir, 'deferred', REPLAY_SECONDS);
    console.log(`state root deferred (restart): ${round(deferred.root_ms / 1000)} s wall, ${round(deferred.root_cpu_ms / 1000)} s CPU for ${deferred.batches} batches, ${deferred.leaves.toLocaleString('en-US')} leaves; replay with it ${round(deferred.seconds)} s`);
    const snap: SnapshotFigures = await snapshotPhase(dir);
    console.log(`snapshot at batch ${snap.batch_id}: ${round(snap.bytes / 1e6, 1)} MB (${snap.open_orders.toLocaleString('en-US')} open orders, ${snap.accounts.toLocaleString('en-US')} accounts); matcher pause ${round(snap.capture_ms + snap.pack_ms)} ms (walk ${round(snap.capture_ms)}, pack ${round(snap.pack_ms)}), front pause ${round(snap.front_ms)} ms (export), then off both threads: front pack ${round(snap.front_pack_ms)} ms, encode + write ${round(snap.write_ms)} ms`);
    console.log(`recovery from it: read + digest ${round(snap.read_ms)} ms, engine restore ${round(snap.engine_restore_ms)} ms, read model ${round(snap.front_restore_ms)} ms, leaves + root ${round(snap.leaves_root_ms)} ms (${snap.leaves.toLocaleString('en-US')} leaves); vs replay from genesis ${round(bare.seconds)} s + deferred root ${round(deferred.root_ms / 1000)} s`);
    const read_checked_s = readChecked(dir);
    const read_da_s = readDa(dir);
    console.log(`journal read alone: ${round(read_checked_s)} s as the replay reads it (header + CRC-32 + copy), ${round(read_da_s)} s as the DA thread reads it (header, no CRC; keccak input hash)`);
    if (KEEP && reuse === undefined) console.log(`journal kept in ${dir}`);
    console.log(JSON.stringify({
      bench: 'recovery',
      requests: REQUESTS,
      deposits: ACCOUNTS * 3,
      batches: gen.batches,
      batch_requests: BATCH,
      journal_write_s: round(gen.seconds),
      replay_complete: bare.complete,
      replay_s: round(bare.seconds),
      replay_cpu_s: round(bare.cpu_s),
      replay_read_and_hash_s: round(bare.read_s),
      replay_apply_s: round(bare.apply_s),
      replay_scavenges: gc.scavenges,
      replay_scavenge_ms: round(gc.scavenge_ms, 1),
      replay_mark_compacts: gc.mark_compacts,
      replay_mark_compact_ms: round(gc.mark_compact_ms, 1),
      journal_crc: JOURNAL_CRC_IMPL,
      replay_requests_per_s: rps,
      target_s: TARGET_S,
      target_met: bare.complete && bare.seconds < TARGET_S,
      fills: bare.fills,
      replay_state_digest: bare.digest,
      replay_digest_agrees: digest_agrees,
      state_root_ms_per_batch: round(per_batch, 2),
      state_root_cpu_ms_per_batch: round(per_batch_cpu, 2),
      state_root_batches_measured: rooted.batches,
      state_root_leaves: rooted.leaves,
      state_root_keccaks_per_batch: Math.round(rooted.hashes / rooted.batches),
      deferred_root_s: round(deferred.root_ms / 1000),
      deferred_root_cpu_s: round(deferred.root_cpu_ms / 1000),
      deferred_leaves: deferred.leaves,
      snapshot_bytes: snap.bytes,
      snapshot_open_orders: snap.open_orders,
      snapshot_matcher_pause_ms: round(snap.capture_ms + snap.pack_ms),
      snapshot_capture_ms: round(snap.capture_ms),
      snapshot_pack_ms: round(snap.pack_ms),
      snapshot_front_ms: round(snap.front_ms),
      snapshot_front_pack_ms: round(snap.front_pack_ms),
      snapshot_write_ms: round(snap.write_ms),
      recovery_snapshot_read_ms: round(snap.read_ms),
      recovery_engine_restore_ms: round(snap.engine_restore_ms),
      recovery_front_restore_ms: round(snap.front_restore_ms),
      recovery_leaves_root_ms: round(snap.leaves_root_ms),
      // Time to serve on the server. From the snapshot: read, then the three restores in their
      // threads at once (the server waits for the DA thread's root check before it listens).
      // From genesis: the matcher's replay (the DA thread's deferred root trails it, in parallel).
      recovery_from_snapshot_s: round((snap.read_ms + Math.max(snap.engine_restore_ms, snap.front_restore_ms, snap.leaves_root_ms)) / 1000),
      recovery_from_genesis_s: round(bare.seconds),
      recovery_from_genesis_root_checked_s: round(Math.max(bare.seconds, deferred.root_ms / 1000)),
      journal_read_checked_s: round(read_checked_s),
      journal_read_da_s: round(read_da_s),
      node: process.version,
      cpus: os.cpus().length,
      load_avg_1m: round(os.loadavg()[0], 1),
    }));
  } finally {
    if (reuse === undefined && !KEEP) fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
