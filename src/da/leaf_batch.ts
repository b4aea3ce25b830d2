// A batch's leaf changes in one reusable byte arena: what the StateRootBuilder encodes at the end
// of each batch (src/da/pending_leaves.ts) and the StateTree applies (src/da/state_tree.ts).
//
// Why not an array of `[id, {kind, key, value}]` with a Uint8Array per key and value: that was
// four to five objects per changed leaf, ~30% of the DA thread's allocated bytes at max rate
// (sampling heap profile of a replay of bench/journal_flow.ts's flow in batches of 70, the load
// bench's batch size, 2026-11-26), and the DA thread's largest CPU item after keccak was the
// garbage collector. Here a leaf is a few numbers in typed arrays and its key and value bytes,
// contiguous (kind || key || value is the leaf's hash preimage), in `bytes`; all reused from
// batch to batch.
//
// Each leaf's bytes start at a 4-byte aligned offset with its kind: kind || key || value, the
// leaf hash's preimage (and kind || key, its path's), contiguous and aligned, so the tree hashes it
// straight from `words` (keccak256OfWords) instead of a byte loop into keccak's input (h22d).
import type { LeafId } from './leaf_ids.js';
import type { PendingLeaf } from './state_leaves.js';

const INITIAL_LEAVES = 256;
const INITIAL_BYTES = 16 * 1024;
/** value_len of a removal. */
export const REMOVED_LEAF = -1;

export class LeafBatch {
  /** Leaves in the batch. */
  count = 0;
  readonly ids: LeafId[] = [];
  kinds = new Uint8Array(INITIAL_LEAVES);
  /** Where the leaf's key starts in `bytes`; its value follows the key. */
  at = new Int32Array(INITIAL_LEAVES);
  key_len = new Uint8Array(INITIAL_LEAVES);
  /** Value length in bytes, or REMOVED_LEAF. */
  value_len = new Int32Array(INITIAL_LEAVES);
  bytes = new Uint8Array(INITIAL_BYTES);
  /** `bytes` as 32-bit words (the same buffer; `bytes.length` is a multiple of 4). */
  words = new Int32Array(this.bytes.buffer);
  private used = 0;
  /**
   * Set by a filler that adds each id at most once (the StateRootBuilder: one pending entry per
   * leaf): the tree then skips its per-slot marks for a leaf changed twice in one batch, a cache
   * miss per changed leaf at 1,000,000 leaves. A repeated id in such a batch still fails loudly
   * (two changes with one path).
   */
  distinct = false;

  /** Empties the batch (keeps its buffers); `distinct` as the next filler promises. */
  clear(distinct = false): void {
    this.count = 0;
    this.used = 0;
    this.ids.length = 0;
    this.distinct = distinct;
  }

  /**
   * Adds leaf `id` (kind, a key of `key_len` bytes, a value of `value_len` bytes or REMOVED_LEAF)
   * and returns the offset in `bytes` where the caller writes its key, the value right after it;
   * the kind is at the byte before it, at a multiple of 4. Read `bytes` after this call: it may
   * have grown.
   */
  add(id: LeafId, kind: number, key_len: number, value_len: number): number {
    // The one check of a leaf's kind: `kinds` and the byte before the key are Uint8Arrays, which
    // would wrap 256 to the node prefix 0x00 (and -1 to 255) without a word; the hashes read them
    // from here (state_tree_hash.ts batchHashInto), once for the path and once for the leaf.
    if (!(kind >= 1 && kind <= 0xff && (kind | 0) === kind)) throw new RangeError(`leaf batch: leaf kind ${kind} is not 1..255 (0x00 prefixes nodes)`);
    if (key_len > 0xff) throw new RangeError(`leaf batch: a key of ${key_len} bytes is too long (at most 255)`);
    const n = this.count;
    if (n === this.kinds.length) {
      this.kinds = grown(this.kinds, 2 * n);
      this.at = grown(this.at, 2 * n);
      this.key_len = grown(this.key_len, 2 * n);
      this.value_len = grown(this.value_len, 2 * n);
    }
    const start = (this.used + 3) & ~3;
    const at = start + 1;
    const end = at + key_len + Math.max(value_len, 0);
    if (end > this.bytes.length) {
      this.bytes = grown(this.bytes, Math.max(2 * this.bytes.length, (end + 3) & ~3));
      this.words = new Int32Array(this.bytes.buffer);
    }
    this.bytes[start] = kind;
    this.used = end;
    this.ids[n] = id;
    this.kinds[n] = kind;
    this.at[n] = at;
    this.key_len[n] = key_len;
    this.value_len[n] = value_len;
    this.count = n + 1;
    return at;
  }

  /** Adds a leaf given as arrays (the rarer kinds, restores, tests): its bytes are copied. */
  push(id: LeafId, leaf: PendingLeaf): void {
    const at = this.add(id, leaf.kind, leaf.key.length, leaf.value === null ? REMOVED_LEAF : leaf.value.length);
    this.bytes.set(leaf.key, at);
    if (leaf.value !== null) this.bytes.set(leaf.value, at + leaf.key.length);
  }

  /** A batch of these leaves (in this order). */
  static of(entries: Iterable<readonly [LeafId, PendingLeaf]>): LeafBatch {
    const b = new LeafBatch();
    for (const [id, leaf] of entries) b.push(id, leaf);
    return b;
  }
}

/** A copy of `a` in a longer array of its type. */
export function grown<T extends Uint8Array | Int32Array>(a: T, length: number): T {
  const b = new (a.constructor as new (n: number) => T)(length);
  b.set(a);
  return b;
}
