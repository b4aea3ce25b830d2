/**
 * The fills tree of a batch: an OpenZeppelin `StandardMerkleTree`-compatible Merkle tree over the
 * batch's fills (DECISIONS.md, "Batches, state roots and data availability").
 *
 * Leaf: the Solidity `abi.encode` of
 *   (uint64 batch_id, uint64 fill_id, uint64 taker_order_id, uint64 maker_order_id,
 *    address taker, address maker, string market_id, string taker_side,
 *    uint64 price, uint64 quantity, int64 taker_fee, int64 maker_fee)
 * and `fill_hash = keccak256(keccak256(encoding))` (OZ's double-hashed leaves).
 *
 * Tree (byte for byte the same as `StandardMerkleTree.of(values, FILL_LEAF_TYPES)` from
 * `@openzeppelin/merkle-tree` 1.x with default options):
 * - leaf hashes are sorted ascending (as 256-bit big-endian integers); equal hashes keep their
 *   input order (OZ relies on the stable `Array.prototype.sort`);
 * - the tree is the array `tree[0 .. 2n-2]`, children of node `i` at `2i+1` and `2i+2`, root at
 *   0; the k-th sorted leaf is stored at `tree[2n-2-k]` (so leaves fill the array tail in reverse);
 * - an internal node is `keccak256(min(l, r) ++ max(l, r))` (sorted pairs);
 * - a proof lists the sibling of the leaf, then the sibling of its parent, ... up to (not
 *   including) the root: exactly `getProof` / what `MerkleProof.verify` consumes.
 *
 * Empty batches: OZ refuses to build a tree with no leaves, so a batch without fills has the root
 * {@link EMPTY_FILLS_ROOT} = 32 zero bytes (`bytes32(0)`). Nothing can be proven against it:
 * `FillsTree.build([])` has size 0 and no proofs, and {@link verifyFillProof} always returns
 * `false` for that root (finding a leaf/proof that hashes to zero would need a keccak preimage,
 * but the verifier does not even try: a 0 leaf with an empty proof would otherwise "verify").
 */

// keccak256 from ./keccak.js (hash-wasm): byte for byte @noble/hashes' keccak_256 (test/da/keccak.test.ts).
import { KECCAK_INPUT, keccak256OfWordPair, keccak256TwiceOfInput } from './keccak.js';
import { tailLength, utf8Bytes, writeAddress, writeIntWord, writeUintWord } from './abi.js';
import { bytesEqual, compareBytes, tryHexToBytes } from './hex.js';
import { toHex0x } from '../util/hex.js';

export interface FillLeaf {
  batch_id: number;
  fill_id: number;
  taker_order_id: number;
  maker_order_id: number;
  /** 0x + 40 hex digits (any case). */
  taker: string;
  maker: string;
  market_id: string;
  taker_side: 'bid' | 'ask';
  price: number;
  quantity: number;
  /** May be negative (a rebate). */
  taker_fee: number;
  maker_fee: number;
}

/** The OZ `leafEncoding` of a fill leaf, in field order. */
export const FILL_LEAF_TYPES: readonly string[] = Object.freeze([
  'uint64', 'uint64', 'uint64', 'uint64',
  'address', 'address',
  'string', 'string',
  'uint64', 'uint64',
  'int64', 'int64',
]);

/** Root of a batch with no fills: `bytes32(0)`. See the module comment. */
export const EMPTY_FILLS_ROOT: string = '0x' + '00'.repeat(32);

const HASH = 32;
const WORD = 32;
const HEAD = 12 * WORD;
const SIDE_BYTES: Readonly<Record<'bid' | 'ask', Uint8Array>> = { bid: utf8Bytes('bid'), ask: utf8Bytes('ask') };

/** UTF-8 of market ids: a handful of distinct values, so memoize (bounded). */
const market_bytes = new Map<string, Uint8Array>();
function marketBytes(market_id: string): Uint8Array {
  let b = market_bytes.get(market_id);
  if (b === undefined) {
    b = utf8Bytes(market_id, 'market_id');
    if (market_bytes.size >= 1024) market_bytes.clear();
    market_bytes.set(market_id, b);
  }
  return b;
}

/**
 * The 20 bytes of addresses already written, by their 0x hex string: a fill's two addresses are
 * the same few strings again and again (the state's address of each account), and decoding 40 hex
 * digits twice per fill (`writeAddress`) was ~2.0 k instructions per request of the DA core at the
 * load bench's max-rate batch (callgrind, h22d), against a Map lookup and a 20-byte copy. Bounded:
 * cleared when full (a state of more accounts only misses more often, at writeAddress's cost).
 */
