// Which snapshot a starting server resumes from (docs/operations.md, "Recovery"). Newest first,
// a snapshot is used when:
// - its file decodes and its digest matches (else it is reported as corrupt: a torn or altered
//   file is never used);
// - it has the front's part (the read model's history cannot be rebuilt from the engine state);
// - the DA store already holds its batch (batches up to it will not be replayed, so they could not
//   be published later) and, when it records a root, that root is the published one;
// - the journal continues it: it holds every batch after it (a journal trimmed through an older
//   batch is fine; one trimmed past the snapshot is not).
// Every rejected file is reported with its reason; with none usable the server starts from
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

export interface RecoveryChoice {
  snapshot: SnapshotFile | null;
  file: string | null;
  rejected: { file: string; reason: string }[];
}

export class RecoveryImpossible extends Error {
  override name = 'RecoveryImpossible';
}

export function chooseSnapshot(dir: string, facts: RecoveryFacts): RecoveryChoice {
  const rejected: { file: string; reason: string }[] = [];
  for (const { batch_id, file } of listSnapshots(dir)) {
    let s: SnapshotFile;
    try {
      s = decodeSnapshot(readFileSync(file));
    } catch (e) {
      rejected.push({ file, reason: `corrupt: ${(e as Error).message}` });
      continue;
    }
    const reason = unusable(s, batch_id, facts);
    if (reason !== null) {
      rejected.push({ file, reason });
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

function unusable(s: SnapshotFile, named_batch_id: number, f: RecoveryFacts): string | null {
  const n = s.batch_id;
  if (n !== named_batch_id) return `file name says batch ${named_batch_id}, contents batch ${n}`;
  if (s.front === null) return 'engine-only snapshot (no read model part)';
  if (n > f.published_last) return `batch ${n} is not in the DA store yet (it holds up to ${f.published_last})`;
  const published = n === 0 ? undefined : f.publishedRoot(n);
  if (n > 0 && published === undefined) return `batch ${n} missing from the DA store`;
  if (s.state_root !== null && published !== undefined && s.state_root !== published) {
    return `its state root ${s.state_root} is not the published root ${published} of batch ${n}`;
  }
  const empty = f.journal_first === 0;
  if (!empty && f.journal_first > n + 1) return `the journal starts at batch ${f.journal_first}, after batch ${n + 1}`;
  if (!empty && f.journal_last < n) return `the journal ends at batch ${f.journal_last}, before the snapshot`;
  return null;
}
