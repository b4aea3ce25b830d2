// The DA store after kill -9 (docs/verifiability.md, "DA store"): its commits are grouped and
// synced less often than the journal's (it is not on the acknowledgement path and is rebuilt
// from the journal), so a kill can cut off batches that were served (from the in-memory map or a
// commit not yet synced) but not yet durable in `da/`. After the restart every batch served
// before the kill is served again byte for byte, every committed batch is there, and the roots
// recomputed on start agree with the published headers.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ok } from '../server/checks.js';
import { LmdbDaStore } from '../../src/da/da_store.js';
import { adminState, api, caughtUpState, startServer, type StartedServer } from '../server/harness.js';
import { fund } from '../snapshot/traffic.js';
import { tempDirsPerFile } from '../temp_dirs.js';

const tempDir = tempDirsPerFile('ringbook-da-crash-');

/** GET /da/batches/:id as raw text for ids [from, to]; a batch not (yet) published is null. */
async function batchTexts(s: StartedServer, from: number, to: number): Promise<Map<number, string | null>> {
  const a = api(s.url);
  const out = new Map<number, string | null>();
  for (let id = from; id <= to; id++) {
    const r = await a.get(`/da/batches/${id}`);
    expect([200, 404]).toContain(r.status);
    out.set(id, r.status === 200 ? r.text : null);
  }
  return out;
}

describe('DA store across kill -9', () => {
  it('serves every batch again byte for byte after a kill that cuts off its newest commits', async () => {
    const data_dir = tempDir();
    const env = { RINGBOOK_DATA_DIR: data_dir };
    let s = await startServer({ env });
    const t = await fund(s);
    const served = new Map<number, string>();
    let last_committed = 0;
    let cut_rounds = 0;
    for (let round = 0; round < 3; round++) {
      const a = api(s.url);
      // A few crossing orders, each its own batch (one request in flight); then every batch so
      // far as served now (the newest may still wait for their store commit: read from memory).
      for (let i = 0; i < 5; i++) {
        const price = (2000 + i) * 1_000_000;
        ok(await a.post('/orders', t.maker.order({ market_id: 'ETH-USDC', side: 'ask', price, quantity: 100_000 })));
        ok(await a.post('/orders', t.taker.order({ market_id: 'ETH-USDC', side: 'bid', price, quantity: 40_000 })));
      }
      for (const [id, text] of await batchTexts(s, 1, Number((await adminState(s)).batch_id))) if (text !== null) served.set(id, text);
      // A burst in parallel (several requests per batch), answered; the newest batch as served
      // right then, and kill at once: the DA store's commit of these batches is still to come.
      const burst = Array.from({ length: 20 }, (_, i) =>
        a.post('/orders', t.taker.order({ market_id: 'ETH-USDC', side: 'bid', price: (1900 - i) * 1_000_000, quantity: 10_000 })));
      const batch_ids = (await Promise.all(burst)).map((r) => Number(ok(r).batch_id));
      last_committed = Math.max(...batch_ids);
      const newest = await a.get(`/da/batches/${last_committed}`);
      if (newest.status === 200) served.set(last_committed, newest.text);
      await s.stop('SIGKILL');
      const store = LmdbDaStore.open(path.join(data_dir, 'da'), { reader: true });
      if (store.latest() < last_committed) cut_rounds++;
      await store.close();

      s = await startServer({ env });
      const after = await caughtUpState(s);
      expect(Number(after.batch_id)).toBe(last_committed);
      expect(after.state_root_rechecks_failed).toBe(0);
      const again = await batchTexts(s, 1, last_committed);
      for (const [id, text] of again) expect(text, `batch ${id} after the restart`).not.toBeNull();
      for (const [id, text] of served) expect(again.get(id), `batch ${id} served before the kill`).toBe(text);
    }
    // The kill did cut batches off the store (they were committed to the journal only).
    expect(cut_rounds).toBeGreaterThanOrEqual(1);
    expect(last_committed).toBeGreaterThan(30);
    expect((await s.stop()).code).toBe(0);
  }, 120_000);
});
