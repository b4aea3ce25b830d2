// The server's start-up side of snapshots: gathers what recovery depends on (journal range, DA
// store range and published roots), picks the snapshot (src/snapshot/recovery.ts), reports every
// file it had to pass over, and splits the chosen one into what each thread restores: the engine
// part for the matcher, the front part for the read model, and the DA thread's restore request
// (engine part, zero balance leaves, the published root it must reproduce).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { RingbookConfig } from '../config/types.js';
import { LmdbDaStore } from '../da/da_store.js';
import { JournalReader } from '../da/journal_reader.js';
import type { DaRestore } from '../da/da_interfaces.js';
import { decodeFront, type FrontState } from './front_state.js';
import { chooseSnapshot } from './recovery.js';
import { pruneSnapshots } from './snapshot_file.js';
import { componentLog } from '../util/log.js';

const log = componentLog('snapshot');

export interface ResumePlan {
  batch_id: number;
  file: string;
  engine: Uint8Array;
  front: FrontState;
  da: DaRestore;
}

/** The snapshot to resume from, or null to start from genesis. Throws when neither is possible. */
export async function loadRecoverySnapshot(cfg: RingbookConfig, journal_dir: string, snapshots_dir: string): Promise<ResumePlan | null> {
  const da_dir = path.resolve(cfg.server.data_dir, 'da');
  mkdirSync(da_dir, { recursive: true });
  // Leftover temporary files of a write a crash interrupted; nothing else is deleted here.
  pruneSnapshots(snapshots_dir, Number.MAX_SAFE_INTEGER);
  const journal = JournalReader.open(journal_dir);
  const store = LmdbDaStore.open(da_dir, { reader: true });
  try {
    const facts = {
      journal_first: journal.firstBatchId(),
      journal_last: journal.lastBatchId(),
      published_last: store.latest(),
      publishedRoot: (id: number) => store.get(id)?.header.state_root,
    };
    const choice = chooseSnapshot(snapshots_dir, facts);
    for (const r of choice.rejected) {
      const line = `ringbook: snapshot ${r.file} not used: ${r.reason}`;
      const fields = { file: r.file, kind: r.kind };
      // A snapshot ahead of the DA store is what a kill -9 or a power loss normally leaves (the
      // store flushes lazily, src/da/da_store_sync.ts): the older one is used and the store's tail
      // rebuilt from the journal, nothing to act on. Logged at error, it read as a failed restore.
      if (r.kind === 'ahead') log.info(line, fields);
      else if (r.kind === 'engine_only') log.warn(line, fields);
      else log.error(line, undefined, fields);
    }
    const s = choice.snapshot;
    if (s === null || choice.file === null || s.front === null) return null;
    return {
      batch_id: s.batch_id,
      file: choice.file,
      engine: s.engine,
      front: decodeFront(s.front),
      da: {
        batch_id: s.batch_id, engine: s.engine, zero_balance_leaves: s.zero_balance_leaves,
        expected_root: s.batch_id === 0 ? s.state_root : facts.publishedRoot(s.batch_id) ?? null,
      },
    };
  } finally {
    await journal.close();
    await store.close();
  }
}
