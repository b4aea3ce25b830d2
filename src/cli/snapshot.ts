// `ringbook snapshot`: re-executes the journal offline with the real engine (`ringbook replay`)
// and writes, at its last batch, the same snapshot file a running server writes (format in
// src/snapshot/snapshot_file.ts): the engine's canonical state and account addresses, the front's
// read model and market data rebuilt from the replayed events, the zero balance leaves, the batch
// and its state root. A server started on the data directory resumes from it. Written atomically.
// It needs the journal from batch 1 (a journal trimmed by a server with `journal.trim` cannot be
// replayed offline; that server's own snapshots are the ones to use).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import type { CanonicalState } from '../engine/api.js';
import { stateDigest } from '../engine/state.js';
import { ReadModel, readModelLimits } from '../read_model/read_model.js';
import { MarketData } from '../marketdata/market_data.js';
import { encodeFront } from '../snapshot/front_state.js';
import {
  decodeEngine, decodeSnapshot, encodeEngine, encodeSnapshot, snapshotFileName, writeFileAtomic,
} from '../snapshot/snapshot_file.js';
import { replayJournal } from './replay.js';

export interface WrittenSnapshot {
  file: string;
  bytes: number;
  batch_id: number;
  state_root: string;
  /** keccak256 of the canonical JSON of the engine state (src/engine/state.ts). */
  engine_digest: string;
}

export async function writeSnapshot(data_dir: string): Promise<WrittenSnapshot> {
  const cfg = loadConfig();
  const rm = new ReadModel(cfg.assets.map((a) => a.symbol), readModelLimits(cfg.limits));
  const md = new MarketData(rm, { leaderboard_trades_max: cfg.limits.leaderboard_trades_max });
  // Market data observes what the read model decodes, as on the server.
  rm.observe([md]);
  let engine: { canonical: CanonicalState; addresses: Uint8Array } | null = null;
  const r = replayJournal(data_dir, {
    onEvent: (e) => rm.apply(e),
    atEnd: (executor) => {
      engine = executor.matcher.captureState();
    },
  });
  if (engine === null) throw new Error('replay produced no state');
  const state = engine as { canonical: CanonicalState; addresses: Uint8Array };
  const bytes = encodeSnapshot({
    batch_id: r.last_batch_id, batch_time_ms: rm.batch_time_ms, state_root: r.state_root,
    zero_balance_leaves: rm.zeroBalanceLeaves(), created_ms: Date.now(),
  }, new Uint8Array(encodeEngine(state)), encodeFront(rm, md));
  const dir = path.join(data_dir, 'snapshots');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, snapshotFileName(r.last_batch_id));
  await writeFileAtomic(file, bytes);
  return { file, bytes: bytes.length, batch_id: r.last_batch_id, state_root: r.state_root, engine_digest: stateDigest(state.canonical) };
}

/** Reads a snapshot file's bytes (format and digest checked) with its engine part decoded. */
export function readSnapshot(bytes: Uint8Array): ReturnType<typeof decodeSnapshot> & { engine_state: ReturnType<typeof decodeEngine> } {
  const s = decodeSnapshot(bytes);
  return { ...s, engine_state: decodeEngine(s.engine) };
}
