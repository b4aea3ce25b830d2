import { readFileSync } from 'node:fs';
import path from 'node:path';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { abiEncode, writeIntWord, writeUintWord } from '../../src/da/abi.js';
import {
  EMPTY_FILLS_ROOT,
  FILL_LEAF_TYPES,
  type FillLeaf,
  FillsTree,
  encodeFillLeaf,
  fillLeafFromValues,
  fillLeafHash,
  fillLeafValues,
  verifyFillProof,
} from '../../src/da/fills_tree.js';
import { tryHexToBytes } from '../../src/da/hex.js';
import { toHex0x } from '../../src/util/hex.js';

// ---------------------------------------------------------------------------------------------
// Helpers

interface VectorLeaf { values: string[]; fill_hash: string; merkle_proof: string[] }
interface Vectors { generated_with: string; leaf_types: string[]; merkle_root: string; leaves: VectorLeaf[] }

const VECTORS: Vectors = JSON.parse(
  readFileSync(path.resolve(process.cwd(), '../shared/vectors/fills-merkle.json'), 'utf8'),
) as Vectors;

const TYPES: string[] = [...FILL_LEAF_TYPES];

/** OZ values built independently of `fillLeafValues` (addresses keep their original case). */
function ozValues(leaf: FillLeaf): string[] {
  return [
    leaf.batch_id.toString(), leaf.fill_id.toString(), leaf.taker_order_id.toString(), leaf.maker_order_id.toString(),
    leaf.taker, leaf.maker, leaf.market_id, leaf.taker_side,
    leaf.price.toString(), leaf.quantity.toString(), leaf.taker_fee.toString(), leaf.maker_fee.toString(),
  ];
}

function ozTree(leaves: readonly FillLeaf[]): StandardMerkleTree<string[]> {
  return StandardMerkleTree.of(leaves.map(ozValues), TYPES);
}

function ozVerify(root: string, leaf: FillLeaf, proof: string[]): boolean {
  return StandardMerkleTree.verify(root, TYPES, ozValues(leaf), proof);
}

function word(bytes: Uint8Array, i: number): string {
  return toHex0x(bytes.subarray(32 * i, 32 * i + 32));
}

function refWord(v: bigint): string {
  return '0x' + BigInt.asUintN(256, v).toString(16).padStart(64, '0');
}

function flipByte(hex: string, byte: number, mask: number): string {
  const b = tryHexToBytes(hex, 32)!;
  b[byte] = b[byte]! ^ mask;
  return toHex0x(b);
}

const BASE_LEAF: FillLeaf = {
  batch_id: 5, fill_id: 1, taker_order_id: 11, maker_order_id: 10,
  taker: '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a',
  maker: '0x1563915e194d8cfba1943570603f7606a3115508',
  market_id: 'ETH-USDC', taker_side: 'bid',
  price: 2_000_000_000, quantity: 500_000, taker_fee: 500_000, maker_fee: -100_000,
};

// ---------------------------------------------------------------------------------------------
// Arbitraries

const MAX = Number.MAX_SAFE_INTEGER;
const u64Arb = fc.oneof(
  fc.constantFrom(0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, MAX - 1, MAX),
  fc.maxSafeNat(),
);
const i64Arb = fc.oneof(
  fc.constantFrom(0, 1, -1, -255, -256, -(2 ** 32), -(2 ** 32) + 1, -(2 ** 32) - 1, -MAX, MAX),
  fc.maxSafeInteger(),
  fc.integer({ min: -1_000_000, max: 0 }),
);
const addressArb = fc
  .tuple(fc.uint8Array({ minLength: 20, maxLength: 20 }), fc.constantFrom('lower', 'upper', 'mixed'))
  .map(([bytes, style]) => {
    const hex = toHex0x(bytes).slice(2);
    if (style === 'lower') return '0x' + hex;
    if (style === 'upper') return '0x' + hex.toUpperCase();
    return '0x' + [...hex].map((c, i) => (i % 3 === 0 ? c.toUpperCase() : c)).join('');
  });
