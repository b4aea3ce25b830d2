// The fast book's storage: a pool of resting orders in two typed arrays (each order's fields at
// fixed offsets from slot x stride), a pool of price levels, and per book side a sorted array of
// levels with the best at the end.
//
// Why this shape: no object per order (no GC pressure, no pointer chasing), O(1) best price (the
// last element), O(1) cancel by id (Map id -> slot, then unlink from the level's doubly linked
// FIFO), and level insertion near the best price moves only the few levels behind it. Nothing
// here is iterated in hash order, so replay is deterministic.
//
// Fields without an initializer are `declare`d, here and in the engine's other classes: with the
// ES2022 target tsc otherwise emits them as class fields, which V8 defines as undefined before the
// constructor runs. Such a field's type stays "any value", and optimized code checks the hidden
// class of every object or typed array read from it (two instructions per access, ~40 accesses
// per amend). Declared, the constructor's first store gives the field its type (the typed array's
// or the object's map) and those checks go (docs/benchmarks.md, h16m).

import { ClientIdFound, ClientIdIndex } from './client_id_index.js';
import { grownF64, grownI32 } from './grown.js';
import { OrderIndex, OrderIndexFound } from './order_index.js';

/**
 * "No slot" / "no level" in the links and indexes. A const enum, so that tsc writes -1 itself into
 * the engine's code (an imported `const` is a module variable: a load and a temporal-dead-zone check
 * at every use, in optimized code too; see Side in types.ts).
 */
export const enum Link { NIL = -1 }
// ClientIdIndex and OrderIndex (which cannot import this file) answer "no order" with their own -1.
if ((ClientIdFound.NONE as number) !== (Link.NIL as number)) throw new Error('ClientIdIndex and the book disagree on "no slot"');
if ((OrderIndexFound.NONE as number) !== (Link.NIL as number)) throw new Error('OrderIndex and the book disagree on "no slot"');

/**
 * Offsets of an order's float64 fields in `OrderStore.f` (at slot * OF.STRIDE + offset). A const
 * enum: tsc writes the numbers themselves into the engine's code.
 */
export const enum OF {
  ID = 0,
  PRICE = 1,
  QUANTITY = 2,
  FILLED = 3,
  REMAINING = 4,
  LOCKED = 5,
  PRIORITY_SEQ = 6,
  /** Price of the order's latest fill (0 before its first), reported in every order update. */
  LAST_FILL_PRICE = 7,
  STRIDE = 8,
}

/** Offsets of an order's int32 fields in `OrderStore.i` (at slot * OI.STRIDE + offset). */
export const enum OI {
  ACCOUNT = 0,
  MARKET = 1,
  LEVEL = 2,
  /** FIFO links within the order's price level. */
  PREV = 3,
  NEXT = 4,
  /** Links within the account's list of open orders. */
  ACCT_PREV = 5,
  ACCT_NEXT = 6,
  SIDE = 7,
  TIF = 8,
  STRIDE = 9,
}

/**
 * Resting orders. A slot's fields sit together: its 8 float64 fields in `f`, its 9 int32 fields
 * in `i` (100 bytes a slot; 104 with ClientIdIndex's slot -> entry column), so an order is two cache lines, not one per field; measured 11-13%
 * faster than a typed array per field (docs/benchmarks.md, 2026-11-26). Slots are recycled
 * through a free list.
 */
export class OrderStore {
  declare capacity: number;
  declare readonly capacity_max: number;
  declare f: Float64Array;
  declare i: Int32Array;
  private declare free: Int32Array;
  private declare free_count: number;
  private declare used_high: number;
  declare readonly slot_by_id: OrderIndex;
  declare readonly slot_by_client_id: ClientIdIndex;