const ADDRESS_BYTES = 20;
const ADDRESS_MEMO_MAX = 1 << 14;
const address_at = new Map<string, number>();
const address_bytes = new Uint8Array(ADDRESS_MEMO_MAX * ADDRESS_BYTES);

/** writeAddress (same checks, same bytes), through the memo above. */
function putAddress(buf: Uint8Array, off: number, address: string, what: string): void {
  let at = address_at.get(address);
  if (at === undefined) {
    if (address_at.size >= ADDRESS_MEMO_MAX) address_at.clear();
    at = address_at.size * ADDRESS_BYTES;
    // Throws on a malformed address before it is remembered.
    writeAddress(address_bytes, at, address, what);
    address_at.set(address, at);
  }
  for (let i = 0; i < ADDRESS_BYTES; i++) buf[off + i] = address_bytes[at + i];
}

/**
 * `abi.encode` of the fill tuple (see the module comment). Throws on out-of-range or malformed
 * fields: integers must be safe integers (uint64 fields >= 0), addresses 0x + 40 hex digits,
 * `market_id` well-formed UTF-16, `taker_side` 'bid' or 'ask'.
 *
 * Same bytes as the generic `abiEncode` of the 12 values, written directly into one buffer.
 */
export function encodeFillLeaf(leaf: FillLeaf): Uint8Array {
  const buf = new Uint8Array(encodedFillLength(leaf));
  writeFillLeaf(leaf, buf);
  return buf;
}

function sideBytes(leaf: FillLeaf): Uint8Array {
  const side = leaf.taker_side === 'bid' || leaf.taker_side === 'ask' ? SIDE_BYTES[leaf.taker_side] : undefined;
  if (side === undefined) {
    throw new TypeError(`invalid taker_side ${JSON.stringify(String(leaf.taker_side))}: expected 'bid' or 'ask'`);
  }
  return side;
}

function encodedFillLength(leaf: FillLeaf): number {
  return HEAD + tailLength(marketBytes(leaf.market_id).length) + tailLength(sideBytes(leaf).length);
}

/** Writes the encoding at `buf[0..)` (zeroing it first: the buffer may be reused); returns its length. */
function writeFillLeaf(leaf: FillLeaf, buf: Uint8Array): number {
  const side = sideBytes(leaf);
  const market = marketBytes(leaf.market_id);
  const market_off = HEAD;
  const side_off = market_off + tailLength(market.length);
  const n = side_off + tailLength(side.length);
  if (n > buf.length) throw new RangeError(`fill leaf of ${n} bytes exceeds its buffer`);
  buf.fill(0, 0, n);
  writeUintWord(buf, 0 * WORD, leaf.batch_id, 64);
  writeUintWord(buf, 1 * WORD, leaf.fill_id, 64);
  writeUintWord(buf, 2 * WORD, leaf.taker_order_id, 64);
  writeUintWord(buf, 3 * WORD, leaf.maker_order_id, 64);
  putAddress(buf, 4 * WORD + 12, leaf.taker, 'taker address');
  putAddress(buf, 5 * WORD + 12, leaf.maker, 'maker address');
  writeUintWord(buf, 6 * WORD, market_off);
  writeUintWord(buf, 7 * WORD, side_off);
  writeUintWord(buf, 8 * WORD, leaf.price, 64);
  writeUintWord(buf, 9 * WORD, leaf.quantity, 64);
  writeIntWord(buf, 10 * WORD, leaf.taker_fee, 64);
  writeIntWord(buf, 11 * WORD, leaf.maker_fee, 64);
  writeUintWord(buf, market_off, market.length);
  buf.set(market, market_off + WORD);
  writeUintWord(buf, side_off, side.length);
  buf.set(side, side_off + WORD);
  return n;
}

/** `fill_hash`: keccak256(keccak256(abi.encode(fill))). */
export function fillLeafHash(leaf: FillLeaf): Uint8Array {
  const out = new Uint8Array(HASH);
  fillLeafHashInto(leaf, out, 0);
  return out;
}

/**
 * `fill_hash` written to `out[at .. at+32)`: the encoding goes straight into keccak's input buffer
 * (a fill is ~512 bytes: no buffer per fill), and the second hash reads the first digest where
 * the module left it (keccak256TwiceOfInput: no copy out and back).
 */
function fillLeafHashInto(leaf: FillLeaf, out: Uint8Array, at: number): void {
  keccak256TwiceOfInput(writeFillLeaf(leaf, KECCAK_INPUT), out, at);
}

