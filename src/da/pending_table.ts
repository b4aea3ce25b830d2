// One kind of a batch's pending leaves (src/da/pending_leaves.ts): numeric key -> a pooled entry,
// in first-touch order, emptied at every batch's end and reused by the next.
//
// Why not a Map: the StateRootBuilder keeps one pending set for its whole life, so its Maps live
// in V8's old generation, and V8 allocates an old Map's new hash tables (every `clear()`, every
// growth while the next batch refills it) in the old generation too: ~10 KB of old-space garbage
// per batch, which made the DA worker's isolate run 17-24 full mark-compacts per load run at a
// ~10 MB heap, and Map.set/clear were ~1/3 of the bytes its sampling heap profile saw promoted
// (docs/benchmarks.md, "Issue 11, the DA worker's full GCs", 2026-11-26). Here the keys live in
// typed arrays (open addressing, linear probing) and the entries in a pool: a batch allocates
// nothing once the table has its size.

import { numberHash } from './leaf_index.js';

const INITIAL_CELLS = 256;
/** A table grown past this many cells (a restart merging many skipped batches) is let go at clear(). */
const CELLS_KEPT = 1 << 16;

export class PendingTable<T> {
  /** Per cell: index + 1 of the key held there, 0 = empty. */
  private cells = new Int32Array(INITIAL_CELLS);
  private mask = INITIAL_CELLS - 1;
  /** Keys in first-touch order; `cell_of[i]` is where key i sits (clear() empties just those). */
  private keys = new Float64Array(INITIAL_CELLS / 2);
  private cell_of = new Int32Array(INITIAL_CELLS / 2);
  /** Entries by index, reused from batch to batch (their fields are the caller's to overwrite). */
  private readonly entries: T[] = [];
  /** Keys held (indexes 0..count-1). */
  count = 0;

  constructor(private readonly make: () => T) {}

  /**
   * The entry of `key`, added at the end at first touch: a pooled entry that still holds what an
   * earlier batch wrote, so the caller sets every field it will read.
   */
  entry(key: number): T {
    let i = this.indexOf(key);
    if (i < 0) i = this.insert(key);
    return this.entries[i];
  }

  /** Adds `key` at first touch (a table whose entries carry nothing: the key is the news). */
  touch(key: number): void {
    if (this.indexOf(key) < 0) this.insert(key);
  }

  /** The entry of `key`, or undefined when the batch has not touched it. */
  get(key: number): T | undefined {
    const i = this.indexOf(key);
    return i < 0 ? undefined : this.entries[i];
  }

  keyAt(i: number): number {
    return this.keys[i];
  }

  entryAt(i: number): T {
    return this.entries[i];
  }

  /** Empties the table; its cells, key arrays and entries are kept for the next batch. */
  clear(): void {
    if (this.cells.length > CELLS_KEPT) {
      this.cells = new Int32Array(INITIAL_CELLS);
      this.mask = INITIAL_CELLS - 1;
      this.keys = new Float64Array(INITIAL_CELLS / 2);
      this.cell_of = new Int32Array(INITIAL_CELLS / 2);
      this.entries.length = Math.min(this.entries.length, INITIAL_CELLS / 2);
    } else {
      for (let i = 0; i < this.count; i++) this.cells[this.cell_of[i]] = 0;
    }
    this.count = 0;
  }

  private indexOf(key: number): number {
    const cells = this.cells;
    for (let c = home(key, this.mask); ; c = (c + 1) & this.mask) {
      const v = cells[c];
      if (v === 0) return -1;
      if (this.keys[v - 1] === key) return v - 1;
    }
  }

  private insert(key: number): number {
    // At most half the cells full (short probe runs).
    if (2 * (this.count + 1) > this.cells.length) this.grow();
    const i = this.count++;
    this.keys[i] = key;
    this.place(i);
    if (i === this.entries.length) this.entries.push(this.make());
    return i;
  }

  /** Puts index i (its key already in `keys`) in the first free cell of its run. */
  private place(i: number): void {
    let c = home(this.keys[i], this.mask);
    while (this.cells[c] !== 0) c = (c + 1) & this.mask;
    this.cells[c] = i + 1;
    this.cell_of[i] = c;
  }

  private grow(): void {
    const n = this.cells.length * 2;
    this.cells = new Int32Array(n);
    this.mask = n - 1;
    const keys = new Float64Array(n / 2);
    keys.set(this.keys.subarray(0, this.count));
    this.keys = keys;
    this.cell_of = new Int32Array(n / 2);
    for (let i = 0; i < this.count; i++) this.place(i);
  }
}

/** A key's home cell. */
function home(key: number, mask: number): number {
  return numberHash(key) & mask;
}
