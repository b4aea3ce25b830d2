// The second half of the differential test's seeds (see differential.test.ts).
import { defineDifferentialSuite } from './differential_suite.js';

defineDifferentialSuite(1, 2);
