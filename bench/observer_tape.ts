// Observer tape benchmark: the front's cost per order update of recording it on the tape
// (src/read_model/observer_tape.ts) and replaying it, once the batch's answers went out, to one
// observer that reads it (as market data reads each update's status, side, price and remaining),
// medians over timed runs, in two flows:
//   - once: every order updated once in its batch (a place that rests, a cancel: most of the flow);
//   - twice: every order updated twice in its batch (a maker filled by two takers), where the
//     replay must hand the first update as it was, not as the batch left the order.
// The replayed values are checked against the values at each update (a wrong replay fails the bench).
//
//   npx tsc -p tsconfig.json && node dist/bench/observer_tape.js [--batch N (256)] [--runs N (7)]
// Ends with ONE JSON line {"bench":"observer_tape","once_ns_per_update":..,"twice_ns_per_update":..}.
import os from 'node:os';
import { ObserverTape } from '../src/read_model/observer_tape.js';
import type { BatchStages, OrderView, ReadModelObserver } from '../src/read_model/views.js';
import { Knobs } from './knobs.js';
import { medianUpperMiddle } from './quantile.js';

const knobs = new Knobs();
/** Order updates per batch. */
const BATCH = knobs.number('batch', 256, 2, 65_536, { integer: true });
const RUNS = knobs.number('runs', 7, 1, 99, { integer: true });
knobs.finish();
/** ~1M order updates per timed run, after as many to warm up. */
const UPDATES_PER_RUN = 1_000_000;

/** Reads what market data reads of each update (market_data.ts orderUpdate). */
class Reader implements ReadModelObserver {
  sum = 0;
  batchBegin(): void {}
  accepted(): void {}
  rejected(): void {}
  fill(): void {}
  orderUpdate(_seq: number, o: OrderView): void {
    this.sum += o.status + o.side + o.price + o.remaining + o.filled;
  }
  balance(): void {}
  batchCommitted(): void {}
}

function order(order_id: number): OrderView {
  return {
    order_id, account: 1, market: 0, side: order_id & 1, order_type: 0, tif: 0, price: 2_000_000 + order_id, quantity: 1_000_000,
    filled: 0, remaining: 1_000_000, status: 0, client_order_id: '', last_fill_price: 0, created_ms: 0, updated_ms: 0,
    resting_price: 2_000_000 + order_id, resting_quantity: 1_000_000,
  };
}

/** ns per order update (record + replay), each order updated `updates` times per batch. */
function nsPerUpdate(updates: number): number {
  const orders_per_batch = Math.floor(BATCH / updates);
  const batches = Math.ceil(UPDATES_PER_RUN / (orders_per_batch * updates));
  const changed = new Set([0]);
  const stages: BatchStages = { started_ms: 0, applied_ms: 0, durable_ms: 0 };
  const runs: number[] = [];
  for (let r = 0; r <= RUNS; r++) {
    const tape = new ObserverTape((e) => {
      throw e;
    });
    const reader = new Reader();
    tape.observe([reader]);
    let expected = 0;
    // The model's objects, made before the clock starts: what is timed is the tape's work alone.
    const orders = Array.from({ length: orders_per_batch }, (_, i) => order(i));
    const t0 = performance.now();
    for (let b = 0; b < batches; b++) {
      tape.batchBegin(b, b);
      for (let i = 0; i < orders_per_batch; i++) {
        const o = orders[i];
        o.filled = 0;
        o.remaining = 1_000_000;
        for (let u = 0; u < updates; u++) {
          // As read_model.ts applyOrderUpdate: the model's own object, changed in place.
          o.filled += 100;
          o.remaining -= 100;
          o.status = 1;
          o.last_fill_price = o.price;
          o.updated_ms = b;
          o.resting_quantity = o.remaining;
          expected += o.status + o.side + o.price + o.remaining + o.filled;
          tape.orderUpdate(i + 1, o, 1);
        }
      }
      tape.batchCommitted(b, b, changed, stages);
      tape.replay();
    }
    const ms = performance.now() - t0;
    if (reader.sum !== expected) throw new Error(`observer tape replayed other values: ${reader.sum} != ${expected}`);
    if (r > 0) runs.push((ms * 1e6) / (batches * orders_per_batch * updates)); // run 0 warms up
  }
  return Math.round(medianUpperMiddle(runs) * 10) / 10;
}

const once = nsPerUpdate(1);
const twice = nsPerUpdate(2);
console.log(`observer_tape: ${new Date().toISOString()}, ${os.cpus()[0]?.model ?? '?'}, load ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
console.log(`  ${BATCH} order updates per batch, medians of ${RUNS} runs: updated once ${once} ns/update, twice ${twice} ns/update (record + replay)`);
console.log(JSON.stringify({ bench: 'observer_tape', once_ns_per_update: once, twice_ns_per_update: twice }));