const marketArb = fc.oneof(
  fc.constantFrom('ETH-USDC', 'BTC-USDC', '', 'x'.repeat(31), 'y'.repeat(32), 'z'.repeat(33), 'é'.repeat(16)),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', minLength: 20, maxLength: 200 }),
  fc.string({ unit: 'grapheme-ascii', minLength: 28, maxLength: 70 }),
);
const leafArb: fc.Arbitrary<FillLeaf> = fc.record({
  batch_id: u64Arb, fill_id: u64Arb, taker_order_id: u64Arb, maker_order_id: u64Arb,
  taker: addressArb, maker: addressArb, market_id: marketArb,
  taker_side: fc.constantFrom<'bid' | 'ask'>('bid', 'ask'),
  price: u64Arb, quantity: u64Arb, taker_fee: i64Arb, maker_fee: i64Arb,
});
const leavesArb = fc.array(leafArb, { minLength: 1, maxLength: 64 });
/** Sets with repeated (identical) leaves, to pin the tie order of equal hashes. */
const leavesWithDupsArb = fc
  .array(leafArb, { minLength: 1, maxLength: 4 })
  .chain((pool) => fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 24 }));

// ---------------------------------------------------------------------------------------------

describe('fills tree: shared vectors (@openzeppelin/merkle-tree 1.0.8)', () => {
  const leaves = VECTORS.leaves.map((l) => fillLeafFromValues(l.values));
  const tree = FillsTree.build(leaves);

  it('uses the leaf types of the vectors', () => {
    expect(VECTORS.leaf_types).toEqual(TYPES);
  });

  it('matches merkle_root', () => {
    expect(tree.size()).toBe(VECTORS.leaves.length);
    expect(tree.root()).toBe(VECTORS.merkle_root);
  });

  it('matches each fill_hash and merkle_proof', () => {
    VECTORS.leaves.forEach((v, i) => {
      expect(tree.leafHash(i)).toBe(v.fill_hash);
      expect(toHex0x(fillLeafHash(leaves[i]!))).toBe(v.fill_hash);
      expect(tree.proof(i)).toEqual(v.merkle_proof);
    });
  });

  it('vector proofs verify with our verifier and with OZ', () => {
    VECTORS.leaves.forEach((v, i) => {
      expect(verifyFillProof(VECTORS.merkle_root, v.fill_hash, v.merkle_proof)).toBe(true);
      expect(StandardMerkleTree.verify(VECTORS.merkle_root, TYPES, v.values, tree.proof(i))).toBe(true);
    });
  });

  it('fillLeafValues round-trips the vector values', () => {
    VECTORS.leaves.forEach((v, i) => expect(fillLeafValues(leaves[i]!)).toEqual(v.values));
  });

  it('root does not depend on input order; proofs follow the leaf', () => {
    const perm = [3, 0, 4, 2, 1];
    const shuffled = FillsTree.build(perm.map((i) => leaves[i]!));
    expect(shuffled.root()).toBe(VECTORS.merkle_root);
    perm.forEach((orig, i) => expect(shuffled.proof(i)).toEqual(VECTORS.leaves[orig]!.merkle_proof));
  });

  it('fromLeafHashes gives the same tree as build', () => {
    const t2 = FillsTree.fromLeafHashes(VECTORS.leaves.map((l) => l.fill_hash));
    expect(t2.root()).toBe(VECTORS.merkle_root);
    VECTORS.leaves.forEach((v, i) => expect(t2.proof(i)).toEqual(v.merkle_proof));
    expect(() => FillsTree.fromLeafHashes(['0x1234'])).toThrow(TypeError);
  });
});

