// The client SDK's REST methods against a real server (test/server/harness.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import type { StartedServer } from '../server/harness.js';
import { serverPerFile } from '../server/per_file.js';
import * as money from '../../src/money/index.js';
import * as messages from '../../src/auth/messages.js';
import {
  formatUnits,
  MonotonicNonce,
  parseDecimalUnits,
  RingbookClient,
  Wallet,
  orderJsonMessage,
} from '../../src/client/index.js';
import { randomWallet } from './helpers.js';

/** Limit of `eventually`: only a guard against a hang, never the assertion of how soon. */
const EVENTUALLY_HANG_MS = 30_000;

/**
 * `ask()`'s answer once it stops failing (a read of what the DA thread publishes behind the
 * commit), asked again every 20 ms; the last failure, named, after EVENTUALLY_HANG_MS.
 */
async function eventually<T>(ask: () => Promise<T>, what: string): Promise<T> {
  const start = Date.now();
  for (;;) {
    try {
      return await ask();
    } catch (e) {
      if (Date.now() - start > EVENTUALLY_HANG_MS) throw new Error(`still no ${what} after ${EVENTUALLY_HANG_MS} ms (a hang)`, { cause: e });
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const TEST_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';

describe('Wallet and helpers (no server)', () => {
  it('derives the lowercase address and signs the docs worked examples', () => {
    const w = new Wallet(TEST_KEY);
    expect(w.address).toBe('0x2c7536e3605d9c16a7a3d7b1898e529396a65c23');
    expect(
      w.signOrder({ market_id: 'ETH-USDC', side: 'bid', price: 2000010000, quantity: 300, order_type: 'limit', time_in_force: 'gtc', nonce: 1 }),
    ).toBe('0x2f49ce1524d743c5c0f1a66e16dd97428f6fa14e0f45990cbc5567adeb3974b049519e6c017cd4dda3977da9786124419c7808eae02d9a1351f790ffa2a3fd171c');
    expect(w.signCancel({ order_id: '17', client_order_id: '', nonce: 3 })).toBe(
      '0x3b6207cd0efb188383584c13a5976777756bfd4c5eda00a0defae0bd124d9957660b46719b222d8e8e409fd03a146e56f63ca7aa6ef4741a5e55db4d112f51301b',
    );
    expect(w.signAmend({ order_id: 17, price: 1999990000, quantity: 200, nonce: 5 })).toBe(
      '0x153faa945c9e6c866b7ba3c4a0f4c8b0cf64be2916926047b45f7c4f924fcb7c5376f58b2484004fd149c449ff5112959e85599b53b507d8b4fddfd9df2a5e501c',
    );
    expect(w.signCancelAll({ market_id: null, nonce: 6 })).toBe(
      '0xa519f4a49f0cdb23dd7386ec143ee14d9682ed434dfb710ef707c6262835260337bd1aee1aff63f9d33d7a0b51391afcfa69ef8f923eb092b289f56f790df9c11b',
    );
    expect(w.signWithdrawal({ address: w.address, asset: 'ETH', amount: '500000000000000000', nonce: 7 })).toBe(
      '0x35936a9669d6a7b4fdd3a6425ad894dc6f2b829fa5985f2bd2924a59b35810d3295deae88bacf422a38368a12b2ff9b341b876c8d118ab2d3fe95e59a8b8e46b1c',
    );
    expect(w.signChallenge('abc')).toMatch(/^0x[0-9a-f]{130}$/);
    expect(() => new Wallet('0x1234')).toThrow(TypeError);
  });

  it('re-exports the server fixed-point helpers and message builders (same functions, not copies)', () => {
    expect(parseDecimalUnits).toBe(money.parseDecimalUnits);
    expect(formatUnits).toBe(money.formatUnits);
    expect(orderJsonMessage).toBe(messages.orderJsonMessage);
    expect(parseDecimalUnits('2000.01', { allow_negative: false })).toBe(2000010000);
    expect(formatUnits(300)).toBe('0.0003');
  });

  it('MonotonicNonce never repeats or goes backwards, even when the clock does', () => {
    let t = 1000;
    const n = new MonotonicNonce({ now: () => t });
    const a = n.next();
    expect(a).toBe(1_000_000);
    t = 500; // clock stepped back
    expect(n.next()).toBe(a + 1);
    n.observe(5_000_000);
    expect(n.next()).toBe(5_000_001);
    n.observe(10); // lower: ignored
    expect(n.next()).toBe(5_000_002);
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i++) seen.add(n.next());
    expect(seen.size).toBe(10_000);
  });
});

describe('RingbookClient against a real server', () => {
  let s: StartedServer;
  let admin: RingbookClient;
  let maker: RingbookClient;
  let taker: RingbookClient;
  let pub: RingbookClient;

  serverPerFile((started) => {
    s = started;
  });
  beforeAll(async () => {
    admin = new RingbookClient({ base_url: s.url, admin_token: s.admin_token });
    maker = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    taker = new RingbookClient({ base_url: s.url, wallet: randomWallet() });
    pub = new RingbookClient({ base_url: s.url + '/' });
    for (const c of [maker, taker]) {
      await admin.deposit({ user: c.wallet!.address, asset: 'USDC', amount: '100000' });
      await admin.deposit({ user: c.wallet!.address, asset: 'ETH', amount: '10' });
    }
  });

  it('public reads', async () => {
    const h = await pub.health();
    expect(h.status).toBe('ok');
    expect(typeof h.batch_id).toBe('string');
    // The server's clock is this machine's: read between the request's send and its answer.
    const before_ms = Date.now();
    const t = await pub.time();
    const after_ms = Date.now();
    expect(t.time_ms).toBeGreaterThanOrEqual(before_ms);
    expect(t.time_ms).toBeLessThanOrEqual(after_ms);
    expect(new Date(t.iso).getTime()).toBe(t.time_ms);
    const m = await pub.markets();
    expect(m.map((x) => x.id)).toContain('ETH-USDC');
    const eth = m.find((x) => x.id === 'ETH-USDC')!;
    expect(eth.tick_size).toBe(10000);
    expect(eth.lot_size).toBe(100);
    const f = await pub.fees();
    expect(f).toEqual({ maker_fee_bps: -1, taker_fee_bps: 5 });
    const mf = await pub.fees('ETH-USDC');
    expect(mf.market_id).toBe('ETH-USDC');
    const book = await pub.orderbook('ETH-USDC', { depth: 5 });
    expect(book.market_id).toBe('ETH-USDC');
    expect(typeof book.sequence).toBe('number');
    expect(Array.isArray(book.bids)).toBe(true);
    expect(await pub.trades('BTC-USDC', { limit: 5 })).toEqual([]);
  });

  it('deposit, balances and nonce sync', async () => {
    const d = await admin.deposit({ user: maker.wallet!.address, asset: 'BTC', amount: '1.5' });
    expect(d.amount).toBe(1_500_000);
    expect(d.balance.available).toBe(1_500_000);
    expect(typeof d.batch_id).toBe('string');
    const b = await maker.balances();
    expect(b.assets.BTC).toEqual({ available: 1_500_000, locked: 0 });
    expect(b.assets.USDC.available).toBe(100_000_000_000);
    expect(b.nonce_high_water).toBe(0);
    expect(b.credit).toBeNull();
    expect(Object.keys(b.assets)).not.toContain('nonce_high_water');
    expect(await maker.syncNonce()).toBe(0);
  });

  it('place, query, amend, cancel, match, fills, cancel-all', async () => {
    const ask = await maker.placeOrder({ market_id: 'ETH-USDC', side: 'ask', price: 2000010000, quantity: 300, client_order_id: 'mk-1' });
    expect(ask.status).toBe('open');
    expect(ask.fills).toEqual([]);
    expect(ask.client_order_id).toBe('mk-1');
    const open = await maker.orders();
    expect(open.map((o) => o.order_id)).toContain(ask.order_id);
    const byCid = await maker.orderByClientId('mk-1');
    expect(byCid.order_id).toBe(ask.order_id);

    const amended = await maker.amend({ order_id: ask.order_id, price: 2000010000, quantity: 200 });
    expect(amended.remaining_quantity).toBe(200);
    expect(amended.quantity).toBe(200);

    const bid = await taker.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 2001000000, quantity: 200, time_in_force: 'ioc' });
    expect(bid.status).toBe('filled');
    expect(bid.fills).toHaveLength(1);
    expect(bid.fills[0].price).toBe(2000010000);
    expect(bid.fills[0].is_maker).toBe(false);

    const fills = await maker.fills({ limit: 10 });
    expect(fills).toHaveLength(1);
    expect(fills[0].is_maker).toBe(true);
    expect(fills[0].fee).toBeLessThanOrEqual(0);
    const trades = await pub.trades('ETH-USDC');
    expect(trades[0].price).toBe('2000010000');
    expect(trades[0].side).toBe('bid');
    const filled = await maker.orders({ status: 'filled', market_id: 'ETH-USDC', limit: 5 });
    expect(filled[0].order_id).toBe(ask.order_id);

    // Market order (no price sent, signed with 0): nothing to take on the ask side now.
    const mkt = await taker.placeOrder({ market_id: 'ETH-USDC', side: 'bid', quantity: 100, order_type: 'market' });
    expect(mkt.price).toBe(0);
    expect(mkt.status).toBe('cancelled');

    const o1 = await maker.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000, quantity: 100, client_order_id: 'c-1' });
    const c1 = await maker.cancel({ client_order_id: 'c-1' });
    expect(c1.order_id).toBe(o1.order_id);
    expect(c1.status).toBe('cancelled');
    const o2 = await maker.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000, quantity: 100 });
    const c2 = await maker.cancel({ order_id: o2.order_id });
    expect(c2.status).toBe('cancelled');

    await maker.placeOrder({ market_id: 'ETH-USDC', side: 'bid', price: 1000000000, quantity: 100 });
    await maker.placeOrder({ market_id: 'BTC-USDC', side: 'ask', price: 40000000000, quantity: 10 });
    const ca = await maker.cancelAll('ETH-USDC');
    expect(ca.cancelled).toHaveLength(1);
    const ca2 = await maker.cancelAll();
    expect(ca2.cancelled).toHaveLength(1);
    expect(ca2.cancelled[0].market_id).toBe('BTC-USDC');
    expect(await maker.orders()).toEqual([]);
    // The nonce source is ahead of the server's high-water mark.
    expect((await maker.balances()).nonce_high_water).toBe(maker.nonces.last);
  });

  it('withdraw and withdrawal signature', async () => {
    const w = await maker.withdraw({ asset: 'ETH', amount: 500_000_000_000_000_000n });
    expect(w.status).toBe('pending');
    expect(w.amount).toBe('500000000000000000');
    expect(w.amount_units).toBe(500_000);
    const sig = await pub.withdrawalSignature({ user: maker.wallet!.address, asset: 'ETH', amount: '0.5', nonce: w.nonce });
    expect(sig.signature).toMatch(/^0x[0-9a-f]{130}$/);
    expect(sig.amount_wei).toBe('500000000000000000');
    expect(sig.asset).toBe('0x0000000000000000000000000000000000000000');
    expect(sig.nonce).toBe(w.nonce);
  });

  it('admin endpoints', async () => {
    const st = await admin.adminState();
    expect(st.operator_address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(st.accounts).toBeGreaterThanOrEqual(2);
    // The operator's health fields, typed in the SDK (AdminVerifyPool, AdminJournal).
    expect(st.verify_pool?.broken).toBeNull();
    expect(st.verify_pool?.workers_ready).toBe(st.verify_pool?.threads);
    expect(st.journal?.status).toBe('ok');
    expect(st.journal?.faults).toBe(0);
    const m = await admin.createMarket({ base: 'BTC', quote: 'ETH', tick_size: 100, lot_size: 10000 });
    expect(m.id).toBe('BTC-ETH');
    const p = await admin.pauseMarket('BTC-ETH');
    expect(p.status).toBe('paused');
    const r = await admin.resumeMarket('BTC-ETH');
    expect(r.status).toBe('active');
    expect(await admin.setMarketFees('BTC-ETH', { maker_fee_bps: 0, taker_fee_bps: 10 })).toEqual({
      market_id: 'BTC-ETH',
      maker_fee_bps: 0,
      taker_fee_bps: 10,
    });
    expect(await admin.setFees({ maker_fee_bps: -1, taker_fee_bps: 5 })).toEqual({ maker_fee_bps: -1, taker_fee_bps: 5 });
    const c = await admin.setCredit(taker.wallet!.address, { credit_limit: 1_000_000_000, auto_cancel_ratio: 0.95 });
    expect(c.credit_limit).toBe(1_000_000_000);
    expect((await taker.balances()).credit?.credit_limit).toBe(1_000_000_000);
    await admin.setCredit(taker.wallet!.address, { credit_limit: 0 });
  });

  it('data availability: batches and a fill proof', async () => {
    // Roots (and so published batches) are computed behind the commit, by a DA thread at a lower
    // priority (threads.background): on a busy machine batch 1 may not be out yet. Asked again
    // until it is (the DA thread's lag is the machine's, so the limit only ends a hang).
    const b1 = await eventually(() => pub.daBatch(1), 'DA batch 1');
    expect(b1.header.batch_id).toBe('1');
    expect(b1.header.state_root).toMatch(/^0x[0-9a-f]{64}$/);
    const list = await pub.daBatches({ from: 1, limit: 3 });
    expect(list.length).toBeGreaterThan(0);
    expect(list[0].header.batch_id).toBe('1');
    const [fill] = await maker.fills({ limit: 1 });
    // Roots are computed behind the commit: asked again until the proof is there.
    const proof = await eventually(() => pub.daProof(fill.order_id), `the fill proof of order ${fill.order_id}`);
    expect(proof).toBeDefined();
    expect(proof!.merkle_root).toMatch(/^0x[0-9a-f]{64}$/);
    expect(Array.isArray(proof!.merkle_proof)).toBe(true);
  });
});
