// The verify stage measured in the bench's own process on one thread: what one verify worker of
// the server does per signed request (EIP-191 hash, recover, keccak to an address), per CPU
// second and per wall second, plus bare recovery and ecdsaSign alone. Recovery goes through the
// recoverer the server builds (src/auth/recover.ts createRecoverer(): the machine's libsecp256k1
// when native/build/secp256k1_recover.node loads and passes its self-test, else the `secp256k1`
// npm addon, else noble), so a library that loads but fails the self-test is not measured here
// while the server skips it. That is this build's choice: a server run with --server-main is
// another build and may recover with another library (its docs and log say which).
import { performance } from 'node:perf_hooks';
import { eip191Hash } from '../../src/auth/eip191.js';
import { orderJsonMessage } from '../../src/auth/messages.js';
import { createRecoverer, type NativeLibrary } from '../../src/auth/recover.js';
import { loadSystemSecp256k1 } from '../../src/auth/secp256k1_native.js';
import { bytesEqual } from '../../src/da/hex.js';
import { LOT_UNITS, MARKET_ID, MID_UNITS, TICK_UNITS, type NativeSecp256k1, type WalletKey } from './flow.js';

export interface VerifyStage {
  /** Per CPU-second of one thread (process CPU time: robust to other load on the machine). */
  full_per_cpu_s: number;
  /** Bare recovery (no acceptance rules, no address keccak) in the library below; with noble, the recoverer's whole call. */
  recover_per_cpu_s: number;
  sign_per_cpu_s: number;
  /** Per wall second, as it ran (what this thread actually got of the machine). */
  full_per_wall_s: number;
  sign_per_wall_s: number;
  /**
   * The library this build's recoverer chose: `system` (native/build/secp256k1_recover.node),
   * `npm` (the secp256k1 addon) or `noble`.
   */
  recover_library: NativeLibrary | 'noble';
}

interface Item {
  message: string;
  /** r || s (the npm addon's form) and r || s || v (the recoverer's). */
  sig64: Uint8Array;
  sig65: Uint8Array;
  recid: number;
  address20: Uint8Array;
  hash: Uint8Array;
}

export function measureVerifyStage(secp: NativeSecp256k1, keys: WalletKey[], budget_ms: number): VerifyStage {
  const n = keys.length;
  const items: Item[] = [];
  for (let i = 0; i < n; i++) {
    const message = orderJsonMessage({
      market_id: MARKET_ID, side: i % 2 ? 'bid' : 'ask', price: MID_UNITS + (i % 7) * TICK_UNITS,
      quantity: (1 + i) * LOT_UNITS, order_type: 'limit', time_in_force: 'gtc', nonce: 1_000_000 + i,
    });
    const hash = eip191Hash(message);
    const s = secp.ecdsaSign(hash, keys[i].priv);
    const sig65 = new Uint8Array(65);
    sig65.set(s.signature);
    sig65[64] = 27 + s.recid;
    items.push({ message, sig64: s.signature, sig65, recid: s.recid, address20: Buffer.from(keys[i].address.slice(2), 'hex'), hash });
  }
  const recoverer = createRecoverer();
  const library = recoverer.library ?? 'noble';
  const out20 = new Uint8Array(20);
  const pub = new Uint8Array(65);
  const system = library === 'system' ? loadSystemSecp256k1() : null;
  // Bare recovery in the chosen library (the load bench's signature ceiling is counted in these);
  // noble has no bare call here, so with it this is the recoverer's whole call.
  const recover = system !== null
    ? (it: Item): void => void system.recover(it.sig65, it.recid, it.hash, pub)
    : library === 'npm'
      ? (it: Item): void => void secp.ecdsaRecover(it.sig64, it.recid, it.hash, false, pub)
      : (it: Item): void => void recoverer.recoverAddressInto(it.hash, it.sig65, out20);
  // What the server's verify worker does per item: EIP-191 hash, recover, keccak to an address.
  const full = (it: Item): boolean => recoverer.recoverAddressInto(eip191Hash(it.message), it.sig65, out20) && bytesEqual(out20, it.address20);
  for (let i = 0; i < 64; i++) if (!full(items[i % n])) throw new Error('verify stage self-check failed');
  /** [per CPU second, per wall second] of `fn` run for `share_ms` of wall time. */
  const loop = (fn: (i: number) => void, share_ms: number): [number, number] => {
    let count = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let t = t0;
    while (t - t0 < share_ms) {
      for (let j = 0; j < 32; j++) fn(count++);
      t = performance.now();
    }
    const c = process.cpuUsage(c0);
    const cpu_ms = Math.max(1, (c.user + c.system) / 1000);
    return [(count * 1000) / cpu_ms, (count * 1000) / (t - t0)];
  };
  const [full_per_cpu_s, full_per_wall_s] = loop((i) => void full(items[i % n]), budget_ms * 0.5);
  const [recover_per_cpu_s] = loop((i) => recover(items[i % n]), budget_ms * 0.25);
  const [sign_per_cpu_s, sign_per_wall_s] = loop((i) => void secp.ecdsaSign(items[i % n].hash, keys[i % n].priv), budget_ms * 0.25);
  return { full_per_cpu_s, recover_per_cpu_s, sign_per_cpu_s, full_per_wall_s, sign_per_wall_s, recover_library: library };
}

/** The library a verify stage recovered with, in words (the bench's log). */
export function recoverLibraryText(library: VerifyStage['recover_library']): string {
  return library === 'system' ? 'the machine\'s libsecp256k1 (native/build/secp256k1_recover.node)'
    : library === 'npm' ? 'the secp256k1 npm addon' : 'noble (no native addon passed its self-test)';
}
