/**
 * Gas of the settlement contract's calls, measured in the in-process EVM (@ethereumjs/vm, the
 * tests' dev chain): withdraw (ETH, token), postRoots (1, 16, 64 batches) and escape (balance
 * proof + account proof) against state trees of 10k, 100k and 1M leaves (an escape proof carries
 * 3 sibling hashes per trie level: ~log4(N) levels). Run: `make build && node dist/bench/settlement_gas.js
 * [--max-leaves N]`. The last line is one JSON object:
 *   {"bench":"settlement_gas","withdraw_eth_gas":..,"withdraw_token_gas":..,"post_roots_1_gas":..,
 *    "post_roots_16_gas":..,"post_roots_64_gas":..,"escape_gas_10k":..,"escape_depth_10k":..,...,"escape_gas_1m":..}
 */
import { addressFromPrivateKey, signPersonalMessage } from '../src/auth/sign.js';
import { forceIncludeMessage } from '../src/auth/messages.js';
import { signWithdrawal, ETH_ASSET_ADDRESS } from '../src/auth/withdrawal.js';
import { StateTree } from '../src/da/state_tree.js';
import { toHex0x } from '../src/util/hex.js';
import { LeafKind, accountKey, accountValue, balanceKey, balanceValue, nonceValue } from '../src/da/state_leaves.js';
import { ContractAbi } from '../src/settlement/abi_codec.js';
import { artifact } from '../src/settlement/artifacts.js';
import { deployContract, deploySettlement, SettlementContract } from '../src/settlement/contract.js';
import { JsonRpc } from '../src/settlement/rpc.js';
import { encodeLeafProof } from '../src/settlement/state_proof.js';
import { DevChain } from '../test/settlement/dev_chain.js';

const CHAIN_ID = 31337;
const OPERATOR_KEY = '0x' + '5a'.repeat(32);
const OPERATOR = addressFromPrivateKey(OPERATOR_KEY);
const ETH = 10n ** 18n;
const maxArg = process.argv.indexOf('--max-leaves');
const MAX_LEAVES = maxArg > 0 ? Number(process.argv[maxArg + 1]) : 1_000_000;

function userKey(i: number): string {
  return '0x' + (i + 1).toString(16).padStart(64, '0');
}

interface EscapeCase {
  label: string;
  leaves: number;
  root: string;
  account_proof: string;
  balance_proof: string;
  /** Trie levels above the proven leaves (mean of the two proofs). */
  depth: number;
  build_ms: number;
}

/**
 * The state trees, built before the chain starts (a 1M-leaf tree takes a minute of pure-JS
 * hashing that would stall the JSON-RPC shim sharing this thread); only their proofs are kept.
 */
function buildTrees(user: string): EscapeCase[] {
  const out: EscapeCase[] = [];
  for (const [label, n] of [['10k', 10_000], ['100k', 100_000], ['1m', 1_000_000]] as const) {
    if (n > MAX_LEAVES) continue;
    const t0 = performance.now();
    const tree = new StateTree();
    const chunk: [string, { kind: number; key: Uint8Array; value: Uint8Array }][] = [
      ['a', { kind: LeafKind.ACCOUNT, key: accountKey(1), value: accountValue(user) }],
      ['b', { kind: LeafKind.BALANCE, key: balanceKey(1, 0), value: balanceValue(2_000_000, 500_000) }],
    ];
    for (let i = 2; i < n; i++) {
      chunk.push([`n${i}`, { kind: LeafKind.NONCE, key: accountKey(i), value: nonceValue(i) }]);
      if (chunk.length === 100_000) tree.update(chunk.splice(0));
    }
    tree.update(chunk.splice(0));
    const acc = tree.proofOfLeaf(LeafKind.ACCOUNT, accountKey(1))!;
    const bal = tree.proofOfLeaf(LeafKind.BALANCE, balanceKey(1, 0))!;
    out.push({
      label, leaves: n, root: toHex0x(tree.root()), account_proof: encodeLeafProof(acc), balance_proof: encodeLeafProof(bal),
      depth: (acc.siblings.length + bal.siblings.length) / 6, build_ms: Math.round(performance.now() - t0),
    });
  }
  return out;
}

