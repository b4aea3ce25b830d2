// The project's byte -> hex helpers: the right digits, and one flat string per result (an
// address kept per account must not hold a chain of cons-string nodes: issue 20's wallet flood).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { toHex, toHex0x } from '../../src/util/hex.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('hex', () => {
  it('spells bytes as lowercase hex, with and without 0x, over a range', () => {
    const b = Uint8Array.from({ length: 256 }, (_, i) => (i * 37 + 11) & 255);
    expect(toHex(b)).toBe(Buffer.from(b).toString('hex'));
    expect(toHex0x(b)).toBe('0x' + Buffer.from(b).toString('hex'));
    expect(toHex0x(b, 3, 23)).toBe('0x' + Buffer.from(b.subarray(3, 23)).toString('hex'));
    expect(toHex(b, 5, 5)).toBe('');
    expect(toHex0x(new Uint8Array(0))).toBe('0x');
  });

  it('is the same spelling for every length (past the scratch buffer too), Buffers, offset views and shared memory', () => {
    const b = Uint8Array.from({ length: 600 }, (_, i) => (i * 73 + 5) & 255);
    for (const len of [0, 1, 19, 20, 32, 65, 127, 128, 129, 300, 600]) {
      const want = '0x' + Buffer.from(b.subarray(0, len)).toString('hex');
      expect(toHex0x(b.subarray(0, len)), String(len)).toBe(want);
      expect(toHex(b, 0, len), String(len)).toBe(want.slice(2));
    }
    // A short result after a long one holds none of the long one's digits (the scratch is reused).
    expect(toHex0x(b.subarray(0, 3))).toBe('0x054e97');
    const buf = Buffer.from(b.buffer, 7, 32);
    expect(toHex0x(buf)).toBe('0x' + buf.toString('hex'));
    expect(toHex0x(b.subarray(11, 31))).toBe(toHex0x(b, 11, 31));
    const shared = new Uint8Array(new SharedArrayBuffer(40));
    shared.set(b.subarray(100, 140));
    expect(toHex0x(shared, 8, 28)).toBe('0x' + Buffer.from(b.subarray(108, 128)).toString('hex'));
    // A range past the end spells what is there, and an empty or reversed range spells nothing.
    expect(toHex0x(b.subarray(0, 4), 2, 10)).toBe(toHex0x(b, 2, 4));
    expect(toHex0x(b, -2, 3)).toBe(toHex0x(b, 0, 3));
    expect(toHex0x(b, 9, 3)).toBe('0x');
    expect(toHex0x(Uint8Array.of(0xab, 0xcd, 0xef))).toBe('0xabcdef');
  });

  it('20,000 kept addresses cost about a flat 42-character string each, not a chain of nodes', () => {
    const n = 20_000;
    const bytes = new Uint8Array(20 * n);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + 7) & 255;
    const kept: string[] = new Array(n);
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < n; i++) kept[i] = toHex0x(bytes, i * 20, i * 20 + 20);
    gc();
    const per_address = (process.memoryUsage().heapUsed - before) / n;
    // Flat: 16 bytes of header + 42 characters, rounded up (~64 bytes) and the array slot; the
    // byte-by-byte `s +=` build kept ~15 cons nodes of 32 bytes (~540 bytes an address).
    expect(per_address).toBeLessThan(160);
    expect(kept[n - 1]).toMatch(/^0x[0-9a-f]{40}$/);
  });
});