describe('ABI encoding of a fill', () => {
  it('lays out head, offsets and string tails like abi.encode', () => {
    const enc = encodeFillLeaf(BASE_LEAF);
    // 12 head words + (len + 1 data word) for 'ETH-USDC' + (len + 1 data word) for 'bid'
    expect(enc.length).toBe(12 * 32 + 64 + 64);
    expect(word(enc, 0)).toBe(refWord(5n));
    expect(word(enc, 1)).toBe(refWord(1n));
    expect(word(enc, 4)).toBe('0x000000000000000000000000' + BASE_LEAF.taker.slice(2));
    expect(word(enc, 6)).toBe(refWord(384n)); // offset of market_id
    expect(word(enc, 7)).toBe(refWord(448n)); // offset of taker_side
    expect(word(enc, 8)).toBe(refWord(2_000_000_000n));
    expect(word(enc, 10)).toBe(refWord(500_000n));
    expect(word(enc, 11)).toBe(refWord(-100_000n));
    expect(word(enc, 11)).toBe('0x' + 'f'.repeat(59) + 'e7960');
    expect(word(enc, 12)).toBe(refWord(8n));
    expect(word(enc, 13)).toBe('0x' + Buffer.from('ETH-USDC').toString('hex').padEnd(64, '0'));
    expect(word(enc, 14)).toBe(refWord(3n));
    expect(word(enc, 15)).toBe('0x' + Buffer.from('bid').toString('hex').padEnd(64, '0'));
  });

  it('encodeFillLeaf equals the generic abiEncode of the 12 typed values (property)', () => {
    fc.assert(
      fc.property(leafArb, (l) => {
        const generic = abiEncode([
          { type: 'uint', bits: 64, value: l.batch_id },
          { type: 'uint', bits: 64, value: l.fill_id },
          { type: 'uint', bits: 64, value: l.taker_order_id },
          { type: 'uint', bits: 64, value: l.maker_order_id },
          { type: 'address', value: l.taker },
          { type: 'address', value: l.maker },
          { type: 'string', value: l.market_id },
          { type: 'string', value: l.taker_side },
          { type: 'uint', bits: 64, value: BigInt(l.price) },
          { type: 'uint', bits: 64, value: BigInt(l.quantity) },
          { type: 'int', bits: 64, value: BigInt(l.taker_fee) },
          { type: 'int', bits: 64, value: BigInt(l.maker_fee) },
        ]);
        expect(toHex0x(encodeFillLeaf(l))).toBe(toHex0x(generic));
      }),
      { numRuns: 300 },
    );
  });

  it('addresses through the memo of their bytes: repeats, mixed case, past its bound, bad ones never remembered', () => {
    const generic = (l: FillLeaf): string => toHex0x(abiEncode([
      { type: 'uint', bits: 64, value: l.batch_id }, { type: 'uint', bits: 64, value: l.fill_id },
      { type: 'uint', bits: 64, value: l.taker_order_id }, { type: 'uint', bits: 64, value: l.maker_order_id },
      { type: 'address', value: l.taker }, { type: 'address', value: l.maker },
      { type: 'string', value: l.market_id }, { type: 'string', value: l.taker_side },
      { type: 'uint', bits: 64, value: BigInt(l.price) }, { type: 'uint', bits: 64, value: BigInt(l.quantity) },
      { type: 'int', bits: 64, value: BigInt(l.taker_fee) }, { type: 'int', bits: 64, value: BigInt(l.maker_fee) },
    ]));
    const addr = (i: number): string => '0x' + (i * 2654435761 % 2 ** 32).toString(16).padStart(8, '0').repeat(5);
    // 40,000 distinct addresses: more than the memo holds (16,384), so it is cleared twice; every
    // 97th leaf checked against the generic encoder, and the first ones again at the end.
    for (let i = 0; i < 40_000; i++) {
      const leaf = { ...BASE_LEAF, taker: addr(i), maker: i % 3 === 0 ? addr(i).toUpperCase().replace('0X', '0x') : addr(i + 1) };
      const enc = encodeFillLeaf(leaf);
      if (i % 97 === 0 || i < 5) expect(toHex0x(enc), String(i)).toBe(generic(leaf));
    }
    for (let i = 0; i < 5; i++) {
      const leaf = { ...BASE_LEAF, taker: addr(i), maker: addr(39_999 - i) };
      expect(toHex0x(encodeFillLeaf(leaf))).toBe(generic(leaf));
    }
    // A malformed address throws every time (it is not remembered by its first, failed use).
    const bad = { ...BASE_LEAF, maker: '0x1563915e194d8cfba1943570603f7606a311550g' };
    expect(() => encodeFillLeaf(bad)).toThrow(/maker address/);
    expect(() => encodeFillLeaf(bad)).toThrow(/maker address/);
  });

  it('pads strings to 32-byte words (empty, 32, 33 bytes, multi-byte UTF-8)', () => {
    const lens: [string, number][] = [['', 0], ['a'.repeat(32), 32], ['a'.repeat(33), 64], ['€'.repeat(11), 64], ['🦊', 32]];
    for (const [s, padded] of lens) {
      const enc = abiEncode([{ type: 'string', value: s }]);
      const n = Buffer.byteLength(s, 'utf8');
      expect(enc.length).toBe(64 + padded);
      expect(word(enc, 0)).toBe(refWord(32n));
      expect(word(enc, 1)).toBe(refWord(BigInt(n)));
      expect(Buffer.from(enc.subarray(64, 64 + n)).toString('utf8')).toBe(s);
      expect(enc.subarray(64 + n).every((b) => b === 0)).toBe(true);
    }
  });

  it('encodes uint64 / int64 exactly over the whole safe range (vs BigInt two\'s complement)', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.maxSafeNat(), (i, u) => {
        const a = new Uint8Array(32);
        writeIntWord(a, 0, i, 64);
        const b = new Uint8Array(32);
        writeUintWord(b, 0, u, 64);
        return toHex0x(a) === refWord(BigInt(i)) && toHex0x(b) === refWord(BigInt(u));
      }),
      { numRuns: 2000 },
    );
    const edge = [0, -1, -(2 ** 32), -(2 ** 32) + 1, -(2 ** 32) - 1, -MAX, MAX, 2 ** 32, 2 ** 32 - 1];
    for (const v of edge) {
      const a = new Uint8Array(32);
      writeIntWord(a, 0, v, 64);
      expect(toHex0x(a)).toBe(refWord(BigInt(v)));
    }
    const m = new Uint8Array(32);
    writeUintWord(m, 0, MAX, 64);
    expect(toHex0x(m)).toBe('0x' + '0'.repeat(50) + '1fffffffffffff');
  });

  it('accepts bigint within the type range and rejects outside', () => {
    const a = new Uint8Array(32);
    writeUintWord(a, 0, 2n ** 64n - 1n, 64);
    expect(toHex0x(a)).toBe(refWord(2n ** 64n - 1n));
    const b = new Uint8Array(32);
    writeIntWord(b, 0, -(2n ** 63n), 64);
    expect(toHex0x(b)).toBe(refWord(-(2n ** 63n)));
    expect(() => writeUintWord(new Uint8Array(32), 0, 2n ** 64n, 64)).toThrow(RangeError);
    expect(() => writeIntWord(new Uint8Array(32), 0, 2n ** 63n, 64)).toThrow(RangeError);
    expect(() => writeUintWord(new Uint8Array(32), 0, 256, 8)).toThrow(RangeError);
  });

  it('rejects invalid fields', () => {
    const bad: Partial<Record<keyof FillLeaf, unknown>>[] = [
      { fill_id: 2 ** 53 },
      { fill_id: 1.5 },
      { price: Number.NaN },
      { quantity: -1 },
      { batch_id: Number.POSITIVE_INFINITY },
      { taker_fee: -(2 ** 53) },
      { maker_fee: 0.5 },
      { taker: '0x1234' },
      { taker: '19e7e376e7c213b7e7e7e46cc70a5dd086daff2a' },
      { maker: '0x1563915e194d8cfba1943570603f7606a311550g' },
      { maker: '0x1563915e194d8cfba1943570603f7606a311550800' },
      { taker_side: 'buy' },
      { market_id: 'ETH\uD800-USDC' },
      { market_id: '\uDC00' },
    ];
    for (const patch of bad) {
      const leaf = { ...BASE_LEAF, ...patch } as FillLeaf;
      expect(() => encodeFillLeaf(leaf), JSON.stringify(patch)).toThrow();
      expect(() => FillsTree.build([BASE_LEAF, leaf]), JSON.stringify(patch)).toThrow();
    }
    // A well-formed surrogate pair is fine.
    expect(() => encodeFillLeaf({ ...BASE_LEAF, market_id: 'ETH-🦊' })).not.toThrow();
  });

  it('fillLeafFromValues validates decimal strings', () => {
    const v = [...VECTORS.leaves[0]!.values];
    expect(fillLeafFromValues(v)).toEqual(BASE_LEAF);
    for (const [i, text] of [[0, '-1'], [1, '9007199254740992'], [2, '01'], [3, '1e3'], [10, '--1'], [7, 'buy']] as const) {
      const w = [...v];
      w[i] = text;
      expect(() => fillLeafFromValues(w), `${i}=${text}`).toThrow();
    }
    expect(() => fillLeafFromValues(v.slice(1))).toThrow();
  });
});

