// Which snapshot a starting server resumes from (docs/operations.md, "Recovery"). Newest first,
// a snapshot is used when:
// - its file decodes and its digest matches (else it is reported as corrupt: a torn or altered
//   file is never used);
// - it has the front's part (the read model's history cannot be rebuilt from the engine state);
// - the DA store already holds its batch (batches up to it will not be replayed, so they could not
//   be published later) and, when it records a root, that root is the published one;
// - the journal continues it: it holds every batch after it (a journal trimmed through an older
//   batch is fine; one trimmed past the snapshot is not).
// Every rejected file is reported with its reason and whether it is expected (`ahead`: a snapshot
// beyond the DA store's end, which a crash leaves whenever the store's unflushed tail is lost, and
// the journal rebuilds that tail) or something the operator must look at (`unusable`: a damaged or
// altered file, a root or journal that does not match); with none usable the server starts from
// genesis, which needs the journal from batch 1 (a trimmed journal without a usable snapshot stops
// the start with a message saying so).
import { readFileSync } from 'node:fs';
import { decodeSnapshot, listSnapshots, type SnapshotFile } from './snapshot_file.js';

export interface RecoveryFacts {
  /** Oldest and newest journaled batch (0, 0 when the journal is empty). */
  journal_first: number;
  journal_last: number;
  /** Last batch the DA store holds (0: none). */
  published_last: number;
  /** The published state root of a batch, when the DA store holds it. */
  publishedRoot(batch_id: number): string | undefined;
}

/**
 * Why a snapshot was passed over: `ahead` of the DA store (normal after a crash: the store's last
 * commits were not flushed; an older snapshot or the journal is used and the store's tail is
 * rebuilt), `engine_only` (a cluster matcher's snapshot, without the read model's part: never usable
 * by the server), `unusable` (corrupt, altered, or not matching the published root or the journal:
 * the operator must find out why).
 */
export type RejectionKind = 'ahead' | 'engine_only' | 'unusable';

export interface RejectedSnapshot {
  file: string;
  reason: string;
  kind: RejectionKind;
}

export interface RecoveryChoice {
  snapshot: SnapshotFile | null;
  file: string | null;
  rejected: RejectedSnapshot[];
}

export class RecoveryImpossible extends Error {
  override name = 'RecoveryImpossible';
}

export function chooseSnapshot(dir: string, facts: RecoveryFacts): RecoveryChoice {
  const rejected: RejectedSnapshot[] = [];
  for (const { batch_id, file } of listSnapshots(dir)) {
    let s: SnapshotFile;
    try {
      s = decodeSnapshot(readFileSync(file));
    } catch (e) {
      rejected.push({ file, reason: `corrupt: ${(e as Error).message}`, kind: 'unusable' });
      continue;
    }
    const r = unusable(s, batch_id, facts);
    if (r !== null) {
      rejected.push({ file, ...r });
      continue;
    }
    return { snapshot: s, file, rejected };
  }
  if (facts.journal_first > 1) {
    throw new RecoveryImpossible(
      `the journal starts at batch ${facts.journal_first} (trimmed) and no snapshot continues it` +
      (rejected.length > 0 ? `: ${rejected.map((r) => `${r.file}: ${r.reason}`).join('; ')}` : ' (none found)') +
      // A backup of journal/ and snapshots/ without da/ ends here too: its snapshots are refused
      // (their batch is not in the DA store), so "restore the snapshots" sent the operator to
      // files that were there.
      '; restore the whole data directory from a backup (journal/, da/ and snapshots/ together: a snapshot is used only once da/ holds its batch)');
  }
  return { snapshot: null, file: null, rejected };
}

function unusable(s: SnapshotFile, named_batch_id: number, f: RecoveryFacts): { reason: string; kind: RejectionKind } | null {
  const n = s.batch_id;
  const bad = (reason: string): { reason: string; kind: RejectionKind } => ({ reason, kind: 'unusable' });
  if (n !== named_batch_id) return bad(`file name says batch ${named_batch_id}, contents batch ${n}`);
  if (s.front === null) return { reason: 'engine-only snapshot (no read model part)', kind: 'engine_only' };
  // A cluster gateway's file (src/cluster/gateway_snapshots.ts) has the front part and no engine:
  // the matcher thread could not restore from it.
  if (s.engine.length === 0) return bad('no engine part (a cluster gateway\'s snapshot: never used by this server)');
  if (n > f.published_last) return { reason: `batch ${n} is not in the DA store yet (it holds up to ${f.published_last})`, kind: 'ahead' };
  const published = n === 0 ? undefined : f.publishedRoot(n);
  if (n > 0 && published === undefined) return bad(`batch ${n} missing from the DA store`);
  if (s.state_root !== null && published !== undefined && s.state_root !== published) {
    return bad(`its state root ${s.state_root} is not the published root ${published} of batch ${n}`);
  }
  const empty = f.journal_first === 0;
  if (!empty && f.journal_first > n + 1) return bad(`the journal starts at batch ${f.journal_first}, after batch ${n + 1}`);
  if (!empty && f.journal_last < n) return bad(`the journal ends at batch ${f.journal_last}, before the snapshot`);
  return null;
}