async function main(): Promise<void> {
  const trees = buildTrees(addressFromPrivateKey(userKey(0)));
  const users = Array.from({ length: 4 }, (_, i) => userKey(i));
  const chain = await DevChain.create(CHAIN_ID, [OPERATOR, ...users.map(addressFromPrivateKey)]);
  const rpc = new JsonRpc(await chain.listen());
  const token = new ContractAbi(artifact('TestToken').abi);
  const usdc = (await deployContract(rpc, OPERATOR_KEY, 'TestToken', ['Test USD', 'USDC', 6])).address;
  const deployed = await deploySettlement(rpc, OPERATOR_KEY, OPERATOR, [{ address: ETH_ASSET_ADDRESS, decimals: 18 }, { address: usdc, decimals: 6 }]);
  const c = new SettlementContract(rpc, deployed.address);
  const out: Record<string, number | string> = { bench: 'settlement_gas', deploy_gas: Number(deployed.receipt.gasUsed) };
  await rpc.sendAndWait(OPERATOR_KEY, usdc, token.call('mint', [c.address, 1_000_000n * 10n ** 6n]));
  out.deposit_eth_gas = Number((await c.send(users[0], 'depositEth', [], 100n * ETH)).gasUsed);

  const user = addressFromPrivateKey(users[0]);
  const sign = (asset: string, amount: bigint, nonce: number): string => signWithdrawal(OPERATOR_KEY, {
    settlement_contract: c.address, chain_id: CHAIN_ID, user, asset_address: asset, amount_wei: amount, nonce,
  });
  out.withdraw_eth_gas = Number((await c.withdraw(users[1], user, ETH_ASSET_ADDRESS, ETH, 1, sign(ETH_ASSET_ADDRESS, ETH, 1))).gasUsed);
  out.withdraw_token_gas = Number((await c.withdraw(users[1], user, usdc, 5_000_000n, 2, sign(usdc, 5_000_000n, 2))).gasUsed);

  const root = (i: number): string => toHex0x(new Uint8Array(32).fill(i % 251 + 1));
  let next = 1;
  for (const n of [1, 16, 64]) {
    const r = await c.postRoots(OPERATOR_KEY, next, Array.from({ length: n }, (_, i) => root(next + i)), Array.from({ length: n }, (_, i) => root(next + i + 7)), 0);
    out[`post_roots_${n}_gas`] = Number(r.gasUsed);
    next += n;
  }

  // Escape: one frozen contract per tree size; the user's account and balance leaves among N.
  for (const t of trees) {
    const f = (await deploySettlement(rpc, OPERATOR_KEY, OPERATOR, [{ address: ETH_ASSET_ADDRESS, decimals: 18 }])).address;
    const fc = new SettlementContract(rpc, f);
    await fc.send(users[2], 'depositEth', [], 10n * ETH);
    await fc.postRoots(OPERATOR_KEY, 1, [t.root], [root(0)], 0);
    const payload = '0x' + Buffer.from('{}').toString('hex');
    const envelope = signPersonalMessage(users[3], forceIncludeMessage({ user: addressFromPrivateKey(users[3]), payload, nonce: 1 }));
    await fc.send(users[3], 'forceInclude', [payload, 1, envelope]);
    chain.increaseTime(24 * 3600 + 1);
    out.challenge_gas = Number((await fc.send(users[2], 'challenge', [0])).gasUsed);
    const r = await fc.send(users[0], 'escape', [1, 0, 2_000_000, 500_000, t.account_proof, t.balance_proof]);
    out[`escape_gas_${t.label}`] = Number(r.gasUsed);
    out[`escape_depth_${t.label}`] = t.depth;
    console.log(`escape against ${t.leaves} leaves: ${Number(r.gasUsed)} gas (leaves at depth ~${t.depth}; tree built in ${t.build_ms} ms)`);
  }
  await chain.close();
  out.date = new Date().toISOString();
  console.log(JSON.stringify(out));
}

await main();
