// A slow reader is dropped and never holds up the others: one subscriber stops reading its socket
// while book snapshots of a deep book flow; the server closes it once what it buffers for it
// passes `ws_backpressure_bytes_max`, and a normal subscriber keeps receiving every sequence.
import { describe, expect, it } from 'vitest';
import { deposit, Wallet, type Api, type StartedServer } from '../server/harness.js';
import { serverPerFile } from '../server/per_file.js';
import { fastSigner, WsClient } from './client.js';

const BACKPRESSURE_MAX = 128 * 1024;
const LEVELS = 600;
/** Loopback TCP holds about 4 MB between a server that writes and a client that does not read. */
const PREFILL_BYTES = 3_000_000;
/** Orders posted at most while waiting for the drop (a safety bound; it comes after a few dozen). */
const REQUESTS_MAX = 400;

let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
}, { config: { limits: { ws_backpressure_bytes_max: BACKPRESSURE_MAX } } });

async function post(path: string, body: unknown): Promise<any> {
  const r = await a.post(path, body);
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

describe('backpressure', () => {
  it('drops a subscriber that stops reading while the others keep receiving every snapshot', async () => {
    // A deep book: LEVELS resting orders at distinct prices, from 10 wallets in parallel (each
    // wallet's own requests in sequence: its nonces must reach the engine in order).
    const wallets = Array.from({ length: 10 }, () => Wallet.random());
    await Promise.all(wallets.map(async (w) => {
      await deposit(s, w.address, 'ETH', '1000');
      await deposit(s, w.address, 'USDC', '10000000');
    }));
    await Promise.all(wallets.map(async (w, j) => {
      const signer = fastSigner(w);
      for (let k = j; k < LEVELS; k += wallets.length) {
        const bid = k % 2 === 0;
        const price = bid ? 1000_000000 - k * 10000 : 3000_000000 + k * 10000;
        await post('/orders', w.order({ market_id: 'ETH-USDC', side: bid ? 'bid' : 'ask', price, quantity: 10000 }, { signer }));
      }
    }));

    const fast = await WsClient.connect(s.url);
    const slow = await WsClient.connect(s.url);
    for (const c of [fast, slow]) {
      await c.request({ type: 'subscribe', channels: ['book:ETH-USDC'] }, 'subscribed');
      const snap = await c.nextType('book_snapshot');
      expect(snap.bids.length + snap.asks.length).toBe(LEVELS);
    }
    const snapshot_bytes = JSON.stringify(fast.all.at(-1)).length;

    // The slow reader stops reading. First its own requests fill the loopback buffers (each
    // subscribe to a channel it already has is answered with a fresh snapshot), then published
    // snapshots pile up on the server until the limit.
    slow.ws.pause();
    const prefill = Math.floor(PREFILL_BYTES / snapshot_bytes);
    for (let i = 0; i < prefill; i++) slow.send({ type: 'subscribe', channels: ['book:ETH-USDC'] });

    const w = wallets[0];
    const signer = fastSigner(w);
    // Bounded by the count of orders, not by the clock. "Never held up" is an order of events, not
    // a lag bound (those flake on a loaded 2-core machine): each published snapshot reaches the
    // fast subscriber before the next order is posted, while the slow one is still connected.
    let requests = 0;
    let fast_while_slow_connected = 0;
    let fast_lag_max_ms = 0; // reported only
    while (slow.closed === null && requests < REQUESTS_MAX) {
      await post('/orders', w.order({ market_id: 'ETH-USDC', side: 'bid', price: 500_000000 + requests * 10000, quantity: 10000 }, { signer }));
      requests++;
      const answered_ms = Date.now();
      const connected = slow.closed === null;
      await fast.nextType('book_snapshot', 10_000);
      if (connected) fast_while_slow_connected++;
      fast_lag_max_ms = Math.max(fast_lag_max_ms, Date.now() - answered_ms);
      // A write from the slow side: once the server has dropped it, the write fails (reset) and
      // 'close' fires although it does not read.
      slow.ws.ping();
      await new Promise((r) => setImmediate(r));
    }
    slow.ws.resume();
    const closed = await slow.waitClose(5000);
    expect(closed.code).toBe(1006); // dropped: no close frame
    const final = (await a.get('/orderbook/ETH-USDC?depth=1')).body.data.sequence as number;
    // The slow one stopped short of the last sequence.
    const slow_snaps = slow.all.filter((m) => m.type === 'book_snapshot');
    expect(slow_snaps.length).toBeLessThan(prefill + requests);
    const slow_max = Math.max(...slow_snaps.map((m) => m.sequence as number));
    expect(slow_max).toBeLessThan(final);
    // The fast one got every sequence, in order, without gaps, promptly, and is still connected.
    const fast_seqs = fast.all.filter((m) => m.type === 'book_snapshot').map((m) => m.sequence as number);
    expect(fast_seqs).toHaveLength(requests + 1);
    for (let i = 1; i < fast_seqs.length; i++) expect(fast_seqs[i]).toBe(fast_seqs[i - 1] + 1);
    expect(fast_seqs.at(-1)).toBe(final);
    expect(fast_while_slow_connected, 'the fast one kept receiving while the slow one was stalled, not only after the drop').toBeGreaterThan(0);
    expect((await fast.request({ type: 'ping' }, 'pong')).type).toBe('pong');
    console.log(`backpressure: snapshot ${snapshot_bytes} B, prefill ${prefill}, dropped after ${requests} published snapshots, slow got ${slow_snaps.length}, fast lag max ${fast_lag_max_ms} ms (not asserted)`);
    fast.close();
  });
});
