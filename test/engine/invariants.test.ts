// The checkers must catch what they claim to: each mutation of a sound state (or event stream)
// must produce a violation naming it.
import { describe, expect, it } from 'vitest';
import type { CanonicalState } from '../../src/engine/api.js';
import type { EngineEvent } from '../../src/engine/event_log.js';
import { OrderTracker, checkInvariants } from '../../src/engine/invariants.js';
import { createReferenceEngine } from '../../src/engine/reference/reference_engine.js';
import { OrderStatus as S, OrderType, RequestKind as K, Side, Tif } from '../../src/engine/types.js';
import { BalanceReason as BR, UpdateReason as UR } from '../../src/engine/events.js';
import { ETH, USDC, standardConfig } from './generator.js';
import { Harness, acc, bal, fil, upd } from './rules_harness.js';

const config = standardConfig({}, { maker: 2, taker: 5 });

/** A state with both sides of ETH-USDC populated, a fill done, and locks on both assets. */
function soundState(): CanonicalState {
  const h = new Harness(createReferenceEngine, config);
  h.deposit(1, USDC, 10_000_000_000);
  h.deposit(2, ETH, 5_000_000);
  h.limit(1, Side.BID, 1_990_000_000, 100_000);
  h.limit(1, Side.BID, 1_990_000_000, 200_000);
  h.limit(1, Side.BID, 1_980_000_000, 100_000);
  h.limit(2, Side.ASK, 2_010_000_000, 300_000);
  h.limit(2, Side.ASK, 1_990_000_000, 50_000); // fills against bid 1
  return h.state();
}

function mutated(f: (s: CanonicalState) => void): string[] {
  const s = structuredClone(soundState());
  f(s);
  return checkInvariants(s, config);
}

