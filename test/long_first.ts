// The order the suite's files start in. Vitest starts the files it has no record of by size,
// largest first, and a fresh clone (CI) has no record: small files that run long (the crash soak,
// 81 s, is 5 KB) then started last and ran alone on one of the two cores at the end. On the
// fresh-clone run of a29382f the suite's files added up to 819 s of the two cores' time but took
// 476 s of wall time, ~65 s above an even split. Starting the longest first (the classic
// longest-first rule for two machines) leaves only short files for the end.
//
// LONG_FILES_S lists the files that took 15 s or more in that run (seconds, from its log; the
// next run may differ by tens of percent, the order is what matters). A file renamed or deleted
// fails test/architecture/long_first.test.ts, so the list cannot go stale silently. Revised
// 2026-11-29 (late evening): h30t cut trader to ~28 s and chain_link_restart_forced under 15 s;
// h30p's hand-over case took settlement_poster_yield to ~17 s. Files not
// listed keep vitest's own order (by recorded duration when it has one, else by size).
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const LONG_FILES_S: Readonly<Record<string, number>> = {
  'test/journal/soak.test.ts': 81,
  'test/cli/trader.test.ts': 28,
  'test/settlement/settlement_poster_yield.test.ts': 17,
  'test/cluster/nats_tls.test.ts': 24,
  'test/cluster/cluster.test.ts': 20,
  'test/cluster/lease_fence.test.ts': 19,
  'test/engine/differential.test.ts': 17,
  'test/cli/backup.test.ts': 17,
  'test/engine/differential.shard1.test.ts': 17,
  'test/cluster/batch_request_cluster.test.ts': 17,
};

/** Longest listed file first; unlisted files after them, in the order `rest` gives. */
export function longFirst<T>(files: readonly T[], rel: (f: T) => string): T[] {
  const weight = (f: T): number => LONG_FILES_S[rel(f)] ?? 0;
  return files.map((f, i) => ({ f, i })).sort((a, b) => weight(b.f) - weight(a.f) || a.i - b.i).map((x) => x.f);
}

export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    return longFirst(await super.sort(files), (f) => path.relative(root, f.moduleId).split(path.sep).join('/'));
  }
}
