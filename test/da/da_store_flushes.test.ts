// The DA store's flushes per commit (issue 11, src/da/da_store_sync.ts): its commits share the
// journal's disk, and each flush it asks for queues with the journal's commit that every answer
// waits for. LMDB's durable commit flushes twice (fdatasync of the data pages, then the meta page
// written through an O_DSYNC descriptor); the DA store's (noMetaSync) flushes once and leaves
// its meta page to the next flush. Counted from outside with strace (a child process commits
// between two marker files), not timed. Plus the flushes that bound what a crash can undo: the
// idle sync, durableLatest, close.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LmdbDaStore } from '../../src/da/da_store.js';
import { REPO_ROOT } from '../server/harness.js';
import { batch } from './store_batches.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tempDir = tempDirsPerFile('ringbook-da-flushes-');
const HAS_STRACE = spawnSync('strace', ['-V']).status === 0;
const COMMITS = 20;

interface Counted {
  commits: number;
  fdatasyncs: number;
  dsync_writes: number;
}

/** Runs the child under strace; counts its fdatasyncs and writes on an O_DSYNC descriptor between BEGIN and END. */
function countChild(dir: string): Counted {
  const trace = path.join(dir, 'strace.txt');
  const r = spawnSync('strace', ['-f', '-o', trace, '-e', 'trace=openat,fdatasync,fsync,pwrite64,pwritev,write',
    process.execPath, path.join(REPO_ROOT, 'dist', 'test', 'da', 'da_store_commits_child.js'), dir, String(COMMITS)], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  const dsync_fds = new Set<string>();
  let counting = false;
  let fdatasyncs = 0;
  let dsync_writes = 0;
  for (const line of fs.readFileSync(trace, 'utf8').split('\n')) {
    const opened = /openat\([^"]*"([^"]+)", ([A-Z_|]+).*= (\d+)$/.exec(line);
    if (opened !== null) {
      if (opened[1].endsWith('/BEGIN')) counting = true;
      if (opened[1].endsWith('/END')) counting = false;
      if (opened[2].includes('O_DSYNC') || opened[2].includes('O_SYNC')) dsync_fds.add(opened[3]);
      continue;
    }
    if (!counting) continue;
    if (/\b(fdatasync|fsync)\(/.test(line)) fdatasyncs++;
    const w = /\b(pwrite64|pwritev|write)\((\d+),/.exec(line);
    if (w !== null && dsync_fds.has(w[2])) dsync_writes++;
  }
  return { commits: (JSON.parse(r.stdout.trim()) as { commits: number }).commits, fdatasyncs, dsync_writes };
}

describe('DA store: flushes per commit', () => {
  it.skipIf(!HAS_STRACE)('flushes once per commit (data pages), never through the O_DSYNC meta descriptor', () => {
    const c = countChild(tempDir());
    expect(c.commits).toBe(COMMITS);
    // Before (LMDB's durable commit): one O_DSYNC meta write per commit, a device flush each.
    expect(c.dsync_writes).toBe(0);
    expect(c.fdatasyncs).toBe(COMMITS);
  }, 90_000);

  it('flushes the last commit after an idle interval, for durableLatest, and at close', async () => {
    const dir = tempDir();
    const store = LmdbDaStore.open(dir, { commit_interval_ms: 0, sync_commits: true, idle_sync_ms: 10 });
    await store.submit(batch(1));
    await store.submit(batch(2));
    for (let i = 0; i < 500 && store.env_syncs === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(store.env_syncs).toBe(1); // one per quiet interval, not one per commit
    const reader = LmdbDaStore.open(dir, { reader: true });
    expect(await reader.durableLatest()).toBe(2);
    expect(reader.env_syncs).toBe(1);
    await reader.close();
    expect(reader.env_syncs).toBe(1); // a reader has no commit of its own to flush
    expect(await store.durableLatest()).toBe(2);
    const before = store.env_syncs;
    await store.close();
    expect(store.env_syncs).toBe(before + 1);
  });
});
