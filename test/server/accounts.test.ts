// Every well-formed address is an account (DECISIONS, "Accounts and money"), on the real server:
// an unfunded order is INSUFFICIENT_BALANCE, a flood of fresh wallets stores nothing, an address
// is stored from its first accepted request on and its nonce high-water mark never goes back
//, and referrals work between wallets that never deposited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Wallet, adminState, api, balances, deposit, startServer, type Api, type StartedServer,
} from './harness.js';

let s: StartedServer;
let a: Api;

beforeAll(async () => {
  s = await startServer();
  a = api(s.url);
});
afterAll(async () => {
  await s?.stop();
});

const limitBid = { market_id: 'ETH-USDC', side: 'bid', price: 2000_000_000, quantity: 1_000_000 };
/** Fresh wallets in the flood; sent in rounds of FLOOD_ROUND concurrent requests. */
const FLOOD_WALLETS = 300;
const FLOOD_ROUND = 50;

describe('every address is an account', () => {
  it('an order from a wallet that never deposited is INSUFFICIENT_BALANCE (400), not 404', async () => {
    const fresh = Wallet.random();
    for (const o of [limitBid, { ...limitBid, side: 'ask' }]) {
      const r = await a.post('/orders', fresh.order(o));
      expect([r.status, r.body.error, r.body.message]).toEqual([400, 'INSUFFICIENT_BALANCE', 'insufficient balance']);
    }
    const w = await a.post('/withdrawals', fresh.withdraw('USDC', '1000000'));
    expect([w.status, w.body.error]).toEqual([400, 'INSUFFICIENT_BALANCE']);
    const c = await a.post('/orders/cancel', fresh.cancel({ order_id: 1 }));
    expect([c.status, c.body.error]).toEqual([404, 'NOT_FOUND']);
    expect((await balances(s, fresh.address)).nonce_high_water).toBe(0);
  });

  it('a flood of fresh wallets whose requests are refused stores no account', async () => {
    const before = (await adminState(s)).accounts as number;
    let refused = 0;
    for (let round = 0; round < FLOOD_WALLETS / FLOOD_ROUND; round++) {
      const answers = await Promise.all(Array.from({ length: FLOOD_ROUND }, () => a.post('/orders', Wallet.random().order(limitBid))));
      refused += answers.filter((r) => r.status === 400 && r.body.error === 'INSUFFICIENT_BALANCE').length;
    }
    expect(refused).toBe(FLOOD_WALLETS);
    const after = await adminState(s);
    expect(after.accounts).toBe(before);
    // A funded wallet after the flood still gets the next id and trades normally.
    const funded = Wallet.random();
    expect((await deposit(s, funded.address, 'USDC', '10000')).status).toBe(200);
    // (Below the referral test's trading price: it must not meet that test's maker.)
    const r = await a.post('/orders', funded.order({ ...limitBid, price: 1000_000_000 }));
    expect(r.status).toBe(200);
    expect((await adminState(s)).accounts).toBe(before + 1);
  });

  it('an accepted request from a fresh wallet stores its nonce mark, which never goes back', async () => {
    const fresh = Wallet.random();
    const before = (await adminState(s)).accounts as number;
    const ok = await a.post('/orders/cancel-all', fresh.cancelAll(undefined, { nonce: 7 }));
    expect(ok.status).toBe(200);
    expect((await balances(s, fresh.address)).nonce_high_water).toBe(7);
    expect((await adminState(s)).accounts).toBe(before + 1);
    for (const n of [7, 3]) {
      const again = await a.post('/orders/cancel-all', fresh.cancelAll(undefined, { nonce: n }));
      expect([again.status, again.body.error]).toEqual([400, 'DUPLICATE_NONCE']);
    }
  });
});

describe('referrals before any deposit', () => {
  it('two never-funded wallets: the referral is accepted and the share reaches the referrer', async () => {
    const referred = Wallet.random();
    const referrer = Wallet.random();
    const maker = Wallet.random();
    const reg = await a.post('/referral/register', referred.referral(referrer.address));
    expect(reg.status).toBe(200);
    expect(reg.body.data).toMatchObject({ referred: referred.address, referrer: referrer.address });
    const stats = await a.get(`/referral/${referrer.address}`);
    expect(stats.body.data.referred_users).toBe(1);

    // Only now does the referred user fund and trade (taker); the referrer never deposits.
    expect((await deposit(s, referred.address, 'USDC', '100000')).status).toBe(200);
    expect((await deposit(s, maker.address, 'ETH', '10')).status).toBe(200);
    expect((await a.post('/orders', maker.order({ market_id: 'ETH-USDC', side: 'ask', price: 2000_000_000, quantity: 1_000_000 }))).status).toBe(200);
    const taker = await a.post('/orders', referred.order(limitBid));
    expect(taker.status).toBe(200);
    expect(taker.body.data.fills.length).toBe(1);
    const fee = Number(taker.body.data.fills[0].fee);
    expect(fee).toBeGreaterThan(0);
    // 20% (floor) of the referred user's taker fee, in USDC.
    const share = Math.floor(fee * 20 / 100);
    expect(share).toBeGreaterThan(0);
    expect((await balances(s, referrer.address)).USDC.available).toBe(share);
    const after = await a.get(`/referral/${referrer.address}`);
    expect(after.body.data.total_earnings_usdc).toBe(String(share));
  });
});
