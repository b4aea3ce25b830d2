// Differential test: the fast engine (src/engine/engine.ts) against the reference engine
// (src/engine/reference/) on generated request sequences; differential_run.ts says what is
// compared after every request and after every sequence, differential_suite.ts the knobs
// (RINGBOOK_DIFF_SEQUENCES=1000000 for the long run). This file runs the first half of the
// seeds, differential.shard1.test.ts the second, so the two run on two cores.
import { defineDifferentialSuite } from './differential_suite.js';

defineDifferentialSuite(0, 2);
