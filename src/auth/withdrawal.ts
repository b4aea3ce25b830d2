// Operator withdrawal authorisation for the settlement contract (DECISIONS "Accounts and money"):
//   digest    = keccak256(abi.encode(address settlement_contract, uint256 chain_id, address user,
//                                    address asset_address, uint256 amount_wei, uint256 nonce))
//   signature = EIP-191 personal_sign by the operator key over the 32 raw digest bytes
//               (viem signMessage({message: {raw: digest}})), 65 bytes r || s || v, v 27/28.
// Wei amounts are bigint here: this code runs outside the matcher.
import { keccak_256 } from '@noble/hashes/sha3.js';
import { parseHexStringInto, toHex0x, isHexOfLength } from './hex.js';
import { signPersonalMessage } from './sign.js';

/** The all-zero address: ETH's asset address. */
export const ETH_ASSET_ADDRESS = '0x0000000000000000000000000000000000000000';

export interface WithdrawalDigestFields {
  settlement_contract: string;
  chain_id: bigint | number;
  user: string;
  asset_address: string;
  amount_wei: bigint;
  nonce: bigint | number;
}

const UINT256_MAX = (1n << 256n) - 1n;

function putAddress(out: Uint8Array, word: number, value: string, field: string): void {
  if (!isHexOfLength(value, 20) || !parseHexStringInto(value, 2, 20, out, 32 * word + 12)) {
    throw new TypeError(`${field} must be a 0x-prefixed 20-byte hex address`);
  }
}

function putUint(out: Uint8Array, word: number, value: bigint | number, field: string): void {
  let v: bigint;
  if (typeof value === 'bigint') v = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) v = BigInt(value);
  else throw new TypeError(`${field} must be a bigint or a safe integer`);
  if (v < 0n || v > UINT256_MAX) throw new RangeError(`${field} is out of uint256 range`);
  for (let i = 31; i >= 0; i--) {
    out[32 * word + i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

/**
 * The asset address and wei amount the digest names for `units` engine units of an asset
 * (DECISIONS: ETH is the zero address; 1 engine unit = 10^(onchain_decimals - 6) base units).
 */
export function onchainAmount(asset: { symbol: string; token_address: string; onchain_decimals: number }, units: number):
  { asset_address: string; amount_wei: bigint } {
  return {
    asset_address: asset.symbol === 'ETH' ? ETH_ASSET_ADDRESS : asset.token_address,
    amount_wei: BigInt(units) * 10n ** BigInt(asset.onchain_decimals - 6),
  };
}

/** abi.encode of the six fields: six 32-byte words, addresses left-padded with zeros. */
export function encodeWithdrawal(f: WithdrawalDigestFields): Uint8Array {
  const out = new Uint8Array(6 * 32);
  putAddress(out, 0, f.settlement_contract, 'settlement_contract');
  putUint(out, 1, f.chain_id, 'chain_id');
  putAddress(out, 2, f.user, 'user');
  putAddress(out, 3, f.asset_address, 'asset_address');
  putUint(out, 4, f.amount_wei, 'amount_wei');
  putUint(out, 5, f.nonce, 'nonce');
  return out;
}

/** The 32-byte withdrawal digest. */
export function withdrawalDigest(f: WithdrawalDigestFields): Uint8Array {
  return keccak_256(encodeWithdrawal(f));
}

/** The withdrawal digest as lowercase 0x hex. */
export function withdrawalDigestHex(f: WithdrawalDigestFields): string {
  return toHex0x(withdrawalDigest(f));
}

/** The operator's signature (`0x` + 130 hex) over the digest bytes, EIP-191 prefixed. */
export function signWithdrawal(operatorPrivateKeyHex: string, f: WithdrawalDigestFields): string {
  return signPersonalMessage(operatorPrivateKeyHex, { raw: withdrawalDigest(f) });
}