  constructor(capacity_initial: number, capacity_max: number) {
    // The hot paths index the rows with `| 0` (int32 arithmetic without V8's overflow checks):
    // right only while every row index stays below 2^31.
    if (!(capacity_max * OI.STRIDE <= 0x7fffffff)) throw new RangeError(`orders_open_max ${capacity_max} beyond the int32 row indexes`);
    const n = Math.max(1, Math.min(capacity_initial, capacity_max));
    this.capacity = n;
    this.capacity_max = capacity_max;
    this.f = new Float64Array(n * OF.STRIDE);
    this.i = new Int32Array(n * OI.STRIDE);
    this.free = new Int32Array(n);
    this.free_count = 0;
    this.used_high = 0;
    this.slot_by_id = new OrderIndex(n);
    // Sized as the order index: it holds a subset of the same orders. From 1,024 it was rehashed 7
    // times on the way to a journal replay's ~100,000 open orders (docs/benchmarks.md, h19b).
    this.slot_by_client_id = new ClientIdIndex(n, n);
  }

  /** Number of resting orders. */
  get size(): number {
    return this.slot_by_id.size;
  }

  /** A free slot, or Link.NIL when the store holds `capacity_max` orders. */
  alloc(order_id: number): number {
    let slot: number;
    if (this.free_count > 0) {
      slot = this.free[--this.free_count];
    } else {
      if (this.used_high === this.capacity) {
        if (this.capacity === this.capacity_max) return Link.NIL;
        this.grow(Math.min(this.capacity * 2, this.capacity_max));
      }
      slot = this.used_high++;
    }
    // `| 0`: int32 arithmetic without an overflow check (the constructor bounds the rows below 2^31 elements).
    this.f[((slot * OF.STRIDE) | 0) + OF.ID] = order_id;
    this.slot_by_id.set(order_id, slot);
    return slot;
  }

  release(slot: number): void {
    this.slot_by_id.delete(this.f[slot * OF.STRIDE + OF.ID]);
    // Its client id's entry goes with it (a no-op for an order without one).
    this.slot_by_client_id.remove(slot);
    this.free[this.free_count++] = slot;
  }

  private grow(n: number): void {
    this.f = grownF64(this.f, n * OF.STRIDE);
    this.i = grownI32(this.i, n * OI.STRIDE);
    this.slot_by_client_id.growSlots(n);
    this.free = grownI32(this.free, n);
    this.capacity = n;
  }
}

/** Price levels: price, FIFO head/tail of order slots, total open quantity. */
export class LevelStore {
  declare capacity: number;
  declare price: Float64Array;
  declare quantity: Float64Array;
  declare head: Int32Array;
  declare tail: Int32Array;
  private declare free: Int32Array;
  private free_count = 0;
  private used_high = 0;

  constructor(capacity_initial: number) {
    const n = Math.max(16, capacity_initial);
    this.capacity = n;
    this.price = new Float64Array(n);
    this.quantity = new Float64Array(n);
    this.head = new Int32Array(n);
    this.tail = new Int32Array(n);
    this.free = new Int32Array(n);
  }

  alloc(price: number): number {
    let lvl: number;
    if (this.free_count > 0) {
      lvl = this.free[--this.free_count];
    } else {
      if (this.used_high === this.capacity) this.grow(this.capacity * 2);
      lvl = this.used_high++;
    }
    this.price[lvl] = price;
    this.quantity[lvl] = 0;
    this.head[lvl] = Link.NIL;
    this.tail[lvl] = Link.NIL;
    return lvl;
  }

  release(lvl: number): void {
    this.free[this.free_count++] = lvl;
  }

  private grow(n: number): void {
    this.price = grownF64(this.price, n);
    this.quantity = grownF64(this.quantity, n);
    this.head = grownI32(this.head, n);
    this.tail = grownI32(this.tail, n);
    this.free = grownI32(this.free, n);
    this.capacity = n;
  }
}

/**
 * Level insertions and removals happen near the best price (the end of the array): moves of up to
 * this many levels are a plain loop, longer ones copyWithin, a runtime call whose fixed cost is
 * that of a loop over ~30 elements.
 */
const SHIFT_LOOP_MAX = 32;
/** Levels `find` scans linearly from the best before it falls back to binary search. */
const FIND_SCAN_LEVELS = 16;

/**
 * Fibonacci hashing's multiplier (2^32 / golden ratio, odd): BookSide's level index takes the top
 * bits of price x this, which spreads prices that are all multiples of one tick (10,000 = 2^4 x
 * 625: the low bits are the same for every price, so `price & mask` would use 1 cell in 16).
 */