describe('checkInvariants', () => {
  it('passes a sound state', () => {
    expect(checkInvariants(soundState(), config)).toEqual([]);
  });

  const cases: [string, (s: CanonicalState) => void, RegExp][] = [
    ['conservation', (s) => { s.accounts[1].balances[USDC][0] += 1; }, /conservation: asset 2/],
    ['negative balance', (s) => { s.accounts[1].balances[ETH][0] = -1; s.deposits_units[ETH] -= 1; }, /available -1 not a safe natural/],
    ['unsafe value', (s) => { s.accounts[2].balances[USDC][0] = 2 ** 53 + 2; }, /not a safe natural/],
    ['crossed book', (s) => { s.markets[0].asks[0].price_units = 1_990_000_000; }, /crossed book/],
    ['FIFO', (s) => { const b = s.markets[0].bids; [b[0].priority_seq, b[1].priority_seq] = [b[1].priority_seq, b[0].priority_seq]; }, /FIFO broken/],
    ['best-first order', (s) => { const b = s.markets[0].bids; [b[0], b[2]] = [b[2], b[0]]; }, /not sorted best-first/],
    ['resting ioc', (s) => { s.markets[0].bids[0].tif = Tif.IOC; }, /tif 1 rests/],
    ['ask lock', (s) => { s.markets[0].asks[0].locked_units -= 100; s.accounts[2].balances[ETH][1] -= 100; s.accounts[2].balances[ETH][0] += 100; }, /ask lock .* != remaining/],
    ['bid lock below notional', (s) => {
      const o = s.markets[0].bids[2];
      const d = o.locked_units - 1;
      o.locked_units -= d;
      s.accounts[1].balances[USDC][1] -= d;
      s.accounts[1].balances[USDC][0] += d;
    }, /bid lock 1 < notionalCeil/],
    ['account locked vs orders', (s) => { s.accounts[1].balances[USDC][1] -= 5; s.accounts[1].balances[USDC][0] += 5; }, /locked .* != open orders' locks/],
    ['filled + remaining', (s) => { s.markets[0].bids[0].filled_units += 100; }, /filled .* \+ remaining .* != quantity/],
    ['lot multiple', (s) => { s.markets[0].asks[0].remaining_units += 1; s.markets[0].asks[0].quantity_units += 1; }, /not lot multiples/],
    ['duplicate order id', (s) => { s.markets[0].bids[1].order_id = s.markets[0].bids[0].order_id; }, /rests twice/],
    ['fee account missing', (s) => { s.accounts.shift(); }, /fee account 0 not listed first/],
    ['paused with orders', (s) => { s.markets[0].status = 'paused'; }, /paused with resting orders/],
    ['pending above withdrawals', (s) => { s.pending_withdrawals.push({ account: 1, nonce: 1, asset: USDC, amount_units: 5 }); }, /pending withdrawals 5 exceed/],
  ];
  it.each(cases)('catches %s', (_label, f, pattern) => {
    const v = mutated(f);
    expect(v.some((x) => pattern.test(x)), v.join('\n')).toBe(true);
  });
});

describe('OrderTracker', () => {
  const place = (account: number, side: number, tif: number, price: number, quantity: number, order_type: number = OrderType.LIMIT) => ({
    kind: K.PLACE, account, nonce: 1, market: 0, side, order_type, tif, price_units: price, quantity_units: quantity,
    order_id: 0, client_order_id: '', asset: 0, asset_quote: 0, amount_units: 0, maker_fee_bps: 0, taker_fee_bps: 0,
    credit_limit_units: 0, auto_cancel_ratio_ppm: 0, tick_size_units: 0, lot_size_units: 0,
    referrer_account: 0, inner_kind: 0, inner_nonce: 0, inner_reject: 0, stp: 0, expires_after_ms: 0, signer: 0, agent_account: 0,
  });
  const rest = (t: OrderTracker): void => {
    // Order 1: a resting ask of 200 at 2000.
    expect(t.observe(place(2, Side.ASK, Tif.GTC, 2_000_000_000, 200), [
      acc(K.PLACE, 2, 1), upd(1, 2, 0, Side.ASK, S.OPEN, 2_000_000_000, 200, 0, 200, 0, UR.PLACED, 200, 1),
      bal(2, ETH, 0, 200, BR.ORDER_PLACED),
    ])).toEqual([]);
  };

  it('accepts a sound stream', () => {
    const t = new OrderTracker(config);
    rest(t);
    expect(t.observe(place(1, Side.BID, Tif.IOC, 2_000_000_000, 300), [
      acc(K.PLACE, 1, 2),
      fil(1, 0, 2, 1, 1, 2, Side.BID, 2_000_000_000, 200, 0, 0),
      upd(1, 2, 0, Side.ASK, S.FILLED, 2_000_000_000, 200, 200, 0, 2_000_000_000, UR.FILL),
      upd(2, 1, 0, Side.BID, S.CANCELLED, 2_000_000_000, 300, 200, 0, 2_000_000_000, UR.UNFILLED_REMAINDER),
    ])).toEqual([]);
  });

  const bad: [string, ReturnType<typeof place>, EngineEvent[], RegExp][] = [
    ['post_only taking', place(1, Side.BID, Tif.POST_ONLY, 2_000_000_000, 200), [
      acc(K.PLACE, 1, 2), fil(1, 0, 2, 1, 1, 2, Side.BID, 2_000_000_000, 200, 0, 0),
      upd(1, 2, 0, Side.ASK, S.FILLED, 2_000_000_000, 200, 200, 0, 2_000_000_000, UR.FILL),
      upd(2, 1, 0, Side.BID, S.FILLED, 2_000_000_000, 200, 200, 0, 2_000_000_000, UR.FILL),
    ], /post_only order 2 took liquidity/],
    ['a self-trade', place(2, Side.BID, Tif.IOC, 2_000_000_000, 200), [
      acc(K.PLACE, 2, 2), fil(1, 0, 2, 1, 2, 2, Side.BID, 2_000_000_000, 200, 0, 0),
      upd(1, 2, 0, Side.ASK, S.FILLED, 2_000_000_000, 200, 200, 0, 2_000_000_000, UR.FILL),
      upd(2, 2, 0, Side.BID, S.FILLED, 2_000_000_000, 200, 200, 0, 2_000_000_000, UR.FILL),
    ], /account 2 on both sides/],
    ['FOK partially filled', place(1, Side.BID, Tif.FOK, 2_000_000_000, 300), [
      acc(K.PLACE, 1, 2), fil(1, 0, 2, 1, 1, 2, Side.BID, 2_000_000_000, 200, 0, 0),
      upd(1, 2, 0, Side.ASK, S.FILLED, 2_000_000_000, 200, 200, 0, 2_000_000_000, UR.FILL),
      upd(2, 1, 0, Side.BID, S.CANCELLED, 2_000_000_000, 300, 200, 0, 2_000_000_000, UR.UNFILLED_REMAINDER),
    ], /FOK partially filled/],
    ['IOC left live', place(1, Side.BID, Tif.IOC, 1_000_000_000, 300), [
      acc(K.PLACE, 1, 2), upd(2, 1, 0, Side.BID, S.OPEN, 1_000_000_000, 300, 0, 300, 0, UR.PLACED, 300_000, 2),
    ], /ioc\/fok order left live/],
    ['market order left live', place(1, Side.BID, Tif.IOC, 0, 300, OrderType.MARKET), [
      acc(K.PLACE, 1, 2), upd(2, 1, 0, Side.BID, S.OPEN, 0, 300, 0, 300, 0, UR.PLACED, 300_000, 2),
    ], /market order left live/],
    ['fill above a bid limit', place(1, Side.BID, Tif.GTC, 1_990_000_000, 200), [
      acc(K.PLACE, 1, 2), fil(1, 0, 2, 1, 1, 2, Side.BID, 2_000_000_000, 200, 0, 0),
      upd(1, 2, 0, Side.ASK, S.FILLED, 2_000_000_000, 200, 200, 0, 2_000_000_000, UR.FILL),
      upd(2, 1, 0, Side.BID, S.FILLED, 1_990_000_000, 200, 200, 0, 2_000_000_000, UR.FILL),
    ], /worse than the taker limit/],
    ['fill not at the maker price', place(1, Side.BID, Tif.GTC, 2_010_000_000, 200), [
      acc(K.PLACE, 1, 2), fil(1, 0, 2, 1, 1, 2, Side.BID, 2_010_000_000, 200, 0, 0),
      upd(1, 2, 0, Side.ASK, S.FILLED, 2_000_000_000, 200, 200, 0, 2_010_000_000, UR.FILL),
      upd(2, 1, 0, Side.BID, S.FILLED, 2_010_000_000, 200, 200, 0, 2_010_000_000, UR.FILL),
    ], /is not the maker price/],
    ['filled + remaining != quantity', place(1, Side.BID, Tif.GTC, 1_000_000_000, 300), [
      acc(K.PLACE, 1, 2), upd(2, 1, 0, Side.BID, S.OPEN, 1_000_000_000, 300, 0, 200, 0, UR.PLACED, 200_000, 2),
    ], /filled \+ remaining != quantity/],
    ['terminal with remaining', place(1, Side.BID, Tif.IOC, 1_000_000_000, 300), [
      acc(K.PLACE, 1, 2), upd(2, 1, 0, Side.BID, S.CANCELLED, 1_000_000_000, 300, 0, 300, 0, UR.UNFILLED_REMAINDER),
    ], /terminal with remaining 300/],
    ['filled differs from the fills', place(1, Side.BID, Tif.IOC, 2_000_000_000, 300), [
      acc(K.PLACE, 1, 2), fil(1, 0, 2, 1, 1, 2, Side.BID, 2_000_000_000, 100, 0, 0),
      upd(1, 2, 0, Side.ASK, S.PARTIALLY_FILLED, 2_000_000_000, 200, 100, 100, 2_000_000_000, UR.FILL, 100, 1),
      upd(2, 1, 0, Side.BID, S.CANCELLED, 2_000_000_000, 300, 200, 0, 2_000_000_000, UR.UNFILLED_REMAINDER),
    ], /filled 200, fills sum to 100/],
    ['a closing update with a lock', place(1, Side.BID, Tif.IOC, 1_000_000_000, 300), [
      acc(K.PLACE, 1, 2), upd(2, 1, 0, Side.BID, S.CANCELLED, 1_000_000_000, 300, 0, 0, 0, UR.UNFILLED_REMAINDER, 5, 0),
    ], /closed with lock 5, priority 0/],
    ['a live update without a priority', place(1, Side.BID, Tif.GTC, 1_000_000_000, 300), [
      acc(K.PLACE, 1, 2), upd(2, 1, 0, Side.BID, S.OPEN, 1_000_000_000, 300, 0, 300, 0, UR.PLACED, 300_000, 0),
    ], /live without a time priority/],
    ['balance events out of order', place(1, Side.BID, Tif.IOC, 1_000_000_000, 300), [
      acc(K.PLACE, 1, 2), upd(2, 1, 0, Side.BID, S.CANCELLED, 1_000_000_000, 300, 0, 0, 0, UR.UNFILLED_REMAINDER),
      bal(3, USDC, 1, 0, BR.FILL), bal(1, USDC, 1, 0, BR.FILL),
    ], /not ascending/],
  ];
  it.each(bad)('catches %s', (_label, request, events, pattern) => {
    const t = new OrderTracker(config);
    rest(t);
    const v = t.observe(request, events);
    expect(v.some((x) => pattern.test(x)), v.join('\n')).toBe(true);
  });

  it('a rejected request must be the only event', () => {
    const t = new OrderTracker(config);
    const v = t.observe(place(1, Side.BID, Tif.GTC, 1, 1), [
      { type: 'rejected', kind: K.PLACE, account: 1, code: 5, reason: 11 }, acc(K.PLACE, 1, 1),
    ]);
    expect(v).toContain('rejected is not the only event');
  });
});
