// Rate limits on a dedicated real server with small limits (and open deposits): HTTP 429,
// Retry-After, the form C body, per-wallet and per-IP keys, and what does not consume a token;
// the per-IP budget of failed signatures over HTTP and the WebSocket `post`.
import { describe, expect, it } from 'vitest';
import { adminHeaders, balances, Wallet, type Api, type StartedServer } from './harness.js';
import { fail, ok, rateLimited } from './checks.js';
import { sleep, wsServerPerFile } from '../ws/client.js';

let s: StartedServer;
let a: Api;

const LIMITS = { orders_per_wallet: 3, cancels_per_wallet: 2, deposits_per_wallet: 2, withdrawals_per_wallet: 2, gets_per_ip: 40 };
/**
 * Failed signatures per IP: 2 at once, one back a second. Once refused, the IP stays refused for
 * about that second (the refusals below must arrive within it; the refill costs the file ~1 s).
 */
const FAILED_SIGNATURES = { failed_signatures_per_ip_burst: 2, failed_signatures_per_ip_per_s: 1 };

const { connect } = wsServerPerFile((started, client) => {
  s = started;
  a = client;
}, { config: { rate_limits: LIMITS, limits: FAILED_SIGNATURES, deposits: { open: true } } });

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

describe('limits.failed_signatures_per_ip_*', () => {
  it('an IP whose signatures keep failing has its signed requests refused 429 before verification, valid ones too, over HTTP and WebSocket, until the budget refills', async () => {
    const order = { market_id: 'ETH-USDC', side: 'bid', price: 1_000_000_000, quantity: 100 } as const;
    const c = await connect();
    const w = Wallet.random();
    const stranger = Wallet.random();
    // Six badly signed posts sent together: those let in are checked, each charging one token
    // (past an empty budget when their checks overlap: the IP owes the difference); the rest are
    // refused before their check.
    const ids = Array.from({ length: 6 }, (_, i) => `bad-${i}`);
    for (const id of ids) c.send({ type: 'post', id, path: '/orders', body: w.order(order, { signer: (m) => stranger.sign(m) }) });
    const answers = await Promise.all(ids.map((id) => c.next((m) => m.type === 'response' && m.id === id)));
    // (The first test's bad signature may still be owed: at least one of the six is checked.)
    const checked = answers.filter((m) => m.status === 401);
    expect(checked.length).toBeGreaterThanOrEqual(1);
    expect(checked.length).toBeLessThan(ids.length);
    for (const m of checked) expect(m.body.error).toBe('INVALID_SIGNATURE');
    for (const m of answers.filter((x) => x.status !== 401)) {
      expect(m.status).toBe(429);
      expect(m.body).toEqual({ ok: false, data: null, error: expect.stringMatching(/failed signatures from this IP/) });
    }
    // A validly signed request from the same IP is refused as well (it cannot be told from garbage
    // without the check the budget exists to spare): HTTP with Retry-After, and the WebSocket post.
    const refused = await a.post('/orders', Wallet.random().order(order));
    expect(rateLimited(refused)).toBeGreaterThanOrEqual(1);
    expect(refused.body.error).toMatch(/failed signatures from this IP: the limit is 2 at once and 1 per second/);
    c.send({ type: 'post', id: 'valid', path: '/orders', body: Wallet.random().order(order) });
    const ws_refused = await c.next((m) => m.type === 'response' && m.id === 'valid');
    expect(ws_refused.status).toBe(429);
    expect(ws_refused.body.error).toBe(refused.body.error);
    // A batch is refused whole.
    rateLimited(await a.post('/orders/batch', { requests: [{ kind: 'order', ...Wallet.random().order(order) }] }));
    // It refills: a valid request passes again (an unfunded wallet: verified, then refused by the engine).
    let passed = null;
    for (let i = 0; i < 400 && passed === null; i++) {
      const r = await a.post('/orders', Wallet.random().order(order));
      if (r.status !== 429) passed = r;
      else await sleep(25);
    }
    expect(passed, 'the budget never refilled').not.toBeNull();
    fail(passed!, 400, 'INSUFFICIENT_BALANCE');
  });
});
