// secp256k1 signer recovery for Ethereum-style 65-byte signatures (r || s || v): which library
// recovers, chosen once at start, and the module-level recoverer the server uses.
// Native is, first, the machine's libsecp256k1 (native/build/secp256k1_recover.node), else the
// `secp256k1` npm addon, each used only after a self-test on a known vector; @noble/curves when no
// addon loads. RINGBOOK_SECP256K1 (secp256k1_choice.ts) lets the operator force one. The addons are
// loaded by ./secp256k1_native.ts; browser bundles get secp256k1_native.browser.ts (no addon:
// noble), so the SDK signs in a browser (src/web/bundle.ts).
// The pieces, one job a module: the acceptance rules and a signature's text form
// (signature_rules.ts), a public key's address (key_address.ts), the Recoverer and its three
// implementations (recoverer.ts), a task's rows at once (recover_rows.ts), signing (sign.ts).
import { parsePrefixedHex } from './hex.js';
import {
  nobleRecoverer,
  npmRecoverer,
  systemRecoverer,
  type NativeLibrary,
  type RecoverBackendName,
  type Recoverer,
  type RecovererOptions,
} from './recoverer.js';
import { loadNativeSecp256k1, loadSystemSecp256k1, type NativeSecp256k1, type SystemSecp256k1 } from './secp256k1_native.js';
import { SECP256K1_ENV, secp256k1Choice, type Secp256k1Choice } from './secp256k1_choice.js';
import { parseSignatureHex } from './signature_rules.js';

// The Recoverer's vocabulary, so that a caller choosing a recoverer imports one module.
export {
  recovererLibrary,
  SECP256K1_LIBRARIES,
  type NativeLibrary,
  type RecoverBackendName,
  type Recoverer,
  type RecovererOptions,
  type Secp256k1Library,
} from './recoverer.js';

let nativeModule: NativeSecp256k1 | null | undefined;
let systemModule: SystemSecp256k1 | null | undefined;

function loadNative(): NativeSecp256k1 | null {
  if (nativeModule === undefined) nativeModule = loadNativeSecp256k1();
  return nativeModule;
}

function loadSystem(): SystemSecp256k1 | null {
  if (systemModule === undefined) systemModule = loadSystemSecp256k1();
  return systemModule;
}

/** Whether a native libsecp256k1 addon loads on this machine (`library`: that one). */
export function nativeBackendAvailable(library?: NativeLibrary): boolean {
  if (library === 'system') return loadSystem() !== null;
  if (library === 'npm') return loadNative() !== null;
  return loadSystem() !== null || loadNative() !== null;
}

// One known-good case (vectors/eip191.json, first case) to check a loaded addon actually works.
const SELF_TEST = {
  hash: '0x338dce181f952315d79a1fe26e31cfb8c0261a632cfcfc1f4f3e3a89029df60b',
  signature:
    '0xedbb6b922aae3bc0768f51523c7cb18ffe3e897614cec7d7044799ed80411ca641dad462c5912fb8e2ec0b25994fe4fd531f94e6bd2737181e572494770fc7a81b',
  address: '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a',
};

function selfTest(r: Recoverer): boolean {
  const hash = parsePrefixedHex(SELF_TEST.hash, 32);
  const sig = parseSignatureHex(SELF_TEST.signature);
  return hash !== null && sig !== null && r.recoverAddress(hash, sig) === SELF_TEST.address;
}

/** The options RINGBOOK_SECP256K1 asks for (secp256k1_choice.ts); throws for a misspelt value. */
function optionsOfEnv(): { choice: Secp256k1Choice; options: RecovererOptions } {
  // Browser bundles have no process: the default.
  const env = typeof process === 'undefined' ? undefined : process.env;
  const asked = env === undefined ? { choice: 'auto' as const } : secp256k1Choice(env);
  if ('error' in asked) throw new Error(asked.error);
  const options: RecovererOptions =
    asked.choice === 'noble' ? { backend: 'noble' } : asked.choice === 'auto' ? {} : { library: asked.choice };
  return { choice: asked.choice, options };
}

/**
 * A recoverer on the requested backend. Without `backend` and `library`, as RINGBOOK_SECP256K1
 * asks (secp256k1_choice.ts; unset: native when an addon loads and works, the machine's
 * libsecp256k1 first, else noble), so the front, the verify workers and the DA thread follow the
 * operator's switch; a value it cannot honour throws, naming it. A forced `library` is that one
 * or a throw.
 */
export function createRecoverer(options: RecovererOptions = {}): Recoverer {
  if (options.backend !== undefined || options.library !== undefined) return recovererFor(options);
  const asked = optionsOfEnv();
  if (asked.choice === 'auto') return recovererFor(asked.options);
  try {
    return recovererFor(asked.options);
  } catch (e) {
    throw new Error(`${SECP256K1_ENV}=${asked.choice}, but ${(e as Error).message}`);
  }
}

function recovererFor(options: RecovererOptions): Recoverer {
  const want = options.backend;
  if (want === 'noble') return nobleRecoverer();
  const forced = want === 'native' || options.library !== undefined;
  const system = options.library === 'npm' ? null : loadSystem();
  if (system !== null) {
    const r = systemRecoverer(system);
    if (options.library === 'system' || selfTest(r)) return r;
  }
  const native = options.library === 'system' ? null : loadNative();
  if (native !== null) {
    const r = npmRecoverer(native);
    if (forced || selfTest(r)) return r;
  }
  if (forced) throw new Error(`native secp256k1 backend${options.library === undefined ? '' : ` (${options.library} library)`} is not available`);
  return nobleRecoverer();
}

/** Made at first use (not at import: main.ts checks RINGBOOK_SECP256K1 first, and says so in one line). */
let defaultRecoverer: Recoverer | null = null;

/** The backend the module-level functions use, chosen once (at first use). */
export function recoverBackendName(): RecoverBackendName {
  return defaultRecovererInstance().backend;
}

/** The recoverer the module-level functions use; throws when RINGBOOK_SECP256K1 asks for what cannot load. */
export function defaultRecovererInstance(): Recoverer {
  return (defaultRecoverer ??= createRecoverer());
}

/** Lowercase 0x address that signed `hash32`, or null for any invalid signature. */
export function recoverAddress(hash32: Uint8Array, signature65: Uint8Array): string | null {
  return defaultRecovererInstance().recoverAddress(hash32, signature65);
}
