// The cluster matcher's snapshot pause (src/cluster/matcher_snapshots.ts): what a matcher role does
// at the boundary of a batch whose snapshot is due, before it applies the next one, for the state
// of bench/recovery.ts's journal (by default 10,000 accounts, 1,000,000 requests: ~112,000 open
// orders, ~275,000 state leaves). The write itself is asynchronous and not part of the pause.
//
//   npx tsc -p tsconfig.json && node dist/bench/matcher_snapshot.js [--requests N] [--accounts N] [--rounds N] [--dir D]
//
// The journal is generated and replayed untimed (deferred root, then the whole tree once, as a
// standby that followed the stream holds it). Then, `rounds` times, each part of the pause is
// timed in wall and process CPU ms (the machine is shared: CPU time is the steadier figure; GC
// helper threads count in it): the engine's state walk (Matcher.captureState), its msgpackr
// packing (encodeEngine) and copy, the zero balances of the state (the candidates), the zero
// balance leaves from the state tree (StateRootBuilder.zeroBalanceLeaves: by looking each
// candidate up, and by walking every leaf, both timed, and a lookup of every (account, asset) pair to set its LOOKUP_COST_IN_LEAVES_WALKED), and the file's encoding (encodeSnapshot: sha256 digest
// over the engine part, packing) and copy: together `old_confirmed`, what MatcherSnapshots.confirmed()
// did on the matcher's thread before h29w (timed as one block too). Then today's path (h29w,
// src/matcher/engine_staging.ts): the copies of the engine's columns into buffers kept from the
// last round (EngineStaging.take: the single process's matcher thread's whole pause), the whole
// MatcherSnapshots.confirmed() call (the copies, the zero balance leaves from them, the post to the
// writer thread), and the writer thread's share timed on this thread (stagedEngineBytes: the walk
// of the copies and msgpackr), whose engine part must equal the one captureState gives, byte for
// byte (else the bench fails), as must the file the writer thread wrote. Then the single process's
// matcher at a snapshot due while the previous copy is still being written (h30s), the previous
// copy held: with one set of kept buffers (h29w's EngineStaging: take() declines, the matcher walks
// and packs itself, `busy_fallback`) and with two (`busy_second_set`: the copies into the second
// set; its first round allocates that set, reported alone as `busy_second_set_first`), whose
// engine part must again equal captureState's. Then (h31f) both sets held: what the matcher does
// now at a snapshot due then (`both_held_defer`: EngineStaging.takeDue declines and defers it; no
// copy, no walk), at each later batch boundary until a set is free (`both_held_retry_us`: one
// takeDue call, averaged over RETRY_CALLS), and once one is (`deferred_take`: the copies, whose
// engine part must equal captureState's); `busy_fallback` is what it did before h31f. Medians
// are reported; the last line is one JSON object {"bench": "matcher_snapshot", ...}.
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BatchRequests } from '../src/cluster/batch_request.js';
import { MatcherSnapshots, zeroBalances } from '../src/cluster/matcher_snapshots.js';
import type { MatcherStatus } from '../src/cluster/matcher_options.js';
import { requestPurgeStatus } from '../src/cluster/request_purge.js';
import { loadConfig } from '../src/config/load.js';
import { engineConfigOf } from '../src/config/read.js';
import { ReplayExecutor } from '../src/da/replay.js';
import { Journal } from '../src/journal/journal.js';
import { EngineStaging, releaseStaged, stagedEngineBytes, type StagedEngine } from '../src/matcher/engine_staging.js';
import { encodeEngine, encodeSnapshot, readSnapshotFile, snapshotFileName } from '../src/snapshot/snapshot_file.js';
import { runMain } from './cli_args.js';
import { generateJournal } from './journal_flow.js';
import { Knobs } from './knobs.js';
import { timedSync, medianTenth, type Timed } from './timed.js';

const knobs = new Knobs();
const REQUESTS = knobs.number('requests', 1_000_000, 1, 100_000_000);
const ACCOUNTS = knobs.number('accounts', 10_000, 2, 1_000_000);
const ROUNDS = knobs.number('rounds', 5, 1, 100);
const BASE = knobs.string('dir', os.tmpdir());
knobs.finish();