describe('empty batches and bad indices', () => {
  it('an empty tree has EMPTY_FILLS_ROOT (bytes32(0)) and no proofs', () => {
    expect(EMPTY_FILLS_ROOT).toBe('0x' + '0'.repeat(64));
    const t = FillsTree.build([]);
    expect(t.size()).toBe(0);
    expect(t.root()).toBe(EMPTY_FILLS_ROOT);
    expect(t.rootBytes()).toEqual(new Uint8Array(32));
    expect(() => t.proof(0)).toThrow(RangeError);
    expect(() => t.leafHash(0)).toThrow(RangeError);
    // OZ cannot build it at all, which is why the empty root is our own definition.
    expect(() => StandardMerkleTree.of([], TYPES)).toThrow();
  });

  it('nothing verifies against EMPTY_FILLS_ROOT', () => {
    expect(verifyFillProof(EMPTY_FILLS_ROOT, EMPTY_FILLS_ROOT, [])).toBe(false);
    expect(verifyFillProof(EMPTY_FILLS_ROOT, VECTORS.leaves[0]!.fill_hash, [])).toBe(false);
  });

  it('a single fill: root = fill_hash, empty proof (as OZ)', () => {
    const t = FillsTree.build([BASE_LEAF]);
    const oz = ozTree([BASE_LEAF]);
    expect(t.root()).toBe(oz.root);
    expect(t.root()).toBe(t.leafHash(0));
    expect(t.proof(0)).toEqual([]);
    expect(oz.getProof(0)).toEqual([]);
    expect(verifyFillProof(t.root(), t.leafHash(0), [])).toBe(true);
  });

  it('proof/leafHash reject out-of-range and non-integer indices', () => {
    const t = FillsTree.build([BASE_LEAF, { ...BASE_LEAF, fill_id: 2 }]);
    for (const i of [-1, 2, 1.5, Number.NaN]) {
      expect(() => t.proof(i)).toThrow(RangeError);
      expect(() => t.leafHash(i)).toThrow(RangeError);
    }
  });
});

