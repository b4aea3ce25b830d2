import { randomBytes } from 'node:crypto';
import { Wallet } from '../../src/client/index.js';

export function randomWallet(): Wallet {
  for (;;) {
    try {
      return new Wallet('0x' + randomBytes(32).toString('hex'));
    } catch {
      // out of range key: draw again
    }
  }
}

export async function waitFor<T>(f: () => T | undefined | null | false, timeout_ms = 5000, what = 'condition'): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() - start > timeout_ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export { freePort } from '../../src/util/free_port.js';
