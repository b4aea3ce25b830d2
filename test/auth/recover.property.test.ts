// Property tests: native (the machine's libsecp256k1 through native/build/secp256k1_recover.node,
// and the `secp256k1` npm addon) and noble agree; tampering, high-s and bad v are refused; garbage
// never throws.
import { existsSync } from 'node:fs';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eip191Hash, eip191HashBytes } from '../../src/auth/eip191.js';
import { createRecoverer } from '../../src/auth/recover.js';
import { addressFromPrivateKey, signHash, signPersonalMessage } from '../../src/auth/sign.js';
import { acceptedRecoveryId, parseSignatureHex } from '../../src/auth/signature_rules.js';
import { verifyMessageBytes, verifySignedMessage } from '../../src/auth/verify.js';
import { fromHex, hex } from './vectors.js';

const native = createRecoverer({ backend: 'native' });
const npm = createRecoverer({ library: 'npm' });
const noble = createRecoverer({ backend: 'noble' });
/** Every backend and native library (the name is older than the second native library). */
const both = [native, npm, noble];
const SYSTEM_MODULE = new URL('../../native/build/secp256k1_recover.node', import.meta.url);
const N = secp256k1.Point.CURVE().n;
const RUNS = { numRuns: 120 };

const privateKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .filter((b) => secp256k1.utils.isValidSecretKey(b))
  .map((b) => hex(b));
