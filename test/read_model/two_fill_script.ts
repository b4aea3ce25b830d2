// The event script both observer tests replay (observers.test.ts in one batch, observer_tape.test.ts
// in two): a maker's ask rests, then a taker's bid fills it twice, so an observer must hear each
// order update as it was at that update.
import { OrderStatus, RequestKind, Side } from '../../src/engine/types.js';
import { type ArrayEvent, ev } from '../da/events.js';

/** Market 0 (ETH/USDC), accounts 1 and 2, and account 1's ask (order 10) of 500 at 2,000,000 resting. */
export function makerRests(): ArrayEvent[] {
  return [
    ev.market(0, 0, 1),
    ev.account(1, '0x' + '11'.repeat(20)),
    ev.account(2, '0x' + '22'.repeat(20)),
    ev.accepted(RequestKind.PLACE, 1, 10, 1),
    ev.order(10, 1, 0, Side.ASK, OrderStatus.OPEN, 2_000_000, 500, 0, 500),
  ];
}

/**
 * Account 2's bid (order 11) of 300 takes order 10 in two fills, 100 then 200, order 10 updated
 * after each (filled 100, then 300) before the taker's one update; then a balance and a refused
 * cancel.
 */
export function takerFillsTwice(): ArrayEvent[] {
  return [
    ev.accepted(RequestKind.PLACE, 2, 11, 1),
    ev.fill(1, 0, 11, 10, 2, 1, Side.BID, 2_000_000, 100, 1, 0),
    ev.order(10, 1, 0, Side.ASK, OrderStatus.PARTIALLY_FILLED, 2_000_000, 500, 100, 400),
    ev.fill(2, 0, 11, 10, 2, 1, Side.BID, 2_000_000, 200, 1, 0),
    ev.order(10, 1, 0, Side.ASK, OrderStatus.PARTIALLY_FILLED, 2_000_000, 500, 300, 200),
    ev.order(11, 2, 0, Side.BID, OrderStatus.FILLED, 2_000_000, 300, 300, 0),
    ev.balance(2, 0, 300, 0),
    ev.rejected(RequestKind.CANCEL, 2),
  ];
}
