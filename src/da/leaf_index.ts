// The state tree's index: leaf id -> slot. Numeric ids (src/da/leaf_ids.ts: the kinds nearly
// every request changes) live in an open-addressing table in one Float64Array, id and slot side by
// side, so a lookup is one hash and usually one cache line; string ids in a Map.
//
// Why not a Map for all: at 1,000,000 leaves the Map lookup (bucket, entry, then the boxed key
// it compares) was ~11% of the state root's CPU per changed leaf (profile of bench/state_root.ts,
// 2026-11-26), cache misses mostly, and the gap to 10,000 leaves is the "within 2x".
import type { LeafId } from './leaf_ids.js';

const INITIAL_CAPACITY = 1024;
/** Grow when more than half full (linear probing keeps short runs below that). */
const MAX_LOAD = 0.5;
/** Numeric ids are >= 2^48 (kind >= 1), so 0 marks an empty entry. */
const EMPTY = 0;

export class LeafIndex {
  /** Entry i: id at 2i (EMPTY when free), slot at 2i+1. */
  private table = new Float64Array(2 * INITIAL_CAPACITY);
  private mask = INITIAL_CAPACITY - 1;
  private numeric = 0;
  private readonly strings = new Map<string, number>();

  get size(): number {
    return this.numeric + this.strings.size;
  }

  /** The slot of `id`, or -1. */
  get(id: LeafId): number {
    if (typeof id === 'string') return this.strings.get(id) ?? -1;
    const t = this.table;
    for (let i = this.home(id); ; i = (i + 1) & this.mask) {
      const k = t[2 * i];
      if (k === id) return t[2 * i + 1];
      if (k === EMPTY) return -1;
    }
  }

  set(id: LeafId, slot: number): void {
    if (typeof id === 'string') {
      this.strings.set(id, slot);
      return;
    }
    if (!(id > EMPTY)) throw new RangeError(`leaf index: numeric id ${id} is not positive`);
    if (this.numeric + 1 > MAX_LOAD * (this.mask + 1)) this.grow();
    const t = this.table;
    for (let i = this.home(id); ; i = (i + 1) & this.mask) {
      const k = t[2 * i];
      if (k === id || k === EMPTY) {
        if (k === EMPTY) this.numeric++;
        t[2 * i] = id;
        t[2 * i + 1] = slot;
        return;
      }
    }
  }

  delete(id: LeafId): void {
    if (typeof id === 'string') {
      this.strings.delete(id);
      return;
    }
    const t = this.table;
    const mask = this.mask;
    let i = this.home(id);
    while (t[2 * i] !== id) {
      if (t[2 * i] === EMPTY) return;
      i = (i + 1) & mask;
    }
    this.numeric--;
    // Backward-shift deletion: move later entries of the run into the hole when their home
    // position allows it, so lookups never need tombstones.
    for (let j = (i + 1) & mask; t[2 * j] !== EMPTY; j = (j + 1) & mask) {
      const home = this.home(t[2 * j]);
      // Entry j may fill hole i if its home is not in the cyclic range (i, j].
      if (((j - home) & mask) >= ((j - i) & mask)) {
        t[2 * i] = t[2 * j];
        t[2 * i + 1] = t[2 * j + 1];
        i = j;
      }
    }
    t[2 * i] = EMPTY;
    t[2 * i + 1] = 0;
  }

  /** Home position of a numeric id. */
  private home(id: number): number {
    return numberHash(id) & this.mask;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Float64Array(2 * old.length);
    this.mask = old.length - 1;
    this.numeric = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i] !== EMPTY) this.set(old[i], old[i + 1]);
  }
}

/** A 32-bit hash of a non-negative integer below 2^53: its low and high 32 bits mixed (murmur3's finalizer). */
export function numberHash(n: number): number {
  let h = (n >>> 0) ^ Math.imul((n / 4294967296) | 0, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
