// The settlement contract alone, in the in-process EVM behind the JSON-RPC shim: deposits and
// their events, signed withdrawals and every refusal, roots, forced inclusion, challenge and the
// escape hatch against a state tree built by src/da's own StateTree (the server flow is
// test/settlement/server_flow.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressFromPrivateKey, signPersonalMessage } from '../../src/auth/sign.js';
import { signWithdrawal, withdrawalDigestHex, ETH_ASSET_ADDRESS } from '../../src/auth/withdrawal.js';
import { FORCED_PAYLOAD_BYTES_MAX, forceIncludeMessage } from '../../src/auth/messages.js';
import { StateTree } from '../../src/da/state_tree.js';
import { toHex0x } from '../../src/util/hex.js';
import {
  LeafKind, accountKey, accountValue, balanceKey, balanceValue, withdrawalKey, withdrawalValue,
} from '../../src/da/state_leaves.js';
import { deployContract, deploySettlement, SettlementContract } from '../../src/settlement/contract.js';
import { ContractAbi } from '../../src/settlement/abi_codec.js';
import { artifact } from '../../src/settlement/artifacts.js';
import { JsonRpc, RevertError } from '../../src/settlement/rpc.js';
import { encodeLeafProof } from '../../src/settlement/state_proof.js';
import { withdrawalVector } from '../auth/vectors.js';
import { DevChain } from './dev_chain.js';

const CHAIN_ID = 31337;
const OPERATOR_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const ALICE_KEY = '0x' + '11'.repeat(32);
const BOB_KEY = '0x' + '22'.repeat(32);
const MALLORY_KEY = '0x' + '33'.repeat(32);
const OPERATOR = addressFromPrivateKey(OPERATOR_KEY);
const ALICE = addressFromPrivateKey(ALICE_KEY);
const BOB = addressFromPrivateKey(BOB_KEY);
const MALLORY = addressFromPrivateKey(MALLORY_KEY);
const ETH_WEI = 10n ** 18n;
const DAY_S = 24 * 3600;

let chain: DevChain;
let rpc: JsonRpc;
let usdc: string;
let token: ContractAbi;
let c: SettlementContract;

async function reverts(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RevertError) return e.error_name;
    throw e;
  }
  throw new Error('expected a revert');
}

async function tokenBalance(who: string): Promise<bigint> {
  return token.decodeResult('balanceOf', await rpc.ethCall(usdc, token.call('balanceOf', [who])))[0] as bigint;
}

async function deployFresh(): Promise<SettlementContract> {
  const { address } = await deploySettlement(rpc, OPERATOR_KEY, OPERATOR, [
    { address: ETH_ASSET_ADDRESS, decimals: 18 }, { address: usdc, decimals: 6 },
  ]);
  return new SettlementContract(rpc, address);
}

beforeAll(async () => {
  chain = await DevChain.create(CHAIN_ID, [OPERATOR, ALICE, BOB, MALLORY]);
  rpc = new JsonRpc(await chain.listen());
  token = new ContractAbi(artifact('TestToken').abi);
  usdc = (await deployContract(rpc, OPERATOR_KEY, 'TestToken', ['Test USD', 'USDC', 6])).address;
  for (const who of [ALICE, BOB]) await rpc.sendAndWait(OPERATOR_KEY, usdc, token.call('mint', [who, 1_000_000n * 10n ** 6n]));
  c = await deployFresh();
}, 120_000);

afterAll(async () => {
  await chain?.close();
});

describe('deposits', () => {
  it('numbers ETH and token deposits in chain order with their engine units', async () => {
    await c.send(ALICE_KEY, 'depositEth', [], 2n * ETH_WEI);
    await rpc.sendAndWait(BOB_KEY, usdc, token.call('approve', [c.address, 500n * 10n ** 6n]));
    await c.send(BOB_KEY, 'depositToken', [usdc, 500n * 10n ** 6n]);
    const { deposits } = await c.events(0, await rpc.blockNumber());
    expect(deposits.map((d) => [d.deposit_id, d.user, d.asset, d.amount, d.units])).toEqual([
      [1, ALICE, 0, 2n * ETH_WEI, 2_000_000],
      [2, BOB, 1, 500n * 10n ** 6n, 500_000_000],
    ]);
    expect(await c.readNumber('depositCount')).toBe(2n);
    expect(await tokenBalance(c.address)).toBe(500n * 10n ** 6n);
  });

  it('refuses amounts the engine cannot hold exactly and unlisted tokens', async () => {
    expect(await reverts(c.send(ALICE_KEY, 'depositEth', [], 10n ** 12n + 1n))).toBe('BadAmount');
    expect(await reverts(c.send(ALICE_KEY, 'depositEth', [], 0n))).toBe('BadAmount');
    // 2^53 engine units of ETH is one more than a safe integer.
    expect(await reverts(c.send(ALICE_KEY, 'depositEth', [], 2n ** 53n * 10n ** 12n))).toBe('BadAmount');
    expect(await reverts(c.send(ALICE_KEY, 'depositToken', [MALLORY, 5n]))).toBe('AssetNotListed');
    expect(await c.readNumber('depositCount')).toBe(2n);
  });
});