/**
 * The leaf as the `values` array OZ's `StandardMerkleTree` takes with {@link FILL_LEAF_TYPES}:
 * integers as decimal strings, addresses lowercased (the format of the shared test vectors).
 */
export function fillLeafValues(leaf: FillLeaf): string[] {
  return [
    String(leaf.batch_id), String(leaf.fill_id), String(leaf.taker_order_id), String(leaf.maker_order_id),
    leaf.taker.toLowerCase(), leaf.maker.toLowerCase(),
    leaf.market_id, leaf.taker_side,
    String(leaf.price), String(leaf.quantity),
    String(leaf.taker_fee), String(leaf.maker_fee),
  ];
}

function parseSafeInt(text: string, field: string, signed: boolean): number {
  const re = signed ? /^-?(0|[1-9][0-9]*)$/ : /^(0|[1-9][0-9]*)$/;
  if (typeof text !== 'string' || !re.test(text)) {
    throw new TypeError(`invalid ${field}: ${JSON.stringify(String(text))}`);
  }
  const n = Number(text);
  if (!Number.isSafeInteger(n) || String(n) !== text.replace(/^-0$/, '0')) {
    throw new RangeError(`${field} ${text} is not a safe integer`);
  }
  return n;
}

/** Inverse of {@link fillLeafValues} (decimal strings); validates every field. */
export function fillLeafFromValues(values: readonly string[]): FillLeaf {
  if (!Array.isArray(values) || values.length !== FILL_LEAF_TYPES.length) {
    throw new TypeError(`expected ${FILL_LEAF_TYPES.length} fill leaf values`);
  }
  const side = values[7];
  if (side !== 'bid' && side !== 'ask') throw new TypeError(`invalid taker_side ${JSON.stringify(side)}`);
  const leaf: FillLeaf = {
    batch_id: parseSafeInt(values[0]!, 'batch_id', false),
    fill_id: parseSafeInt(values[1]!, 'fill_id', false),
    taker_order_id: parseSafeInt(values[2]!, 'taker_order_id', false),
    maker_order_id: parseSafeInt(values[3]!, 'maker_order_id', false),
    taker: values[4]!,
    maker: values[5]!,
    market_id: values[6]!,
    taker_side: side,
    price: parseSafeInt(values[8]!, 'price', false),
    quantity: parseSafeInt(values[9]!, 'quantity', false),
    taker_fee: parseSafeInt(values[10]!, 'taker_fee', true),
    maker_fee: parseSafeInt(values[11]!, 'maker_fee', true),
  };
  encodeFillLeaf(leaf); // validates addresses and strings
  return leaf;
}

/** 32-byte hashes as 8 words each (a whole view of a fresh array: node i at word 8i). */
const HASH_WORDS = HASH / 4;
function wordsOf(bytes: Uint8Array): Int32Array {
  return new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
}

/**
 * keccak256 of the sorted concatenation of nodes `a` and `b` (node indices: 32 bytes at 32i),
 * written to node `out`: the pair goes from the words into keccak's context, the digest back
 * by words (no byte loops, no view per pair). `bytes` and `words` view the same nodes.
 */
function hashPairInto(bytes: Uint8Array, words: Int32Array, a: number, b: number, out: number): void {
  const a_first = compareBytes(bytes, a * HASH, bytes, b * HASH, HASH) <= 0;
  keccak256OfWordPair(words, (a_first ? a : b) * HASH_WORDS, (a_first ? b : a) * HASH_WORDS, words, out * HASH_WORDS);
}

export class FillsTree {
  /** `(2n-1) * 32` bytes: node `i` at `[32i, 32i+32)`; empty when n = 0. */
  private readonly nodes: Uint8Array;
  /** input index -> tree index. */
  private readonly tree_index: Uint32Array;
  private root_hex: string | null = null;

  private constructor(nodes: Uint8Array, tree_index: Uint32Array) {
    this.nodes = nodes;
    this.tree_index = tree_index;
  }

  /** Build the tree of `leaves` (input order is the index used by `proof`/`leafHash`). */
  static build(leaves: readonly FillLeaf[]): FillsTree {
    const n = leaves.length;
    const hashes = new Uint8Array(n * HASH);
    for (let i = 0; i < n; i++) fillLeafHashInto(leaves[i]!, hashes, i * HASH);
    return FillsTree.fromFlatHashes(hashes, n);
  }

