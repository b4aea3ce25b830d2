// The open orders' client ids: (account, client id) -> order slot, and each id's words. The fast
// engine's only store of client ids (the reference engine keeps strings).
import { CLIENT_ID_WORDS, clientIdCopy, clientIdEquals, clientIdHash, clientIdString } from './client_id.js';
import { grownI32 } from './grown.js';

/**
 * An entry's fields in `rows` (at entry x CE.STRIDE): the order's account and slot, the hash of
 * account and id (kept: `remove` finds the cell without reading the id again), then the id's
 * words (client_id.ts: length, then up to 9 words of bytes). A const enum: tsc writes the numbers.
 */
const enum CE {
  ACCOUNT = 0,
  SLOT = 1,
  HASH = 2,
  ID = 3,
  STRIDE = 13,
}
if (CE.ID + CLIENT_ID_WORDS !== CE.STRIDE) throw new Error('a client-id entry holds the account, slot, hash and CLIENT_ID_WORDS');

/** `find`'s answer when no order has the id: Link.NIL of book.ts (which asserts that at load; this file cannot import it). */
export const enum ClientIdFound { NONE = -1 }

/**
 * Open orders that carry a client id: an entry per such order in a pool of typed rows (account,
 * slot, hash, the id's words), found through an open-addressing table (linear probing,
 * backward-shift deletion, at most half full) on a hash of account and id, each hit confirmed
 * against the entry's own account and words. Replaced a string per order (held in a JS array the
 * scavenger copied while it lived) and a table that compared strings: no key or id string is made
 * or kept (docs/benchmarks.md, h20a). Orders without a client id cost 4 bytes (`entry_of_slot`),
 * less than the array of strings did (8 a slot, and 4 for its hash).
 */
export class ClientIdIndex {
  private declare hashes: Int32Array;
  /** entry + 1; 0 marks an empty cell. */
  private declare cells: Int32Array;
  private declare mask: number;
  size = 0;
  /** The entries' rows, CE.STRIDE words each; recycled through `free`. */
  private declare rows: Int32Array;
  private declare free: Int32Array;
  private free_count = 0;
  private used_high = 0;
  /** Per order slot: its entry + 1, 0 when the order has no client id. */
  private declare entry_of_slot: Int32Array;

  /**
   * `slots` order slots to start with (growSlots adds more); `capacity_initial` orders with an id
   * fit the table without a rehash (sized like the order index: it holds a subset of the same
   * orders; from 1,024 it was rehashed 7 times on the way to a replay's ~100,000, h19b).
   */
  constructor(slots: number, capacity_initial: number) {
    let n = 16;
    while (n < capacity_initial * 2) n *= 2;
    this.hashes = new Int32Array(n);
    this.cells = new Int32Array(n);
    this.mask = n - 1;
    // The rows grow as orders with an id arrive: an engine whose orders carry none (the matcher
    // bench) keeps only these 1,024.
    this.rows = new Int32Array(1024 * CE.STRIDE);
    this.free = new Int32Array(1024);
    this.entry_of_slot = new Int32Array(slots);
  }

  /** Room for order slots below `n`. */
  growSlots(n: number): void {
    this.entry_of_slot = grownI32(this.entry_of_slot, n);
  }

  /** Whether the order in `slot` has a client id. */
  has(slot: number): boolean {
    return this.entry_of_slot[slot] !== 0;
  }

