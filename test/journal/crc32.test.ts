// The journal's CRC-32 (src/journal/crc32.ts): the carry-less multiply module (native/crc32_clmul.c)
// must give zlib's value for every length and alignment, or journals written before it (and by
// builds without it) would read as corrupt. Checked on the module directly, where it is built,
// and on the function the journal uses.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { JOURNAL_CRC_IMPL, journalCrc32 } from '../../src/journal/crc32.js';
import { findNativeModule } from '../../src/util/native_module.js';
import { mulberry32 } from '../../src/util/prng.js';

function randomBytes(n: number, seed: number): Uint8Array {
  const rnd = mulberry32(seed);
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rnd() * 256);
  return b;
}

describe('journal CRC-32', () => {
  const bytes = randomBytes(300_000, 15);

  it('gives zlib\'s value for lengths 0..1100 at offsets 0..15 (the 64- and 16-byte folds and the byte tail)', () => {
    for (let offset = 0; offset < 16; offset++) {
      for (let length = 0; length <= 1100; length++) {
        const v = bytes.subarray(offset, offset + length);
        expect(journalCrc32(v)).toBe(zlibCrc32(v));
      }
    }
  });

  it('gives zlib\'s value for batch-sized buffers, all zeros and all ones', () => {
    for (const n of [208 * 999, 208 * 1000, 208 * 1000 + 7, 299_999]) {
      expect(journalCrc32(bytes.subarray(0, n))).toBe(zlibCrc32(bytes.subarray(0, n)));
    }
    for (const fill of [0, 0xff]) {
      const b = new Uint8Array(4096 + 13).fill(fill);
      expect(journalCrc32(b)).toBe(zlibCrc32(b));
    }
    // A one-bit change anywhere changes it.
    const b = bytes.slice(0, 208 * 100);
    const before = journalCrc32(b);
    b[12_345] ^= 0x10;
    expect(journalCrc32(b)).not.toBe(before);
  });

  it('uses the module whenever it is built and the CPU has the instruction, and the module itself agrees', () => {
    const found = findNativeModule<{ crc32(b: Uint8Array): number; available(): boolean }>('crc32_clmul.node');
    const usable = 'module' in found && found.module.available() && process.env.RINGBOOK_JOURNAL_CRC !== 'zlib';
    expect(JOURNAL_CRC_IMPL).toBe(usable ? 'clmul' : 'zlib');
    if ('module' in found) {
      const m = found.module;
      for (let length = 0; length < 700; length += 13) {
        const v = bytes.subarray(3, 3 + length);
        expect(m.crc32(v)).toBe(zlibCrc32(v));
      }
      expect(() => m.crc32('text' as unknown as Uint8Array)).toThrow(TypeError);
    }
  });

  it('loads the same way in worker threads at once (the matcher and DA threads; compiled dist/)', async () => {
    const url = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../dist/src/journal/crc32.js')).href;
    const code = `const { parentPort } = require('node:worker_threads');
      import(${JSON.stringify(url)}).then((m) => {
        const b = new Uint8Array(5000).map((_, i) => (i * 7919) & 0xff);
        parentPort.postMessage([m.JOURNAL_CRC_IMPL, m.journalCrc32(b), require('node:zlib').crc32(b)]);
      });`;
    const answers = await Promise.all([1, 2, 3].map(() => new Promise<[string, number, number]>((resolve, reject) => {
      const w = new Worker(code, { eval: true });
      w.once('message', (m: [string, number, number]) => {
        resolve(m);
        void w.terminate();
      });
      w.once('error', reject);
    })));
    for (const [impl, value, zlib_value] of answers) {
      expect(impl).toBe(JOURNAL_CRC_IMPL);
      expect(value).toBe(zlib_value);
    }
  });
});
