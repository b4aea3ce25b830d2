// RingbookSocket against a real server: auth, channels, book sync by sequence, reconnect.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type StartedServer } from '../server/harness.js';
import {
  channels,
  RingbookClient,
  RingbookSocket,
  UnauthorizedError,
  type BalanceUpdateMessage,
  type BookView,
  type FillMessage,
  type OrderUpdateMessage,
  type TradeMessage,
} from '../../src/client/index.js';
import { freePort, randomWallet, waitFor } from './helpers.js';

const M = 'ETH-USDC';

/**
 * Waits for what a correct client and server deliver at once (an update, a state): 30 s only ends
 * a hang, with a message saying so; it is not a speed bound (the 3 s limits before could run out
 * on a loaded 2-core CI machine while everything worked).
 */
const HANG_GUARD_MS = 30_000;
function until<T>(f: () => T | undefined | null | false, what: string): Promise<T> {
  return waitFor(f, HANG_GUARD_MS, `${what} (still waiting after ${HANG_GUARD_MS} ms: a hang guard)`);
}

describe('RingbookSocket', () => {
  let s: StartedServer;
  let admin: RingbookClient;
  const sockets: RingbookSocket[] = [];

  beforeAll(async () => {
    s = await startServer();
    admin = new RingbookClient({ base_url: s.url, admin_token: s.admin_token });
  });
  afterAll(async () => {
    for (const k of sockets) k.close();
    const r = await s?.stop();
    expect(r?.code).toBe(0);
  });

  async function trader(): Promise<RingbookClient> {
    const c = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    await admin.deposit({ user: c.wallet!.address, asset: 'USDC', amount: '100000' });
    await admin.deposit({ user: c.wallet!.address, asset: 'ETH', amount: '10' });
    return c;
  }

  it('authenticates, and private and public channels carry a placed and matched order', async () => {
    const maker = await trader();
    const taker = await trader();
    const a = maker.wallet!.address;
    const sock = new RingbookSocket({
      url: s.url,
      wallet: maker.wallet,
      channels: [channels.book(M), channels.trades(M), channels.orders(a), channels.fills(a), channels.balances(a)],
    });
    sockets.push(sock);
    const orders: OrderUpdateMessage[] = [];
    const fills: FillMessage[] = [];
    const bals: BalanceUpdateMessage[] = [];
    const trades: TradeMessage[] = [];
    const books: BookView[] = [];
    sock.onOrder((m) => orders.push(m));
    sock.onFill((m) => fills.push(m));
    sock.onBalance((m) => bals.push(m));
    sock.onTrade((m) => trades.push(m));
    sock.onBook((b) => books.push(b));
    await sock.connect();
    expect(sock.authenticated).toBe(a);
    expect(sock.state).toBe('open');
    await until(() => books.length > 0, 'initial snapshot');
    expect(typeof (await sock.ping())).toBe('string');

    const ask = await maker.placeOrder({ market_id: M, side: 'ask', price: 2000000000, quantity: 1000, client_order_id: 'ws-1' });
    await until(() => orders.some((o) => o.order_id === String(ask.order_id) && o.reason === 'placed'), 'placed update');
    await until(() => sock.book(M)?.asks.some(([p]) => p === '2000000000'), 'ask on the book');
    await taker.placeOrder({ market_id: M, side: 'bid', price: 2000000000, quantity: 400, time_in_force: 'ioc' });
    await until(() => fills.length === 1 && trades.length === 1, 'fill and trade');
    expect(fills[0]).toMatchObject({ order_id: String(ask.order_id), is_maker: true, quantity: '400', price: '2000000000', side: 'ask' });
    expect(trades[0]).toMatchObject({ market_id: M, quantity: '400', side: 'bid' });
    await until(() => orders.some((o) => o.status === 'partially_filled' && o.filled_quantity === '400'), 'fill update');
    await until(() => bals.some((b) => b.reason === 'fill'), 'balance update');
    await until(() => sock.book(M)?.asks.some(([p, q]) => p === '2000000000' && q === '600'), 'book after fill');
    const http = await maker.orderbook(M);
    expect(sock.book(M)!.sequence).toBe(http.sequence);
    expect(sock.book(M)!.asks).toEqual(http.asks);
    await maker.cancelAll();
  });

  it('private channels need auth: UnauthorizedError', async () => {
    const w = randomWallet();
    const sock = new RingbookSocket({ url: s.url });
    sockets.push(sock);
    await sock.connect();
    await expect(sock.subscribe([channels.orders(w.address)])).rejects.toBeInstanceOf(UnauthorizedError);
    expect(await sock.subscribe([channels.trades(M)])).toEqual([`trades:${M}`]);
    sock.close();
  });

  it('keepalive pings on a timer; unsubscribe', async () => {
    const sock = new RingbookSocket({ url: s.url.replace('http://', 'ws://') + '/ws', ping_interval_ms: 40, channels: [channels.trades(M)] });
    sockets.push(sock);
    await sock.connect();
    expect(sock.ws_url).toBe(s.url.replace('http://', 'ws://') + '/ws');
    await until(() => sock.stats.pings_sent >= 3, 'pings');
    expect(sock.state).toBe('open');
    expect(sock.stats.connects).toBe(1);
    expect(await sock.unsubscribe([channels.trades(M)])).toEqual([`trades:${M}`]);
    expect(sock.channels).toEqual([]);
    sock.close();
    expect(sock.state).toBe('closed');
  });

  it('book sync: a lost snapshot (gap) triggers an HTTP re-fetch and the book converges', async () => {
    const mm = await trader();
    let drop_next = false;
    let dropped = 0;
    const sock = new RingbookSocket({
      url: s.url,
      channels: [channels.book(M)],
      dropSnapshot: () => {
        if (!drop_next) return false;
        drop_next = false;
        dropped++;
        return true;
      },
    });
    sockets.push(sock);
    await sock.connect();
    await until(() => sock.book(M), 'initial snapshot');
    const before = sock.book(M)!.sequence;
    drop_next = true;
    await mm.placeOrder({ market_id: M, side: 'bid', price: 1500000000, quantity: 100 });
    await until(() => dropped === 1, 'a dropped snapshot');
    expect(sock.book(M)!.sequence).toBe(before);
    await mm.placeOrder({ market_id: M, side: 'bid', price: 1500000000, quantity: 200 });
    await until(() => sock.stats.resyncs >= 1, 'resync');
    expect(sock.stats.gaps).toBe(1);
    const http = await mm.orderbook(M);
    await until(() => sock.book(M)!.sequence === http.sequence, 'converged sequence');
    expect(sock.book(M)!.sequence).toBe(before + 2);
    expect(sock.book(M)!.bids).toEqual(http.bids);
    expect(sock.book(M)!.bids.find(([p]) => p === '1500000000')?.[1]).toBe('300');
    await mm.cancelAll();
    await until(() => sock.book(M)!.sequence === before + 3, 'snapshot after cancel-all');
    expect(sock.stats.stale_dropped).toBeGreaterThanOrEqual(0);
    sock.close();
  });
});

