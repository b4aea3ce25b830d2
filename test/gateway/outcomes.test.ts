// PendingAnswers (src/gateway/outcomes.ts): outcomes collected from the read model's calls and
// released at the commit marker; a request's changed orders are listed for a cancel-all only (the
// one answer that reads them), not for a pause or a disconnect-cancel, whose answers never do.
import { describe, expect, it } from 'vitest';
import { OrderStatus, RequestKind, Side } from '../../src/engine/types.js';
import { PendingAnswers, type Outcome } from '../../src/gateway/outcomes.js';
import { HEARS_ACCEPTED, HEARS_BALANCE, HEARS_FILL, HEARS_ORDER_UPDATE, HEARS_REJECTED, type OrderView } from '../../src/read_model/views.js';

function order(order_id: number): OrderView {
  return {
    order_id, account: 1, market: 0, side: Side.BID, order_type: 0, tif: 0, price: 100, quantity: 5, filled: 0,
    remaining: 0, status: OrderStatus.CANCELLED, client_order_id: '', last_fill_price: 0, created_ms: 0, updated_ms: 0,
    resting_price: 0, resting_quantity: 0,
  };
}

describe('PendingAnswers', () => {
  it('hears every call an answer is made from, and not balances (the read model skips those calls)', () => {
    const answers = new PendingAnswers(() => {}, () => {});
    const hears = answers.observer.hears?.() ?? -1;
    for (const bit of [HEARS_ACCEPTED, HEARS_REJECTED, HEARS_FILL, HEARS_ORDER_UPDATE]) expect(hears & bit).toBe(bit);
    expect(hears & HEARS_BALANCE).toBe(0);
  });

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

  it('hands a reused outcome to the next request whole and fresh, and never reuses one added without the flag', () => {
    const answers = new PendingAnswers((e) => { throw e; }, () => {});
    const stages = { started_ms: 0, applied_ms: 0, durable_ms: 0 };
    const obs = answers.observer;
    const trade = (taker_order_id: number, fill_id: number) => ({
      fill_id, market: 0, taker_order_id, maker_order_id: 1, taker_account: 2, maker_account: 3, taker_side: Side.BID,
      price: 100, quantity: 1, taker_fee: 1, maker_fee: 0, time_ms: 1000, batch_id: 7,
    });
    // Batch 7: seq 1 (reused) places order 50 with two fills; seq 2 (kept by its caller) is rejected.
    const seen: { o: Outcome; text: string }[] = [];
    const read = (o: Outcome): void => { seen.push({ o, text: JSON.stringify(o) }); };
    answers.add(1, read, null, 0, true);
    let kept: Outcome | null = null;
    answers.add(2, (o) => { kept = o; }, null, 0);
    obs.batchBegin(7, 1000);
    obs.accepted(1, RequestKind.PLACE, 2, 50);
    obs.fill(1, trade(50, 900), 1, 1);
    obs.fill(1, trade(50, 901), 2, 1);
    obs.rejected(2, 3, 4);
    expect(answers.release(7, 1000, stages)).toBe(2);
    expect(JSON.parse(seen[0].text)).toMatchObject({ accepted: true, order_id: 50, batch_id: 7, time_ms: 1000 });
    expect(seen[0].o.fills.map((f) => f.fill_id)).toEqual([]); // reset once its callback returned
    const kept_text = JSON.stringify(kept);
    // Batch 8: seq 3 (reused) takes seq 1's outcome object: a rejection, no fills of seq 1's; seq 4 is new.
    answers.add(3, read, null, 0, true);
    answers.add(4, read, null, 0, true);
    obs.batchBegin(8, 2000);
    obs.rejected(3, 5, 6);
    obs.accepted(4, RequestKind.CANCEL, 2, 51);
    expect(answers.release(8, 2000, stages)).toBe(2);
    expect(seen[1].o).toBe(seen[0].o);
    expect(JSON.parse(seen[1].text)).toEqual({ accepted: false, code: 5, reason: 6, order_id: 0, fills: [], order_updates: [], batch_id: 8, time_ms: 2000 });
    expect(JSON.parse(seen[2].text)).toEqual({ accepted: true, code: 0, reason: 0, order_id: 51, fills: [], order_updates: [], batch_id: 8, time_ms: 2000 });
    expect(seen[2].o).not.toBe(seen[0].o);
    expect(kept).not.toBe(seen[0].o);
    expect(kept).not.toBe(seen[2].o);
    expect(JSON.stringify(kept)).toBe(kept_text);
    expect(answers.size).toBe(0);
  });
});
