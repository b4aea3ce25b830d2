// The observer tape (src/read_model/observer_tape.ts): observers that hear a batch through the
// tape, after the read model applied all of it, hear exactly what they heard inside `apply`: the
// same calls in the same order, each order update as it was at that update (not as the batch left
// the order), the commit's changed markets; a throwing observer is reported and the others carry on.
import { describe, expect, it } from 'vitest';
import { OrderStatus } from '../../src/engine/types.js';
import { ReadModel } from '../../src/read_model/read_model.js';
import { ObserverTape } from '../../src/read_model/observer_tape.js';
import {
  HEARS_ALL, HEARS_BALANCE, HEARS_FILL, HEARS_ORDER_UPDATE, type BatchStages, type OrderView, type ReadModelObserver, type TradeView,
} from '../../src/read_model/views.js';
import { type ArrayEvent, ev } from '../da/events.js';
import { makerRests, takerFillsTwice } from './two_fill_script.js';

class Recorder implements ReadModelObserver {
  readonly log: string[] = [];
  batchBegin(batch_id: number, time_ms: number): void { this.log.push(`begin ${batch_id} ${time_ms}`); }
  accepted(seq: number, kind: number, account: number, order_id: number): void { this.log.push(`accepted ${seq} ${kind} ${account} ${order_id}`); }
  rejected(seq: number, code: number, reason: number): void { this.log.push(`rejected ${seq} ${code} ${reason}`); }
  fill(seq: number, t: TradeView, taker_filled: number, maker_filled: number): void {
    this.log.push(`fill ${seq} ${JSON.stringify(t)} ${taker_filled} ${maker_filled}`);
  }
  orderUpdate(seq: number, o: OrderView, reason: number): void { this.log.push(`update ${seq} ${JSON.stringify(o)} ${reason}`); }
  balance(account: number, asset: number, available: number, locked: number, reason: number): void {
    this.log.push(`balance ${account} ${asset} ${available} ${locked} ${reason}`);
  }
  batchCommitted(batch_id: number, time_ms: number, changed: ReadonlySet<number>, stages: BatchStages): void {
    this.log.push(`committed ${batch_id} ${time_ms} [${[...changed].join(',')}] ${JSON.stringify(stages)}`);
  }
}

class Thrower extends Recorder {
  override orderUpdate(): void { throw new Error('observer bug'); }
}

const LIMITS = { fills_per_account_kept: 10, trades_per_market_kept: 10, closed_orders_kept: 10 };

/** Two batches; in the second, maker order 10 is updated twice (filled 100, then 300) before the taker's update. */
function batches(): ArrayEvent[][] {
  return [
    [ev.begin(1), ...makerRests(), ev.committed(1)],
    [ev.begin(2), ...takerFillsTwice(), ev.committed(2)],
  ];
}

/** What an observer hears inside apply over batches(), each event's seq its 1-based place. */
function directLog(): Recorder {
  const rm = new ReadModel(['ETH', 'USDC'], LIMITS);
  const direct = new Recorder();
  rm.observe([direct]);
  let seq = 0;
  for (const batch of batches()) for (const e of batch) rm.apply(e, ++seq);
  return direct;
}

