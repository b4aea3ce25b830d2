// Child of da_store_flushes.test.ts, run under strace: opens a DA store writer as the DA worker
// does (commit per hand-over, on the calling thread), then between two marker files (BEGIN, END:
// their openat lines delimit the count) commits COMMITS groups of one batch each. No idle sync
// (its interval is longer than the run) and no close (close flushes): only the commits' own flushes.
//   node dist/test/da/da_store_commits_child.js <dir> <commits>
import fs from 'node:fs';
import path from 'node:path';
import { LmdbDaStore } from '../../src/da/da_store.js';
import { batch } from './store_batches.js';

const [dir, commits_arg] = process.argv.slice(2);
const COMMITS = Number(commits_arg);
if (dir === undefined || !Number.isInteger(COMMITS) || COMMITS < 1 || COMMITS > 1000) throw new Error('usage: <dir> <commits 1..1000>');

async function main(): Promise<void> {
  const store = LmdbDaStore.open(path.join(dir, 'da'), { commit_interval_ms: 0, sync_commits: true, idle_sync_ms: 600_000 });
  await store.submit(batch(1)); // the first commit writes the databases' records too: before BEGIN
  fs.closeSync(fs.openSync(path.join(dir, 'BEGIN'), 'w'));
  for (let id = 2; id < 2 + COMMITS; id++) await store.submit(batch(id));
  fs.closeSync(fs.openSync(path.join(dir, 'END'), 'w'));
  process.stdout.write(JSON.stringify({ commits: store.commits - 1, env_syncs: store.env_syncs }) + '\n');
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