  /** The slot of the account's open order with the id at `ids[at]` (client_id.ts words), or ClientIdFound.NONE. */
  find(account: number, ids: Int32Array, at: number): number {
    const h = clientIdHash(account, ids, at);
    const mask = this.mask;
    const rows = this.rows;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const v = this.cells[i];
      if (v === 0) return ClientIdFound.NONE;
      const e = ((v - 1) * CE.STRIDE) | 0;
      if (this.hashes[i] === h && rows[e + CE.ACCOUNT] === account && clientIdEquals(rows, e + CE.ID, ids, at)) return rows[e + CE.SLOT];
    }
  }

  /** Whether the order in `slot` has the id at `ids[at]` (false when it has none). */
  matches(slot: number, ids: Int32Array, at: number): boolean {
    const v = this.entry_of_slot[slot];
    return v !== 0 && clientIdEquals(this.rows, (v - 1) * CE.STRIDE + CE.ID, ids, at);
  }

  /** The order's id as a string ('' when it has none): for the canonical state, not a hot path. */
  text(slot: number): string {
    return clientIdText(this.rows, this.entry_of_slot, slot);
  }

  /** The rows and per-slot entries (live, not copies): what the canonical walk reads (canonical.ts). */
  columns(): { rows: Int32Array; entry_of_slot: Int32Array } {
    return { rows: this.rows, entry_of_slot: this.entry_of_slot };
  }

  /** Indexes the order in `slot` (of `account`) under the id at `ids[at]` (valid, not already indexed; the slot has none). */
  add(slot: number, account: number, ids: Int32Array, at: number): void {
    if ((this.size + 1) * 2 > this.cells.length) this.grow();
    let entry: number;
    if (this.free_count > 0) {
      entry = this.free[--this.free_count];
    } else {
      if (this.used_high * CE.STRIDE === this.rows.length) this.growRows();
      entry = this.used_high++;
    }
    const h = clientIdHash(account, ids, at);
    const rows = this.rows;
    const e = (entry * CE.STRIDE) | 0;
    rows[e + CE.ACCOUNT] = account;
    rows[e + CE.SLOT] = slot;
    rows[e + CE.HASH] = h;
    clientIdCopy(ids, at, rows, e + CE.ID);
    this.entry_of_slot[slot] = entry + 1;
    const mask = this.mask;
    let i = h & mask;
    while (this.cells[i] !== 0) i = (i + 1) & mask;
    this.hashes[i] = h;
    this.cells[i] = entry + 1;
    this.size++;
  }

  /** Removes the order in `slot` from the index, if it has an id (its account and id unchanged since `add`). */
  remove(slot: number): void {
    const v = this.entry_of_slot[slot];
    if (v === 0) return;
    this.entry_of_slot[slot] = 0;
    const entry = v - 1;
    this.free[this.free_count++] = entry;
    const mask = this.mask;
    const hashes = this.hashes;
    const cells = this.cells;
    let i = this.rows[entry * CE.STRIDE + CE.HASH] & mask;
    while (cells[i] !== v) {
      if (cells[i] === 0) return;
      i = (i + 1) & mask;
    }
    // Backward-shift: pull later members of the probe run into the hole so no tombstones exist.
    let hole = i;
    for (let j = (i + 1) & mask; cells[j] !== 0; j = (j + 1) & mask) {
      const home = hashes[j] & mask;
      const between = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!between) {
        hashes[hole] = hashes[j];
        cells[hole] = cells[j];
        hole = j;
      }
    }
    cells[hole] = 0;
    this.size--;
  }

  private growRows(): void {
    const n = this.free.length * 2;
    this.rows = grownI32(this.rows, n * CE.STRIDE);
    this.free = grownI32(this.free, n);
  }

  private grow(): void {
    const old_h = this.hashes;
    const old_c = this.cells;
    const n = old_c.length * 2;
    const hashes = new Int32Array(n);
    const cells = new Int32Array(n);
    const mask = n - 1;
    // Inline, as OrderIndex.grow: no field loads per entry in a loop that runs mostly unoptimized.
    for (let i = 0; i < old_c.length; i++) {
      const v = old_c[i];
      if (v === 0) continue;
      const h = old_h[i];
      let j = h & mask;
      while (cells[j] !== 0) j = (j + 1) & mask;
      hashes[j] = h;
      cells[j] = v;
    }
    this.hashes = hashes;
    this.cells = cells;
    this.mask = mask;
  }
}

/** The id of the order in `slot` as a string ('' when it has none), from ClientIdIndex's columns or a copy of them. */
export function clientIdText(rows: Int32Array, entry_of_slot: Int32Array, slot: number): string {
  const v = entry_of_slot[slot];
  return v === 0 ? '' : clientIdString(rows, (v - 1) * CE.STRIDE + CE.ID);
}