describe('RingbookSocket reconnect', () => {
  it('reconnects, re-authenticates and re-subscribes after the server restarts', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ringbook-client-ws-'));
    const port = await freePort();
    const env = { RINGBOOK_DATA_DIR: dir, RINGBOOK_PORT: String(port) };
    let s = await startServer({ env });
    try {
      const wallet = randomWallet();
      const me = new RingbookClient({ base_url: s.url, wallet });
      await new RingbookClient({ base_url: s.url, admin_token: s.admin_token }).deposit({ user: wallet.address, asset: 'USDC', amount: '1000' });
      const sock2 = new RingbookSocket({
        url: s.url,
        wallet,
        channels: [channels.orders(wallet.address), channels.book(M)],
        min_backoff_ms: 50,
        max_backoff_ms: 400,
      });
      const orders: OrderUpdateMessage[] = [];
      sock2.onOrder((o) => orders.push(o));
      try {
        await sock2.connect();
        const first = await me.placeOrder({ market_id: M, side: 'bid', price: 1000000000, quantity: 100 });
        await until(() => orders.some((o) => o.order_id === String(first.order_id)), 'first update');
        const seq_before = sock2.book(M)!.sequence;

        expect((await s.stop()).code).toBe(0);
        await until(() => sock2.state === 'reconnecting', 'reconnecting state');
        s = await startServer({ env });
        await until(() => sock2.state === 'open' && sock2.stats.reconnects >= 1, 'reconnected');
        expect(sock2.authenticated).toBe(wallet.address);
        expect(sock2.book(M)!.sequence).toBeGreaterThanOrEqual(seq_before);

        // The account survived (same data dir); events flow on the new connection.
        await me.syncNonce();
        const second = await me.placeOrder({ market_id: M, side: 'bid', price: 1000000000, quantity: 100 });
        await until(() => orders.some((o) => o.order_id === String(second.order_id)), 'update after restart');
        await until(() => sock2.book(M)!.bids.some(([p, q]) => p === '1000000000' && q === '200'), 'book after restart');
      } finally {
        sock2.close();
      }
    } finally {
      await s.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
