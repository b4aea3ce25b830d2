// The verify stage measured in the bench's own process on one thread: what one verify worker of
// the server does per signed request (EIP-191 hash, recover, keccak to an address), per CPU
// second and per wall second, plus ecdsaRecover and ecdsaSign alone. Recovery goes through the
// library the server recovers with: the machine's libsecp256k1 (native/build/secp256k1_recover.node,
// src/auth/recover.ts) when it is built, else the `secp256k1` npm addon.
import { performance } from 'node:perf_hooks';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { eip191Hash } from '../../src/auth/eip191.js';
import { orderJsonMessage } from '../../src/auth/messages.js';
import { loadSystemSecp256k1 } from '../../src/auth/secp256k1_native.js';
import { LOT_UNITS, MARKET_ID, MID_UNITS, TICK_UNITS, type NativeSecp256k1, type WalletKey } from './flow.js';

export interface VerifyStage {
  /** Per CPU-second of one thread (process CPU time: robust to other load on the machine). */
  full_per_cpu_s: number;
  recover_per_cpu_s: number;
  sign_per_cpu_s: number;
  /** Per wall second, as it ran (what this thread actually got of the machine). */
  full_per_wall_s: number;
  sign_per_wall_s: number;
  /** The library recovering: `system` (native/build/secp256k1_recover.node) or `npm` (the secp256k1 addon). */
  recover_library: 'system' | 'npm';
}

export function measureVerifyStage(secp: NativeSecp256k1, keys: WalletKey[], budget_ms: number): VerifyStage {
  const n = keys.length;
  const items: { message: string; sig: Uint8Array; recid: number; address: string; hash: Uint8Array }[] = [];
  for (let i = 0; i < n; i++) {
    const message = orderJsonMessage({
      market_id: MARKET_ID, side: i % 2 ? 'bid' : 'ask', price: MID_UNITS + (i % 7) * TICK_UNITS,
      quantity: (1 + i) * LOT_UNITS, order_type: 'limit', time_in_force: 'gtc', nonce: 1_000_000 + i,
    });
    const hash = eip191Hash(message);
    const s = secp.ecdsaSign(hash, keys[i].priv);
    items.push({ message, sig: s.signature, recid: s.recid, address: keys[i].address, hash });
  }
  const pub = new Uint8Array(65);
  const system = loadSystemSecp256k1();
  const recover = system !== null
    ? (sig: Uint8Array, recid: number, hash: Uint8Array): void => void system.recover(sig, recid, hash, pub)
    : (sig: Uint8Array, recid: number, hash: Uint8Array): void => void secp.ecdsaRecover(sig, recid, hash, false, pub);
  // What the server's verify worker does per item: EIP-191 hash, recover, keccak to an address.
  const full = (it: (typeof items)[number]): boolean => {
    const h = eip191Hash(it.message);
    recover(it.sig, it.recid, h);
    const a = keccak_256(pub.subarray(1, 65)).subarray(12, 32);
    return Buffer.from(a).toString('hex') === it.address.slice(2);
  };
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
  const [recover_per_cpu_s] = loop((i) => recover(items[i % n].sig, items[i % n].recid, items[i % n].hash), budget_ms * 0.25);
  const [sign_per_cpu_s, sign_per_wall_s] = loop((i) => void secp.ecdsaSign(items[i % n].hash, keys[i % n].priv), budget_ms * 0.25);
  return { full_per_cpu_s, recover_per_cpu_s, sign_per_cpu_s, full_per_wall_s, sign_per_wall_s, recover_library: system !== null ? 'system' : 'npm' };
}
