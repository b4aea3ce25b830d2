// Temporary directories for a test file, removed after its tests: the set-up test files
// otherwise each write out again (a dirs array, a mkdtemp function, an afterAll).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/**
 * A maker of temporary directories (`<os tmpdir>/<prefix>XXXXXX`), each removed after the file's
 * tests by an afterAll registered where this call stands (vitest runs after-hooks last registered
 * first, so a server stopped by a hook registered below it has stopped before its dir goes).
 */
export function tempDirsPerFile(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
