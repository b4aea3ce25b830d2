// Every well-formed address is an account (DECISIONS, "Accounts and money"), on the real server:
// an unfunded order is INSUFFICIENT_BALANCE, a flood of fresh wallets stores nothing, an address
// is stored from its first accepted request on and its nonce high-water mark never goes back
//, and referrals work between wallets that never deposited.
import { describe, expect, it } from 'vitest';
import { Wallet, adminState, balances, deposit, type Api, type StartedServer } from './harness.js';
import { serverPerFile } from './per_file.js';

let s: StartedServer;
let a: Api;

serverPerFile((started, client) => {
  s = started;
  a = client;
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

async function included(entry_id: number): Promise<any> {
  for (let i = 0; i < 200; i++) {
    const e = await a.get(`/force-include/${entry_id}`);
    if (e.body.data.status === 'included') return e.body.data;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`entry ${entry_id} not included within 10 s`);
}

describe('force-include envelopes have their own nonce sequence', () => {
  it('a cancel signed at n and ignored, forced with an envelope at n + 1, is applied; and the other order', async () => {
    const user = Wallet.random();
    expect((await deposit(s, user.address, 'USDC', '10000')).status).toBe(200);
    const placed = await a.post('/orders', user.order({ ...limitBid, price: 1000_000_000 }, { nonce: 1 }));
    expect(placed.status).toBe(200);
    const order_id = placed.body.data.order_id;
    // The user signs a cancel at n = 2; the sequencer "ignores" it (it is never sent directly).
    const cancel = user.cancel({ order_id }, { nonce: 2 });
    const queued = await a.post('/force-include', user.forceInclude(cancel, { nonce: 3 }));
    expect(queued.status).toBe(200);
    expect(queued.body.data).toMatchObject({ kind: 'cancel', nonce: 3, payload_nonce: 2 });
    const done = await included(queued.body.data.entry_id);
    expect(done.result).toMatchObject({ accepted: true, error: null });
    const orders = await a.get(`/account/${user.address}/orders?status=all`);
    expect(orders.body.data.find((x: { order_id: number }) => x.order_id === order_id)?.status).toBe('cancelled');
    let b = await balances(s, user.address);
    expect([b.nonce_high_water, b.envelope_nonce_high_water]).toEqual([2, 3]);

    // Envelope n = 4 around a cancel-all signed at n + 1 = 5.
    const all = await a.post('/force-include', user.forceInclude(user.cancelAll(undefined, { nonce: 5 }), { nonce: 4 }));
    expect((await included(all.body.data.entry_id)).result).toMatchObject({ accepted: true });
    b = await balances(s, user.address);
    expect([b.nonce_high_water, b.envelope_nonce_high_water]).toEqual([5, 4]);

    // An envelope at or below the last envelope nonce is a duplicate; a payload whose nonce the
    // trading mark passed is queued and refused at inclusion.
    const dup = await a.post('/force-include', user.forceInclude(user.cancelAll(undefined, { nonce: 9 }), { nonce: 4 }));
    expect([dup.status, dup.body.error]).toEqual([400, 'DUPLICATE_NONCE']);
    const stale = await a.post('/force-include', user.forceInclude(user.cancelAll(undefined, { nonce: 5 }), { nonce: 6 }));
    expect(stale.status).toBe(200);
    expect((await included(stale.body.data.entry_id)).result).toMatchObject({ accepted: false, error: 'DUPLICATE_NONCE' });
  });
});
