// Self-trade prevention and the stale-order guard (DECISIONS "Market-maker features"), rule by
// rule with exact events, against both engines. The harness checks every invariant (including
// "no fill has one account on both sides") after every step.
import { describe, expect, it } from 'vitest';
import { OrderStatus as S, RequestKind as K, Side, Stp, Tif } from '../../src/engine/types.js';
import { BalanceReason as BR, UpdateReason as UR } from '../../src/engine/events.js';
import { Reject as RJ } from '../../src/engine/codes.js';
import { ETH, ETH_USDC, USDC, standardConfig } from './generator.js';
import { ENGINES, Harness, ONE, P2000, acc, bal, fil, rej, upd, usdc } from './rules_harness.js';

const BID = Side.BID;
const ASK = Side.ASK;
const P1990 = 1_990_000_000;

describe.each(ENGINES)('%s engine', (_name, factory) => {
  /** Account 1 rests an ask of 1 ETH at 2000 (order 1), account 2 one at 2000 behind it (order 2). */
  const book = (): Harness => {
    const h = new Harness(factory, standardConfig({}, { maker: 0, taker: 0 }));
    h.deposit(1, ETH, 2 * ONE);
    h.deposit(1, USDC, usdc(10_000));
    h.deposit(2, ETH, 2 * ONE);
    h.limit(1, ASK, P2000, ONE);
    h.limit(2, ASK, P2000, ONE);
    return h;
  };

  it('expire_maker (the default): the own resting order is cancelled and matching goes on', () => {
    const h = book();
    expect(h.limit(1, BID, P2000, ONE)).toEqual([
      acc(K.PLACE, 1, 3),
      upd(1, 1, ETH_USDC, ASK, S.CANCELLED, P2000, ONE, 0, 0, 0, UR.SELF_TRADE_PREVENTED),
      fil(1, ETH_USDC, 3, 2, 1, 2, BID, P2000, ONE, 0, 0),
      upd(2, 2, ETH_USDC, ASK, S.FILLED, P2000, ONE, ONE, 0, P2000, UR.FILL),
      upd(3, 1, ETH_USDC, BID, S.FILLED, P2000, ONE, ONE, 0, P2000, UR.FILL),
      bal(1, ETH, 3 * ONE, 0, BR.FILL),
      bal(1, USDC, usdc(8_000), 0, BR.FILL),
      bal(2, ETH, ONE, 0, BR.FILL),
      bal(2, USDC, usdc(2_000), 0, BR.FILL),
    ]);
  });

  it('expire_taker: the taker remainder is cancelled, the own resting order stays, nothing trades', () => {
    const h = book();
    expect(h.limit(1, BID, P2000, ONE, { stp: Stp.EXPIRE_TAKER })).toEqual([
      acc(K.PLACE, 1, 3),
      upd(3, 1, ETH_USDC, BID, S.CANCELLED, P2000, ONE, 0, 0, 0, UR.SELF_TRADE_PREVENTED),
    ]);
    expect(h.state().markets[ETH_USDC].asks.map((o) => o.order_id)).toEqual([1, 2]);
  });

  it('expire_taker keeps the fills made before meeting the own order', () => {
    const h = new Harness(factory, standardConfig({}, { maker: 0, taker: 0 }));
    h.deposit(1, ETH, ONE);
    h.deposit(1, USDC, usdc(10_000));
    h.deposit(2, ETH, ONE);
    h.limit(2, ASK, P1990, ONE / 2); // order 1, better price: filled first
    h.limit(1, ASK, P2000, ONE); // order 2, own
    const events = h.limit(1, BID, P2000, ONE, { stp: Stp.EXPIRE_TAKER });
    expect(events.slice(0, 4)).toEqual([
      acc(K.PLACE, 1, 3),
      fil(1, ETH_USDC, 3, 1, 1, 2, BID, P1990, ONE / 2, 0, 0),
      upd(1, 2, ETH_USDC, ASK, S.FILLED, P1990, ONE / 2, ONE / 2, 0, P1990, UR.FILL),
      upd(3, 1, ETH_USDC, BID, S.CANCELLED, P2000, ONE, ONE / 2, 0, P1990, UR.SELF_TRADE_PREVENTED),
    ]);
    expect(h.state().markets[ETH_USDC].asks.map((o) => o.order_id)).toEqual([2]);
  });

  it('expire_both: the own resting order and the taker remainder are both cancelled', () => {
    const h = book();
    expect(h.limit(1, BID, P2000, ONE, { stp: Stp.EXPIRE_BOTH })).toEqual([
      acc(K.PLACE, 1, 3),
      upd(1, 1, ETH_USDC, ASK, S.CANCELLED, P2000, ONE, 0, 0, 0, UR.SELF_TRADE_PREVENTED),
      upd(3, 1, ETH_USDC, BID, S.CANCELLED, P2000, ONE, 0, 0, 0, UR.SELF_TRADE_PREVENTED),
      bal(1, ETH, 2 * ONE, 0, BR.ORDER_CANCELLED),
    ]);
    expect(h.state().markets[ETH_USDC].asks.map((o) => o.order_id)).toEqual([2]);
  });

  it('FOK counts only what it can fill: its own orders are never liquidity', () => {
    const h = book();
    // 2 ETH cross at 2000, but 1 is its own: a FOK for 2 cannot fill and cancels nothing.
    expect(h.limit(1, BID, P2000, 2 * ONE, { tif: Tif.FOK })).toEqual([
      acc(K.PLACE, 1, 3),
      upd(3, 1, ETH_USDC, BID, S.CANCELLED, P2000, 2 * ONE, 0, 0, 0, UR.UNFILLED_REMAINDER),
    ]);
    // expire_taker stops at the own order (first in the queue): not even 1 is reachable.
    expect(h.limit(1, BID, P2000, ONE, { tif: Tif.FOK, stp: Stp.EXPIRE_TAKER })[1])
      .toEqual(upd(4, 1, ETH_USDC, BID, S.CANCELLED, P2000, ONE, 0, 0, 0, UR.UNFILLED_REMAINDER));
    // expire_maker passes over it: 1 fills, the own ask is cancelled on the way.
    const events = h.limit(1, BID, P2000, ONE, { tif: Tif.FOK });
    expect(events[1]).toEqual(upd(1, 1, ETH_USDC, ASK, S.CANCELLED, P2000, ONE, 0, 0, 0, UR.SELF_TRADE_PREVENTED));
    expect(events[2]).toEqual(fil(1, ETH_USDC, 5, 2, 1, 2, BID, P2000, ONE, 0, 0));
  });

  it('an amend crossing its own orders re-enters with expire_maker (the amend wire carries no stp)', () => {
    const h = book();
    h.limit(1, BID, P1990, ONE); // order 3
    const events = h.amend(1, 3, P2000, ONE);
    expect(events[1]).toEqual(upd(1, 1, ETH_USDC, ASK, S.CANCELLED, P2000, ONE, 0, 0, 0, UR.SELF_TRADE_PREVENTED));
    expect(events[2]).toEqual(fil(1, ETH_USDC, 3, 2, 1, 2, BID, P2000, ONE, 0, 0));
  });

  it('an unknown stp mode is INVALID_ORDER', () => {
    const h = book();
    expect(h.limit(1, BID, P2000, ONE, { stp: 3 })).toEqual([rej(K.PLACE, 1, RJ.STP_INVALID)]);
  });

  it('expires_after_ms before the batch time: EXPIRED, nothing locked, nonce not consumed', () => {
    const h = book();
    h.beginBatch(1_000_000);
    expect(h.limit(1, BID, P1990, ONE, { expires_after_ms: 999_999, nonce: 50 })).toEqual([rej(K.PLACE, 1, RJ.EXPIRED)]);
    // At the batch time exactly it is still valid, and the same nonce is still free.
    expect(h.limit(1, BID, P1990, ONE, { expires_after_ms: 1_000_000, nonce: 50 })[0]).toEqual(acc(K.PLACE, 1, 3));
  });
});
