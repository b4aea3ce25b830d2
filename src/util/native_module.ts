// The project's own native modules (native/build/*.node, built by `make native` with the machine's
// cc): found by walking up from this file to the repository root (src/util and dist/src/util both
// sit below it), loaded with CommonJS require. Linux only. The ring's modules (src/util/futex.ts,
// loop_bell.ts) add their switches on top; src/auth/secp256k1_native.ts loads the recovery module.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** native/build/`file_name` loaded, or why it cannot be. */
export function findNativeModule<T>(file_name: string): { module: T } | { absent: string } {
  const addon = path.join('native', 'build', file_name);
  if (process.platform !== 'linux') return { absent: `${addon} is Linux only (this is ${process.platform})` };
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = path.join(dir, addon);
    if (existsSync(file)) {
      try {
        return { module: createRequire(import.meta.url)(file) as T };
      } catch (e) {
        return { absent: `${file} does not load: ${(e as Error).message}` };
      }
    }
    dir = path.dirname(dir);
  }
  return { absent: `${addon} is not built (make native)` };
}
