// The LMDB DA store's batches submitted and not yet committed (src/da/da_store.ts, LmdbDaStore):
// readable through the handle from memory until their commit is done, then read from LMDB.
// Apart from da_store.ts (the store's LMDB layout and its grouped commits) to keep each file to
// one job.
import type { FillRef } from './da_store_contract.js';
import type { StoredRecord } from './da_record.js';

export class PendingBatches {
  /** Submitted, not yet committed, by batch id. */
  private readonly records = new Map<number, StoredRecord>();
  /** Their fill rows by order id (taker and maker), in submit order. */
  private readonly fills = new Map<number, FillRef[]>();

  /** A submitted batch and its fill rows ([order_id, fill_id]), readable until forget() or clear(). */
  add(id: number, stored: StoredRecord, rows: readonly [number, number][]): void {
    this.records.set(id, stored);
    for (const [order_id, fill_id] of rows) {
      let list = this.fills.get(order_id);
      if (list === undefined) this.fills.set(order_id, (list = []));
      list.push({ fill_id, batch_id: id });
    }
  }

  get(id: number): StoredRecord | undefined {
    return this.records.get(id);
  }

  /** The uncommitted fills of an order (in submit order; the caller merges and sorts). */
  fillsOf(order_id: number): readonly FillRef[] {
    return this.fills.get(order_id) ?? [];
  }

  /** The batch is readable from LMDB now: drop it. */
  forget(id: number, rows: readonly [number, number][]): void {
    this.records.delete(id);
    for (const [order_id, fill_id] of rows) {
      const list = this.fills.get(order_id);
      if (list === undefined) continue;
      const i = list.findIndex((r) => r.fill_id === fill_id);
      if (i >= 0) list.splice(i, 1);
      if (list.length === 0) this.fills.delete(order_id);
    }
  }

  /** A commit failed: no uncommitted batch stays readable. */
  clear(): void {
    this.records.clear();
    this.fills.clear();
  }
}