describe('withdrawals with the operator signature', () => {
  const fields = (over: Partial<{ contract: string; chain: number; amount: bigint; nonce: number; asset: string }> = {}) => ({
    settlement_contract: over.contract ?? c.address, chain_id: over.chain ?? CHAIN_ID, user: ALICE,
    asset_address: over.asset ?? ETH_ASSET_ADDRESS, amount_wei: over.amount ?? ETH_WEI / 2n, nonce: over.nonce ?? 7,
  });

  it('digest is the shared vector\'s (viem) at the vector\'s contract address and chain id', async () => {
    const v = withdrawalVector;
    expect(v.chain_id).toBe(CHAIN_ID);
    // The digest reads no storage: the contract's code at the vector's address gives its digest.
    await chain.copyCode(c.address, v.contract);
    const at = new SettlementContract(rpc, v.contract);
    expect(await at.read('withdrawalDigest', [v.user, v.asset, BigInt(v.amount_wei), v.nonce])).toEqual([v.digest]);
  });

  it('digest is the server digest (src/auth/withdrawal.ts)', async () => {
    const onchain = await c.read('withdrawalDigest', [ALICE, ETH_ASSET_ADDRESS, ETH_WEI / 2n, 7]);
    expect(onchain[0]).toBe(withdrawalDigestHex(fields()));
  });

  it('pays exactly the amount once per (user, nonce); anyone may submit it', async () => {
    const sig = signWithdrawal(OPERATOR_KEY, fields());
    const before = await rpc.balance(ALICE);
    await c.withdraw(BOB_KEY, ALICE, ETH_ASSET_ADDRESS, ETH_WEI / 2n, 7, sig);
    expect((await rpc.balance(ALICE)) - before).toBe(ETH_WEI / 2n);
    expect(await c.read('withdrawn', [ALICE, 7])).toEqual([true]);
    expect(await reverts(c.withdraw(BOB_KEY, ALICE, ETH_ASSET_ADDRESS, ETH_WEI / 2n, 7, sig))).toBe('AlreadyWithdrawn');
    expect(await rpc.balance(ALICE)).toBe(before + ETH_WEI / 2n);
  });

  it('refuses a wrong chain id, a wrong contract, a forged signature and altered fields', async () => {
    const nonce = 8;
    const wrong_chain = signWithdrawal(OPERATOR_KEY, fields({ chain: 1, nonce }));
    const wrong_contract = signWithdrawal(OPERATOR_KEY, fields({ contract: '0xc0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0', nonce }));
    const forged = signWithdrawal(MALLORY_KEY, fields({ nonce }));
    const good = signWithdrawal(OPERATOR_KEY, fields({ nonce }));
    for (const sig of [wrong_chain, wrong_contract, forged]) {
      expect(await reverts(c.withdraw(ALICE_KEY, ALICE, ETH_ASSET_ADDRESS, ETH_WEI / 2n, nonce, sig))).toBe('BadSignature');
    }
    // The good signature over other fields: more money, another nonce, another user, another asset.
    expect(await reverts(c.withdraw(ALICE_KEY, ALICE, ETH_ASSET_ADDRESS, ETH_WEI, nonce, good))).toBe('BadSignature');
    expect(await reverts(c.withdraw(ALICE_KEY, ALICE, ETH_ASSET_ADDRESS, ETH_WEI / 2n, nonce + 1, good))).toBe('BadSignature');
    expect(await reverts(c.withdraw(MALLORY_KEY, MALLORY, ETH_ASSET_ADDRESS, ETH_WEI / 2n, nonce, good))).toBe('BadSignature');
    expect(await reverts(c.withdraw(ALICE_KEY, ALICE, usdc, ETH_WEI / 2n, nonce, good))).toBe('BadSignature');
    // A high-s twin of the good signature (s' = n - s, v flipped) is refused (OpenZeppelin ECDSA).
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const s = BigInt('0x' + good.slice(66, 130));
    const v = parseInt(good.slice(130), 16);
    const high = good.slice(0, 66) + (n - s).toString(16).padStart(64, '0') + (v === 27 ? '1c' : '1b');
    expect(await reverts(c.withdraw(ALICE_KEY, ALICE, ETH_ASSET_ADDRESS, ETH_WEI / 2n, nonce, high))).toBe('BadSignature');
    expect(await c.read('withdrawn', [ALICE, nonce])).toEqual([false]);
  });
});

