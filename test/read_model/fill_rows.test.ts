// The fill and trade rows (src/read_model/fill_rows.ts) keep exactly what the arrays they replaced
// kept: a list grows to twice `kept`, then the newest `kept` stay.
import { describe, expect, it } from 'vitest';
import { FillRows, TradeRows } from '../../src/read_model/fill_rows.js';
import type { FillView, TradeView } from '../../src/read_model/views.js';

/** The replaced rule, on a plain array. */
function pushBounded<T>(list: T[], item: T, max: number): void {
  list.push(item);
  if (list.length > max * 2) list.splice(0, list.length - max);
}

function fillOf(i: number): FillView {
  return {
    fill_id: i, order_id: 1000 + i, market: i % 3, side: i % 2, price: 2_500_000_000 + i, quantity: 7 * i,
    fee: i % 5 === 0 ? -3 * i : 11 * i, is_maker: i % 4 === 1, batch_id: 90 + i, time_ms: 1_790_000_000_000 + i,
  };
}

function tradeOf(i: number): TradeView {
  return {
    fill_id: i, market: i % 2, price: 99_000_000 + i, quantity: 3 * i, taker_side: i % 2, time_ms: 1_790_000_000_123 + i,
    taker_order_id: 2 * i, maker_order_id: 2 * i + 1, taker_account: 40 + i, maker_account: 41 + i,
    taker_fee: 5 * i, maker_fee: -(i % 7), batch_id: 7 + i,
  };
}

describe('fill and trade rows', () => {
  for (const kept of [0, 1, 3, 8, 1000]) {
    it(`keep what pushBounded kept (kept ${kept}), at every length`, () => {
      const fills = new FillRows(kept);
      const trades = new TradeRows(kept);
      const fill_list: FillView[] = [];
      const trade_list: TradeView[] = [];
      for (let i = 1; i <= kept * 5 + 20; i++) {
        const f = fillOf(i);
        fills.push(f.fill_id, f.order_id, f.market, f.side, f.price, f.quantity, f.fee, f.is_maker, f.batch_id, f.time_ms);
        pushBounded(fill_list, f, kept);
        trades.push(tradeOf(i));
        pushBounded(trade_list, tradeOf(i), kept);
        expect(fills.length).toBe(fill_list.length);
        expect(trades.length).toBe(trade_list.length);
        if (i % 7 === 0 || i < 20) {
          expect(Array.from({ length: fills.length }, (_, k) => fills.at(k))).toEqual(fill_list);
          expect(trades.toArray()).toEqual(trade_list);
        }
      }
    });
  }

  it('load rows as they were exported (the snapshot round trip)', () => {
    const a = new FillRows(4);
    for (let i = 1; i <= 11; i++) {
      const f = fillOf(i);
      a.push(f.fill_id, f.order_id, f.market, f.side, f.price, f.quantity, f.fee, f.is_maker, f.batch_id, f.time_ms);
    }
    const b = new FillRows(4);
    const rows = a.rows();
    for (let r = 0; r < rows.length; r += 10) b.pushRow(rows.subarray(r, r + 10));
    expect(b.length).toBe(a.length);
    expect(Array.from({ length: b.length }, (_, k) => b.at(k))).toEqual(Array.from({ length: a.length }, (_, k) => a.at(k)));
  });
});
