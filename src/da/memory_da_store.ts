// The DA store kept in memory: the same DaStore contract (src/da/da_store_contract.ts) as the
// LMDB store (src/da/da_store.ts), nothing written anywhere.
import { checkNext, fillRows, type DaStore, type FillRef } from './da_store_contract.js';
import { withLazyInputsHex, type PublishedBatch } from './published.js';
import { decodeChanges } from './state_diff.js';

/** In-memory store (tests, bench/state_root.ts without a DA dir). */
export class MemoryDaStore implements DaStore {
  private readonly batches: PublishedBatch[] = [];
  private readonly by_order = new Map<number, FillRef[]>();

  async submit(batch: PublishedBatch, inputs?: Uint8Array): Promise<void> {
    checkNext(this, batch);
    // Before any change (a refused batch leaves no trace): the rows throw on malformed fills, the
    // copy reads the batch's getters.
    const rows = fillRows(batch);
    const kept = ownCopy(batch, inputs);
    this.batches.push(kept);
    for (const [order_id, fill_id] of rows) {
      let list = this.by_order.get(order_id);
      if (list === undefined) this.by_order.set(order_id, (list = []));
      list.push({ fill_id, batch_id: kept.header.batch_id });
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

/**
 * What the store keeps of a submitted batch: its own objects, every field (getters included) read
 * once, now, as the LMDB store keeps its encoded copy. The caller may reuse or change `batch` and
 * `inputs` afterwards (DaStore.submit): the DA publisher's lazy `inputs_hex` reads a reused journal
 * buffer, right only during submit. The diff is kept decoded, from `state_diff_bytes` when the
 * batch has them (fresh objects, no second copy), as the LMDB store keeps and serves them.
 */
function ownCopy(batch: PublishedBatch, inputs: Uint8Array | undefined): PublishedBatch {
  const bytes = batch.state_diff_bytes;
  const diff = bytes === undefined ? batch.state_diff : undefined;
  const kept = {
    header: { ...batch.header },
    fills: batch.fills.map((f) => ({ ...f })),
    state_diff: bytes !== undefined ? decodeChanges(bytes) : diff?.map((c) => ({ ...c })),
  };
  // With the bytes: a copy of them, their hex made on first read; without: the hex, read now.
  return inputs === undefined ? { ...kept, inputs_hex: batch.inputs_hex } : withLazyInputsHex(kept, Buffer.from(inputs));
}
