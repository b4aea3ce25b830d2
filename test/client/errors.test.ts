// Typed errors from a real server, and the nonce source under concurrency.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type StartedServer } from '../server/harness.js';
import { serverPerFile } from '../server/per_file.js';
import {
  DuplicateNonceError,
  InsufficientBalanceError,
  InvalidOrderError,
  InvalidRequestError,
  InvalidSignatureError,
  MarketNotFoundError,
  MarketPausedError,
  NotFoundError,
  RateLimitedError,
  RingbookClient,
  RingbookError,
  UnauthorizedError,
  Wallet,
} from '../../src/client/index.js';
import { randomWallet } from './helpers.js';

async function caught(p: Promise<unknown>): Promise<RingbookError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RingbookError) return e;
    throw e;
  }
  throw new Error('expected a RingbookError');
}

describe('typed errors', () => {
  let s: StartedServer;
  let admin: RingbookClient;
  let c: RingbookClient;

  serverPerFile((started) => {
    s = started;
  });
  beforeAll(async () => {
    admin = new RingbookClient({ base_url: s.url, admin_token: s.admin_token });
    c = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    await admin.deposit({ user: c.wallet!.address, asset: 'USDC', amount: '1000' });
  });

  it('DUPLICATE_NONCE, INSUFFICIENT_BALANCE, INVALID_ORDER, MARKET_NOT_FOUND carry code, status, request_id', async () => {
    await c.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000, quantity: 100, nonce: 10 });
    const dup = await caught(c.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000, quantity: 100, nonce: 10 }));
    expect(dup).toBeInstanceOf(DuplicateNonceError);
    expect(dup.code).toBe('DUPLICATE_NONCE');
    expect(dup.status).toBe(400);
    expect(dup.request_id).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);

    const bal = await caught(c.placeOrder({ market_id: 'ETH-USDC', side: 'ask', price: 1000000000, quantity: 100 }));
    expect(bal).toBeInstanceOf(InsufficientBalanceError);
    expect(bal.status).toBe(400);

    const bad = await caught(c.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000001, quantity: 100 }));
    expect(bad).toBeInstanceOf(InvalidOrderError);
    expect(bad.message).toBe('price must be a multiple of the tick size');

    const mnf = await caught(c.orderbook('DOGE-USDC'));
    expect(mnf).toBeInstanceOf(MarketNotFoundError);
    expect(mnf.status).toBe(404);
  });

  it('NOT_FOUND, UNAUTHORIZED, INVALID_SIGNATURE, INVALID_REQUEST, MARKET_PAUSED', async () => {
    const stranger = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    expect(await caught(stranger.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000, quantity: 100 }))).toBeInstanceOf(InsufficientBalanceError);
    expect(await caught(c.cancel({ order_id: 999999 }))).toBeInstanceOf(NotFoundError);

    const wrong = new RingbookClient({ base_url: s.url, admin_token: 'nope' });
    const un = await caught(wrong.adminState());
    expect(un).toBeInstanceOf(UnauthorizedError);
    expect(un.status).toBe(401);

    const other = randomWallet();
    class Liar extends Wallet {
      override signMessage(text: string): string {
        return other.signMessage(text);
      }
    }
    const liarKey = '0x' + '11'.repeat(32);
    const liar = new RingbookClient({ base_url: s.url, wallet: new Liar(liarKey) });
    await admin.deposit({ user: liar.wallet!.address, asset: 'USDC', amount: '10' });
    const sig = await caught(liar.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000, quantity: 100 }));
    expect(sig).toBeInstanceOf(InvalidSignatureError);
    expect(sig.status).toBe(401);

    expect(await caught(c.trades('ETH-USDC', { limit: 0 }))).toBeInstanceOf(InvalidRequestError);

    await admin.pauseMarket('BTC-USDC');
    expect(await caught(c.placeOrder({ market_id: 'BTC-USDC', side: 'bid', price: 30000000000, quantity: 10 }))).toBeInstanceOf(MarketPausedError);
    await admin.resumeMarket('BTC-USDC');
  });

  it('50 concurrent placeOrder calls never produce DUPLICATE_NONCE', async () => {
    const mm = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    await admin.deposit({ user: mm.wallet!.address, asset: 'USDC', amount: '1000000' });
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => mm.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000 + i * 10000, quantity: 100 })),
    );
    const codes = results.map((r) => (r.status === 'fulfilled' ? 'OK' : (r.reason as RingbookError).code));
    for (const code of codes) expect(['OK', 'RATE_LIMITED', 'INSUFFICIENT_BALANCE']).toContain(code);
    expect(codes.filter((x) => x === 'OK').length).toBe(50);
    const open = await mm.orders({ limit: 100 });
    expect(open).toHaveLength(50);
  });
});

describe('rate limiting', () => {
  let s: StartedServer;
  afterAll(async () => {
    const r = await s?.stop();
    expect(r?.code).toBe(0);
  });

  it('429 becomes RateLimitedError with retry_after_s', async () => {
    s = await startServer({ config: { rate_limits: { orders_per_wallet: 2 } } });
    const admin = new RingbookClient({ base_url: s.url, admin_token: s.admin_token });
    const c = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    await admin.deposit({ user: c.wallet!.address, asset: 'USDC', amount: '1000' });
    const place = () => c.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000, quantity: 100 });
    await place();
    await place();
    const e = await caught(place());
    expect(e).toBeInstanceOf(RateLimitedError);
    expect(e.code).toBe('RATE_LIMITED');
    expect(e.status).toBe(429);
    expect((e as RateLimitedError).retry_after_s).toBeGreaterThanOrEqual(1);
    expect(e.request_id).toMatch(/^[0-9a-f]{12}-/);
    expect(e.message).toMatch(/Too many orders/);
  });
});
