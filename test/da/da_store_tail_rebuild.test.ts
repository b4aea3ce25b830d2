// A DA store missing its newest commits, as an OS crash can leave it (src/da/da_store_sync.ts:
// noMetaSync lets a crash undo the last commit, whole, the tree intact): the restart publishes the
// missing tail again from the journal (src/da/publisher.ts: batches after the store's last are
// submitted as the replay reaches them), byte for byte what was served before, with the same
// roots and the same fills index (/orders/:id/da-proof). The crash's state is made by taking the
// tail out of a killed server's `da/` with ordinary LMDB commits: what a crash leaves is the
// store as of an earlier commit, which is that.
import path from 'node:path';
import { open } from 'lmdb';
import { afterEach, describe, expect, it } from 'vitest';
import { DA_STORE_LMDB_OPTIONS, LmdbDaStore } from '../../src/da/da_store.js';
import { api, caughtUpState, startServer, type StartedServer } from '../server/harness.js';
import { fund, trade } from '../snapshot/traffic.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tempDir = tempDirsPerFile('ringbook-da-tail-');
/** Batches taken off the store's end: more than one DA commit's worth at this test's pace. */
const TAIL_BATCHES = 12;

/** The server a failing assertion would leave running: killed after each test. */
let live: StartedServer | null = null;
afterEach(async () => {
  if (live !== null && live.proc.exitCode === null && live.proc.signalCode === null) await live.stop('SIGKILL');
  live = null;
});

/** GET /da/batches/:id as raw text for ids [1, last] (all must be there). */
async function batchTexts(s: StartedServer, last: number): Promise<string[]> {
  const a = api(s.url);
  const out: string[] = [];
  for (let id = 1; id <= last; id++) {
    const r = await a.get(`/da/batches/${id}`);
    expect(r.status, `batch ${id}`).toBe(200);
    out.push(r.text);
  }
  return out;
}

/** GET /orders/:id/da-proof of each order, status and raw text (an order with no fill answers 404). */
async function proofs(s: StartedServer, orders: readonly number[]): Promise<string[]> {
  const a = api(s.url);
  const out: string[] = [];
  for (const id of orders) {
    const r = await a.get(`/orders/${id}/da-proof`);
    out.push(`${r.status} ${r.text.replace(/"request_id":"[^"]*"/, '')}`);
  }
  return out;
}

/** Removes batches after `keep` and their fill rows from the DA store at `dir`; the fill rows removed. */
async function cutTail(dir: string, keep: number): Promise<number> {
  const root = open({ path: dir, ...DA_STORE_LMDB_OPTIONS });
  const batches = root.openDB<unknown, number>({ name: 'batches', encoding: 'msgpack', keyEncoding: 'uint32' });
  const order_fills = root.openDB<number, [number, number]>({ name: 'order_fills', encoding: 'msgpack', keyEncoding: 'ordered-binary' });
  let rows = 0;
  root.transactionSync(() => {
    for (const id of [...batches.getKeys({ start: keep + 1 })]) void batches.remove(id);
    for (const { key, value } of [...order_fills.getRange()]) {
      if (value > keep) {
        void order_fills.remove(key);
        rows++;
      }
    }
  });
  await root.close();
  return rows;
}

describe('DA store missing its tail', () => {
  it('is rebuilt from the journal at the restart: same bytes, roots and fill proofs', async () => {
    const data_dir = tempDir();
    const env = { RINGBOOK_DATA_DIR: data_dir };
    let s = (live = await startServer({ env }));
    const t = await fund(s);
    const filled = await trade(s, t, 6, 'tail');
    const st = await caughtUpState(s);
    const last = Number(st.batch_id);
    expect(last).toBeGreaterThan(TAIL_BATCHES + 5);
    const served = await batchTexts(s, last);
    const proved = await proofs(s, filled);
    expect(proved.filter((p) => p.startsWith('200 ')).length).toBeGreaterThanOrEqual(6);
    await s.stop('SIGKILL');

    const da_dir = path.join(data_dir, 'da');
    const keep = last - TAIL_BATCHES;
    const rows_cut = await cutTail(da_dir, keep);
    expect(rows_cut).toBeGreaterThan(0); // the cut tail held fills: the fills index is rebuilt too
    const cut = LmdbDaStore.open(da_dir, { reader: true });
    expect(cut.latest()).toBe(keep);
    expect(cut.get(keep + 1)).toBeUndefined();
    await cut.close();

    s = live = await startServer({ env });
    const after = await caughtUpState(s);
    expect(Number(after.batch_id)).toBe(last);
    expect(after.state_root).toBe(st.state_root);
    expect(after.state_root_rechecks_failed).toBe(0);
    expect(await batchTexts(s, last)).toEqual(served);
    expect(await proofs(s, filled)).toEqual(proved);
    expect((await s.stop()).code).toBe(0);

    const rebuilt = LmdbDaStore.open(da_dir, { reader: true });
    expect(rebuilt.latest()).toBe(last);
    await rebuilt.close();
  }, 120_000);
});
