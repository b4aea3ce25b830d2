// Traffic and read-backs shared by the snapshot server tests: a small market (fills, partial
// fills, cancels, an amend, a withdrawal, a credit line) and every GET answer that depends on
// state or history, to compare before a kill and after the restart.
import { expect } from 'vitest';
import { ok } from '../server/checks.js';
import { adminHeaders, adminState, api, deposit, type StartedServer, Wallet } from '../server/harness.js';

export interface Traders {
  maker: Wallet;
  taker: Wallet;
}

export async function fund(s: StartedServer): Promise<Traders> {
  const t = { maker: Wallet.random(), taker: Wallet.random() };
  ok(await deposit(s, t.maker.address, 'ETH', '50'));
  ok(await deposit(s, t.maker.address, 'USDC', '100000'));
  ok(await deposit(s, t.taker.address, 'USDC', '200000'));
  ok(await deposit(s, t.taker.address, 'ETH', '1'));
  return t;
}

/** `rounds` rounds of a few requests each; leaves only bids resting (candles stay time-independent). */
export async function trade(s: StartedServer, t: Traders, rounds: number, tag: string): Promise<number[]> {
  const a = api(s.url);
  const filled: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const price = (2000 + i) * 1_000_000;
    const ask = ok(await a.post('/orders', t.maker.order({ market_id: 'ETH-USDC', side: 'ask', price, quantity: 100_000, client_order_id: `${tag}-a${i}` })));
    const bid = ok(await a.post('/orders', t.taker.order({ market_id: 'ETH-USDC', side: 'bid', price, quantity: 40_000 })));
    expect(bid.fills.length).toBeGreaterThanOrEqual(1);
    filled.push(bid.order_id, ask.order_id);
    if (i % 2 === 0) ok(await a.post('/orders/amend', t.maker.amend({ order_id: ask.order_id, price: price + 10_000, quantity: 50_000 })));
    ok(await a.post('/orders', t.taker.order({ market_id: 'ETH-USDC', side: 'bid', price: (1900 - i) * 1_000_000, quantity: 10_000, client_order_id: `${tag}-b${i}` })));
  }
  ok(await a.post('/withdrawals', t.taker.withdraw('USDC', '1000000')));
  ok(await a.put(`/admin/accounts/${t.maker.address}/credit`, { credit_limit: 5_000_000_000, auto_cancel_ratio: 0.8 }, adminHeaders(s)));
  // No asks left: a two-sided book would make candle queries extend up to the wall clock.
  ok(await a.post('/orders/cancel-all', t.maker.cancelAll('ETH-USDC')));
  return filled;
}

/** Every state- and history-dependent GET answer, for before/after comparisons. */
export async function readBack(s: StartedServer, t: Traders, filled: readonly number[]): Promise<Record<string, unknown>> {
  const a = api(s.url);
  const out: Record<string, unknown> = {};
  for (const [name, w] of [['maker', t.maker], ['taker', t.taker]] as const) {
    out[`${name}.balances`] = ok(await a.get(`/account/${w.address}/balances`));
    out[`${name}.orders`] = ok(await a.get(`/account/${w.address}/orders?status=all&limit=1000`));
    out[`${name}.fills`] = ok(await a.get(`/account/${w.address}/fills?limit=1000`));
  }
  out['orderbook'] = ok(await a.get('/orderbook/ETH-USDC'));
  out['trades'] = ok(await a.get('/trades/ETH-USDC?limit=1000'));
  out['markets'] = ok(await a.get('/markets'));
  out['ohlcv'] = ok(await a.get('/ohlcv/ETH-USDC?interval=1m&since=2020-01-01T00:00:00Z&limit=500'));
  out['leaderboard'] = ok(await a.get('/leaderboard'));
  out['by_client_id'] = ok(await a.get(`/account/${t.maker.address}/orders/by-client-id/r1-a1`));
  for (const id of filled.slice(0, 4)) out[`proof.${id}`] = ok(await a.get(`/orders/${id}/da-proof`));
  return out;
}

/** Waits until the snapshot of `batch_id` is written. */
export async function snapshotWritten(s: StartedServer, batch_id: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const st = await adminState(s);
    if (st.snapshots?.last !== null && Number(st.snapshots?.last?.batch_id) >= batch_id) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no snapshot at batch ${batch_id}`);
}