const PRICE_HASH_MUL = 0x9e3779b1;

/**
 * One side of one book: level ids sorted from worst to best, so the best level is the last one
 * and taking it away is O(1). `key` holds the price for bids and minus the price for asks, so the
 * array is ascending on both sides and one binary search serves both.
 *
 * Beside the sorted array, an index price -> level (open addressing in typed arrays, linear
 * probing, backward-shift deletion, at most half full): linking an order to a level that exists
 * (96% of the bench flow's amend moves) is one hash probe instead of `find`'s scan and binary
 * search over the side (~130 of linkLevel's ~340 instructions; docs/benchmarks.md, h17b). `find`
 * remains for the insertion index of a new level and the index of a level to remove.
 */
export class BookSide {
  declare readonly is_bid: boolean;
  count = 0;
  declare levels: Int32Array;
  declare key: Float64Array;
  /** The index's cells: a level's price (0 = empty; resting prices are positive) and its level id (Link.NIL when empty). */
  private declare at_price: Float64Array;
  private declare at_level: Int32Array;
  private declare at_mask: number;
  /** 32 - log2(cells): the hash is the top bits of the product. */
  private declare at_shift: number;

  constructor(is_bid: boolean, capacity_initial: number) {
    this.is_bid = is_bid;
    const n = Math.max(8, capacity_initial);
    this.levels = new Int32Array(n);
    this.key = new Float64Array(n);
    this.indexCells(n * 2);
  }

  best(): number {
    return this.count === 0 ? Link.NIL : this.levels[this.count - 1];
  }

  /**
   * The level at `price`, or Link.NIL when the side has none. An empty cell holds price 0 and
   * level Link.NIL, so a probe for 0 (never a resting price) answers Link.NIL without a test of
   * its own; NaN meets no key and stops at the first empty cell.
   */
  levelAt(price: number): number {
    const prices = this.at_price;
    const mask = this.at_mask;
    // `price | 0`: the low 32 bits of the integer price (ToInt32), enough to hash it.
    let i = Math.imul(price | 0, PRICE_HASH_MUL) >>> this.at_shift;
    for (;;) {
      const k = prices[i];
      if (k === price) return this.at_level[i];
      if (k === 0) return Link.NIL;
      i = (i + 1) & mask;
    }
  }

  /** Allocates the index with `cells` cells (a power of two >= 16), empty. */
  private indexCells(cells: number): void {
    let n = 16;
    let bits = 4;
    while (n < cells) {
      n *= 2;
      bits++;
    }
    this.at_price = new Float64Array(n);
    this.at_level = new Int32Array(n).fill(Link.NIL);
    this.at_mask = n - 1;
    this.at_shift = 32 - bits;
  }

  private indexAdd(price: number, lvl: number): void {
    const prices = this.at_price;
    const mask = this.at_mask;
    let i = Math.imul(price | 0, PRICE_HASH_MUL) >>> this.at_shift;
    while (prices[i] !== 0) i = (i + 1) & mask;
    prices[i] = price;
    this.at_level[i] = lvl;
  }

