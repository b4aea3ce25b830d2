// What a normal restore logs: after a kill -9 the DA store may lack its newest commits (it
// flushes lazily, src/da/da_store_sync.ts), so the newest snapshot is ahead of it and passed over
// for an older one. That is expected: logged at info, never error or warn, which an operator (and
// a log alert) reads as a failed restore. A clean stop and restart logs no error either. A corrupt
// snapshot stays at error (test/snapshot/server.test.ts).
import path from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { DA_STORE_LMDB_OPTIONS } from '../../src/da/da_store.js';
import { listSnapshots } from '../../src/snapshot/snapshot_file.js';
import { caughtUpState, startServer, type StartedServer } from '../server/harness.js';
import { fund, snapshotWritten, trade } from './traffic.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const dataDir = tempDirsPerFile('ringbook-restore-log-');
const EVERY = 3;

let live: StartedServer | null = null;
afterEach(async () => {
  if (live !== null && live.proc.exitCode === null && live.proc.signalCode === null) await live.stop('SIGKILL');
  live = null;
});

interface LogLine {
  level: string;
  msg: string;
}

/** The server's JSON log lines, stdout and stderr. */
function logLines(s: StartedServer): LogLine[] {
  const { stdout, stderr } = s.output();
  const out: LogLine[] = [];
  for (const line of `${stdout}\n${stderr}`.split('\n')) {
    if (!line.startsWith('{')) continue;
    out.push(JSON.parse(line) as LogLine);
  }
  return out;
}

/** What a crash leaves of the DA store: its batches after `keep` gone (as in da_store_tail_rebuild.test.ts). */
async function cutDaTail(dir: string, keep: number): Promise<void> {
  const root = open({ path: dir, ...DA_STORE_LMDB_OPTIONS });
  const batches = root.openDB<unknown, number>({ name: 'batches', encoding: 'msgpack', keyEncoding: 'uint32' });
  const order_fills = root.openDB<number, [number, number]>({ name: 'order_fills', encoding: 'msgpack', keyEncoding: 'ordered-binary' });
  root.transactionSync(() => {
    for (const id of [...batches.getKeys({ start: keep + 1 })]) void batches.remove(id);
    for (const { key, value } of [...order_fills.getRange()]) if (value > keep) void order_fills.remove(key);
  });
  await root.close();
}

describe('a normal restore logs no error', () => {
  it('after kill -9 with the newest snapshot ahead of the DA store, and after a clean stop', async () => {
    const data_dir = dataDir();
    const env = { RINGBOOK_DATA_DIR: data_dir };
    const config = { snapshots: { every_batches: EVERY, keep: 3 } };
    let s = (live = await startServer({ env, config }));
    const t = await fund(s);
    await trade(s, t, 6, 'r1');
    const st = await caughtUpState(s);
    await snapshotWritten(s, Math.floor(Number(st.batch_id) / EVERY) * EVERY);
    await s.stop('SIGKILL');

    const [newest, older] = listSnapshots(path.join(data_dir, 'snapshots'));
    await cutDaTail(path.join(data_dir, 'da'), newest.batch_id - 1);
    s = live = await startServer({ env, config });
    const after = await caughtUpState(s);
    expect(after.recovery).toMatchObject({ snapshot_batch_id: older.batch_id });
    expect(after.state_root).toBe(st.state_root);
    const lines = logLines(s);
    const passed = lines.filter((l) => l.msg.includes(`${path.basename(newest.file)} not used: batch ${newest.batch_id} is not in the DA store yet`));
    expect(passed.map((l) => l.level)).toEqual(['info']);
    expect(lines.filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    expect(lines.filter((l) => l.level === 'warn' && l.msg.includes('snapshot'))).toEqual([]);
    expect((await s.stop('SIGTERM')).code).toBe(0);

    s = live = await startServer({ env, config });
    await caughtUpState(s);
    expect(logLines(s).filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
    expect((await s.stop('SIGTERM')).code).toBe(0);
  }, 120_000);
});
