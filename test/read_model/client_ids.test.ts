// The read model's client order id index: a client id points at the newest order placed with it,
// from its placement on, through the order's updates and after it closes, until a later order of
// the account takes the id over; forgetting an old closed order never drops a newer order's id.
import { describe, expect, it } from 'vitest';
import { OrderStatus, RequestKind, Side } from '../../src/engine/types.js';
import { ReadModel } from '../../src/read_model/read_model.js';
import { ArrayEvent, ev } from '../da/events.js';
import { EventType } from '../../src/ring/event_records.js';

/** A PLACE's ACCEPTED event carrying its client order id. */
function placed(account: number, order_id: number, nonce: number, coid: string): ArrayEvent {
  const plain = ev.accepted(RequestKind.PLACE, account, order_id, nonce);
  return new ArrayEvent(EventType.ACCEPTED, plain.f, '', coid);
}

describe('read model client order ids', () => {
  it('follow the newest order placed with the id, per account', () => {
    const rm = new ReadModel(['ETH', 'USDC'], { fills_per_account_kept: 10, trades_per_market_kept: 10, closed_orders_kept: 1 });
    let seq = 0;
    const apply = (...events: ArrayEvent[]): void => events.forEach((e) => rm.apply(e, ++seq));
    apply(ev.begin(1), ev.market(0, 0, 1), ev.account(1, '0x' + '11'.repeat(20)), ev.account(2, '0x' + '22'.repeat(20)));
    apply(placed(1, 10, 1, 'x'), placed(2, 11, 1, 'x'));
    // Placed: found at once, before its first update, each account its own.
    expect(rm.orderByClientId(1, 'x')?.order_id).toBe(10);
    expect(rm.orderByClientId(2, 'x')?.order_id).toBe(11);
    apply(ev.order(10, 1, 0, Side.ASK, OrderStatus.OPEN, 2_000_000, 500, 0, 500), ev.order(11, 2, 0, Side.BID, OrderStatus.OPEN, 1_000_000, 500, 0, 500));
    apply(ev.order(10, 1, 0, Side.ASK, OrderStatus.PARTIALLY_FILLED, 2_000_000, 500, 100, 400));
    expect(rm.orderByClientId(1, 'x')).toMatchObject({ order_id: 10, filled: 100, client_order_id: 'x' });
    // Closed: still found by its id, until another order of the account is placed with it.
    apply(ev.order(10, 1, 0, Side.ASK, OrderStatus.CANCELLED, 2_000_000, 500, 100, 0), ev.committed(1));
    expect(rm.orderByClientId(1, 'x')).toMatchObject({ order_id: 10, status: OrderStatus.CANCELLED });
    apply(ev.begin(2), placed(1, 12, 2, 'x'), ev.order(12, 1, 0, Side.ASK, OrderStatus.OPEN, 2_100_000, 300, 0, 300));
    expect(rm.orderByClientId(1, 'x')?.order_id).toBe(12);
    // Order 12 closes, then 13 (no client id) closes: with one closed order kept, 10 and then 12
    // are forgotten; the id leaves with 12 (the order it points at), not with 10.
    apply(ev.order(12, 1, 0, Side.ASK, OrderStatus.CANCELLED, 2_100_000, 300, 0, 0));
    expect(rm.orders.has(10)).toBe(false);
    expect(rm.orderByClientId(1, 'x')?.order_id).toBe(12);
    apply(placed(1, 13, 3, ''), ev.order(13, 1, 0, Side.ASK, OrderStatus.CANCELLED, 2_100_000, 300, 0, 0), ev.committed(2));
    expect(rm.orderByClientId(1, 'x')).toBeUndefined();
    expect(rm.orderByClientId(2, 'x')?.order_id).toBe(11);
    expect(rm.exportIndexes().client_id_keys).toEqual(['2:x']);
  });
});
