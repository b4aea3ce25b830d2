// durableThrough (src/da/da_store_contract.ts): a snapshot file is written only once the DA store
// holds its batch durably (src/snapshot/coordinator.ts). It waits for the store to reach the
// batch, flushes once, and gives up at its deadline rather than let a snapshot get ahead.
import { describe, expect, it } from 'vitest';
import { durableThrough, type DaStore } from '../../src/da/da_store_contract.js';

/** A store whose latest batch and durable batch the test moves; counts the flushes asked. */
function fakeStore(): { store: DaStore; set: (latest: number, durable: number) => void; flushes: () => number } {
  let latest = 0;
  let durable = 0;
  let flushes = 0;
  const store: DaStore = {
    submit: () => Promise.resolve(),
    get: () => undefined,
    latest: () => latest,
    fillsOfOrder: () => [],
    close: () => Promise.resolve(),
    durableLatest: () => {
      flushes++;
      return Promise.resolve(durable);
    },
  };
  return { store, set: (l, d) => { latest = l; durable = d; }, flushes: () => flushes };
}

describe('durableThrough', () => {
  it('waits until the store holds the batch, then flushes once', async () => {
    const f = fakeStore();
    f.set(3, 3);
    const waiting = durableThrough(f.store, 5, Date.now() + 10_000);
    await new Promise((r) => setTimeout(r, 30));
    expect(f.flushes()).toBe(0);
    f.set(5, 5);
    expect(await waiting).toBe(true);
    expect(f.flushes()).toBe(1);
  });

  it('is false when the flushed store is still short of the batch (its last commit undone)', async () => {
    const f = fakeStore();
    f.set(5, 4);
    expect(await durableThrough(f.store, 5, Date.now() + 10_000)).toBe(false);
  });

  it('gives up at its deadline without flushing', async () => {
    const f = fakeStore();
    f.set(2, 2);
    expect(await durableThrough(f.store, 5, Date.now() + 40)).toBe(false);
    expect(f.flushes()).toBe(0);
  });

  it('has nothing to wait for without a store', async () => {
    expect(await durableThrough(null, 5, Date.now())).toBe(true);
  });
});
