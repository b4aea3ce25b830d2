// The differential test body, shared by differential.test.ts and differential.shard1.test.ts so
// that vitest runs the two halves of the seed range in two workers (two cores).
//
// Knobs (environment):
//   RINGBOOK_DIFF_SEQUENCES  number of sequences over both shards (default 10000; the long run
//                            uses 1000000)
//   RINGBOOK_DIFF_SEED_BASE  first seed (default 1)
//   RINGBOOK_DIFF_SEED       run only this seed (to replay a failure; shard 0 runs it)
import { describe, expect, it } from 'vitest';
import { createFastEngine } from '../../src/engine/engine.js';
import { createReferenceEngine } from '../../src/engine/reference/reference_engine.js';
import { runSequence } from './differential_run.js';

const CHUNK = 500;

export function defineDifferentialSuite(shard: number, shards: number): void {
  const sequences = Number(process.env.RINGBOOK_DIFF_SEQUENCES ?? 10000);
  const seedBase = Number(process.env.RINGBOOK_DIFF_SEED_BASE ?? 1);
  const onlySeed = process.env.RINGBOOK_DIFF_SEED;

  describe(`differential: fast engine vs reference engine (shard ${shard + 1}/${shards})`, () => {
    if (onlySeed !== undefined) {
      if (shard === 0) {
        it(`seed ${onlySeed}`, () => {
          runSequence(Number(onlySeed), createReferenceEngine, createFastEngine);
        });
      } else {
        it.skip('single-seed replay runs in shard 1', () => undefined);
      }
      return;
    }
    const chunks = Math.ceil(sequences / CHUNK);
    let registered = 0;
    for (let c = shard; c < chunks; c += shards) {
      const from = seedBase + c * CHUNK;
      const to = seedBase + Math.min(sequences, (c + 1) * CHUNK) - 1;
      registered++;
      it(`seeds ${from}..${to}`, () => {
        let requests = 0;
        let fills = 0;
        let rejected = 0;
        for (let seed = from; seed <= to; seed++) {
          const s = runSequence(seed, createReferenceEngine, createFastEngine);
          requests += s.requests;
          fills += s.fills;
          rejected += s.rejected;
        }
        // The generator must keep producing trades and rejections, or the test proves little.
        expect(fills).toBeGreaterThan(requests / 50);
        expect(rejected).toBeGreaterThan(requests / 20);
      }, 24 * 3_600_000);
    }
    if (registered === 0) it.skip('no seeds in this shard', () => undefined);
  });
}
