// Backpressure from the DA thread (limits.da_backlog_batches_max): while that many committed
// batches wait for their state root, new writes are answered 503 OVERLOADED, nothing of a refused
// request is applied, reads are served, and writes are taken again once the roots catch up.
// With the limit at 1, a write is refused from the moment a batch commits until its root comes
// back (the front posts events to the DA thread after DA_POST_INTERVAL_MS = 50 ms, then the DA
// thread hashes): back-to-back writes on loopback land in that window.
import { describe, expect, it } from 'vitest';
import { caughtUpState, deposit, Wallet, type Api, type StartedServer } from './harness.js';
import { serverPerFile } from './per_file.js';
import { ok } from './checks.js';

let s: StartedServer;
let a: Api;
const ATTEMPTS = 40;

serverPerFile((started, client) => {
  s = started;
  a = client;
}, { config: { limits: { da_backlog_batches_max: 1 } } });

describe('DA backlog bound', () => {
  it('refuses writes with 503 OVERLOADED while a batch awaits its root, applies nothing of them, then takes writes again', async () => {
    const w = Wallet.random();
    await caughtUpState(s);
    ok(await deposit(s, w.address, 'USDC', '1000'));
    // The first write below then finds no batch waiting (accepted), the ones right after it one.
    await caughtUpState(s);
    const accepted: string[] = [];
    const refused: string[] = [];
    for (let i = 0; i < ATTEMPTS; i++) {
      const id = `bp-${i}`;
      const r = await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, client_order_id: id }));
      if (r.status === 503) {
        expect(r.body.error).toBe('OVERLOADED');
        expect(r.body.message).toMatch(/^\d+ committed batch(es)? await their state root \(limits\.da_backlog_batches_max 1\)/);
        refused.push(id);
      } else {
        expect(r.status).toBe(200);
        accepted.push(id);
      }
    }
    expect(refused.length).toBeGreaterThan(0);
    expect(accepted.length).toBeGreaterThan(0);
    // Reads are served meanwhile; a refused order never reached the engine.
    for (const id of refused) expect((await a.get(`/account/${w.address}/orders/by-client-id/${id}`)).status).toBe(404);
    for (const id of accepted) expect(ok(await a.get(`/account/${w.address}/orders/by-client-id/${id}`)).status).toBe('open');
    const open = ok(await a.get(`/account/${w.address}/orders`)) as unknown[];
    expect(open.length).toBe(accepted.length);
    // Once every committed batch has its root, the next write is taken.
    await caughtUpState(s);
    const next = await a.post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, client_order_id: 'after' }));
    expect(next.status).toBe(200);
  });

  it('a signed batch is refused whole', async () => {
    const w = Wallet.random();
    await caughtUpState(s);
    ok(await deposit(s, w.address, 'USDC', '1000'));
    // The first write below then finds no batch waiting (accepted), the ones right after it one.
    await caughtUpState(s);
    let refused_whole = false;
    for (let i = 0; i < ATTEMPTS && !refused_whole; i++) {
      const requests = [0, 1].map((k) => ({ kind: 'order', ...w.order({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, client_order_id: `g-${i}-${k}` }) }));
      const items = ok(await a.post('/orders/batch', { requests })) as { ok: boolean; error?: string; message?: string }[];
      const codes = items.map((x) => (x.ok ? 'OK' : x.error));
      if (codes.every((c) => c === 'OVERLOADED')) {
        refused_whole = true;
        // One decision for the group: each item carries the same reason.
        expect(items[0].message).toMatch(/^\d+ committed batch(es)? await their state root/);
        expect(items[1].message).toBe(items[0].message);
        for (const k of [0, 1]) expect((await a.get(`/account/${w.address}/orders/by-client-id/g-${i}-${k}`)).status).toBe(404);
      } else {
        expect(codes.filter((c) => c === 'OVERLOADED')).toEqual([]);
      }
    }
    expect(refused_whole).toBe(true);
  });
});
