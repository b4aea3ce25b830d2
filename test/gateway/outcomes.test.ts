// PendingAnswers (src/gateway/outcomes.ts): outcomes collected from the read model's calls and
// released at the commit marker; a request's changed orders are listed for a cancel-all only (the
// one answer that reads them), not for a pause or a disconnect-cancel, whose answers never do.
import { describe, expect, it } from 'vitest';
import { OrderStatus, RequestKind, Side } from '../../src/engine/types.js';
import { PendingAnswers, type Outcome } from '../../src/gateway/outcomes.js';
import type { OrderView } from '../../src/read_model/views.js';

function order(order_id: number): OrderView {
  return {
    order_id, account: 1, market: 0, side: Side.BID, order_type: 0, tif: 0, price: 100, quantity: 5, filled: 0,
    remaining: 0, status: OrderStatus.CANCELLED, client_order_id: '', last_fill_price: 0, created_ms: 0, updated_ms: 0,
    resting_price: 0, resting_quantity: 0,
  };
}

describe('PendingAnswers', () => {
  it('lists the changed orders of a cancel-all only', () => {
    const errors: unknown[] = [];
    let commits = 0;
    const answers = new PendingAnswers((e) => errors.push(e), () => commits++);
    const got = new Map<number, Outcome>();
    const kinds = [RequestKind.CANCEL_ALL, RequestKind.PAUSE_MARKET, RequestKind.DISCONNECT_CANCEL, RequestKind.CANCEL];
    for (let seq = 1; seq <= kinds.length; seq++) answers.add(seq, (o) => got.set(seq, o), null, 0);
    const obs = answers.observer;
    obs.batchBegin(7, 1000);
    let order_id = 100;
    for (let seq = 1; seq <= kinds.length; seq++) {
      obs.accepted(seq, kinds[seq - 1], 1, 0);
      for (let k = 0; k < 2; k++) obs.orderUpdate(seq, order(order_id++), 0);
    }
    obs.batchCommitted(7, 1000, new Set([0]), { started_ms: 0, applied_ms: 0, durable_ms: 0 });
    expect(commits).toBe(1);
    expect(answers.release(7, 1000, { started_ms: 0, applied_ms: 0, durable_ms: 0 })).toBe(kinds.length);
    expect(errors).toEqual([]);
    expect(got.get(1)?.order_updates).toEqual([100, 101]);
    for (let seq = 2; seq <= kinds.length; seq++) {
      expect(got.get(seq)?.accepted).toBe(true);
      expect(got.get(seq)?.batch_id).toBe(7);
      expect(got.get(seq)?.order_updates).toEqual([]);
    }
    expect(answers.size).toBe(0);
  });
});
