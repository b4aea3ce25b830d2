// Rate limits on a dedicated real server with small limits (and open deposits): HTTP 429,
// Retry-After, the form C body, per-wallet and per-IP keys, and what does not consume a token.
import { describe, expect, it } from 'vitest';
import { adminHeaders, balances, Wallet, type Api, type StartedServer } from './harness.js';
import { serverPerFile } from './per_file.js';
import { fail, ok, rateLimited } from './checks.js';

let s: StartedServer;
let a: Api;

const LIMITS = { orders_per_wallet: 3, cancels_per_wallet: 2, deposits_per_wallet: 2, withdrawals_per_wallet: 2, gets_per_ip: 40 };

serverPerFile((started, client) => {
  s = started;
  a = client;
}, { config: { rate_limits: LIMITS, deposits: { open: true } } });

describe('deposits.open and deposits_per_wallet', () => {
  it('with deposits.open no admin token is needed; the third deposit of a wallet in a minute is 429', async () => {
    const w = Wallet.random();
    expect(ok(await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '100' }))).toMatchObject({ amount: 100_000_000 });
    ok(await a.post('/deposit', { user: w.address, asset: 'ETH', amount: '1' }, adminHeaders(s)));
    const retry = rateLimited(await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '1' }));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(30); // 2 per minute: one token back every 30 s
    // Another wallet has its own bucket.
    ok(await a.post('/deposit', { user: Wallet.random().address, asset: 'USDC', amount: '1' }));
  });
});

describe('orders_per_wallet and cancels_per_wallet', () => {
  let w: Wallet;
  const ids: number[] = [];

  it('bad signatures do not consume a token; the fourth signed order in a minute is 429 and never reaches the engine', async () => {
    w = Wallet.random();
    ok(await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '1000' }));
    const intruder = Wallet.random();
    const order = { market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 } as const;
    fail(await a.post('/orders', w.order(order, { signer: (m) => intruder.sign(m) })), 401, 'INVALID_SIGNATURE');
    for (let i = 0; i < 3; i++) ids.push(ok(await a.post('/orders', w.order(order))).order_id);
    const r = await a.post('/orders', w.order(order));
    const retry = rateLimited(r);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(20); // 3 per minute: one token back every 20 s
    expect(r.body.error).toMatch(/orders/);
    expect(r.body.error).toMatch(/3/);
    // Amend counts as an order.
    rateLimited(await a.post('/orders/amend', w.amend({ order_id: ids[0], price: 1_000_000_000, quantity: 200 })));
    // Shape errors are answered before the limit is looked at.
    fail(await a.post('/orders', '{"user":'), 400, 'INVALID_REQUEST');
    // The limited requests changed nothing: three orders (nonces 2..4).
    const b = await balances(s, w.address);
    expect(b.nonce_high_water).toBe(4); // nonce 1 went to the refused bad signature
    expect(b.USDC.locked).toBe(3 * (100_000 + 50));
    // Another wallet is not limited.
    const v = Wallet.random();
    ok(await a.post('/deposit', { user: v.address, asset: 'USDC', amount: '10' }));
    ok(await a.post('/orders', v.order(order)));
  });

  it('cancels and cancel-all share the cancels bucket', async () => {
    ok(await a.post('/orders/cancel', w.cancel({ order_id: ids[0] })));
    ok(await a.post('/orders/cancel-all', w.cancelAll('ETH-USDC')));
    const r = await a.post('/orders/cancel', w.cancel({ order_id: ids[1] }));
    expect(rateLimited(r)).toBeLessThanOrEqual(30);
    expect(r.body.error).toMatch(/cancels/);
    rateLimited(await a.post('/orders/cancel-all', w.cancelAll()));
  });
});

describe('withdrawals_per_wallet', () => {
  it('the third withdrawal in a minute is 429 and debits nothing', async () => {
    const w = Wallet.random();
    ok(await a.post('/deposit', { user: w.address, asset: 'USDC', amount: '10' }));
    ok(await a.post('/withdrawals', w.withdraw('USDC', '1000000')));
    ok(await a.post('/withdrawals', w.withdraw('USDC', '1000000')));
    const r = await a.post('/withdrawals', w.withdraw('USDC', '1000000'));
    rateLimited(r);
    expect(r.body.error).toMatch(/withdrawals/);
    expect((await balances(s, w.address)).USDC.available).toBe(8_000_000);
  });
});

describe('gets_per_ip', () => {
  it('GETs from one IP are limited (and /withdrawal-signature counts as a GET); admin state is not', async () => {
    let limited = null;
    for (let i = 0; i < 60 && limited === null; i++) {
      const r = await a.get('/health');
      if (r.status === 429) limited = r;
      else expect(r.status).toBe(200);
    }
    expect(limited, 'no 429 within 60 GETs with gets_per_ip = 40').not.toBeNull();
    const retry = rateLimited(limited!);
    expect(retry).toBeLessThanOrEqual(2); // 40 per minute: one token every 1.5 s
    expect(limited!.body.error).toMatch(/GET/);
    rateLimited(await a.get('/markets'));
    rateLimited(await a.get('/account/0x' + '11'.repeat(20) + '/balances'));
    rateLimited(await a.post('/withdrawal-signature', { user: '0x' + '11'.repeat(20), asset: 'USDC', amount: '1', nonce: 1 }));
    ok(await a.get('/admin/state', adminHeaders(s)));
  });
});
