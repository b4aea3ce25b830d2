// The suite's start order (test/long_first.ts): every listed long file exists (a rename would
// otherwise drop it back to vitest's size order unnoticed), and the longest start first.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LONG_FILES_S, longFirst } from '../long_first.js';

describe('the suite starts its long files first', () => {
  it('lists only files that exist', () => {
    for (const file of Object.keys(LONG_FILES_S)) expect(fs.existsSync(file), file).toBe(true);
  });

  it('puts listed files first, longest first, and keeps the order of the rest', () => {
    const given = ['test/a.test.ts', 'test/cli/trader.test.ts', 'test/b.test.ts', 'test/journal/soak.test.ts', 'test/c.test.ts'];
    expect(longFirst(given, (f) => f)).toEqual(['test/journal/soak.test.ts', 'test/cli/trader.test.ts', 'test/a.test.ts', 'test/b.test.ts', 'test/c.test.ts']);
  });
});
