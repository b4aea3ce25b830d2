// native/build/secp256k1_recover.node (native/secp256k1_recover.c) called directly: it is built
// wherever libsecp256k1's header is (make native installs libsecp256k1-dev on Debian, so CI has
// it); a valid signature recovers the key noble signed with; every wrong argument throws instead
// of being coerced: wrong types and lengths (a detached buffer has length 0) a TypeError, a recid
// that is a number but not an integer in 0..3 a RangeError (napi_get_value_int32 had turned NaN
// into 0, 1.9 into 1 and 2^32 + 1 into 1, so those recovered a key).
import { existsSync } from 'node:fs';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { describe, expect, it } from 'vitest';
import { loadSystemSecp256k1, type SystemSecp256k1 } from '../../src/auth/secp256k1_native.js';
import { signHash } from '../../src/auth/sign.js';
import { fromHex, hex } from './vectors.js';

/** Where native/Makefile looks for the header (SECP256K1_HEADER). */
const HEADERS = ['/usr/include/secp256k1_recovery.h', '/usr/local/include/secp256k1_recovery.h'];
const header = HEADERS.find((h) => existsSync(h)) ?? null;
const addon = loadSystemSecp256k1();

describe('native/build/secp256k1_recover.node', () => {
  it('loads wherever libsecp256k1\'s header is installed (make native builds it then)', () => {
    // Without the header there is nothing to build, and the cases below cannot run: said here.
    if (header === null) console.warn('secp256k1_addon.test: no secp256k1_recovery.h here, so no addon to call (make native installs libsecp256k1-dev on Debian)');
    else expect(addon, `${header} exists but native/build/secp256k1_recover.node does not load: run make native`).not.toBeNull();
  });
});

/** Detaches `b`'s buffer (transferred away): the view then has length 0 and no data. */
function detached(length: number): Uint8Array {
  const b = new Uint8Array(length);
  structuredClone(b.buffer, { transfer: [b.buffer] });
  return b;
}

describe.runIf(addon !== null)('secp256k1_recover.node recover() (needs the addon: make native with libsecp256k1-dev)', () => {
  const system = addon as SystemSecp256k1;
  const key = `0x${'3c'.repeat(32)}`;
  const hash = new Uint8Array(32).map((_, i) => i * 7 + 1);
  const sig65 = signHash(key, hash);
  const recid = sig65[64] - 27;
  const expected = hex(secp256k1.getPublicKey(fromHex(key), false));

  it('recovers the key noble signed with; the other recovery id does not give it', () => {
    const out = new Uint8Array(65);
    expect(system.recover(sig65, recid, hash, out)).toBe(true);
    expect(hex(out)).toBe(expected);
    // A Buffer is a Uint8Array: taken as well. 64 bytes of sig are enough (v is not read).
    const out2 = Buffer.alloc(65);
    expect(system.recover(Buffer.from(sig65.subarray(0, 64)), recid, Buffer.from(hash), out2)).toBe(true);
    expect(hex(out2)).toBe(expected);
    const other = new Uint8Array(65);
    if (system.recover(sig65, 1 - recid, hash, other)) expect(hex(other)).not.toBe(expected);
  });

  it('buffers of the wrong length, or detached, throw a TypeError', () => {
    const out = new Uint8Array(65);
    expect(() => system.recover(sig65.subarray(0, 63), recid, hash, out)).toThrow(TypeError);
    expect(() => system.recover(sig65, recid, hash.subarray(0, 31), out)).toThrow(TypeError);
    expect(() => system.recover(sig65, recid, new Uint8Array(33), out)).toThrow(TypeError);
    expect(() => system.recover(sig65, recid, hash, new Uint8Array(64))).toThrow(TypeError);
    expect(() => system.recover(detached(65), recid, hash, out)).toThrow(TypeError);
    expect(() => system.recover(sig65, recid, detached(32), out)).toThrow(TypeError);
    expect(() => system.recover(sig65, recid, hash, detached(65))).toThrow(TypeError);
  });

  it('arguments of the wrong type throw a TypeError', () => {
    const out = new Uint8Array(65);
    const loose = system.recover as unknown as (...args: unknown[]) => boolean;
    expect(() => loose(sig65, recid, hash)).toThrow(TypeError);
    expect(() => loose(Array.from(sig65), recid, hash, out)).toThrow(TypeError);
    expect(() => loose(new Uint16Array(65), recid, hash, out)).toThrow(TypeError);
    expect(() => loose(sig65, recid, hash.buffer, out)).toThrow(TypeError);
    for (const bad of [String(recid), null, undefined, BigInt(recid), true]) {
      expect(() => loose(sig65, bad, hash, out), String(bad)).toThrow(TypeError);
    }
  });

  it('a recid that is not an integer in 0..3 throws a RangeError (never coerced to one that recovers)', () => {
    const out = new Uint8Array(65);
    for (const bad of [Number.NaN, recid + 0.9, recid + 0.5, -1, 4, 2 ** 32, 2 ** 32 + recid, Infinity, -Infinity]) {
      expect(() => system.recover(sig65, bad, hash, out), String(bad)).toThrow(RangeError);
    }
    // 2 and 3 are libsecp256k1's own ids (x = r + n): taken, and this signature does not recover with them.
    for (const high of [2, 3]) expect(system.recover(sig65, high, hash, out)).toBe(false);
  });
});
