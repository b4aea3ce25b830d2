// Loads the shared viem-made vectors (/work/shared/vectors, a sibling of the repo).
import { readFileSync } from 'node:fs';

export interface Eip191Case {
  what: string;
  private_key: string;
  address: string;
  message: string;
  eip191_hash: string;
  signature: string;
  valid: boolean;
}

export interface WithdrawalVector {
  operator_private_key: string;
  operator_address: string;
  contract: string;
  chain_id: number;
  user: string;
  asset: string;
  amount_wei: string;
  nonce: number;
  digest: string;
  signature: string;
}

function load<T>(name: string): T {
  const url = new URL(`../../../shared/vectors/${name}`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as T;
}

export const eip191Cases: Eip191Case[] = load<{ cases: Eip191Case[] }>('eip191.json').cases;
export const withdrawalVector: WithdrawalVector = load<WithdrawalVector>('withdrawal-signature.json');

export function hex(bytes: Uint8Array): string {
  return '0x' + Buffer.from(bytes).toString('hex');
}

export function fromHex(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text.replace(/^0x/, ''), 'hex'));
}
