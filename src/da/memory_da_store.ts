// The DA store kept in memory: the same DaStore contract as the LMDB store (src/da/da_store.ts),
// nothing written anywhere.
import { checkNext, fillRows, type DaStore, type FillRef } from './da_store.js';
import { withLazyInputsHex, type PublishedBatch } from './published.js';

/** In-memory store (tests, bench/state_root.ts without a DA dir). */
export class MemoryDaStore implements DaStore {
  private readonly batches: PublishedBatch[] = [];
  private readonly by_order = new Map<number, FillRef[]>();

  async submit(batch: PublishedBatch, inputs?: Uint8Array): Promise<void> {
    checkNext(this, batch);
    // Before any change (a refused batch leaves no trace): the rows are the one part that throws
    // on malformed fills.
    const rows = fillRows(batch);
    if (inputs !== undefined) {
      // Kept past this call: its own copy, its hex made on first read.
      batch = withLazyInputsHex({ header: batch.header, fills: batch.fills, state_diff: batch.state_diff }, Buffer.from(inputs));
    }
    this.batches.push(batch);
    for (const [order_id, fill_id] of rows) {
      let list = this.by_order.get(order_id);
      if (list === undefined) this.by_order.set(order_id, (list = []));
      list.push({ fill_id, batch_id: batch.header.batch_id });
    }
  }

  get(id: number): PublishedBatch | undefined {
    return Number.isInteger(id) && id >= 1 ? this.batches[id - 1] : undefined;
  }

  latest(): number {
    return this.batches.length;
  }

  fillsOfOrder(order_id: number): FillRef[] {
    return (this.by_order.get(order_id) ?? []).slice();
  }

  async close(): Promise<void> {
    // nothing to release
  }
}
