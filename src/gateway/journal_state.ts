// What operators see of the journal's writes (docs/operations.md, "A journal write fails"): while
// a write fails and is retried (disk full, I/O error) the front refuses new writes with 503
// OVERLOADED (context.ts writeRefusal), GET /health answers 503 (routes_public.ts healthCheck),
// GET /admin/state `journal` says since when and why, and ringbook_journal_failing is 1. The
// matcher thread retries by itself; once a write lands all of it turns back.
import { statSync } from 'node:fs';
import path from 'node:path';
import type { AdminJournal } from '../client/types.js';
import type { JournalFault } from '../journal/journal.js';

/** One stretch of failing writes: its first error, when it began and when a retry landed (null: still failing). */
export interface JournalFaultEpisode extends JournalFault {
  since_ms: number;
  recovered_ms: number | null;
}

/**
 * GET /admin/state `journal` (null when this process keeps no journal: pipeline tests). A cluster
 * gateway shows the leader matcher's store into the event stream here (its status messages,
 * src/cluster/matcher_status.ts): failing while the leader's batch is not stored. The fields are
 * the SDK's AdminJournal (client/types.ts), the one declaration of this answer's shape.
 */
export type JournalState = AdminJournal;

/** The fields of MatcherLink that follow the matcher thread's journal_fault messages (or the cluster leader's store faults). */
export interface JournalFaultSource {
  readonly journal_fault: JournalFault | null;
  /** While `journal_fault` is set, the current stretch (since_ms: when it began). */
  readonly journal_last_fault: JournalFaultEpisode | null;
  readonly journal_faults: number;
}

export function journalState(link: JournalFaultSource): JournalState {
  const failing = link.journal_fault;
  const last = link.journal_last_fault;
  return {
    status: failing === null ? 'ok' : 'failing',
    failing_since_ms: failing === null ? null : last?.since_ms ?? null,
    failing_batch_id: failing === null ? null : failing.batch_id,
    last_error: last === null ? null : last.message,
    last_error_batch_id: last === null ? null : last.batch_id,
    last_error_at_ms: last === null ? null : last.since_ms,
    recovered_at_ms: last === null ? null : last.recovered_ms,
    faults: link.journal_faults,
  };
}

/**
 * The journal's files, what GET /admin/state `journal_bytes` adds up: LMDB's data file and the
 * write-ahead file (docs/operations.md, "Data directory": one journal, copied together). LMDB's
 * lock.mdb holds no data (readers' slots) and is left out.
 */
export const JOURNAL_FILES = ['data.mdb', 'wal.log'] as const;

/**
 * GET /admin/state `journal_bytes`: the journal's size on disk as its files' lengths (what a copy
 * of journal/ takes; LMDB's file only grows: a trim frees pages for reuse, it does not shrink the
 * file). Two stat calls on the front thread per admin request, no read. A file not there yet
 * counts 0.
 */
export function journalBytes(journal_dir: string): number {
  let bytes = 0;
  for (const name of JOURNAL_FILES) bytes += statSync(path.join(journal_dir, name), { throwIfNoEntry: false })?.size ?? 0;
  return bytes;
}
