// The batch recovery (issue 11, h22v): native/build/secp256k1_recover.node's recoverRows against
// its single recover() row by row, and every recoverer's recoverAddressRowsInto against its own
// recoverAddressInto and against @noble/curves (the signer's address), on valid rows, invalid ones
// (v not 27/28/0/1, high s, r = 0, s = 0, r = n, an r with no curve point, a wrong digest) and
// both mixed in one call, including a full call of RECOVER_ROWS_MAX rows and one row.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 as keccak } from '@noble/hashes/sha3.js';
import { describe, expect, it } from 'vitest';
import { createRecoverer, nativeBackendAvailable, type Recoverer } from '../../src/auth/recover.js';
import { RECOVER_ROW_BYTES, RECOVER_ROW_HASH_AT, RECOVER_ROW_SIG_AT, RECOVER_ROWS_MAX } from '../../src/auth/recover_rows.js';
import { addressFromPrivateKey, signHash } from '../../src/auth/sign.js';
import { loadSystemSecp256k1, type SystemSecp256k1 } from '../../src/auth/secp256k1_native.js';
import { fromHex, hex } from './vectors.js';

const N = secp256k1.Point.CURVE().n;
const word = (v: bigint): Uint8Array => fromHex(v.toString(16).padStart(64, '0'));

interface Row {
  what: string;
  hash: Uint8Array;
  sig: Uint8Array;
  /** The signer's address when the acceptance rules and the curve accept the row, else null. */
  address: string | null;
}

const KEYS = Array.from({ length: 8 }, (_, i) => `0x${(i + 1).toString(16).padStart(2, '0').repeat(32)}`);

function hashOf(i: number): Uint8Array {
  return new Uint8Array(32).map((_, j) => (i * 31 + j * 7 + 3) & 255);
}

/** Valid rows, then each kind of invalid one, from `n` seeds. */
function rowsOf(n: number): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < n; i++) {
    const key = KEYS[i % KEYS.length];
    const hash = hashOf(i);
    const sig = signHash(key, hash);
    const kind = i % 9;
    const bad = (what: string, edit: (s: Uint8Array) => void): Row => {
      const s = Uint8Array.from(sig);
      edit(s);
      return { what, hash, sig: s, address: null };
    };
    if (kind === 0 || kind === 4) rows.push({ what: 'valid v 27/28', hash, sig, address: addressFromPrivateKey(key) });
    else if (kind === 1) rows.push({ what: 'valid v 0/1', hash, sig: Uint8Array.from(sig).fill(sig[64] - 27, 64), address: addressFromPrivateKey(key) });
    else if (kind === 2) rows.push(bad('bad v', (s) => { s[64] = [2, 3, 26, 29, 35, 255][i % 6]; }));
    else if (kind === 3) {
      // high s: n - s with the other parity is the same point, which libsecp256k1 recovers; refused by the rules
      rows.push(bad('high s', (s) => {
        s.set(word(N - BigInt(`0x${hex(s.subarray(32, 64)).slice(2)}`)), 32);
        s[64] = s[64] === 27 ? 28 : 27;
      }));
    } else if (kind === 5) rows.push(bad('r = 0', (s) => s.fill(0, 0, 32)));
    else if (kind === 6) rows.push(bad('s = 0', (s) => s.fill(0, 32, 64)));
    else if (kind === 7) rows.push(bad('r = n', (s) => s.set(word(N), 0)));
    else {
      // r = 5: x = 5 is not on the curve (5^3 + 7 = 132 has no square root mod p)
      rows.push(bad('r with no point', (s) => s.set(word(5n), 0)));
    }
  }
  return rows;
}

/** The rows' table for recoverAddressRowsInto (4-byte aligned). */
function table(rows: readonly Row[]): Uint8Array {
  const t = new Uint8Array(new ArrayBuffer(RECOVER_ROW_BYTES * Math.max(1, rows.length)));
  rows.forEach((r, i) => {
    t.set(r.hash, i * RECOVER_ROW_BYTES + RECOVER_ROW_HASH_AT);
    t.set(r.sig, i * RECOVER_ROW_BYTES + RECOVER_ROW_SIG_AT);
  });
  return t;
}

/** noble's answer for a row: the address when the acceptance rules let it through, else null. */
function nobleAddress(r: Row): string | null {
  const v = r.sig[64];
  const recid = v === 27 || v === 28 ? v - 27 : v === 0 || v === 1 ? v : -1;
  const rv = BigInt(`0x${hex(r.sig.subarray(0, 32)).slice(2)}`);
  const sv = BigInt(`0x${hex(r.sig.subarray(32, 64)).slice(2)}`);
  if (recid < 0 || rv === 0n || rv >= N || sv === 0n || sv > N / 2n) return null;
  try {
    const pub = secp256k1.Signature.fromBytes(r.sig.subarray(0, 64), 'compact').addRecoveryBit(recid).recoverPublicKey(r.hash).toBytes(false);
    return addressOfKey(pub);
  } catch {
    return null;
  }
}

/** The address of an uncompressed key by @noble/hashes' keccak (not the module under test's hash-wasm path). */
function addressOfKey(pub65: Uint8Array): string {
  return `0x${hex(keccak(pub65.subarray(1))).slice(-40)}`;
}

const recoverers: Recoverer[] = [createRecoverer({ backend: 'noble' })];
if (nativeBackendAvailable('system')) recoverers.push(createRecoverer({ library: 'system' }));
if (nativeBackendAvailable('npm')) recoverers.push(createRecoverer({ library: 'npm' }));

