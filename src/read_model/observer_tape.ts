// The read model's observers that may hear of a batch after its HTTP answers went out (market
// data, the WebSocket fan-out): while the read model applies a committed batch, this tape takes
// their place and records each call; once the batch's answers are written the front replays it to
// them, in order (MatcherLink: answers first, then everyone else; issue 11). Each observer hears
// exactly the calls, arguments and order it heard when it ran inside `apply`; what differs is
// only the read model around it, which already holds the whole batch. The observers replayed here
// read from the model only what a batch never changes once set (a market's id and quote asset, an
// account's address, the books at the commit marker), so what they publish is the same.
//
// Views: a TradeView is a new object per fill that nobody mutates, so the tape keeps it. An
// OrderView is the model's own object, updated in place by the order's later events in the same
// batch: the tape keeps it and, beside it, the fields an update changes (ORDER_MUTABLE) as they
// were. At replay an order whose fields still hold those values (its last update in the batch:
// nearly every update) is handed as it is, the model's object, as `apply` handed it; one the batch
// changed again is handed a copy as it was at that update. A copy per update cost a 17-field
// object per order update of every batch (bench/observer_tape.ts, docs/benchmarks.md).
//
// Only what some observer hears is recorded (ReadModelObserver.hears, asked at each batchBegin):
// market data acts on fills and order updates only, the fan-out on order updates and balances only
// with private subscribers, so without WebSocket subscribers (the load bench) a request's balance
// events and answers cost the tape nothing (docs/benchmarks.md, h21m).
import {
  GuardedObserver, hearsOf, HEARS_ACCEPTED, HEARS_ALL, HEARS_BALANCE, HEARS_FILL, HEARS_ORDER_UPDATE, HEARS_REJECTED,
  type BatchStages, type OrderView, type ReadModelObserver, type TradeView,
} from './views.js';

const BEGIN = 0;
const ACCEPTED = 1;
const REJECTED = 2;
const FILL = 3;
const ORDER_UPDATE = 4;
const BALANCE = 5;
const COMMITTED = 6;

/** Words an ORDER_UPDATE takes: op, seq, reason, then the OrderView fields an update changes. */
const ORDER_UPDATE_WORDS = 12;

export class ObserverTape implements ReadModelObserver {
  private observers: ReadModelObserver[] = [];
  /** The observers as declared (their hears()). */
  private declared: readonly ReadModelObserver[] = [];
  /** HEARS_* bits of the calls recorded in this batch: what some observer heard at its batchBegin. */
  private recorded = HEARS_ALL;
  /** The calls, flat: an op code, then its numbers (its objects in `refs`, in the same order). */
  private readonly nums: number[] = [];
  private nums_n = 0;
  private readonly refs: (TradeView | OrderView)[] = [];
  /** The commit's changed markets and stages as they were (the read model reuses its own). */
  private readonly changed = new Set<number>();
  private readonly stages: BatchStages = { started_ms: 0, applied_ms: 0, durable_ms: 0 };

  /** `failed` receives what an observer threw at replay (the others carry on). */
  private declare readonly failed: (e: unknown) => void;
  constructor(failed: (e: unknown) => void) {
    this.failed = failed;
  }

  /** The observers replay() calls, in this order (replaces any before), each guarded. */
  observe(observers: readonly ReadModelObserver[]): void {
    this.observers = observers.map((o) => new GuardedObserver(o, (e) => this.failed(e)));
    this.declared = observers.slice();
    // Until the next batchBegin asks them.
    this.recorded = HEARS_ALL;
  }

  /** The HEARS_* bits of the calls some observer acts on now (the read model asks too: it calls the tape only for those). */
  hears(): number {
    let bits = 0;
    const obs = this.declared;
    for (let i = 0; i < obs.length; i++) bits |= hearsOf(obs[i], this.failed);
    return bits;
  }

  private num(x: number): void {
    this.nums[this.nums_n++] = x;
  }

  batchBegin(batch_id: number, time_ms: number): void {
    this.recorded = this.hears();
    this.num(BEGIN); this.num(batch_id); this.num(time_ms);
  }

  accepted(seq: number, kind: number, account: number, order_id: number): void {
    if ((this.recorded & HEARS_ACCEPTED) === 0) return;
    this.num(ACCEPTED); this.num(seq); this.num(kind); this.num(account); this.num(order_id);
  }

  rejected(seq: number, code: number, reason: number): void {
    if ((this.recorded & HEARS_REJECTED) === 0) return;
    this.num(REJECTED); this.num(seq); this.num(code); this.num(reason);
  }