/** takeDue calls timed together for the per-call cost of a retry while both sets are held. */
const RETRY_CALLS = 10_000;

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(BASE, 'ringbook-bench-matcher-snapshot-'));
  try {
    await generateJournal(dir, { accounts: ACCOUNTS, requests: REQUESTS, batch: 1000 });
    const engine_config = engineConfigOf(loadConfig({}));
    const ex = new ReplayExecutor(engine_config, { state_root: 'deferred', event_ring_slots: 1 << 14 });
    ex.genesis();
    const journal = Journal.open(dir);
    let batch_id = 0;
    let time_ms = 0;
    for (const b of journal.readTransient(1)) {
      ex.apply(b.batch_id, b.time_ms, b.records, b.count);
      batch_id = b.batch_id;
      time_ms = b.time_ms;
    }
    await journal.close();
    const state_root = ex.finishDeferred().state_root;
    const parts: Record<string, Timed[]> = { capture: [], pack: [], candidates: [], zero_leaves_lookup: [], zero_leaves_walk: [], lookup_every_pair: [], file: [],
      old_confirmed: [], staging_take: [], confirmed: [], writer_walk_pack: [], busy_fallback: [], busy_second_set: [],
      both_held_defer: [], both_held_retries: [], deferred_take: [] };
    let bytes = 0;
    let open_orders = 0;
    let zero_leaves = 0;
    let candidate_count = 0;
    let every_pairs = 0;
    let column_bytes = 0;
    const staging = new EngineStaging();
    const snap_dir = path.join(dir, 'matcher');
    const status = {
      node_id: 'bench', role: 'standby', batch_id, state_root, events_through: batch_id + 1, requests_through: 0, mismatches: 0,
      leader_since_ms: 0, batches_cut: 0, store_fault: null, batch_requests: new BatchRequests().counts, resumed_from_batch_id: -1,
      snapshots_written: 0, snapshot_batch_id: -1, snapshot_capture_ms: 0, snapshots_deferred: 0, requests_purge: requestPurgeStatus(0),
    } satisfies MatcherStatus;
    const snaps = new MatcherSnapshots({ dir: snap_dir, every_batches: 1, keep: 1 }, 'bench', status, engine_config.assets.length);
    // A snapshot due while the previous copy is read: one set (h29w's behaviour), two (h30s's).
    const one_set = new EngineStaging(1);
    const two_sets = new EngineStaging();
    let second_set_first: Timed | null = null;
    for (let r = 0; r < ROUNDS; r++) {
      const [state, capture] = timedSync(() => ex.matcher.captureState());
      const [engine, pack] = timedSync(() => new Uint8Array(encodeEngine(state)));
      const [candidates, candidates_t] = timedSync(() => zeroBalances(state, engine_config.assets.length));
      const [zero, zero_t] = timedSync(() => ex.builder.zeroBalanceLeaves(candidates, 0));
      const [zero_walked, walk_t] = timedSync(() => ex.builder.zeroBalanceLeaves(candidates, Infinity));
      if (zero_walked.length !== zero.length) throw new Error(`zero balance leaves: ${zero.length} looked up, ${zero_walked.length} walked`);
      candidate_count = candidates.length;
      // The lookup's cost over many pairs (every account's every asset; most are leaves, not zero ones).
      const every_pair: [number, number][] = [];
      for (let id = 0; id < state.addresses.length / 20; id++) for (let k = 0; k < engine_config.assets.length; k++) every_pair.push([id, k]);
      const [, every_t] = timedSync(() => ex.builder.zeroBalanceLeaves(every_pair, 0));
      parts.lookup_every_pair.push(every_t);
      every_pairs = every_pair.length;
      const [file, file_t] = timedSync(() => Buffer.from(encodeSnapshot({
        batch_id, batch_time_ms: time_ms, state_root, zero_balance_leaves: zero, created_ms: Date.now(), cluster: { events_through: batch_id + 1, requests_through: 0 },
      }, engine, null)));
      // What confirmed() did before h29w, as one block (its parts above are each timed alone, warm).
      const [, old_confirmed] = timedSync(() => {
        const st = ex.matcher.captureState();
        const e = new Uint8Array(encodeEngine(st));
        const z = ex.builder.zeroBalanceLeaves(zeroBalances(st, engine_config.assets.length));
        return Buffer.from(encodeSnapshot({
          batch_id, batch_time_ms: time_ms, state_root, zero_balance_leaves: z, created_ms: Date.now(), cluster: { events_through: batch_id + 1, requests_through: 0 },
        }, e, null));
      });
      parts.old_confirmed.push(old_confirmed);
      // Today's: the single process's matcher thread (its whole pause), then the writer's share here.
      const [staged, take_t] = timedSync(() => staging.take(ex.matcher));
      if (staged === null) throw new Error('the kept buffers are held');
      const [engine2, staged_walk_t] = timedSync(() => stagedEngineBytes(staged));
      if (!Buffer.from(engine2).equals(Buffer.from(engine))) throw new Error('engine part from the column copies differs from captureState\'s');
      parts.staging_take.push(take_t);
      parts.writer_walk_pack.push(staged_walk_t);
      column_bytes = Object.values(staged.columns).reduce((n: number, v) => n + (ArrayBuffer.isView(v) ? v.byteLength : 0), 0) +
        staged.columns.side_levels.reduce((n, x) => n + x.byteLength, 0) + staged.addresses.byteLength;
      // The cluster matcher's confirmed(): the copies, the zero balance leaves, the post.
      const [, confirmed] = timedSync(() => snaps.confirmed({
        batch_id, time_ms, requests_through: 0, input_records: 0, state_root, fills_root: '', leader: 'bench',
      }, batch_id + 1, 0, state_root, ex));
      await snaps.idle();
      const written = path.join(snap_dir, snapshotFileName(batch_id));
      const f = readSnapshotFile(written);
      const expected = encodeSnapshot({ batch_id, batch_time_ms: time_ms, state_root, zero_balance_leaves: zero, created_ms: f.created_ms,
        cluster: { events_through: batch_id + 1, requests_through: 0 } }, engine, null);
      if (!fs.readFileSync(written).equals(Buffer.from(expected))) throw new Error('the writer thread\'s file differs from encodeSnapshot\'s');
      // The single process's matcher at a snapshot due while the previous copy is being written.
      const previous_one = one_set.take(ex.matcher);
      if (previous_one === null) throw new Error('one set: free at the round\'s start');
      const [, fallback_t] = timedSync(() => {
        // What matcher_worker.ts snapshot() did then: take() declines, the walk and the packing here.
        if (one_set.take(ex.matcher) !== null) throw new Error('one set: handed out while held');
        return new Uint8Array(encodeEngine(ex.matcher.captureState()));
      });
      releaseStaged(previous_one);
      parts.busy_fallback.push(fallback_t);
      const previous_two = two_sets.take(ex.matcher);
      if (previous_two === null) throw new Error('two sets: free at the round\'s start');
      const [second, second_t] = timedSync(() => two_sets.take(ex.matcher));
      if (second === null) throw new Error('two sets: the second set was not handed out');
      if (!Buffer.from(stagedEngineBytes(second)).equals(Buffer.from(engine))) throw new Error('engine part from the second set differs from captureState\'s');
      releaseStaged(previous_two);
      if (second_set_first === null) second_set_first = second_t;
      else parts.busy_second_set.push(second_t);
      // h31f: both sets held (two snapshots in flight), a snapshot due: deferred, then taken.
      const held = [two_sets.take(ex.matcher), two_sets.take(ex.matcher)];
      if (held.includes(null)) throw new Error('two sets: not both free at the round\'s start');
      const [deferred, defer_t] = timedSync(() => two_sets.takeDue(ex.matcher, true));
      if (deferred !== null || two_sets.waiting_since !== batch_id) throw new Error('both sets held: not deferred');
      const [, retries_t] = timedSync(() => {
        for (let i = 0; i < RETRY_CALLS; i++) if (two_sets.takeDue(ex.matcher, false) !== null) throw new Error('both sets held: taken');
      });
      releaseStaged(held[0] as StagedEngine);
      const [late, late_t] = timedSync(() => two_sets.takeDue(ex.matcher, false));
      if (late === null) throw new Error('a set free: the deferred snapshot was not taken');
      if (!Buffer.from(stagedEngineBytes(late)).equals(Buffer.from(engine))) throw new Error('the deferred copy differs from captureState\'s');
      releaseStaged(held[1] as StagedEngine);
      parts.both_held_defer.push(defer_t);
      parts.both_held_retries.push(retries_t);
      parts.deferred_take.push(late_t);
      parts.capture.push(capture);
      parts.pack.push(pack);
      parts.candidates.push(candidates_t);
      parts.zero_leaves_lookup.push(zero_t);
      parts.zero_leaves_walk.push(walk_t);
      parts.file.push(file_t);
      parts.confirmed.push(confirmed);
      bytes = file.length;
      open_orders = state.canonical.markets.reduce((n, m) => n + m.bids.length + m.asks.length, 0);
      zero_leaves = zero.length;
    }
    const out: Record<string, number | string> = {
      bench: 'matcher_snapshot', requests: REQUESTS, accounts: ACCOUNTS, batch_id, open_orders, leaves: ex.builder.leafCount(), zero_leaves, zero_balances: candidate_count, bytes, rounds: ROUNDS,
    };
    for (const [k, v] of Object.entries(parts)) {
      out[`${k}_wall_ms`] = medianTenth(v.map((x) => x.wall_ms));
      out[`${k}_cpu_ms`] = medianTenth(v.map((x) => x.cpu_ms));
    }
    // What sets LOOKUP_COST_IN_LEAVES_WALKED (src/da/state_root.ts): CPU microseconds per lookup and per leaf walked.
    out.lookup_pairs = every_pairs;
    out.lookup_cpu_us_each = Math.round(1000 * (out.lookup_every_pair_cpu_ms as number) / every_pairs * 100) / 100;
    out.walk_cpu_us_per_leaf = Math.round(1000 * (out.zero_leaves_walk_cpu_ms as number) / ex.builder.leafCount() * 100) / 100;
    out.column_bytes = column_bytes;
    out.busy_second_set_first_wall_ms = Math.round((second_set_first?.wall_ms ?? 0) * 10) / 10;
    out.busy_second_set_first_cpu_ms = Math.round((second_set_first?.cpu_ms ?? 0) * 10) / 10;
    out.sets_allocated = two_sets.sets_allocated;
    out.both_held_defer_wall_us = medianTenth(parts.both_held_defer.map((x) => x.wall_ms * 1000));
    out.both_held_retry_cpu_us = Math.round(1000 * (out.both_held_retries_cpu_ms as number) / RETRY_CALLS * 1000) / 1000;
    out.both_held_retry_wall_us = Math.round(1000 * (out.both_held_retries_wall_ms as number) / RETRY_CALLS * 1000) / 1000;
    out.snapshots_written = status.snapshots_written;
    await snaps.close();
    out.node = process.version;
    out.load_avg_1m = Math.round(os.loadavg()[0] * 10) / 10;
    console.log(`snapshot pause at batch ${batch_id} (${open_orders} open orders, ${ex.builder.leafCount()} leaves, ${bytes} bytes): ` +
      `confirmed() before h29w ${out.old_confirmed_wall_ms} ms wall / ${out.old_confirmed_cpu_ms} ms CPU, now ${out.confirmed_wall_ms} / ${out.confirmed_cpu_ms}; ` +
      `single process matcher: captureState+pack ${Math.round(((out.capture_cpu_ms as number) + (out.pack_cpu_ms as number)) * 10) / 10} ms CPU, now copies ${out.staging_take_cpu_ms}; ` +
      `due while the previous is written: one set ${out.busy_fallback_wall_ms} ms wall / ${out.busy_fallback_cpu_ms} CPU, two sets ${out.busy_second_set_wall_ms} / ${out.busy_second_set_cpu_ms} ` +
      `(first, allocating: ${out.busy_second_set_first_wall_ms} / ${out.busy_second_set_first_cpu_ms}); ` +
      `both held (h31f): deferred ${out.both_held_defer_wall_us} us wall, a retry ${out.both_held_retry_wall_us} us, ` +
      `taken once a set is free ${out.deferred_take_wall_ms} / ${out.deferred_take_cpu_ms} (median of ${ROUNDS})`);
    console.log(JSON.stringify(out));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
