// The state tree's internal nodes (src/da/state_tree.ts): typed arrays, no object per node.
// Internal node n (n >= 1) is one row of `rows`: its 129-byte preimage (0x00, then the 4 child
// hashes) and its 4 child refs (0 empty, > 0 internal node, < 0 leaf slot -(slot+1)); a child's
// hash is written into its parent's preimage, so hashing a node is one call on its row, and a
// leaf's hash is kept only there (or in the root). The root is a ref and a hash of its own.
import { HASH } from './state_leaves.js';
import { grown } from './leaf_batch.js';

const INITIAL_NODES = 1024;
/**
 * Bytes per node row: the 129-byte preimage padded to 132 (a whole number of 32-bit words, so a
 * node goes into keccak's input as 33 words: keccak256OfWords), then the 4 child refs (words
 * 33-36), then padding to 160. One row instead of a preimage array and a child array: at
 * 1,000,000 leaves the lower levels' nodes are cache misses, and a node in one place is fewer of
 * them (bench/state_root.ts, the 1M / 10k ratio).
 */
export const NODE_STRIDE = 160;
export const NODE_WORDS = NODE_STRIDE / 4;
/** Word of child 0's ref in a row. */
export const KIDS_WORD = 33;

/** Copies 32 bytes (a hash) without a `subarray` view (see keccak256OfWords for why). */
export function copyHash(src: Uint8Array, at: number, dst: Uint8Array, off: number): void {
  for (let i = 0; i < HASH; i++) dst[off + i] = src[at + i];
}

/** The node rows and the root (ref and hash). */
export class TrieNodes {
  // Row 0 unused: ref 0 means empty. `rows32` views the same buffer (refs, keccak input).
  rows = new Uint8Array(INITIAL_NODES * NODE_STRIDE);
  rows32 = new Int32Array(this.rows.buffer);
  private node_count = 1;
  private readonly free_nodes: number[] = [];
  root_ref = 0;
  readonly root_hash = new Uint8Array(HASH);

  /** Byte offset of child `digit`'s hash in node `node`'s row. */
  hashAt(node: number, digit: number): number {
    return node * NODE_STRIDE + 1 + HASH * digit;
  }

  kid(node: number, digit: number): number {
    return this.rows32[node * NODE_WORDS + KIDS_WORD + digit];
  }

  /** Sets child `digit` of `parent` (0: the root) to `ref` (its hash is written separately). */
  setChild(parent: number, digit: number, ref: number): void {
    if (parent === 0) this.root_ref = ref;
    else this.rows32[parent * NODE_WORDS + KIDS_WORD + digit] = ref;
  }

  zeroHash(parent: number, digit: number): void {
    if (parent === 0) this.root_hash.fill(0);
    else this.rows.fill(0, this.hashAt(parent, digit), this.hashAt(parent, digit) + HASH);
  }

  /** A zeroed row (a freed one first); `rows` may be a new, larger array afterwards. */
  newNode(): number {
    let n = this.free_nodes.pop();
    if (n === undefined) {
      n = this.node_count++;
      if ((n + 1) * NODE_STRIDE > this.rows.length) {
        this.rows = grown(this.rows, 2 * n * NODE_STRIDE);
        this.rows32 = new Int32Array(this.rows.buffer);
      }
    }
    this.rows.fill(0, n * NODE_STRIDE, (n + 1) * NODE_STRIDE);
    return n;
  }

  freeNode(n: number): void {
    this.free_nodes.push(n);
  }
}