  fill(seq: number, t: TradeView, taker_filled_units: number, maker_filled_units: number): void {
    if ((this.recorded & HEARS_FILL) === 0) return;
    this.num(FILL); this.num(seq); this.num(taker_filled_units); this.num(maker_filled_units);
    this.refs.push(t);
  }

  orderUpdate(seq: number, o: OrderView, reason: number): void {
    if ((this.recorded & HEARS_ORDER_UPDATE) === 0) return;
    this.num(ORDER_UPDATE); this.num(seq); this.num(reason);
    // Every field read_model.ts applyOrderUpdate writes (the others are set once, at creation).
    this.num(o.price); this.num(o.quantity); this.num(o.filled); this.num(o.remaining); this.num(o.status);
    this.num(o.last_fill_price); this.num(o.updated_ms); this.num(o.resting_price); this.num(o.resting_quantity);
    this.refs.push(o);
  }

  balance(account: number, asset: number, available_units: number, locked_units: number, reason: number): void {
    if ((this.recorded & HEARS_BALANCE) === 0) return;
    this.num(BALANCE); this.num(account); this.num(asset); this.num(available_units); this.num(locked_units); this.num(reason);
  }

  batchCommitted(batch_id: number, time_ms: number, changed_markets: ReadonlySet<number>, stages: BatchStages): void {
    this.num(COMMITTED); this.num(batch_id); this.num(time_ms);
    this.changed.clear();
    for (const m of changed_markets) this.changed.add(m);
    this.stages.started_ms = stages.started_ms;
    this.stages.applied_ms = stages.applied_ms;
    this.stages.durable_ms = stages.durable_ms;
  }

  /** Hands every recorded call to the observers, in order, then forgets them. */
  replay(): void {
    const obs = this.observers;
    const n = obs.length;
    const x = this.nums;
    const end = this.nums_n;
    let i = 0;
    let r = 0;
    while (i < end) {
      switch (x[i]) {
        case BEGIN:
          for (let k = 0; k < n; k++) obs[k].batchBegin(x[i + 1], x[i + 2]);
          i += 3;
          break;
        case ACCEPTED:
          for (let k = 0; k < n; k++) obs[k].accepted(x[i + 1], x[i + 2], x[i + 3], x[i + 4]);
          i += 5;
          break;
        case REJECTED:
          for (let k = 0; k < n; k++) obs[k].rejected(x[i + 1], x[i + 2], x[i + 3]);
          i += 4;
          break;
        case FILL: {
          const t = this.refs[r++] as TradeView;
          for (let k = 0; k < n; k++) obs[k].fill(x[i + 1], t, x[i + 2], x[i + 3]);
          i += 4;
          break;
        }
        case ORDER_UPDATE: {
          const o = orderAsItWas(this.refs[r++] as OrderView, x, i + 3);
          for (let k = 0; k < n; k++) obs[k].orderUpdate(x[i + 1], o, x[i + 2]);
          i += ORDER_UPDATE_WORDS;
          break;
        }
        case BALANCE:
          for (let k = 0; k < n; k++) obs[k].balance(x[i + 1], x[i + 2], x[i + 3], x[i + 4], x[i + 5]);
          i += 6;
          break;
        case COMMITTED:
          for (let k = 0; k < n; k++) obs[k].batchCommitted(x[i + 1], x[i + 2], this.changed, this.stages);
          i += 3;
          break;
        default:
          throw new Error(`observer tape: unknown op ${x[i]} at ${i}`);
      }
    }
    this.nums_n = 0;
    // The views are let go (a trade the model forgot is not pinned until the next batch).
    this.refs.length = 0;
  }
}

/**
 * `o` as it was at an update whose changing fields were recorded at `x[at..]` (in orderUpdate's
 * order): `o` itself when they still hold those values, else a copy with them.
 */
function orderAsItWas(o: OrderView, x: readonly number[], at: number): OrderView {
  if (o.price === x[at] && o.quantity === x[at + 1] && o.filled === x[at + 2] && o.remaining === x[at + 3] &&
    o.status === x[at + 4] && o.last_fill_price === x[at + 5] && o.updated_ms === x[at + 6] &&
    o.resting_price === x[at + 7] && o.resting_quantity === x[at + 8]) return o;
  return {
    ...o, price: x[at], quantity: x[at + 1], filled: x[at + 2], remaining: x[at + 3], status: x[at + 4],
    last_fill_price: x[at + 5], updated_ms: x[at + 6], resting_price: x[at + 7], resting_quantity: x[at + 8],
  };
}
