// When no libsecp256k1 addon can load (neither native/build/secp256k1_recover.node nor the npm
// `secp256k1` addon), the module picks @noble/curves and still verifies.
// Run in a child process (compiled dist) whose require() refuses the addon.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const recoverJs = fileURLToPath(new URL('../../dist/src/auth/recover.js', import.meta.url));
/** A compiled module of src/auth beside recover.js, as a string literal for the child's script. */
const authJs = (file: string): string => JSON.stringify(recoverJs.replace(/recover\.js$/, file));

describe('backend fallback', () => {
  it('uses noble when the native addons fail to load, and refuses a forced native backend', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ringbook-auth-'));
    try {
      const preload = join(dir, 'no-native.cjs');
      writeFileSync(
        preload,
        `const M = require('node:module');
const load = M._load;
M._load = function (request, ...rest) {
  if (/^secp256k1|secp256k1_recover\.node$/.test(String(request))) throw new Error('addon disabled for the test');
  return load.call(this, request, ...rest);
};`,
      );
      const script = `
const r = await import(${JSON.stringify(recoverJs)});
const key = '0x' + '11'.repeat(32);
const { eip191Hash } = await import(${authJs('eip191.js')});
const { addressFromPrivateKey, signPersonalMessage } = await import(${authJs('sign.js')});
const { parseSignatureHex } = await import(${authJs('signature_rules.js')});
const sig = parseSignatureHex(signPersonalMessage(key, 'hello'));
let forced = 'no error';
try { r.createRecoverer({ backend: 'native' }); } catch (e) { forced = e.message; }
console.log(JSON.stringify({
  backend: r.recoverBackendName(),
  available: r.nativeBackendAvailable(),
  ok: r.recoverAddress(eip191Hash('hello'), sig) === addressFromPrivateKey(key),
  forced,
}));`;
      const res = spawnSync(process.execPath, ['--require', preload, '--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(res.stderr).toBe('');
      const out = JSON.parse(res.stdout.trim()) as { backend: string; available: boolean; ok: boolean; forced: string };
      expect(out).toEqual({
        backend: 'noble',
        available: false,
        ok: true,
        forced: 'native secp256k1 backend is not available',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
