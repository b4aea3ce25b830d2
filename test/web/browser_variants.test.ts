// The web bundle swaps `x.browser.ts` in for `x.ts` (src/web/bundle.ts). A name the server module
// exports and its browser variant lacks fails the bundle at `make build` ("No matching export")
// as soon as a bundled module imports it: on 2026-11-26 eip191.ts began importing
// KECCAK_INPUT_BYTES and only the fresh-clone build noticed. This test names the gap first, for
// every `*.browser.ts` under src/ (found here, not listed: a new variant is checked the day it lands).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

/** Server exports no bundled module imports, by variant (path under src/, no extension); each says where it is used instead. */
const SERVER_ONLY: Record<string, string[]> = {
  // The DA worker's tree hashing over Int32Array words; never reaches a page.
  'util/keccak_wasm': ['keccak256OfWords'],
};

/** Every browser variant under src/, as its path under src/ without `.browser.ts`. */
const VARIANTS: string[] = (readdirSync(SRC, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.browser.ts'))
  .map((f) => f.slice(0, -'.browser.ts'.length).split(path.sep).join('/'))
  .sort();

async function exportsOf(file: string): Promise<Record<string, unknown>> {
  return (await import(/* @vite-ignore */ pathToFileURL(file).href)) as Record<string, unknown>;
}

describe('browser variants export what their server modules export', () => {
  it('finds the variants under src/ and SERVER_ONLY names only variants that exist', () => {
    // The three of 2026-11-26 at least: an empty glob must not pass as "nothing missing".
    expect(VARIANTS).toEqual(expect.arrayContaining(['auth/secp256k1_native', 'util/crc32', 'util/keccak_wasm']));
    for (const name of Object.keys(SERVER_ONLY)) expect(VARIANTS).toContain(name);
  });

  for (const name of VARIANTS) {
    it(name, async () => {
      const server_file = path.join(SRC, `${name}.ts`);
      expect(existsSync(server_file), `${name}.browser.ts has no ${name}.ts beside it`).toBe(true);
      const server = await exportsOf(server_file);
      const browser = await exportsOf(path.join(SRC, `${name}.browser.ts`));
      const server_only = SERVER_ONLY[name] ?? [];
      const missing = Object.keys(server).filter((k) => !(k in browser) && !server_only.includes(k));
      expect(missing).toEqual([]);
      // A name listed as server-only must still be the server's (a stale entry hides nothing).
      for (const k of server_only) expect(Object.keys(server), `SERVER_ONLY ${name}`).toContain(k);
      for (const k of Object.keys(browser)) expect(typeof browser[k], k).toBe(typeof server[k]);
    });
  }
});
