// The embedded DA layer: published batches kept locally and served over HTTP
// (docs/verifiability.md, "DA store"). LMDB at `<data_dir>/da`:
//   - database `batches`: key = batch id (uint32), value = msgpack {header, inputs (bytes), fills,
//     state_diff (bytes: src/da/state_diff.ts encodeChanges; batches written before 2026-11-26 hold
//     the hex objects, read as they are)};
//   - database `order_fills`: key = [order_id, fill_id] (ordered-binary), value = batch id; one
//     row for the taker order and one for the maker order of every fill (for /orders/:id/da-proof).
// Writes are asynchronous (lmdb-js groups them); a submitted batch is readable at once from a
// small in-memory map until its write has committed, so a proof can be asked for as soon as the
// order's answer went out. The DA store is not on the acknowledgement path: the journal is.
import { open, type Database, type RootDatabase } from 'lmdb';
import type { FillLeaf } from './fills_tree.js';
import type { BatchHeader, PublishedBatch } from './published.js';
import type { LeafChange } from './state_root.js';
import { decodeChanges } from './state_diff.js';

export interface FillRef {
  fill_id: number;
  batch_id: number;
}

export interface DaStore {
  /**
   * Publishes the next batch (ids contiguous from 1). Resolves when stored. `inputs`: the same
   * bytes as `batch.inputs_hex`, when the caller has them (the DA worker), so the hex need not be
   * decoded (or, with a lazy `inputs_hex`, even made).
   */
  submit(batch: PublishedBatch, inputs?: Uint8Array): Promise<void>;
  get(id: number): PublishedBatch | undefined;
  /** Id of the last submitted batch (0 when none). */
  latest(): number;
  /** Fills of an order (as taker or maker), ascending fill id. */
  fillsOfOrder(order_id: number): FillRef[];
  close(): Promise<void>;
}

function checkNext(store: DaStore, batch: PublishedBatch): void {
  const id = batch.header.batch_id;
  if (id !== store.latest() + 1) throw new Error(`DA store: submit of batch ${id} after ${store.latest()}`);
}

function fillRows(batch: PublishedBatch): [number, number][] {
  const rows: [number, number][] = [];
  for (const f of batch.fills) {
    rows.push([f.taker_order_id, f.fill_id]);
    if (f.maker_order_id !== f.taker_order_id) rows.push([f.maker_order_id, f.fill_id]);
  }
  return rows;
}

/** In-memory store (tests, the verifier's own bookkeeping). */
export class MemoryDaStore implements DaStore {
  private readonly batches: PublishedBatch[] = [];
  private readonly by_order = new Map<number, FillRef[]>();

  async submit(batch: PublishedBatch): Promise<void> {
    checkNext(this, batch);
    this.batches.push(batch);
    for (const [order_id, fill_id] of fillRows(batch)) {
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

interface StoredBatch {
  header: BatchHeader;
  inputs: Uint8Array;
  fills: FillLeaf[];
  state_diff: Uint8Array | LeafChange[];
}

export class LmdbDaStore implements DaStore {
  private readonly root: RootDatabase;
  private readonly batches: Database<StoredBatch, number>;
  private readonly order_fills: Database<number, [number, number]>;
  private last_id: number;
  /** Submitted, not yet committed: readable from here. */
  private readonly pending = new Map<number, PublishedBatch>();
  private readonly pending_fills = new Map<number, FillRef[]>();
  private last_write: Promise<void> = Promise.resolve();
  /** Reader of a store another thread writes: every read starts from the newest snapshot. */
  private readonly reader: boolean;

  private constructor(root: RootDatabase, reader: boolean) {
    this.root = root;
    this.reader = reader;
    this.batches = root.openDB<StoredBatch, number>({ name: 'batches', encoding: 'msgpack', keyEncoding: 'uint32' });
    this.order_fills = root.openDB<number, [number, number]>({ name: 'order_fills', encoding: 'msgpack', keyEncoding: 'ordered-binary' });
    let last = 0;
    for (const key of this.batches.getKeys({ reverse: true, limit: 1 })) last = key as number;
    this.last_id = last;
  }

  static open(dir: string, opts: { reader?: boolean } = {}): LmdbDaStore {
    return new LmdbDaStore(open({ path: dir, compression: false }), opts.reader === true);
  }

  /** Reader mode: renew the read snapshot (lmdb-js keeps one per event-loop turn). */
  private refresh(): void {
    if (!this.reader) return;
    this.root.resetReadTxn();
    let last = 0;
    for (const key of this.batches.getKeys({ reverse: true, limit: 1 })) last = key as number;
    this.last_id = last;
  }

  latest(): number {
    this.refresh();
    return this.last_id;
  }

  submit(batch: PublishedBatch, inputs?: Uint8Array): Promise<void> {
    try {
      if (this.reader) throw new Error('DA store: this handle only reads');
      checkNext(this, batch);
    } catch (e) {
      return Promise.reject(e);
    }
    const id = batch.header.batch_id;
    this.last_id = id;
    this.pending.set(id, batch);
    const rows = fillRows(batch);
    for (const [order_id, fill_id] of rows) {
      let list = this.pending_fills.get(order_id);
      if (list === undefined) this.pending_fills.set(order_id, (list = []));
      list.push({ fill_id, batch_id: id });
    }
    const stored: StoredBatch = {
      header: batch.header,
      inputs: inputs ?? Buffer.from(batch.inputs_hex, 'hex'),
      fills: batch.fills,
      state_diff: batch.state_diff_bytes ?? batch.state_diff ?? [],
    };
    const write = this.root.transaction(() => {
      void this.batches.put(id, stored);
      for (const [order_id, fill_id] of rows) void this.order_fills.put([order_id, fill_id], id);
    }).then(() => {
      this.pending.delete(id);
      for (const [order_id, fill_id] of rows) {
        const list = this.pending_fills.get(order_id);
        if (list === undefined) continue;
        const i = list.findIndex((r) => r.fill_id === fill_id);
        if (i >= 0) list.splice(i, 1);
        if (list.length === 0) this.pending_fills.delete(order_id);
      }
    });
    const ordered = Promise.all([this.last_write, write]).then(() => undefined);
    this.last_write = ordered.catch(() => undefined);
    return ordered;
  }

  get(id: number): PublishedBatch | undefined {
    if (!Number.isInteger(id) || id < 1 || id > 0xffffffff) return undefined;
    const p = this.pending.get(id);
    if (p !== undefined) return p;
    if (this.reader && id > this.last_id) this.refresh();
    const s = this.batches.get(id);
    if (s === undefined) return undefined;
    return {
      header: s.header,
      inputs_hex: Buffer.from(s.inputs.buffer, s.inputs.byteOffset, s.inputs.byteLength).toString('hex'),
      fills: s.fills,
      state_diff: s.state_diff instanceof Uint8Array ? decodeChanges(s.state_diff) : s.state_diff,
    };
  }

  fillsOfOrder(order_id: number): FillRef[] {
    this.refresh();
    const out: FillRef[] = [];
    const seen = new Set<number>();
    for (const { key, value } of this.order_fills.getRange({ start: [order_id], end: [order_id + 1] })) {
      const k = key as [number, number];
      if (k[0] !== order_id) continue;
      out.push({ fill_id: k[1], batch_id: value });
      seen.add(k[1]);
    }
    for (const r of this.pending_fills.get(order_id) ?? []) if (!seen.has(r.fill_id)) out.push(r);
    out.sort((a, b) => a.fill_id - b.fill_id);
    return out;
  }

  async close(): Promise<void> {
    await this.last_write;
    await this.root.close();
  }
}