describe('recoverAddressRowsInto', () => {
  const rows = rowsOf(2 * RECOVER_ROWS_MAX);
  it('the cases are what they say (noble\'s answers)', () => {
    for (const r of rows) expect(nobleAddress(r), r.what).toBe(r.address);
    expect(new Set(rows.map((r) => r.what)).size).toBe(8);
  });

  for (const rec of recoverers) {
    describe(`${rec.library ?? 'noble'}`, () => {
      const check = (part: readonly Row[]): void => {
        const t = table(part);
        const addresses = new Uint8Array(20 * part.length).fill(0xee);
        const ok = new Uint8Array(part.length).fill(7);
        const n = rec.recoverAddressRowsInto(t, part.length, addresses, ok);
        expect(n).toBe(part.filter((r) => r.address !== null).length);
        part.forEach((r, i) => {
          expect(ok[i], `${i} ${r.what}`).toBe(r.address === null ? 0 : 1);
          if (r.address !== null) expect(hex(addresses.subarray(20 * i, 20 * i + 20)), r.what).toBe(r.address);
          const single = new Uint8Array(20);
          const one = rec.recoverAddressInto(r.hash, r.sig, single);
          expect(one, `single ${r.what}`).toBe(r.address !== null);
          if (one) expect(hex(single)).toBe(r.address);
        });
      };
      it('agrees with the single call and noble on mixed rows: a full call, short ones, one row', () => {
        check(rows.slice(0, RECOVER_ROWS_MAX));
        check(rows.slice(RECOVER_ROWS_MAX, RECOVER_ROWS_MAX + 13));
        check(rows.slice(3, 4)); // high s alone
        check(rows.slice(0, 1));
        check([]);
      });
      it('all valid and all invalid calls', () => {
        check(rows.filter((r) => r.address !== null).slice(0, RECOVER_ROWS_MAX));
        check(rows.filter((r) => r.address === null).slice(0, RECOVER_ROWS_MAX));
      });
      it('refuses a count over RECOVER_ROWS_MAX, negative, fractional or past the buffers', () => {
        const t = table(rows.slice(0, 4));
        const a = new Uint8Array(20 * RECOVER_ROWS_MAX * 2);
        const ok = new Uint8Array(RECOVER_ROWS_MAX * 2);
        for (const bad of [RECOVER_ROWS_MAX + 1, -1, 1.5, Number.NaN, 5]) {
          expect(() => rec.recoverAddressRowsInto(t, bad, a, ok), String(bad)).toThrow(RangeError);
        }
        expect(() => rec.recoverAddressRowsInto(t, 4, a.subarray(0, 79), ok)).toThrow(RangeError);
        expect(() => rec.recoverAddressRowsInto(t, 4, a, ok.subarray(0, 3))).toThrow(RangeError);
      });
    });
  }
});

const addon = loadSystemSecp256k1();

describe.runIf(addon !== null && addon.recoverRows !== undefined)('secp256k1_recover.node recoverRows() against recover() (needs make native)', () => {
  const system = addon as Required<SystemSecp256k1>;
  /** Rows with a recovery id byte (0..3, or anything else: refused), as recover.ts writes them. */
  function rawTable(cases: { hash: Uint8Array; sig: Uint8Array; recid: number }[]): Uint8Array {
    const t = new Uint8Array(RECOVER_ROW_BYTES * Math.max(1, cases.length));
    cases.forEach((c, i) => {
      t.set(c.hash, i * RECOVER_ROW_BYTES);
      t.set(c.sig, i * RECOVER_ROW_BYTES + RECOVER_ROW_SIG_AT);
      t[i * RECOVER_ROW_BYTES + 32] = c.recid;
    });
    return t;
  }
  const cases = rowsOf(40).flatMap((r, i) => [
    { hash: r.hash, sig: r.sig, recid: i % 2 },
    { hash: r.hash, sig: r.sig, recid: [0, 1, 2, 3, 4, 255][i % 6] },
  ]);

  it('gives recover()\'s answer and key on every row (high s, r = 0, r = n, no point, recovery ids 2, 3 and over 3)', () => {
    const keys = new Uint8Array(68 * cases.length).fill(0xaa);
    const n = system.recoverRows(rawTable(cases), cases.length, keys);
    let recovered = 0;
    cases.forEach((c, i) => {
      const one = new Uint8Array(65);
      const single = c.recid <= 3 && system.recover(c.sig, c.recid, c.hash, one);
      expect(keys[68 * i], `row ${i}`).toBe(single ? 1 : 0);
      if (single) {
        recovered++;
        expect(hex(keys.subarray(68 * i + 3, 68 * i + 68))).toBe(hex(one));
      } else {
        expect(hex(keys.subarray(68 * i + 3, 68 * i + 68))).toBe(hex(new Uint8Array(65).fill(0xaa))); // untouched
      }
    });
    expect(n).toBe(recovered);
    expect(recovered).toBeGreaterThan(10);
    expect(recovered).toBeLessThan(cases.length - 10);
  });

  it('wrong types throw a TypeError, a bad count or short buffers a RangeError', () => {
    const t = rawTable(cases.slice(0, 4));
    const keys = new Uint8Array(68 * 4);
    const loose = system.recoverRows as unknown as (...args: unknown[]) => number;
    expect(() => loose(t, 4)).toThrow(TypeError);
    expect(() => loose(Array.from(t), 4, keys)).toThrow(TypeError);
    expect(() => loose(t, 4, new Int32Array(68))).toThrow(TypeError);
    expect(() => loose(t, '4', keys)).toThrow(TypeError);
    for (const bad of [-1, 1.5, Number.NaN, Infinity, 5, 2 ** 53]) expect(() => system.recoverRows(t, bad, keys), String(bad)).toThrow(RangeError);
    expect(() => system.recoverRows(t, 4, keys.subarray(0, 68 * 4 - 1))).toThrow(RangeError);
    expect(system.recoverRows(t, 0, new Uint8Array(0))).toBe(0);
  });
});
