// The SDK's market-maker calls against a real server: placeOrders / batch (one call, per-item
// results, the optional stp and expires_after_ms members signed in the JSON form), and
// RingbookSocket.post (the HTTP status and body over the WebSocket, correlated by id).
import { describe, expect, it } from 'vitest';
import { deposit, type StartedServer } from '../server/harness.js';
import { serverPerFile } from '../server/per_file.js';
import { ExpiredError, RingbookClient, RingbookSocket } from '../../src/client/index.js';
import { randomWallet } from './helpers.js';

let s: StartedServer;

serverPerFile((started) => {
  s = started;
});

describe('SDK order entry', () => {
  it('placeOrders sends one batch and returns one result per order, in order', async () => {
    const w = randomWallet();
    await deposit(s, w.address, 'USDC', '10000');
    const client = new RingbookClient({ base_url: s.url, wallet: w });
    const r = await client.placeOrders([
      { market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, stp: 'expire_both', expires_after_ms: Date.now() + 60_000 },
      { market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_001, quantity: 100 },
      { market_id: 'ETH-USDC', side: 'bid', price: 999_990_000, quantity: 100, client_order_id: 'sdk-2' },
    ]);
    expect(r.map((x) => x.ok)).toEqual([true, false, true]);
    if (!r[1].ok) expect(r[1].error).toBe('INVALID_ORDER');
    if (r[0].ok && r[2].ok) expect(r[0].data.batch_id).toBe(r[2].data.batch_id);
    const all = await client.batch([{ kind: 'cancel', client_order_id: 'sdk-2' }, { kind: 'cancel_all', market_id: 'ETH-USDC' }]);
    expect(all.every((x) => x.ok)).toBe(true);
    await expect(client.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100, expires_after_ms: 1 }))
      .rejects.toBeInstanceOf(ExpiredError);
  });

  it('ws.post answers with the HTTP status and body, correlated by id', async () => {
    const w = randomWallet();
    await deposit(s, w.address, 'USDC', '10000');
    const client = new RingbookClient({ base_url: s.url, wallet: w });
    const sock = new RingbookSocket({ url: s.url, reconnect: false });
    await sock.connect();
    try {
      const body = (price: number) => client.batchRequestBody([{ kind: 'order', market_id: 'ETH-USDC', side: 'bid', price, quantity: 100 }]);
      const [ok, bad, unknown] = await Promise.all([
        sock.post('/orders/batch', body(1_000_000_000)),
        sock.post('/orders', { nonsense: true }),
        sock.post('/nowhere', {}),
      ]);
      expect(ok.status).toBe(200);
      expect((ok.body.data as { ok: boolean }[])[0].ok).toBe(true);
      expect(bad).toMatchObject({ status: 400, body: { ok: false, error: 'INVALID_REQUEST' } });
      expect(unknown).toMatchObject({ status: 404, body: { ok: false, error: 'NOT_FOUND' } });
    } finally {
      sock.close();
    }
  });
});