  /** Build from already computed leaf hashes (`fill_hash` values), e.g. when re-verifying a batch. */
  static fromLeafHashes(leaf_hashes: readonly (Uint8Array | string)[]): FillsTree {
    const n = leaf_hashes.length;
    const hashes = new Uint8Array(n * HASH);
    for (let i = 0; i < n; i++) {
      const h = leaf_hashes[i]!;
      const bytes = typeof h === 'string' ? tryHexToBytes(h, HASH) : h;
      if (!(bytes instanceof Uint8Array) || bytes.length !== HASH) {
        throw new TypeError(`leaf hash ${i} is not 32 bytes`);
      }
      hashes.set(bytes, i * HASH);
    }
    return FillsTree.fromFlatHashes(hashes, n);
  }

  private static fromFlatHashes(hashes: Uint8Array, n: number): FillsTree {
    if (n === 0) return new FillsTree(new Uint8Array(0), new Uint32Array(0));
    // Sort input indices by hash; ties by input index (= OZ's stable sort).
    const order = new Array<number>(n);
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((x, y) => compareBytes(hashes, x * HASH, hashes, y * HASH, HASH) || x - y);

    const size = 2 * n - 1;
    const nodes = new Uint8Array(size * HASH);
    const words = wordsOf(nodes);
    const leaf_words = wordsOf(hashes);
    const tree_index = new Uint32Array(n);
    for (let k = 0; k < n; k++) {
      const input = order[k]!;
      const t = size - 1 - k;
      tree_index[input] = t;
      for (let j = 0; j < HASH_WORDS; j++) words[t * HASH_WORDS + j] = leaf_words[input * HASH_WORDS + j];
    }
    for (let i = size - 1 - n; i >= 0; i--) hashPairInto(nodes, words, 2 * i + 1, 2 * i + 2, i);
    return new FillsTree(nodes, tree_index);
  }

  /** Number of fills (leaves). */
  size(): number {
    return this.tree_index.length;
  }

  /** `0x` hex root; {@link EMPTY_FILLS_ROOT} for an empty batch. */
  root(): string {
    if (this.root_hex === null) {
      this.root_hex = this.size() === 0 ? EMPTY_FILLS_ROOT : toHex0x(this.nodes.subarray(0, HASH));
    }
    return this.root_hex;
  }

  /** The root as 32 bytes (a copy). */
  rootBytes(): Uint8Array {
    return this.size() === 0 ? new Uint8Array(HASH) : this.nodes.slice(0, HASH);
  }

  private treeIndexOf(index_in_input: number): number {
    if (!Number.isInteger(index_in_input) || index_in_input < 0 || index_in_input >= this.size()) {
      throw new RangeError(`fill index ${index_in_input} out of range (tree has ${this.size()} leaves)`);
    }
    return this.tree_index[index_in_input]!;
  }

  /** `fill_hash` of the `index_in_input`-th leaf given to `build`. */
  leafHash(index_in_input: number): string {
    const t = this.treeIndexOf(index_in_input);
    return toHex0x(this.nodes.subarray(t * HASH, t * HASH + HASH));
  }

  /** Proof for the `index_in_input`-th leaf, leaf-to-root sibling order (OZ `getProof`). */
  proof(index_in_input: number): string[] {
    let t = this.treeIndexOf(index_in_input);
    const out: string[] = [];
    while (t > 0) {
      const sibling = t % 2 === 1 ? t + 1 : t - 1;
      out.push(toHex0x(this.nodes.subarray(sibling * HASH, sibling * HASH + HASH)));
      t = (t - 1) >> 1;
    }
    return out;
  }
}

/**
 * Check a proof like OpenZeppelin's `MerkleProof.verify(proof, root, leaf)` (sorted-pair
 * keccak256), where `leaf_hash_hex` is the `fill_hash` (already double-hashed).
 * Hex is accepted with or without `0x`, in any case. Never throws: malformed input (not
 * 32-byte hex) gives `false`, and so does the root of an empty batch ({@link EMPTY_FILLS_ROOT}).
 */
export function verifyFillProof(root_hex: string, leaf_hash_hex: string, proof_hex: readonly string[]): boolean {
  const root = tryHexToBytes(root_hex, HASH);
  const leaf = tryHexToBytes(leaf_hash_hex, HASH);
  if (root === null || leaf === null || !Array.isArray(proof_hex)) return false;
  if (root.every((b) => b === 0)) return false;
  const nodes = new Uint8Array(2 * HASH);
  const words = wordsOf(nodes);
  nodes.set(leaf, 0);
  for (const p of proof_hex) {
    const sibling = tryHexToBytes(p, HASH);
    if (sibling === null) return false;
    nodes.set(sibling, HASH);
    hashPairInto(nodes, words, 0, 1, 0);
  }
  return bytesEqual(nodes.subarray(0, HASH), root);
}
