// Every case of vectors/eip191.json: message text, EIP-191 hash, recovery on both backends,
// verification, and our own signing (RFC 6979, so byte-equal to viem's).
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { eip191Hash } from '../../src/auth/eip191.js';
import {
  cancelMessage,
  challengeMessage,
  orderJsonMessage,
  orderMessage,
  referralMessage,
  withdrawalMessage,
} from '../../src/auth/messages.js';
import { createRecoverer, nativeBackendAvailable, recoverAddress, recoverBackendName } from '../../src/auth/recover.js';
import { addressFromPrivateKey, signPersonalMessage } from '../../src/auth/sign.js';
import { parseSignatureHex } from '../../src/auth/signature_rules.js';
import { verifySignedMessage } from '../../src/auth/verify.js';
import { eip191Cases, fromHex, hex } from './vectors.js';

const A = '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a';
const B = '0x1563915e194d8cfba1943570603f7606a3115508';
const firstOrder = (): string =>
  orderMessage({ market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000, quantity: 500_000, nonce: 7 });

/** The builder call that must reproduce each vector's message; an unknown `what` fails the test. */
const builders: Record<string, () => string> = {
  'order, colon form': firstOrder,
  'order, JSON form': () =>
    orderJsonMessage({
      market_id: 'ETH-USDC',
      side: 'bid',
      price: 2_000_000_000,
      quantity: 500_000,
      order_type: 'limit',
      time_in_force: 'gtc',
      nonce: 7,
    }),
  'market order, colon form': () =>
    orderMessage({ market_id: 'ETH-USDC', side: 'bid', price: null, quantity: 500_000, nonce: 8 }),
  cancel: () => cancelMessage({ order_id: 42, client_order_id: '', nonce: 9 }),
  'cancel by client order id': () => cancelMessage({ order_id: '', client_order_id: 'mm-quote-1', nonce: 10 }),
  referral: () => referralMessage({ referred: A, referrer: B, nonce: 11 }),
  withdraw: () => withdrawalMessage({ address: A, asset: 'USDC', amount: 5_000_000, nonce: 12 }),
  'websocket challenge': () => challengeMessage('9f86d081884c7d659a2feaa0c55ad015'),
  'high-s twin of the first case (must be refused)': firstOrder,
  'eth_sign of the raw message hash, no EIP-191 prefix (must be refused)': firstOrder,
};

const backends = nativeBackendAvailable() ? (['native', 'noble'] as const) : (['noble'] as const);

describe('vectors/eip191.json', () => {
  it('has the expected shape (8 forms x 3 keys + 2 refusals)', () => {
    expect(eip191Cases.length).toBe(26);
    expect(eip191Cases.filter((c) => !c.valid).length).toBe(2);
  });

  it('the native backend is the default on this machine', () => {
    expect(nativeBackendAvailable()).toBe(true);
    expect(recoverBackendName()).toBe('native');
  });

  describe.each(eip191Cases.map((c, i) => [`#${i} ${c.what} (${c.address.slice(0, 8)})`, c] as const))(
    '%s',
    (_name, c) => {
      it('builder reproduces the message byte for byte', () => {
        const build = builders[c.what];
        expect(build, `no builder for "${c.what}"`).toBeTypeOf('function');
        expect(build()).toBe(c.message);
      });

      it('eip191 hash matches', () => {
        expect(hex(eip191Hash(c.message))).toBe(c.eip191_hash);
      });

      it('the private key gives the address', () => {
        expect(addressFromPrivateKey(c.private_key)).toBe(c.address);
      });

      it.each(backends)('recovery on %s: address when valid, refusal otherwise', (backend) => {
        const r = createRecoverer({ backend });
        const sig = parseSignatureHex(c.signature);
        expect(sig).not.toBeNull();
        const got = r.recoverAddress(fromHex(c.eip191_hash), sig as Uint8Array);
        if (c.valid) expect(got).toBe(c.address);
        else expect(got).not.toBe(c.address);
        const item = { message: c.message, signature_hex: c.signature, expected_address: c.address };
        expect(verifySignedMessage(item, r)).toBe(c.valid);
        // Case-insensitive address compare.
        const upper = { ...item, expected_address: '0x' + c.address.slice(2).toUpperCase() };
        expect(verifySignedMessage(upper, r)).toBe(c.valid);
      });

      if (c.valid) {
        it('our signer produces the same signature as viem', () => {
          expect(signPersonalMessage(c.private_key, c.message)).toBe(c.signature);
        });
      }
    },
  );

  it('the high-s twin really is the first signature with s -> n - s and v flipped', () => {
    const first = eip191Cases[0];
    const twin = eip191Cases.find((c) => c.what.startsWith('high-s'));
    expect(twin).toBeDefined();
    const a = fromHex(first.signature);
    const b = fromHex((twin as { signature: string }).signature);
    expect(hex(b.subarray(0, 32))).toBe(hex(a.subarray(0, 32)));
    const n = secp256k1.Point.CURVE().n;
    const s = BigInt(hex(a.subarray(32, 64)));
    expect(BigInt(hex(b.subarray(32, 64)))).toBe(n - s);
    expect(b[64]).toBe(a[64] === 27 ? 28 : 27);
    // A backend with no low-s rule would accept it: our refusal is the explicit check.
    const pub = secp256k1.getPublicKey(fromHex(first.private_key));
    expect(
      secp256k1.verify(b.subarray(0, 64), fromHex(twin?.eip191_hash ?? ''), pub, { prehash: false, lowS: false }),
    ).toBe(true);
    expect(recoverAddress(fromHex(first.eip191_hash), b)).toBeNull();
  });

  it('the eth_sign case is a genuine signature over the un-prefixed keccak, refused as personal_sign', () => {
    const c = eip191Cases.find((x) => x.what.startsWith('eth_sign'));
    expect(c).toBeDefined();
    const e = c as (typeof eip191Cases)[number];
    const rawHash = keccak_256(new TextEncoder().encode(e.message));
    const sig = parseSignatureHex(e.signature) as Uint8Array;
    for (const backend of backends) {
      const r = createRecoverer({ backend });
      expect(r.recoverAddress(rawHash, sig)).toBe(e.address); // it is eth_sign by the key...
      expect(r.recoverAddress(eip191Hash(e.message), sig)).not.toBe(e.address); // ...not personal_sign
    }
  });
});
