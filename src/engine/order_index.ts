// The fast book's order id -> slot table (book.ts's OrderStore.slot_by_id): a hash table of its
// own, beside ClientIdIndex (client_id_index.ts), the book's other id table.

/** `get`'s answer when no order has the id: Link.NIL of book.ts (which asserts that at load; this file cannot import it). */
export const enum OrderIndexFound { NONE = -1 }

/**
 * Order id -> slot, as an open-addressing hash table in typed arrays (linear probing,
 * backward-shift deletion). Replaces a Map, which allocated on every insert and cost a sixth of
 * the matcher's time in the benchmark. Order ids are sequential, so `id & mask` spreads them
 * evenly; the table keeps at most half its cells full. `&` (ToInt32 keeps the low 32 bits of any
 * integer below 2^53) rather than `%`, which V8 computes on doubles with a call to fmod.
 */
export class OrderIndex {
  private declare keys: Float64Array;
  private declare values: Int32Array;
  private declare mask: number;
  size = 0;

  constructor(capacity_initial: number) {
    let n = 16;
    while (n < capacity_initial * 2) n *= 2;
    this.keys = new Float64Array(n);
    this.values = new Int32Array(n);
    this.mask = n - 1;
  }

  /** The slot of `id`, or OrderIndexFound.NONE (Link.NIL). Ids are positive (0 marks an empty cell). */
  get(id: number): number {
    // Hostile ids (0, negative, NaN) would never meet an empty cell's 0 by probing from a negative index.
    if (!(id > 0)) return OrderIndexFound.NONE;
    const keys = this.keys;
    const mask = this.mask;
    let i = id & mask;
    for (;;) {
      const k = keys[i];
      if (k === id) return this.values[i];
      if (k === 0) return OrderIndexFound.NONE;
      i = (i + 1) & mask;
    }
  }

  set(id: number, slot: number): void {
    if ((this.size + 1) * 2 > this.keys.length) this.grow();
    const keys = this.keys;
    const mask = this.mask;
    let i = id & mask;
    // Each cell read once (a typed-array read is a map check and a reload of its base after a store).
    for (;;) {
      const k = keys[i];
      if (k === 0) {
        this.size++;
        break;
      }
      if (k === id) break;
      i = (i + 1) & mask;
    }
    keys[i] = id;
    this.values[i] = slot;
  }

  delete(id: number): void {
    const keys = this.keys;
    const values = this.values;
    const mask = this.mask;
    let i = id & mask;
    for (;;) {
      const k = keys[i];
      if (k === 0) return;
      if (k === id) break;
      i = (i + 1) & mask;
    }
    // Backward-shift: pull later members of the probe run into the hole so no tombstones exist.
    let hole = i;
    let j = (i + 1) & mask;
    for (;;) {
      const k = keys[j];
      if (k === 0) break;
      const home = k & mask;
      // Move k into the hole when its home is not in (hole, j] cyclically.
      const between = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!between) {
        keys[hole] = k;
        values[hole] = values[j];
        hole = j;
      }
      j = (j + 1) & mask;
    }
    keys[hole] = 0;
    this.size--;
  }

  private grow(): void {
    const old_keys = this.keys;
    const old_values = this.values;
    const n = old_keys.length * 2;
    const keys = new Float64Array(n);
    const values = new Int32Array(n);
    const mask = n - 1;
    // Each id put into its cell here (no `set`: its size check and field loads per id; this runs
    // once per doubling, mostly unoptimized: 65,536 ids took ~10-25 ms through `set`; h19b).
    for (let i = 0; i < old_keys.length; i++) {
      const k = old_keys[i];
      if (k === 0) continue;
      let j = k & mask;
      while (keys[j] !== 0) j = (j + 1) & mask;
      keys[j] = k;
      values[j] = old_values[i];
    }
    this.keys = keys;
    this.values = values;
    this.mask = mask;
  }
}