describe('verifyFillProof input handling', () => {
  const v = VECTORS.leaves[1]!;
  it('accepts hex without 0x and in upper case', () => {
    expect(verifyFillProof(VECTORS.merkle_root.toUpperCase().replace('0X', '0x'), v.fill_hash.slice(2), v.merkle_proof.map((p) => p.toUpperCase()))).toBe(true);
  });
  it('returns false (never throws) on malformed input', () => {
    const cases: [string, string, string[]][] = [
      [VECTORS.merkle_root.slice(0, -2), v.fill_hash, v.merkle_proof],
      [VECTORS.merkle_root, v.fill_hash + '00', v.merkle_proof],
      [VECTORS.merkle_root, v.fill_hash.slice(0, -1) + 'g', v.merkle_proof],
      [VECTORS.merkle_root, v.fill_hash, [...v.merkle_proof.slice(0, 2), v.merkle_proof[2]!.slice(0, -1)]],
      [VECTORS.merkle_root, v.fill_hash, ['', ...v.merkle_proof]],
      ['', '', []],
    ];
    for (const [r, l, p] of cases) expect(verifyFillProof(r, l, p)).toBe(false);
    expect(verifyFillProof(VECTORS.merkle_root, v.fill_hash, null as unknown as string[])).toBe(false);
  });
});

