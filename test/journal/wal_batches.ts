// The write-ahead file tests' batches and helpers (wal.test.ts, wal_async.test.ts): batch `id`
// holds id % records_mod + 1 random records seeded by the id, so any test can rebuild what a batch
// held; LMDB's own ids.
import { open } from 'lmdb';
import { encodeBatch } from '../../src/journal/journal_codec.js';
import { RECORD_WORDS } from '../../src/ring/records.js';
import { mulberry32 } from '../../src/util/prng.js';

export interface WalBatches {
  recordsOf: (id: number) => Int32Array;
  countOf: (id: number) => number;
  timeOf: (id: number) => number;
  /** The batch as LMDB stores it. */
  bodyOf: (id: number) => Buffer;
}

export function walBatches(records_mod: number): WalBatches {
  const countOf = (id: number): number => id % records_mod + 1;
  const recordsOf = (id: number): Int32Array => {
    const rand = mulberry32(id);
    const r = new Int32Array(countOf(id) * RECORD_WORDS);
    for (let i = 0; i < r.length; i++) r[i] = (rand() * 2 ** 32) | 0;
    return r;
  };
  const timeOf = (id: number): number => 1_700_000_000_000 + id;
  const bodyOf = (id: number): Buffer => encodeBatch(id, timeOf(id), recordsOf(id), countOf(id));
  return { recordsOf, countOf, timeOf, bodyOf };
}

/** from..to, both included. */
export const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** LMDB's own view of the journal (no write-ahead file): the ids it stores. */
export async function lmdbIds(dir: string): Promise<number[]> {
  const root = open({ path: dir, compression: false });
  const batches = root.openDB<Buffer, number>({ name: 'batches', encoding: 'binary', keyEncoding: 'uint32' });
  const ids = Array.from(batches.getKeys(), (k) => k as number);
  await root.close();
  return ids;
}
