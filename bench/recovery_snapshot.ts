// Phase 6 of bench/recovery.ts: a snapshot of the replayed journal as the server takes one, and a
// recovery from it (see the header of recovery.ts). Throws if the state root rebuilt from the
// snapshot's canonical state differs from the replayed one.
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../src/config/load.js';
import { engineConfigOf } from '../src/config/read.js';
import { leavesFromCanonical } from '../src/da/canonical_leaves.js';
import { ReplayExecutor } from '../src/da/replay.js';
import { StateRootBuilder } from '../src/da/state_root.js';
import { restoreFastEngine } from '../src/engine/engine.js';
import { Matcher } from '../src/matcher/matcher.js';
import { ReadModel, readModelLimits } from '../src/read_model/read_model.js';
import { Journal } from '../src/journal/journal.js';
import { MarketData } from '../src/marketdata/market_data.js';
import { createRecordRing } from '../src/ring/records.js';
import { decodeFront, exportFront, importFront, packFront } from '../src/snapshot/front_state.js';
import {
  addressesHex, decodeEngine, encodeEngine, encodeSnapshot, readSnapshotFile, snapshotFileName, writeFileAtomic,
} from '../src/snapshot/snapshot_file.js';

export interface SnapshotFigures {
  batch_id: number;
  bytes: number;
  open_orders: number;
  accounts: number;
  capture_ms: number;
  pack_ms: number;
  /** The front thread's pause: export into columns. */
  front_ms: number;
  /** Packing the front part (the server does it on the writer thread) and writing. */
  front_pack_ms: number;
  write_ms: number;
  read_ms: number;
  engine_restore_ms: number;
  front_restore_ms: number;
  leaves_root_ms: number;
  leaves: number;
}

export async function snapshotPhase(journal_dir: string): Promise<SnapshotFigures> {
  const cfg = loadConfig({});
  const engine_config = engineConfigOf(cfg);
  const assets = engine_config.assets;
  const limits = readModelLimits(cfg.limits);
  const md_options = { leaderboard_trades_max: cfg.limits.leaderboard_trades_max };
  const rm = new ReadModel(assets, limits);
  const md = new MarketData(rm, md_options);
  rm.observe([md]);
  const exec = new ReplayExecutor(engine_config, {
    state_root: 'deferred', event_ring_slots: 1 << 14, onEvent: (e) => rm.apply(e),
  });
  exec.genesis();
  const journal = Journal.open(journal_dir);
  let batch_id = 0;
  for (const b of journal.read(1)) {
    exec.apply(b.batch_id, b.time_ms, b.records, b.count);
    batch_id = b.batch_id;
  }
  await journal.close();
  const root = exec.finishDeferred().state_root;

  // Taking it: the matcher's part, the front's part, the write.
  let t = performance.now();
  const state = exec.matcher.captureState();
  const capture_ms = performance.now() - t;
  t = performance.now();
  const engine_bytes = new Uint8Array(encodeEngine(state));
  const pack_ms = performance.now() - t;
  t = performance.now();
  const front_state = exportFront(rm, md);
  const zero_balance_leaves = rm.zeroBalanceLeaves();
  const front_ms = performance.now() - t;
  t = performance.now();
  const front_bytes = packFront(front_state);
  const front_pack_ms = performance.now() - t;
  t = performance.now();
  const file = path.join(journal_dir, snapshotFileName(batch_id));
  const bytes = encodeSnapshot({ batch_id, batch_time_ms: rm.batch_time_ms, state_root: root, zero_balance_leaves, created_ms: Date.now() }, engine_bytes, front_bytes);
  await writeFileAtomic(file, bytes);
  const write_ms = performance.now() - t;

  // Recovering from it.
  t = performance.now();
  const snap = readSnapshotFile(file);
  const read_ms = performance.now() - t;
  t = performance.now();
  const engine_part = decodeEngine(snap.engine);
  const engine = restoreFastEngine(engine_config, engine_part.canonical);
  new Matcher(engine, null, createRecordRing(16), { batch_requests_max: 1, accounts_max: engine_config.limits.accounts_max, now_ms: () => 0 })
    .resume(batch_id, engine_part.addresses, engine_part.canonical.batch_time_ms);
  const engine_restore_ms = performance.now() - t;
  t = performance.now();
  const rm2 = new ReadModel(assets, limits);
  importFront(rm2, new MarketData(rm2, md_options), decodeFront(snap.front as Uint8Array));
  const front_restore_ms = performance.now() - t;
  t = performance.now();
  const canonical = decodeEngine(snap.engine);
  const leaves = leavesFromCanonical({ canonical: canonical.canonical, addresses: addressesHex(canonical.addresses), zero_balance_leaves: snap.zero_balance_leaves, assets });
  const restored_root = new StateRootBuilder(assets).restore(leaves, batch_id);
  const leaves_root_ms = performance.now() - t;
  if (restored_root !== root) throw new Error(`snapshot root ${restored_root} differs from the replayed root ${root}`);
  fs.rmSync(file, { force: true });
  return {
    batch_id, bytes: bytes.length, accounts: state.addresses.length / 20 - 1,
    open_orders: state.canonical.markets.reduce((n, m) => n + m.bids.length + m.asks.length, 0),
    capture_ms, pack_ms, front_ms, front_pack_ms, write_ms, read_ms, engine_restore_ms, front_restore_ms, leaves_root_ms, leaves: leaves.entries.length,
  };
}
