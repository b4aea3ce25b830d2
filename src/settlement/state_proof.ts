// Escape-hatch proofs (contracts/StateProof.sol) from a StateRootBuilder at the escape root:
// the account leaf (account id -> address) and the leaves the contract pays from (balances,
// pending withdrawals), each as the `bytes` proof the contract decodes.
import type { StateRootBuilder } from '../da/state_root.js';
import type { LeafProof } from '../da/state_tree.js';
import {
  LeafKind, accountKey, balanceKey, getU16, getU32, getU64, withdrawalKey,
} from '../da/state_leaves.js';
import { toHex0x } from '../util/hex.js';
import { encodeParams } from './abi_codec.js';

/** abi.encode(bytes32[] siblings): StateProof.verify's `proof`. */
export function encodeLeafProof(p: LeafProof): string {
  return toHex0x(encodeParams(['bytes32[]'], [p.siblings]));
}

export interface EscapeClaim {
  asset: number;
  available_units: number;
  locked_units: number;
  proof: string;
}

export interface WithdrawalClaim {
  nonce: number;
  asset: number;
  amount_units: number;
  proof: string;
}

export interface EscapeProofs {
  account: number;
  address: string;
  account_proof: string;
  balances: EscapeClaim[];
  withdrawals: WithdrawalClaim[];
}

/**
 * Every claim `address` has in the builder's state: its account leaf, a balance proof per asset
 * with a non-zero balance, and a proof per pending withdrawal. Null when it is no account.
 */
export function escapeProofs(b: StateRootBuilder, address: string, asset_count: number): EscapeProofs | null {
  const account = accountOfAddress(b, address);
  if (account === null) return null;
  const acc = b.proofOfLeaf(LeafKind.ACCOUNT, accountKey(account));
  if (acc === null || toHex0x(acc.value) !== address.toLowerCase()) return null;
  const balances: EscapeClaim[] = [];
  for (let asset = 0; asset < asset_count; asset++) {
    const p = b.proofOfLeaf(LeafKind.BALANCE, balanceKey(account, asset));
    if (p === null) continue;
    const available_units = getU64(p.value, 0);
    const locked_units = getU64(p.value, 8);
    if (available_units + locked_units === 0) continue;
    balances.push({ asset, available_units, locked_units, proof: encodeLeafProof(p) });
  }
  const withdrawals: WithdrawalClaim[] = [];
  for (const leaf of b.rawLeaves()) {
    if (leaf.kind !== LeafKind.PENDING_WITHDRAWAL || getU32(leaf.key, 0) !== account) continue;
    const nonce = getU64(leaf.key, 4);
    const p = b.proofOfLeaf(LeafKind.PENDING_WITHDRAWAL, withdrawalKey(account, nonce));
    if (p === null) continue;
    withdrawals.push({ nonce, asset: getU16(p.value, 0), amount_units: getU64(p.value, 2), proof: encodeLeafProof(p) });
  }
  return { account, address: address.toLowerCase(), account_proof: encodeLeafProof(acc), balances, withdrawals };
}

/** The account id the state's account leaves bind to `address` (null: none). */
export function accountOfAddress(b: StateRootBuilder, address: string): number | null {
  const want = address.toLowerCase();
  for (const leaf of b.rawLeaves()) {
    if (leaf.kind === LeafKind.ACCOUNT && toHex0x(leaf.value) === want) return getU32(leaf.key, 0);
  }
  return null;
}
