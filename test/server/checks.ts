// Assertions shared by the real-server tests.
import { expect } from 'vitest';
import { api, deposit, Wallet, type ApiResponse, type StartedServer } from './harness.js';

export const REQUEST_ID = /^[0-9a-f]{12}-[0-9a-z]+$/;

/** A success envelope with HTTP 200; returns `data`. */
export function ok(r: ApiResponse): any {
  expect(r.status, `expected 200, got ${r.status}: ${r.text}`).toBe(200);
  expect(r.headers['content-type']).toBe('application/json');
  expect(r.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(Object.keys(r.body).sort()).toEqual(['data', 'ok']);
  expect(r.body.ok).toBe(true);
  return r.body.data;
}

/** Form A: `{ok:false, error, message, request_id}` with the status, and X-Request-Id = request_id. */
export function fail(r: ApiResponse, status: number, code: string, message?: RegExp | string): string {
  expect(r.status, `expected ${status} ${code}, got ${r.status}: ${r.text}`).toBe(status);
  expect(r.headers['content-type']).toBe('application/json');
  expect(typeof r.body, r.text).toBe('object');
  expect(Object.keys(r.body).sort()).toEqual(['error', 'message', 'ok', 'request_id']);
  expect(r.body.ok).toBe(false);
  expect(r.body.error, r.text).toBe(code);
  expect(typeof r.body.message).toBe('string');
  expect(r.body.message.length).toBeGreaterThan(0);
  if (message !== undefined) {
    if (typeof message === 'string') expect(r.body.message).toContain(message);
    else expect(r.body.message).toMatch(message);
  }
  expect(r.body.request_id).toMatch(REQUEST_ID);
  expect(r.headers['x-request-id']).toBe(r.body.request_id);
  return r.body.message;
}

/** Form C: HTTP 429, Retry-After whole seconds, `{ok:false, data:null, error:"<sentence>"}`. */
export function rateLimited(r: ApiResponse): number {
  expect(r.status, r.text).toBe(429);
  expect(r.body).toEqual({ ok: false, data: null, error: expect.any(String) });
  expect(r.body.error).toMatch(/ /); // a sentence, not a code
  expect(r.body.error).not.toBe('RATE_LIMITED');
  expect(r.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
  expect(r.headers['x-request-id']).toMatch(REQUEST_ID);
  return Number(r.headers['retry-after']);
}

/** Balances (with nonce and credit) of several addresses plus the admin account count. */
export async function snapshot(s: StartedServer, addresses: string[]): Promise<unknown> {
  const a = api(s.url);
  const out: Record<string, unknown> = {};
  for (const x of addresses) out[x] = ok(await a.get(`/account/${x}/balances`));
  for (const x of addresses) out[x + ':open'] = ok(await a.get(`/account/${x}/orders?status=all`));
  for (const m of ['ETH-USDC', 'BTC-USDC']) {
    const book = ok(await a.get(`/orderbook/${m}`));
    out[m] = { bids: book.bids, asks: book.asks };
  }
  const st = ok(await a.get('/admin/state', { 'X-Admin-Token': s.admin_token }));
  out.accounts = st.accounts;
  out.open_orders = st.open_orders;
  return out;
}

/** A new wallet with the admin deposits `assets` (asset -> amount, made in that order), each answered 200. */
export async function fundedWallet(s: StartedServer, assets: Record<string, string>): Promise<Wallet> {
  const w = Wallet.random();
  for (const [asset, amount] of Object.entries(assets)) ok(await deposit(s, w.address, asset, amount));
  return w;
}