const message = fc.oneof(fc.string(), fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme' }));

function toWord(v: bigint): Uint8Array {
  return fromHex(v.toString(16).padStart(64, '0'));
}

describe('recovery properties', () => {
  it('the native backend is the machine\'s libsecp256k1 whenever `make native` built its module', () => {
    expect(native.backend).toBe('native');
    expect(npm.library).toBe('npm');
    expect(native.library).toBe(existsSync(SYSTEM_MODULE) ? 'system' : 'npm');
  });

  it('a noble signature over random text recovers to the signer on native and noble', () => {
    fc.assert(
      fc.property(privateKey, message, (key, msg) => {
        const address = addressFromPrivateKey(key);
        const signature_hex = signPersonalMessage(key, msg);
        const sig = parseSignatureHex(signature_hex) as Uint8Array;
        const h = eip191Hash(msg);
        for (const r of both) expect(r.recoverAddress(h, sig)).toBe(address);
        for (const r of both) {
          expect(verifySignedMessage({ message: msg, signature_hex, expected_address: address }, r)).toBe(true);
          const upper = {
            message: msg,
            signature_hex: '0x' + signature_hex.slice(2).toUpperCase(),
            expected_address: '0x' + address.slice(2).toUpperCase(),
          };
          expect(verifySignedMessage(upper, r)).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('flipping any bit of r, s or the message makes it not the signer', () => {
    fc.assert(
      fc.property(
        privateKey,
        fc.uint8Array({ minLength: 1, maxLength: 200 }),
        fc.constantFrom('r', 's', 'message'),
        fc.nat(),
        (key, data, where, bitSeed) => {
          const address = fromHex(addressFromPrivateKey(key));
          const sig = signHash(key, eip191HashBytes(data));
          for (const r of both) expect(verifyMessageBytes(data, sig, address, r)).toBe(true);
          const badSig = sig.slice();
          const badData = data.slice();
          if (where === 'message') {
            const bit = bitSeed % (data.length * 8);
            badData[bit >> 3] ^= 1 << (bit & 7);
          } else {
            const bit = bitSeed % 256;
            badSig[(where === 'r' ? 0 : 32) + (bit >> 3)] ^= 1 << (bit & 7);
          }
          for (const r of both) expect(verifyMessageBytes(badData, badSig, address, r)).toBe(false);
        },
      ),
      RUNS,
    );
  });

  it('the high-s twin (s -> n - s, v flipped) is refused though it is mathematically valid', () => {
    fc.assert(
      fc.property(privateKey, message, (key, msg) => {
        const h = eip191Hash(msg);
        const sig = signHash(key, h);
        const s = BigInt(hex(sig.subarray(32, 64)));
        expect(s <= N / 2n).toBe(true); // we only ever produce low-s
        const twin = sig.slice();
        twin.set(toWord(N - s), 32);
        twin[64] = sig[64] === 27 ? 28 : 27;
        const pub = secp256k1.getPublicKey(fromHex(key));
        expect(secp256k1.verify(twin.subarray(0, 64), h, pub, { prehash: false, lowS: false })).toBe(true);
        expect(acceptedRecoveryId(twin)).toBe(-1);
        for (const r of both) expect(r.recoverAddress(h, twin)).toBeNull();
      }),
      { numRuns: 60 },
    );
  });

  it('v 0/1 is accepted exactly as 27/28; every other v is refused', () => {
    fc.assert(
      fc.property(privateKey, message, fc.integer({ min: 0, max: 255 }), (key, msg, v) => {
        const address = addressFromPrivateKey(key);
        const h = eip191Hash(msg);
        const sig = signHash(key, h);
        const alt = sig.slice();
        alt[64] = sig[64] - 27;
        for (const r of both) expect(r.recoverAddress(h, alt)).toBe(address);
        const other = sig.slice();
        other[64] = v;
        const expected = v === sig[64] || v === sig[64] - 27 ? address : v === 0 || v === 1 || v === 27 || v === 28 ? 'other' : null;
        for (const r of both) {
          const got = r.recoverAddress(h, other);
          if (expected === 'other') expect(got).not.toBe(address);
          else expect(got).toBe(expected);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('random 65-byte signatures: both backends give the same answer and never throw', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 64, maxLength: 64 }),
        fc.constantFrom(0, 1, 27, 28, 2, 29, 255),
        (h, rs, v) => {
          const sig = new Uint8Array(65);
          sig.set(rs);
          sig[64] = v;
          const a = native.recoverAddress(h, sig);
          const b = noble.recoverAddress(h, sig);
          expect(a).toBe(b);
          expect(npm.recoverAddress(h, sig)).toBe(b);
          if (a !== null) expect(a).toMatch(/^0x[0-9a-f]{40}$/);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('r or s of 0, n or above, and s above n/2 are refused on both backends', () => {
    const h = eip191Hash('edge');
    const good = signHash('0x' + '11'.repeat(32), h);
    const cases: [string, bigint][] = [
      ['r', 0n],
      ['r', N],
      ['r', N + 1n],
      ['r', 2n ** 256n - 1n],
      ['s', 0n],
      ['s', N],
      ['s', N - 1n],
      ['s', N / 2n + 1n],
      ['s', 2n ** 256n - 1n],
    ];
    for (const [which, value] of cases) {
      const sig = good.slice();
      sig.set(toWord(value), which === 'r' ? 0 : 32);
      expect(acceptedRecoveryId(sig)).toBe(-1);
      for (const r of both) expect(r.recoverAddress(h, sig)).toBeNull();
    }
    // s exactly n/2 (floor) is the largest accepted s.
    const edge = good.slice();
    edge.set(toWord(N / 2n), 32);
    expect(acceptedRecoveryId(edge)).toBe(good[64] - 27);
    expect(native.recoverAddress(h, edge)).toBe(noble.recoverAddress(h, edge));
  });

  it('garbage hex and wrong types are refused without throwing', () => {
    const text = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary', minLength: 132, maxLength: 132 }),
      fc.stringMatching(/^0x[0-9a-fA-F]{0,140}$/),
      fc.constant('0x' + 'zz'.repeat(65)),
    );
    const sigHex = signPersonalMessage('0x' + '11'.repeat(32), 'm');
    const address = addressFromPrivateKey('0x' + '11'.repeat(32));
    fc.assert(
      fc.property(text, text, (s, a) => {
        const parsed = parseSignatureHex(s);
        if (parsed !== null) expect(s).toMatch(/^0x[0-9a-fA-F]{130}$/);
        for (const r of both) {
          expect(() => verifySignedMessage({ message: 'm', signature_hex: s, expected_address: a }, r)).not.toThrow();
          expect(verifySignedMessage({ message: 'm', signature_hex: sigHex, expected_address: a }, r)).toBe(
            a.startsWith('0x') && a.toLowerCase() === address,
          );
        }
      }),
      { numRuns: 300 },
    );
    const hostile: unknown[] = [null, undefined, 42, {}, [], 'x', { message: 1 }, { message: 'm', signature_hex: 5 }];
    for (const item of hostile) {
      expect(verifySignedMessage(item as never)).toBe(false);
    }
    expect(verifySignedMessage({ message: 'm', signature_hex: sigHex, expected_address: address })).toBe(true);
    expect(verifySignedMessage({ message: 'm', signature_hex: sigHex + '00', expected_address: address })).toBe(false);
    expect(verifySignedMessage({ message: 'm', signature_hex: sigHex.slice(2), expected_address: address })).toBe(false);
    expect(verifySignedMessage({ message: 'm', signature_hex: sigHex, expected_address: address.slice(2) })).toBe(false);
    expect(verifySignedMessage({ message: 'm', signature_hex: '0X' + sigHex.slice(2), expected_address: address })).toBe(false);
    expect(verifySignedMessage({ message: 'm', signature_hex: sigHex, expected_address: '0X' + address.slice(2) })).toBe(false);
    for (const r of both) {
      expect(r.recoverAddress(new Uint8Array(31), parseSignatureHex(sigHex) as Uint8Array)).toBeNull();
      expect(r.recoverAddress(new Uint8Array(32), new Uint8Array(64))).toBeNull();
      expect(r.recoverAddress(null as never, null as never)).toBeNull();
    }
  });

  it('signing helpers refuse bad private keys', () => {
    for (const bad of ['', '0x', '0x' + '00'.repeat(32), '0x' + 'ff'.repeat(32), '0x' + '11'.repeat(31), '0x' + 'gg'.repeat(32)]) {
      expect(() => addressFromPrivateKey(bad)).toThrow(TypeError);
      expect(() => signPersonalMessage(bad, 'm')).toThrow(TypeError);
    }
    expect(addressFromPrivateKey('11'.repeat(32))).toBe(addressFromPrivateKey('0x' + '11'.repeat(32)));
  });
});
