// The web bundle swaps `x.browser.ts` in for `x.ts` (src/web/bundle.ts). A name the server module
// exports and its browser variant lacks fails the bundle at `make build` ("No matching export")
// as soon as a bundled module imports it: on 2026-11-26 eip191.ts began importing
// KECCAK_INPUT_BYTES and only the fresh-clone build noticed. This test names the gap first.
import { describe, expect, it } from 'vitest';
import * as secpServer from '../../src/auth/secp256k1_native.js';
import * as secpBrowser from '../../src/auth/secp256k1_native.browser.js';
import * as crcServer from '../../src/util/crc32.js';
import * as crcBrowser from '../../src/util/crc32.browser.js';
import * as keccakServer from '../../src/util/keccak_wasm.js';
import * as keccakBrowser from '../../src/util/keccak_wasm.browser.js';

/** Server exports no bundled module imports (each says where it is used instead). */
const SERVER_ONLY: Record<string, string[]> = {
  // The DA worker's tree hashing over Int32Array words; never reaches a page.
  keccak_wasm: ['keccak256OfWords'],
};

const PAIRS: [string, object, object][] = [
  ['secp256k1_native', secpServer, secpBrowser],
  ['crc32', crcServer, crcBrowser],
  ['keccak_wasm', keccakServer, keccakBrowser],
];

describe('browser variants export what their server modules export', () => {
  for (const [name, server, browser] of PAIRS) {
    it(name, () => {
      const missing = Object.keys(server).filter((k) => !(k in browser) && !(SERVER_ONLY[name] ?? []).includes(k));
      expect(missing).toEqual([]);
      for (const k of Object.keys(browser)) expect(typeof (browser as Record<string, unknown>)[k]).toBe(typeof (server as Record<string, unknown>)[k]);
    });
  }
});
