// The journal's CRC-32 (zlib's: the value zlib.crc32 gives, so journals written before and after
// read the same). native/build/crc32_clmul.node computes it with carry-less multiplication
// (native/crc32_clmul.c) where the CPU has PCLMULQDQ; Node's bundled zlib does ~4 GB/s here,
// ~50-55 ms of the matcher's 1,000,000-request replay on start (bench/recovery.ts; the module
// 2-3x faster: docs/benchmarks.md, h19b). The module is used only when it loads, reports the
// instruction available, and gives zlib's value on sample data of lengths up to 300 bytes at
// odd offsets; otherwise (not built, another CPU) zlib's crc32 is used.
//
// RINGBOOK_JOURNAL_CRC=zlib uses zlib's even when the module is there (an A/B, or a way out).
import { crc32 as zlibCrc32 } from 'node:zlib';
import { findNativeModule } from '../util/native_module.js';

interface NativeCrc32 {
  crc32(bytes: Uint8Array): number;
  available(): boolean;
}

export const JOURNAL_CRC_ENV = 'RINGBOOK_JOURNAL_CRC';

const SAMPLE_LENGTHS = [0, 1, 7, 15, 16, 17, 31, 48, 63, 64, 65, 79, 80, 95, 127, 128, 129, 143, 191, 192, 200, 255, 256, 300];

/** The module when it is built, available, and agrees with zlib on the samples; else null. */
function loadChecked(): NativeCrc32 | null {
  if (process.env[JOURNAL_CRC_ENV] === 'zlib') return null;
  const found = findNativeModule<NativeCrc32>('crc32_clmul.node');
  if (!('module' in found)) return null;
  const m = found.module;
  if (typeof m.crc32 !== 'function' || typeof m.available !== 'function' || !m.available()) return null;
  // Sample bytes from a fixed LCG: lengths below, at and past the 64- and 16-byte folds and the
  // byte tail, at offsets 0..3 (every length 0..1,100 at 16 offsets is test/journal/crc32.test.ts's;
  // all 1,204 of 0..300 here took ~1 ms of every thread's start).
  const sample = new Uint8Array(320);
  let x = 0x2545f491;
  for (let i = 0; i < sample.length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) | 0;
    sample[i] = x >>> 24;
  }
  for (let offset = 0; offset < 4; offset++) {
    for (const length of SAMPLE_LENGTHS) {
      const v = sample.subarray(offset, offset + length);
      if (m.crc32(v) !== zlibCrc32(v)) return null;
    }
  }
  return m;
}

const native = loadChecked();

/** Which implementation `journalCrc32` uses (logged by benches). */
export const JOURNAL_CRC_IMPL: 'clmul' | 'zlib' = native === null ? 'zlib' : 'clmul';

/** The CRC-32 of `bytes` (an unsigned 32-bit number, zlib's value). */
export const journalCrc32: (bytes: Uint8Array) => number = native === null ? (b) => zlibCrc32(b) : native.crc32;
