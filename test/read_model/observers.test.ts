// The read model as the front's one decoder: its observers get, in their declared order, what it
// decoded, after it applied the event; an observer that throws is reported and the others and the
// model carry on.
import { describe, expect, it } from 'vitest';
import { ReadModel } from '../../src/read_model/read_model.js';
import type { OrderView, ReadModelObserver, TradeView } from '../../src/read_model/views.js';
import { ev } from '../da/events.js';
import { makerRests, takerFillsTwice } from './two_fill_script.js';
import { OrderStatus, RequestKind, Side } from '../../src/engine/types.js';

class Recorder implements ReadModelObserver {
  readonly log: string[] = [];
  constructor(private readonly name: string, private readonly rm: ReadModel | null = null) {}
  batchBegin(batch_id: number): void { this.log.push(`${this.name} begin ${batch_id}`); }
  accepted(seq: number, kind: number, _account: number, order_id: number): void { this.log.push(`${this.name} accepted ${seq} ${kind} ${order_id}`); }
  rejected(seq: number, code: number): void { this.log.push(`${this.name} rejected ${seq} ${code}`); }
  fill(seq: number, t: TradeView, taker_filled: number, maker_filled: number): void {
    this.log.push(`${this.name} fill ${seq} ${t.fill_id} ${taker_filled} ${maker_filled}`);
  }
  orderUpdate(seq: number, o: OrderView, reason: number): void {
    // The model already holds the update when an observer hears of it.
    const held = this.rm?.orders.get(o.order_id)?.filled;
    this.log.push(`${this.name} update ${seq} ${o.order_id} filled ${o.filled} held ${held} last ${o.last_fill_price} reason ${reason}`);
  }
  balance(account: number, asset: number, available: number): void { this.log.push(`${this.name} balance ${account} ${asset} ${available}`); }
  batchCommitted(batch_id: number, _t: number, changed: ReadonlySet<number>): void {
    this.log.push(`${this.name} committed ${batch_id} [${[...changed].join(',')}]`);
  }
}

class Thrower extends Recorder {
  override fill(): void { throw new Error('observer bug'); }
}

describe('read model observers', () => {
  it('hear each decoded event in order, with the filled quantity after each fill; a throwing one is reported', () => {
    const rm = new ReadModel(['ETH', 'USDC'], { fills_per_account_kept: 10, trades_per_market_kept: 10, closed_orders_kept: 10 });
    const errors: unknown[] = [];
    rm.onObserverError = (e) => errors.push(e);
    const first = new Thrower('first');
    const second = new Recorder('second', rm);
    rm.observe([first, second]);
    const events = [ev.begin(1), ...makerRests(), ...takerFillsTwice(), ev.committed(1)];
    events.forEach((e, i) => rm.apply(e, i));
    expect(errors.map((e) => (e as Error).message)).toEqual(['observer bug', 'observer bug']);
    expect(second.log).toEqual([
      'second begin 1',
      'second accepted 4 3 10',
      'second update 5 10 filled 0 held 0 last 0 reason 0',
      'second accepted 6 3 11',
      'second fill 7 1 100 100',
      'second update 8 10 filled 100 held 100 last 0 reason 0',
      'second fill 9 2 300 300',
      'second update 10 10 filled 300 held 300 last 0 reason 0',
      'second update 11 11 filled 300 held 300 last 0 reason 0',
      'second balance 2 0 300',
      'second rejected 13 5',
      'second committed 1 [0]',
    ]);
    // The model applied everything, the throwing observer notwithstanding.
    expect(rm.orders.get(10)?.remaining).toBe(200);
    expect(rm.trades_by_market[0].toArray().map((t) => t.fill_id)).toEqual([1, 2]);
    expect(rm.markets[0].book_sequence).toBe(1);
  });

  it('changed_markets names a market once per batch that changed its book, batch after batch; book_sequence moves once per such batch', () => {
    const rm = new ReadModel(['ETH', 'USDC'], { fills_per_account_kept: 10, trades_per_market_kept: 10, closed_orders_kept: 10 });
    const rec = new Recorder('r');
    rm.observe([rec]);
    const batches = [
      [ev.begin(1), ...makerRests(), ev.committed(1)],
      // Only a refused request: the book stays.
      [ev.begin(2), ev.rejected(RequestKind.CANCEL, 2), ev.committed(2)],
      // Three book changes (order 10 twice, order 11 never rests): one entry, one step.
      [ev.begin(3), ...takerFillsTwice(), ev.committed(3)],
      [ev.begin(4), ev.order(10, 1, 0, Side.ASK, OrderStatus.CANCELLED, 2_000_000, 500, 300, 0), ev.committed(4)],
    ];
    const sequences: number[] = [];
    for (const b of batches) {
      b.forEach((e, i) => rm.apply(e, i));
      sequences.push(rm.markets[0].book_sequence);
    }
    expect(rec.log.filter((l) => l.includes('committed'))).toEqual(['r committed 1 [0]', 'r committed 2 []', 'r committed 3 [0]', 'r committed 4 [0]']);
    expect(sequences).toEqual([1, 1, 2, 3]);
    expect(rm.markets[0].book_changed_in_batch).toBe(false);
  });
});
