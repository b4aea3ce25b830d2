// The state tree's leaf values by slot (src/da/state_tree.ts): the value bytes of each leaf slot,
// kept without an object per leaf.
//   - up to INLINE_BYTES (balances 16, nonces 8, addresses 20 and most others): in the slot's own
//     fixed room;
//   - INLINE_BYTES+1 .. POOL_BYTES (an open order's 64, an order's terms' 39): in a pool of fixed
//     records, the slot holding its record's number. At 1,000,000 leaves a Map of Uint8Arrays (a
//     hash lookup, the entry, the array object, its bytes: several cache misses and ~150 bytes of
//     heap per open order) made the cost per changed leaf grow with the state (bench/state_root.ts,
//     the 1M / 10k ratio);
//   - longer (rare kinds: inbox entries, agents): in a Map.
import { compareBytes } from './hex.js';
import { grown } from './leaf_batch.js';

/** Value bytes kept in the slot itself. */
const INLINE_BYTES = 32;
/** Largest pooled value. */
const POOL_BYTES = 64;
const INITIAL_POOL = 256;
/** Length mark of a slot whose value is in the Map (longer than POOL_BYTES). */
const LONG = 255;

export class SlotValues {
  private inline: Uint8Array;
  /** Value length per slot (LONG: in `long`). */
  private len: Uint8Array;
  /** The slot's pool record + 1 (0: none). */
  private pool_ref: Int32Array;
  /** Record r at r x POOL_BYTES. */
  private pool = new Uint8Array(INITIAL_POOL * POOL_BYTES);
  private pool_count = 0;
  private readonly pool_free: number[] = [];
  private readonly long = new Map<number, Uint8Array>();

  constructor(slots: number) {
    this.inline = new Uint8Array(slots * INLINE_BYTES);
    this.len = new Uint8Array(slots);
    this.pool_ref = new Int32Array(slots);
  }

  /** Room for `slots` slots (new ones empty). */
  grow(slots: number): void {
    this.inline = grown(this.inline, slots * INLINE_BYTES);
    this.len = grown(this.len, slots);
    this.pool_ref = grown(this.pool_ref, slots);
  }

  /** A copy of the slot's value (the slot's bytes change with later updates). */
  get(slot: number): Uint8Array {
    const n = this.len[slot];
    if (n === LONG) return this.long.get(slot)!;
    if (n > INLINE_BYTES) {
      const o = (this.pool_ref[slot] - 1) * POOL_BYTES;
      return this.pool.slice(o, o + n);
    }
    return this.inline.slice(slot * INLINE_BYTES, slot * INLINE_BYTES + n);
  }

  /** Whether the slot's value is `src[at..at+n)`. */
  equals(slot: number, src: Uint8Array, at: number, n: number): boolean {
    const len = this.len[slot];
    if (len === LONG) {
      const v = this.long.get(slot)!;
      return v.length === n && compareBytes(v, 0, src, at, n) === 0;
    }
    if (len !== n) return false;
    if (n > INLINE_BYTES) return compareBytes(this.pool, (this.pool_ref[slot] - 1) * POOL_BYTES, src, at, n) === 0;
    return compareBytes(this.inline, slot * INLINE_BYTES, src, at, n) === 0;
  }

  /**
   * Sets the slot's value to `src[at..at+n)` and returns whether that changed it: `equals` then
   * `set`, but for a value of the slot's own length (an update of a balance, nonce or order) in
   * one pass that compares and copies each byte, instead of a compare pass and a copy pass.
   */
  replace(slot: number, src: Uint8Array, at: number, n: number): boolean {
    const len = this.len[slot];
    if (len === n && n <= POOL_BYTES) {
      const dst = n > INLINE_BYTES ? this.pool : this.inline;
      const o = n > INLINE_BYTES ? (this.pool_ref[slot] - 1) * POOL_BYTES : slot * INLINE_BYTES;
      let diff = 0;
      for (let i = 0; i < n; i++) {
        const b = src[at + i];
        diff |= dst[o + i] ^ b;
        dst[o + i] = b;
      }
      return diff !== 0;
    }
    if (this.equals(slot, src, at, n)) return false;
    this.set(slot, src, at, n);
    return true;
  }

  /** Sets the slot's value to a copy of `src[at..at+n)`. */
  set(slot: number, src: Uint8Array, at: number, n: number): void {
    const old = this.len[slot];
    if (n > POOL_BYTES) {
      if (old !== LONG) this.release(slot);
      this.long.set(slot, src.slice(at, at + n));
      this.len[slot] = LONG;
      return;
    }
    let dst = this.inline;
    let o = slot * INLINE_BYTES;
    if (n > INLINE_BYTES) {
      if (old === LONG || old <= INLINE_BYTES) {
        this.release(slot);
        this.pool_ref[slot] = this.newRecord() + 1;
      }
      dst = this.pool;
      o = (this.pool_ref[slot] - 1) * POOL_BYTES;
    } else {
      this.release(slot);
    }
    for (let i = 0; i < n; i++) dst[o + i] = src[at + i];
    this.len[slot] = n;
  }

  /** Empties the slot (its leaf was removed). */
  clear(slot: number): void {
    this.release(slot);
    this.len[slot] = 0;
  }

  /** Releases the slot's pooled or mapped value, if it has one (the length is the caller's to set). */
  private release(slot: number): void {
    const n = this.len[slot];
    if (n === LONG) {
      // Most slots never held a long value: a Map delete per change was ~1% of the DA thread.
      this.long.delete(slot);
    } else if (n > INLINE_BYTES) {
      this.pool_free.push(this.pool_ref[slot] - 1);
      this.pool_ref[slot] = 0;
    }
  }

  private newRecord(): number {
    const r = this.pool_free.pop();
    if (r !== undefined) return r;
    const n = this.pool_count++;
    if ((n + 1) * POOL_BYTES > this.pool.length) this.pool = grown(this.pool, 2 * this.pool.length);
    return n;
  }
}
