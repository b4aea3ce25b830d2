// ringbook_da_lag_batches at each moment a scrape can see (the real server's race, made
// deterministic: test/server/da_lag_metric.test.ts sees it on the real /metrics when it lands in
// the window): committed batches counted from the last batch whose root is known, -1 before any.
import { describe, expect, it } from 'vitest';
import type { DaPublisher } from '../../src/da/da_interfaces.js';
import { Metrics, type MetricSources } from '../../src/gateway/metrics/metrics.js';

async function lagOf(committed: number, da: { root_batch: number; known: number } | null): Promise<number> {
  const m = new Metrics();
  const publisher: Pick<DaPublisher, 'stateRootBatchId' | 'rootKnownBatchId' | 'onRootTimes'> | null = da === null ? null : {
    stateRootBatchId: () => da.root_batch, rootKnownBatchId: () => Math.max(da.root_batch, da.known), onRootTimes: null,
  };
  // Only what this gauge and bind() read of the server.
  m.bind({ link: { addBatchStagesListener: () => undefined }, rm: { batch_id: committed }, da: publisher } as unknown as MetricSources);
  const v = await m.registry.getSingleMetric('ringbook_da_lag_batches')!.get();
  return v.values[0].value;
}

describe('ringbook_da_lag_batches', () => {
  it('counts every committed batch from genesis while no root is known (fresh start)', async () => {
    expect(await lagOf(0, { root_batch: -1, known: -1 })).toBe(1);
    expect(await lagOf(7, { root_batch: -1, known: -1 })).toBe(8);
  });
  it('counts from the replay\'s known roots right after a restart, before the first report', async () => {
    expect(await lagOf(500, { root_batch: -1, known: 490 })).toBe(10);
    expect(await lagOf(500, { root_batch: -1, known: 500 })).toBe(0);
  });
  it('counts from the last reported root afterwards', async () => {
    expect(await lagOf(500, { root_batch: 497, known: 490 })).toBe(3);
  });
  it('is 0 where no DA thread runs (the cluster\'s DA role publishes)', async () => {
    expect(await lagOf(500, null)).toBe(0);
  });
});
