// The DA store's contract, apart from its two implementations (LmdbDaStore in da_store.ts,
// MemoryDaStore in memory_da_store.ts), so that the memory store does not import LMDB's, and its users
// (the publisher, the chain link, the snapshot coordinator) depend on the contract only. The
// checks and fill rows both stores apply live here too: one implementation of each.
import type { PublishedBatch } from './published.js';

export interface FillRef {
  fill_id: number;
  batch_id: number;
}

export interface DaStore {
  /**
   * Publishes the next batch (ids contiguous from 1). Resolves when stored. `inputs`: the same
   * bytes as `batch.inputs_hex`, when the caller has them (the DA worker), so the hex need not be
   * decoded (or, with a lazy `inputs_hex`, even made). The store copies what it keeps of `inputs`
   * before returning and then reads neither them nor `batch.inputs_hex` again: the caller may
   * reuse the bytes (the DA worker's come from a reused journal read buffer). The memory store
   * keeps its own copy of every other field too; the LMDB store, until the batch's commit, serves
   * the header, fills and diff bytes objects it was given (the DA publisher's, fresh per batch).
   */
  submit(batch: PublishedBatch, inputs?: Uint8Array): Promise<void>;
  get(id: number): PublishedBatch | undefined;
  /** Id of the last submitted batch (0 when none). */
  latest(): number;
  /** Fills of an order (as taker or maker), ascending fill id. */
  fillsOfOrder(order_id: number): FillRef[];
  close(): Promise<void>;
  /**
   * The last batch a crash can no longer take out of the store (after flushing it, if needed);
   * latest() when absent (every submit durable once it resolves, or nothing durable at all).
   */
  durableLatest?(): Promise<number>;
}

/** The last batch a crash cannot take out of `store` (0 without a store): the bound of what may be deleted elsewhere. */
export function durableLatestOf(store: DaStore | null): Promise<number> {
  if (store === null) return Promise.resolve(0);
  return store.durableLatest?.() ?? Promise.resolve(store.latest());
}

/** How often durableThrough looks at the store's latest batch while waiting for one. */
const DURABLE_POLL_MS = 5;

/**
 * Whether `store` holds batch `n` durably (a crash can no longer take it out) before `deadline_ms`
 * (Date.now() time): waits, looking every DURABLE_POLL_MS, until the store has it, then flushes
 * once (durableLatestOf: one environment sync, not one per look). True without a store (nothing
 * to wait for). For what must never get ahead of the store: a snapshot file (src/snapshot/coordinator.ts).
 */
export async function durableThrough(store: DaStore | null, n: number, deadline_ms: number): Promise<boolean> {
  if (store === null) return true;
  while (store.latest() < n) {
    if (Date.now() >= deadline_ms) return false;
    await new Promise((r) => setTimeout(r, DURABLE_POLL_MS));
  }
  return (await durableLatestOf(store)) >= n;
}

/** Refuses a batch that is not the next one (ids contiguous from 1). */
export function checkNext(store: DaStore, batch: PublishedBatch): void {
  const id = batch.header.batch_id;
  if (id !== store.latest() + 1) throw new Error(`DA store: submit of batch ${id} after ${store.latest()}`);
}

/** The [order id, fill id] rows of a batch: one for the taker order and one for the maker order of every fill. */
export function fillRows(batch: PublishedBatch): [number, number][] {
  const rows: [number, number][] = [];
  for (const f of batch.fills) {
    rows.push([f.taker_order_id, f.fill_id]);
    if (f.maker_order_id !== f.taker_order_id) rows.push([f.maker_order_id, f.fill_id]);
  }
  return rows;
}
