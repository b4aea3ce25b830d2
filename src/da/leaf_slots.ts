// The state tree's leaves by slot (src/da/state_tree.ts): per slot its path (keccak256(kind ||
// key), what the trie is ordered by), kind, key and value, in typed arrays rather than an object
// per leaf, plus the tree's per-batch mark. A leaf's hash is not here: it lives in its parent's
// node row (or the root).
import { batchHashInto } from './state_tree_hash.js';
import { HASH } from './state_leaves.js';
import { grown, type LeafBatch } from './leaf_batch.js';
import { SlotValues } from './slot_values.js';

/**
 * Key bytes kept in the slot itself (the longest key, a pending withdrawal's, is 12). A key or
 * value as its own Uint8Array cost ~180 bytes of heap (the typed array and its buffer object),
 * two per leaf: with ~2 leaves per account (ACCOUNT and NONCE) that was ~700 bytes of the DA
 * thread's ~1 KB per account (issue 20's wallet flood); in slots it is 12 + 32 bytes a leaf.
 */
const KEY_INLINE_BYTES = 12;

/** A leaf as stored (copies). */
export interface LeafView {
  kind: number;
  key: Uint8Array;
  value: Uint8Array;
  /** keccak256(kind || key): the leaf's path. */
  sort_key: Uint8Array;
  hash: Uint8Array;
}

export class LeafSlots {
  /** Slot s's path at s x 32. */
  paths: Uint8Array;
  /** Per slot, the tree's mark while it applies a batch (1 + the slot's change index; 0: none). */
  touch: Int32Array;
  /** Each slot's value (src/da/slot_values.ts). */
  readonly values: SlotValues;
  private kinds: Uint8Array;
  private key_bytes: Uint8Array;
  private key_len: Uint8Array;
  private count = 0;
  private readonly free_slots: number[] = [];

  constructor(slots: number) {
    this.paths = new Uint8Array(slots * HASH);
    this.touch = new Int32Array(slots);
    this.values = new SlotValues(slots);
    this.kinds = new Uint8Array(slots);
    this.key_bytes = new Uint8Array(slots * KEY_INLINE_BYTES);
    this.key_len = new Uint8Array(slots);
  }

  /** A slot for batch entry i (a new leaf): its kind, key and value; its path computed (one keccak). */
  add(batch: LeafBatch, i: number): number {
    const kind = batch.kinds[i];
    const src = batch.bytes;
    const at = batch.at[i];
    const key_len = batch.key_len[i];
    const value_len = batch.value_len[i];
    if (key_len > KEY_INLINE_BYTES) throw new Error(`state root: a leaf key of ${key_len} bytes (at most ${KEY_INLINE_BYTES})`);
    let s = this.free_slots.pop();
    if (s === undefined) {
      s = this.count++;
      if (s === this.kinds.length) {
        this.paths = grown(this.paths, 2 * s * HASH);
        this.kinds = grown(this.kinds, 2 * s);
        this.key_bytes = grown(this.key_bytes, 2 * s * KEY_INLINE_BYTES);
        this.key_len = grown(this.key_len, 2 * s);
        this.touch = grown(this.touch, 2 * s);
        this.values.grow(2 * s);
      }
    }
    batchHashInto(batch, i, key_len, this.paths, s * HASH);
    this.kinds[s] = kind;
    const k = s * KEY_INLINE_BYTES;
    for (let i = 0; i < key_len; i++) this.key_bytes[k + i] = src[at + i];
    this.key_len[s] = key_len;
    this.values.set(s, src, at + key_len, value_len);
    return s;
  }

  /** Frees a removed leaf's slot. */
  free(slot: number): void {
    this.values.clear(slot);
    this.free_slots.push(slot);
  }

  /** The slot's leaf, with its hash read from `hash_src[hash_at..]` (where the trie keeps it). */
  view(slot: number, hash_src: Uint8Array, hash_at: number): LeafView {
    const k = slot * KEY_INLINE_BYTES;
    return {
      kind: this.kinds[slot], key: this.key_bytes.slice(k, k + this.key_len[slot]), value: this.values.get(slot),
      sort_key: this.paths.slice(slot * HASH, slot * HASH + HASH), hash: hash_src.slice(hash_at, hash_at + HASH),
    };
  }
}
