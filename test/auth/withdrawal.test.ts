// Operator withdrawal digest and signature against vectors/withdrawal-signature.json.
import { describe, expect, it } from 'vitest';
import { eip191HashBytes } from '../../src/auth/eip191.js';
import { createRecoverer } from '../../src/auth/recover.js';
import { addressFromPrivateKey } from '../../src/auth/sign.js';
import { parseSignatureHex } from '../../src/auth/signature_rules.js';
import {
  encodeWithdrawal,
  ETH_ASSET_ADDRESS,
  signWithdrawal,
  withdrawalDigest,
  withdrawalDigestHex,
  type WithdrawalDigestFields,
} from '../../src/auth/withdrawal.js';
import { hex, withdrawalVector as v } from './vectors.js';

const fields: WithdrawalDigestFields = {
  settlement_contract: v.contract,
  chain_id: v.chain_id,
  user: v.user,
  asset_address: v.asset,
  amount_wei: BigInt(v.amount_wei),
  nonce: v.nonce,
};

describe('operator withdrawal signature', () => {
  it('digest matches the vector', () => {
    expect(v.asset).toBe(ETH_ASSET_ADDRESS);
    expect(withdrawalDigestHex(fields)).toBe(v.digest);
  });

  it('signature matches the vector byte for byte and recovers to the operator', () => {
    expect(addressFromPrivateKey(v.operator_private_key)).toBe(v.operator_address);
    const sig = signWithdrawal(v.operator_private_key, fields);
    expect(sig).toBe(v.signature);
    const bytes = parseSignatureHex(sig) as Uint8Array;
    expect([27, 28]).toContain(bytes[64]);
    for (const backend of ['native', 'noble'] as const) {
      expect(createRecoverer({ backend }).recoverAddress(eip191HashBytes(withdrawalDigest(fields)), bytes)).toBe(
        v.operator_address,
      );
    }
  });

  it('abi.encode layout: six words, addresses left-padded', () => {
    const enc = encodeWithdrawal(fields);
    expect(enc.length).toBe(192);
    expect(hex(enc.subarray(0, 32))).toBe('0x' + '00'.repeat(12) + v.contract.slice(2));
    expect(BigInt(hex(enc.subarray(32, 64)))).toBe(31337n);
    expect(hex(enc.subarray(64, 96))).toBe('0x' + '00'.repeat(12) + v.user.slice(2));
    expect(hex(enc.subarray(96, 128))).toBe('0x' + '00'.repeat(32));
    expect(BigInt(hex(enc.subarray(128, 160)))).toBe(1_500_000_000_000_000_000n);
    expect(BigInt(hex(enc.subarray(160, 192)))).toBe(12n);
  });

  it('number and bigint integers, and address case, give the same digest', () => {
    const alt = {
      ...fields,
      chain_id: 31337n,
      nonce: 12n,
      user: '0x' + v.user.slice(2).toUpperCase(),
      settlement_contract: v.contract.toUpperCase().replace('0X', '0x'),
    };
    expect(withdrawalDigestHex(alt)).toBe(v.digest);
  });

  it('refuses bad addresses and out-of-range integers', () => {
    const bad: Partial<Record<keyof WithdrawalDigestFields, unknown>>[] = [
      { user: v.user.slice(0, 41) },
      { user: v.user.slice(2) },
      { asset_address: 'ETH' },
      { settlement_contract: '0x' + 'zz'.repeat(20) },
      { amount_wei: -1n },
      { amount_wei: 1n << 256n },
      { amount_wei: 1.5 },
      { chain_id: -1 },
      { chain_id: 2 ** 53 },
      { nonce: '12' },
    ];
    for (const patch of bad) {
      expect(() => withdrawalDigest({ ...fields, ...patch } as WithdrawalDigestFields)).toThrow();
    }
    expect(() => withdrawalDigest({ ...fields, amount_wei: (1n << 256n) - 1n })).not.toThrow();
    expect(() => signWithdrawal('0x1234', fields)).toThrow(TypeError);
  });
});