describe('observer tape', () => {
  it('replays to its observers exactly what they hear inside apply, batch by batch', () => {
    // Direct: the observer inside apply.
    const direct = directLog();
    let seq = 0;

    // Taped: the whole batch applied first, then replayed.
    const rm = new ReadModel(['ETH', 'USDC'], LIMITS);
    const errors: unknown[] = [];
    const tape = new ObserverTape((e) => errors.push(e));
    const thrower = new Thrower();
    const taped = new Recorder();
    tape.observe([thrower, taped]);
    rm.observe([tape]);
    seq = 0;
    const after_batch: number[] = [];
    for (const batch of batches()) {
      for (const e of batch) rm.apply(e, ++seq);
      after_batch.push(taped.log.length);
      tape.replay();
    }
    // Nothing reached the observers before the replay.
    expect(after_batch).toEqual([0, direct.log.findIndex((l) => l.startsWith('begin 2 '))]);
    expect(taped.log).toEqual(direct.log);
    // The maker's two updates as they were, not as the batch left the order (remaining 200).
    const maker_updates = taped.log.filter((l) => l.startsWith('update') && l.includes('"order_id":10'));
    expect(maker_updates.map((l) => (JSON.parse(l.split(' ')[2]) as OrderView).filled)).toEqual([0, 100, 300]);
    expect(taped.log.filter((l) => l.startsWith('committed 2'))[0]).toContain('[0]');
    // The thrower heard the rest; each of its four order updates was reported.
    expect(errors.map((e) => (e as Error).message)).toEqual(['observer bug', 'observer bug', 'observer bug', 'observer bug']);
    expect(thrower.log).toEqual(direct.log.filter((l) => !l.startsWith('update')));
    // A replay with nothing recorded calls nobody.
    const n = taped.log.length;
    tape.replay();
    expect(taped.log.length).toBe(n);
  });

  it('hands an order\'s last update in the batch as the model\'s own object, an earlier one as a copy as it was', () => {
    const rm = new ReadModel(['ETH', 'USDC'], LIMITS);
    const tape = new ObserverTape((e) => {
      throw e;
    });
    const handed: { o: OrderView; filled: number; remaining: number; status: number }[] = [];
    const catcher = new Recorder();
    catcher.orderUpdate = (_seq, o) => {
      handed.push({ o, filled: o.filled, remaining: o.remaining, status: o.status });
    };
    tape.observe([catcher]);
    rm.observe([tape]);
    let seq = 0;
    const [first, second] = batches();
    for (const e of first) rm.apply(e, ++seq);
    tape.replay();
    // One update of order 10 in batch 1: the model's object, not a copy.
    expect(handed.map((h) => h.o)).toEqual([rm.orders.get(10)]);
    expect(handed[0].o).toBe(rm.orders.get(10));
    handed.length = 0;
    for (const e of second) rm.apply(e, ++seq);
    tape.replay();
    const maker = rm.orders.get(10) as OrderView;
    const taker = rm.orders.get(11) as OrderView;
    expect(handed.map((h) => [h.o.order_id, h.filled, h.remaining, h.status])).toEqual([
      [10, 100, 400, OrderStatus.PARTIALLY_FILLED], [10, 300, 200, OrderStatus.PARTIALLY_FILLED], [11, 300, 0, OrderStatus.FILLED],
    ]);
    // The maker's first update was changed again in the batch: a copy as it was (kept as handed).
    expect(handed[0].o).not.toBe(maker);
    expect(handed[0].o).toEqual({ ...maker, filled: 100, remaining: 400, resting_quantity: 400 });
    // Each order's last update in the batch: the model's own object, as apply hands it.
    expect(handed[1].o).toBe(maker);
    expect(handed[2].o).toBe(taker);
  });

  it('records only the calls some observer hears, asking at each batch begin', () => {
    // Direct: the observer inside apply.
    const direct = directLog();
    let seq = 0;

    const rm = new ReadModel(['ETH', 'USDC'], LIMITS);
    const tape = new ObserverTape((e) => {
      throw e;
    });
    // A market-data-like observer (fills only) and one whose interest moves between batches
    // (order updates in batch 1, balances in batch 2), as the fan-out's with subscriptions.
    const fills = new Recorder();
    (fills as ReadModelObserver).hears = () => HEARS_FILL;
    const moving = new Recorder();
    let moving_hears = HEARS_ORDER_UPDATE;
    (moving as ReadModelObserver).hears = () => moving_hears;
    tape.observe([fills, moving]);
    rm.observe([tape]);
    seq = 0;
    const [first, second] = batches();
    for (const e of first) rm.apply(e, ++seq);
    // Changed before the first batch's replay: the batch was recorded with what was heard at its begin.
    moving_hears = HEARS_BALANCE;
    tape.replay();
    for (const e of second) rm.apply(e, ++seq);
    tape.replay();
    // Each hears, in order, the batch markers and every call of a kind someone heard in that batch.
    const batch2 = direct.log.findIndex((l) => l.startsWith('begin 2 '));
    const kept = (l: string, i: number): boolean => l.startsWith('begin') || l.startsWith('committed') ||
      l.startsWith('fill') || (i < batch2 ? l.startsWith('update') : l.startsWith('balance'));
    const expected = direct.log.filter(kept);
    expect(expected.some((l) => l.startsWith('balance'))).toBe(true);
    expect(expected.some((l) => l.startsWith('update'))).toBe(true);
    expect(expected.some((l) => l.startsWith('fill'))).toBe(true);
    expect(fills.log).toEqual(expected);
    expect(moving.log).toEqual(expected);
    // An observer without hears() hears everything again (observe() resets what is recorded).
    const all = new Recorder();
    tape.observe([fills, all]);
    const rm2 = new ReadModel(['ETH', 'USDC'], LIMITS);
    rm2.observe([tape]);
    seq = 0;
    for (const batch of batches()) {
      for (const e of batch) rm2.apply(e, ++seq);
      tape.replay();
    }
    expect(all.log).toEqual(direct.log);
    expect(HEARS_ALL & (HEARS_FILL | HEARS_BALANCE | HEARS_ORDER_UPDATE)).toBe(HEARS_FILL | HEARS_BALANCE | HEARS_ORDER_UPDATE);
  });

  it('the read model calls an observer only for the calls it hears, asking at each batch begin; a throwing hears() means all', () => {
    // Direct: the observer inside apply.
    const direct = directLog();
    let seq = 0;

    const rm = new ReadModel(['ETH', 'USDC'], LIMITS);
    const errors: unknown[] = [];
    rm.onObserverError = (e) => errors.push(e);
    const picky = new Recorder();
    let asked = 0;
    (picky as ReadModelObserver).hears = () => {
      asked++;
      return HEARS_FILL;
    };
    const broken = new Recorder();
    (broken as ReadModelObserver).hears = () => {
      throw new Error('hears bug');
    };
    rm.observe([picky, broken]);
    seq = 0;
    for (const batch of batches()) for (const e of batch) rm.apply(e, ++seq);
    const markers = (l: string): boolean => l.startsWith('begin') || l.startsWith('committed');
    expect(picky.log).toEqual(direct.log.filter((l) => markers(l) || l.startsWith('fill')));
    expect(asked).toBe(2);
    expect(broken.log).toEqual(direct.log);
    expect(errors.map((e) => (e as Error).message)).toEqual(['hears bug', 'hears bug']);
  });
});
