import { defineConfig } from 'vitest/config';
import { LongFirstSequencer } from './test/long_first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The suite runs on a 2-core CI machine: keep file-level parallelism to the core count.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The long files first, so the end of the run is not one long file alone (test/long_first.ts).
    sequence: { sequencer: LongFirstSequencer },
  },
});