describe('fills tree vs @openzeppelin/merkle-tree (property)', () => {
  it('root, fill hashes and proofs equal StandardMerkleTree.of; OZ verify accepts our proofs', () => {
    fc.assert(
      fc.property(leavesArb, (leaves) => {
        const ours = FillsTree.build(leaves);
        const oz = ozTree(leaves);
        expect(ours.size()).toBe(leaves.length);
        expect(ours.root()).toBe(oz.root);
        leaves.forEach((leaf, i) => {
          expect(ours.leafHash(i)).toBe(oz.leafHash(ozValues(leaf)));
          expect(toHex0x(fillLeafHash(leaf))).toBe(ours.leafHash(i));
          const proof = ours.proof(i);
          expect(proof).toEqual(oz.getProof(i));
          expect(StandardMerkleTree.verify(ours.root(), TYPES, ozValues(leaf), proof)).toBe(true);
          expect(verifyFillProof(ours.root(), ours.leafHash(i), proof)).toBe(true);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('repeated identical fills are placed and proven exactly like OZ', () => {
    fc.assert(
      fc.property(leavesWithDupsArb, (leaves) => {
        const ours = FillsTree.build(leaves);
        const oz = ozTree(leaves);
        expect(ours.root()).toBe(oz.root);
        leaves.forEach((leaf, i) => {
          expect(ours.proof(i)).toEqual(oz.getProof(i));
          expect(verifyFillProof(ours.root(), ours.leafHash(i), ours.proof(i))).toBe(true);
          expect(ozVerify(ours.root(), leaf, ours.proof(i))).toBe(true);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('root is invariant under permutation of distinct fills', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(leafArb, { minLength: 1, maxLength: 32, selector: (l) => toHex0x(fillLeafHash(l)) }),
        fc.infiniteStream(fc.nat()),
        (leaves, rnd) => {
          const shuffled = [...leaves];
          const it = rnd[Symbol.iterator]();
          for (let i = shuffled.length - 1; i > 0; i--) {
            const j = it.next().value! % (i + 1);
            [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
          }
          expect(FillsTree.build(shuffled).root()).toBe(FillsTree.build(leaves).root());
        },
      ),
      { numRuns: 50 },
    );
  });

  it('one larger tree (1,000 fills) equals OZ', () => {
    const leaves = fc.sample(leafArb, { numRuns: 1000, seed: 42 });
    const ours = FillsTree.build(leaves);
    const oz = ozTree(leaves);
    expect(ours.root()).toBe(oz.root);
    for (const i of [0, 1, 2, 499, 500, 998, 999]) expect(ours.proof(i)).toEqual(oz.getProof(i));
  });
});

describe('mutated proofs are rejected by our verifier and by OZ (property)', () => {
  /** A tree with >= 2 leaves, a leaf index and its (valid) proof. */
  const caseArb = fc
    .array(leafArb, { minLength: 2, maxLength: 48 })
    .chain((leaves) => fc.tuple(fc.constant(leaves), fc.nat({ max: leaves.length - 1 }), fc.nat(), fc.nat({ max: 31 }), fc.integer({ min: 1, max: 255 })));

  it('flipped byte', () => {
    fc.assert(
      fc.property(caseArb, ([leaves, i, pick, byte, mask]) => {
        const t = FillsTree.build(leaves);
        const proof = t.proof(i);
        const j = pick % proof.length;
        const bad = [...proof];
        bad[j] = flipByte(proof[j]!, byte, mask);
        expect(verifyFillProof(t.root(), t.leafHash(i), bad)).toBe(false);
        expect(ozVerify(t.root(), leaves[i]!, bad)).toBe(false);
        // also a flipped leaf hash and a flipped root
        expect(verifyFillProof(t.root(), flipByte(t.leafHash(i), byte, mask), proof)).toBe(false);
        expect(verifyFillProof(flipByte(t.root(), byte, mask), t.leafHash(i), proof)).toBe(false);
        expect(ozVerify(flipByte(t.root(), byte, mask), leaves[i]!, proof)).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it('dropped element / extra element', () => {
    fc.assert(
      fc.property(caseArb, ([leaves, i, pick]) => {
        const t = FillsTree.build(leaves);
        const proof = t.proof(i);
        const j = pick % proof.length;
        const dropped = proof.filter((_, k) => k !== j);
        expect(verifyFillProof(t.root(), t.leafHash(i), dropped)).toBe(false);
        expect(ozVerify(t.root(), leaves[i]!, dropped)).toBe(false);
        const extra = [...proof, proof[j]!];
        expect(verifyFillProof(t.root(), t.leafHash(i), extra)).toBe(false);
        expect(ozVerify(t.root(), leaves[i]!, extra)).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it('swapped order', () => {
    fc.assert(
      fc.property(
        fc.array(leafArb, { minLength: 3, maxLength: 48 }).chain((leaves) => fc.tuple(fc.constant(leaves), fc.nat({ max: leaves.length - 1 }), fc.nat(), fc.nat())),
        ([leaves, i, a, b]) => {
          const t = FillsTree.build(leaves);
          const proof = t.proof(i);
          fc.pre(proof.length >= 2);
          const j = a % proof.length;
          let k = b % proof.length;
          if (k === j) k = (j + 1) % proof.length;
          fc.pre(proof[j] !== proof[k]);
          const swapped = [...proof];
          [swapped[j], swapped[k]] = [proof[k]!, proof[j]!];
          expect(verifyFillProof(t.root(), t.leafHash(i), swapped)).toBe(false);
          expect(ozVerify(t.root(), leaves[i]!, swapped)).toBe(false);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('wrong leaf (another fill, or a one-field change) with a valid proof', () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 1000 }), ([leaves, i, pick], delta) => {
        const t = FillsTree.build(leaves);
        const proof = t.proof(i);
        const j = pick % leaves.length;
        if (t.leafHash(j) !== t.leafHash(i)) {
          expect(verifyFillProof(t.root(), t.leafHash(j), proof)).toBe(false);
          expect(ozVerify(t.root(), leaves[j]!, proof)).toBe(false);
        }
        const leaf = leaves[i]!;
        const tweaked: FillLeaf = {
          ...leaf,
          quantity: leaf.quantity <= MAX - delta ? leaf.quantity + delta : leaf.quantity - delta,
        };
        expect(verifyFillProof(t.root(), toHex0x(fillLeafHash(tweaked)), proof)).toBe(false);
        expect(ozVerify(t.root(), tweaked, proof)).toBe(false);
        const flipped_side: FillLeaf = { ...leaf, taker_side: leaf.taker_side === 'bid' ? 'ask' : 'bid' };
        expect(verifyFillProof(t.root(), toHex0x(fillLeafHash(flipped_side)), proof)).toBe(false);
        expect(ozVerify(t.root(), flipped_side, proof)).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it('a valid proof from another tree', () => {
    fc.assert(
      fc.property(leavesArb, leavesArb, (a, b) => {
        const ta = FillsTree.build(a);
        const tb = FillsTree.build(b);
        fc.pre(ta.root() !== tb.root());
        expect(verifyFillProof(ta.root(), tb.leafHash(0), tb.proof(0))).toBe(false);
        expect(ozVerify(ta.root(), b[0]!, tb.proof(0))).toBe(false);
      }),
      { numRuns: 50 },
    );
  });
});