describe('roots, forced inclusion, challenge and escape', () => {
  let f: SettlementContract;
  const tree = new StateTree();
  const leaves: [string, { kind: number; key: Uint8Array; value: Uint8Array }][] = [
    ['a1', { kind: LeafKind.ACCOUNT, key: accountKey(1), value: accountValue(ALICE) }],
    ['a2', { kind: LeafKind.ACCOUNT, key: accountKey(2), value: accountValue(BOB) }],
    ['b1e', { kind: LeafKind.BALANCE, key: balanceKey(1, 0), value: balanceValue(1_500_000, 250_000) }],
    ['b2u', { kind: LeafKind.BALANCE, key: balanceKey(2, 1), value: balanceValue(300_000_000, 0) }],
    ['w1', { kind: LeafKind.PENDING_WITHDRAWAL, key: withdrawalKey(1, 9), value: withdrawalValue(0, 100_000) }],
  ];
  // Other leaves in the tree, so the leaves sit several levels deep.
  for (let i = 3; i < 400; i++) leaves.push([`n${i}`, { kind: LeafKind.NONCE, key: accountKey(i), value: balanceValue(i, 0).subarray(0, 8) }]);
  tree.update(leaves);
  const root = toHex0x(tree.root());
  const proof = (kind: number, key: Uint8Array): string => encodeLeafProof(tree.proofOfLeaf(kind, key)!);
  const zero = '0x' + '00'.repeat(32);
  const payload = '0x' + Buffer.from('{"kind":"cancel_all","user":"x","nonce":5,"signature":"0x"}').toString('hex');
  const envelope = (key: string, user: string, nonce: number) => signPersonalMessage(key, forceIncludeMessage({ user, payload, nonce }));

  beforeAll(async () => {
    f = await deployFresh();
    // Holdings: 2 ETH, 400 USDC (more than the tree's claims: 1.85 ETH incl. the withdrawal, 300 USDC).
    await f.send(ALICE_KEY, 'depositEth', [], 2n * ETH_WEI);
    await rpc.sendAndWait(BOB_KEY, usdc, token.call('approve', [f.address, 400n * 10n ** 6n]));
    await f.send(BOB_KEY, 'depositToken', [usdc, 400n * 10n ** 6n]);
  }, 60_000);

  it('postRoots: operator only, contiguous batches, forced count within the queue', async () => {
    expect(await reverts(f.postRoots(ALICE_KEY, 1, [root], [zero], 0))).toBe('NotOperator');
    expect(await reverts(f.postRoots(OPERATOR_KEY, 2, [root], [zero], 0))).toBe('BadBatchRange');
    expect(await reverts(f.postRoots(OPERATOR_KEY, 1, [root, root], [zero], 0))).toBe('BadBatchRange');
    expect(await reverts(f.postRoots(OPERATOR_KEY, 1, [root], [zero], 1))).toBe('BadForcedCount');
    await f.postRoots(OPERATOR_KEY, 1, [zero, root], [zero, zero], 0);
    expect(await f.readNumber('lastBatchId')).toBe(2n);
    expect(await f.read('stateRoots', [2])).toEqual([root]);
  });

  it('forceInclude needs the sender\'s envelope signature', async () => {
    expect(await reverts(f.send(BOB_KEY, 'forceInclude', [payload, 3, envelope(ALICE_KEY, ALICE, 3)]))).toBe('BadSignature');
    expect(await reverts(f.send(ALICE_KEY, 'forceInclude', [payload, 4, envelope(ALICE_KEY, ALICE, 3)]))).toBe('BadSignature');
    // Larger than the server's inbox takes (4,096 bytes), or empty: refused before the signature.
    expect(await f.readNumber('FORCED_PAYLOAD_MAX')).toBe(BigInt(FORCED_PAYLOAD_BYTES_MAX));
    expect(await reverts(f.send(ALICE_KEY, 'forceInclude', ['0x' + '7b'.repeat(4097), 3, envelope(ALICE_KEY, ALICE, 3)]))).toBe('PayloadTooLarge');
    expect(await reverts(f.send(ALICE_KEY, 'forceInclude', ['0x', 3, envelope(ALICE_KEY, ALICE, 3)]))).toBe('PayloadTooLarge');
    await f.send(ALICE_KEY, 'forceInclude', [payload, 3, envelope(ALICE_KEY, ALICE, 3)]);
    await f.send(BOB_KEY, 'forceInclude', [payload, 1, envelope(BOB_KEY, BOB, 1)]);
    const { forced } = await f.events(0, await rpc.blockNumber());
    expect(forced.map((x) => [x.forced_id, x.user, x.nonce, x.payload])).toEqual([[0, ALICE, 3, payload], [1, BOB, 1, payload]]);
  });

  it('challenge: refused before 24 h and for processed entries; freezes after', async () => {
    expect(await reverts(f.send(MALLORY_KEY, 'challenge', [0]))).toBe('NotOverdue');
    // The operator takes entry 0 in with its next batch; entry 1 it ignores.
    await f.postRoots(OPERATOR_KEY, 3, [root], [zero], 1);
    expect(await reverts(f.postRoots(OPERATOR_KEY, 4, [root], [zero], 0))).toBe('BadForcedCount');
    chain.increaseTime(DAY_S - 60);
    expect(await reverts(f.send(MALLORY_KEY, 'challenge', [1]))).toBe('NotOverdue');
    expect(await reverts(f.send(ALICE_KEY, 'escape', [1, 0, 1_500_000, 250_000, proof(LeafKind.ACCOUNT, accountKey(1)), proof(LeafKind.BALANCE, balanceKey(1, 0))]))).toBe('NotFrozen');
    chain.increaseTime(120);
    expect(await reverts(f.send(MALLORY_KEY, 'challenge', [0]))).toBe('NotOverdue');
    expect(await reverts(f.send(MALLORY_KEY, 'challenge', [2]))).toBe('NotOverdue');
    await f.send(MALLORY_KEY, 'challenge', [1]);
    expect(await f.read('frozen')).toEqual([true]);
    expect(await f.read('escapeRoot')).toEqual([root]);
    // Frozen: no more roots, deposits, signed withdrawals.
    expect(await reverts(f.postRoots(OPERATOR_KEY, 4, [root], [zero], 1))).toBe('IsFrozen');
    expect(await reverts(f.send(ALICE_KEY, 'depositEth', [], ETH_WEI))).toBe('IsFrozen');
    const sig = signWithdrawal(OPERATOR_KEY, { settlement_contract: f.address, chain_id: CHAIN_ID, user: ALICE, asset_address: ETH_ASSET_ADDRESS, amount_wei: 1n, nonce: 99 });
    expect(await reverts(f.withdraw(ALICE_KEY, ALICE, ETH_ASSET_ADDRESS, 1n, 99, sig))).toBe('IsFrozen');
  });

  it('escape pays each proven balance once, to the proven address only', async () => {
    const acc1 = proof(LeafKind.ACCOUNT, accountKey(1));
    const bal1 = proof(LeafKind.BALANCE, balanceKey(1, 0));
    // Wrong values, another sender, another account's proof: refused.
    expect(await reverts(f.send(ALICE_KEY, 'escape', [1, 0, 1_500_001, 250_000, acc1, bal1]))).toBe('BadProof');
    expect(await reverts(f.send(MALLORY_KEY, 'escape', [1, 0, 1_500_000, 250_000, acc1, bal1]))).toBe('BadProof');
    expect(await reverts(f.send(ALICE_KEY, 'escape', [2, 1, 300_000_000, 0, proof(LeafKind.ACCOUNT, accountKey(2)), proof(LeafKind.BALANCE, balanceKey(2, 1))]))).toBe('BadProof');
    const before = await rpc.balance(ALICE);
    await f.send(BOB_KEY, 'escape', [2, 1, 300_000_000, 0, proof(LeafKind.ACCOUNT, accountKey(2)), proof(LeafKind.BALANCE, balanceKey(2, 1))]);
    const r = await f.send(ALICE_KEY, 'escape', [1, 0, 1_500_000, 250_000, acc1, bal1]);
    const gas_price = 1_000_000_000n;
    expect((await rpc.balance(ALICE)) - before + BigInt(r.gasUsed) * gas_price).toBe(1_750_000n * 10n ** 12n);
    expect(await tokenBalance(f.address)).toBe(100n * 10n ** 6n);
    expect(await reverts(f.send(ALICE_KEY, 'escape', [1, 0, 1_500_000, 250_000, acc1, bal1]))).toBe('AlreadyEscaped');
    // The pending withdrawal in the root, once.
    const w = proof(LeafKind.PENDING_WITHDRAWAL, withdrawalKey(1, 9));
    await f.send(ALICE_KEY, 'escapeWithdrawal', [1, 9, 0, 100_000, acc1, w]);
    expect(await reverts(f.send(ALICE_KEY, 'escapeWithdrawal', [1, 9, 0, 100_000, acc1, w]))).toBe('AlreadyWithdrawn');
    // Paid in all: 1.85 ETH of the 2 held.
    expect(await rpc.balance(f.address)).toBe(2n * ETH_WEI - 1_850_000n * 10n ** 12n);
  });
});
