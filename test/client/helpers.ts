import { randomBytes } from 'node:crypto';
import { Wallet, type FetchLike } from '../../src/client/index.js';

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

/** A request a fakeFetch was given: its method, URL, headers and parsed JSON body. */
export interface Sent {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: any;
}

/** A FetchLike that records what it is sent; the n-th request gets answers[n] (the last one for every later request). */
export function fakeFetch(answers: ((s: Sent) => { status: number; body: unknown })[]): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    const s: Sent = {
      method: init?.method ?? 'GET', url, headers: { ...init?.headers }, body: init?.body === undefined ? undefined : JSON.parse(init.body),
    };
    sent.push(s);
    const a = answers[Math.min(sent.length - 1, answers.length - 1)](s);
    return {
      status: a.status,
      headers: { get: (n: string) => (n.toLowerCase() === 'x-request-id' ? 'abcdefabcdef-1' : null) },
      text: async () => JSON.stringify(a.body),
    };
  };
  return { fetch, sent };
}

/** A success envelope with `data`. */
export const ok = (data: unknown) => () => ({ status: 200, body: { ok: true, data } });
/** An error envelope with `code`. */
export const err = (status: number, code: string) => () => ({ status, body: { ok: false, error: code, message: code.toLowerCase(), request_id: 'abcdefabcdef-1' } });

