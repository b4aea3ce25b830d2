// Signed order messages for the verify benches (bench/verify.ts, bench/verify_queue.ts): fresh keys,
// the JSON order form, each with its EIP-191 hash and signature.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { eip191Hash } from '../src/auth/eip191.js';
import { orderJsonMessage } from '../src/auth/messages.js';
import { addressFromPrivateKey, signHash } from '../src/auth/sign.js';
import { toHex0x } from '../src/auth/hex.js';
import type { SignedMessage } from '../src/auth/verify.js';

export interface Case {
  hash: Uint8Array;
  sig: Uint8Array;
  address: string;
  item: SignedMessage;
}

/**
 * `count` cases signed by fresh random keys, or, with `seed`, by keys derived from it (the same
 * cases in every run: bench/verify_path.ts under callgrind compares runs whose recoveries must
 * cost the same instructions).
 */
export function makeCases(count: number, seed?: number): Case[] {
  const cases: Case[] = [];
  for (let i = 0; i < count; i++) {
    const key = toHex0x(seed === undefined ? secp256k1.utils.randomSecretKey() : keccak_256(new TextEncoder().encode(`verify_cases ${seed} ${i}`)));
    const address = addressFromPrivateKey(key);
    const message = orderJsonMessage({
      market_id: i % 2 === 0 ? 'ETH-USDC' : 'BTC-USDC',
      side: i % 3 === 0 ? 'ask' : 'bid',
      price: 2_000_000_000 + i * 10_000,
      quantity: 500_000 + i,
      order_type: 'limit',
      time_in_force: 'gtc',
      nonce: 1_700_000_000_000 + i,
    });
    const hash = eip191Hash(message);
    const sig = signHash(key, hash);
    cases.push({ hash, sig, address, item: { message, signature_hex: toHex0x(sig), expected_address: address } });
  }
  return cases;
}