  private indexRemove(price: number): void {
    const prices = this.at_price;
    const lv = this.at_level;
    const mask = this.at_mask;
    const shift = this.at_shift;
    let i = Math.imul(price | 0, PRICE_HASH_MUL) >>> shift;
    while (prices[i] !== price) {
      if (prices[i] === 0) return;
      i = (i + 1) & mask;
    }
    // Backward-shift: pull later members of the probe run into the hole so no tombstones exist.
    let hole = i;
    for (let j = (i + 1) & mask; prices[j] !== 0; j = (j + 1) & mask) {
      const home = Math.imul(prices[j] | 0, PRICE_HASH_MUL) >>> shift;
      // Move it into the hole when its home is not in (hole, j] cyclically.
      const between = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!between) {
        prices[hole] = prices[j];
        lv[hole] = lv[j];
        hole = j;
      }
    }
    prices[hole] = 0;
    lv[hole] = Link.NIL;
  }

  /**
   * Index of the level at `price`, or ~(insertion index) (= -index - 1) when there is none. `~`,
   * not `-index - 1`: V8 cannot tell `-0 - 1` from `0 - 1` and kept the result as a double.
   */
  find(price: number): number {
    // `=== true`: the field holds a boolean, but V8 tracks it as any tagged value (the two sides
    // differ), and a bare truthiness test compiles to a type switch (false, '', undetectable,
    // heap number, bigint) on every call.
    const k = this.is_bid === true ? price : -price;
    const keys = this.key;
    // Most activity is near the best price: scan down from the top a few levels before searching
    // (the bench flow rests orders a mean 10 ticks from the mid, ~8 levels below the best).
    // One test per step (`stop` is at least -1) and `| 0` on the index (an int32 step without an
    // overflow check). Four levels per step: V8 does not hoist the array's checks out of the loop
    // (after the loop's stack check it checks the array's map and reloads its base, external
    // pointer and length), but the reads of one step share them, and the loop's own test and
    // stack check run once per four levels (two per step: docs/benchmarks.md, h15k; four: h16m).
    let hi = (this.count - 1) | 0;
    const stop = hi >= FIND_SCAN_LEVELS ? (hi - FIND_SCAN_LEVELS) | 0 : -1;
    for (; hi > stop; hi = (hi - 4) | 0) {
      // One comparison per level while the keys are above k (keys are never NaN).
      const a = keys[hi];
      if (a <= k) return a === k ? hi : ~(hi + 1);
      // Fewer than four levels left: the search below finishes [0, hi].
      if (hi < 3) break;
      const b = keys[(hi - 1) | 0];
      if (b <= k) return b === k ? (hi - 1) | 0 : ~hi;
      const c = keys[(hi - 2) | 0];
      if (c <= k) return c === k ? (hi - 2) | 0 : ~((hi - 1) | 0);
      const d = keys[(hi - 3) | 0];
      if (d <= k) return d === k ? (hi - 3) | 0 : ~((hi - 2) | 0);
    }
    // The scan may stop up to three below `stop` (four per step), or break with hi scanned: the
    // search covers [0, hi] either way.
    let lo = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = keys[mid];
      if (v < k) lo = mid + 1;
      else if (v > k) hi = mid - 1;
      else return mid;
    }
    return ~lo;
  }

  /** Inserts level `lvl` at `price` at `index` (find's ~result for that price) and indexes it. */
  insertAt(index: number, lvl: number, price: number): void {
    if (this.count === this.levels.length) {
      this.levels = grownI32(this.levels, this.count * 2);
      this.key = grownF64(this.key, this.count * 2);
    }
    if ((this.count + 1) * 2 > this.at_price.length) this.reindex(this.at_price.length * 2);
    this.indexAdd(price, lvl);
    const levels = this.levels;
    const key = this.key;
    if (this.count - index > SHIFT_LOOP_MAX) {
      levels.copyWithin(index + 1, index, this.count);
      key.copyWithin(index + 1, index, this.count);
    } else {
      for (let i = this.count; i > index; i--) {
        levels[i] = levels[i - 1];
        key[i] = key[i - 1];
      }
    }
    levels[index] = lvl;
    this.key[index] = this.is_bid ? price : -price;
    this.count++;
  }

  /** Removes the level at `index` and its entry in the index. */
  removeAt(index: number): void {
    const levels = this.levels;
    const key = this.key;
    const last = this.count - 1;
    this.indexRemove(this.is_bid === true ? key[index] : -key[index]);
    if (last - index > SHIFT_LOOP_MAX) {
      levels.copyWithin(index, index + 1, this.count);
      key.copyWithin(index, index + 1, this.count);
    } else {
      for (let i = index; i < last; i++) {
        levels[i] = levels[i + 1];
        key[i] = key[i + 1];
      }
    }
    this.count--;
  }

  /** The index rebuilt with `cells` cells from the sorted levels. */
  private reindex(cells: number): void {
    this.indexCells(cells);
    for (let k = 0; k < this.count; k++) this.indexAdd(this.is_bid === true ? this.key[k] : -this.key[k], this.levels[k]);
  }
}
