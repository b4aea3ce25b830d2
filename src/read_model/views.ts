// What the read model holds and tells (read_model.ts is what builds it): the views of markets,
// orders, fills and trades the GET endpoints, the WebSocket fan-out and market data read, and the
// observer contract through which the read model hands each decoded event to the front's other
// consumers in their declared order.
import type { OrderProgress } from '../engine/types.js';

export interface MarketView {
  index: number;
  id: string;
  base: string;
  quote: string;
  tick_size: number;
  lot_size: number;
  status: 'active' | 'paused';
  fee_override: boolean;
  maker_fee_bps: number;
  taker_fee_bps: number;
  mark_price: number;
  /** price -> open quantity */
  bids: Map<number, number>;
  asks: Map<number, number>;
  /** Increases once per committed batch that changed the book. */
  book_sequence: number;
  /** The book changed in the batch being read (it is in changed_markets); reset at the commit. */
  book_changed_in_batch: boolean;
  sorted_cache: { bids: [number, number][]; asks: [number, number][] } | null;
}

export interface OrderView extends OrderProgress {
  status: number;
  client_order_id: string;
  last_fill_price: number;
  created_ms: number;
  updated_ms: number;
  /** Price and quantity this order contributes to the book (0 when not resting). */
  resting_price: number;
  resting_quantity: number;
}

export interface FillView {
  fill_id: number;
  order_id: number;
  market: number;
  side: number;
  price: number;
  quantity: number;
  fee: number;
  is_maker: boolean;
  batch_id: number;
  time_ms: number;
}

export interface TradeView {
  fill_id: number;
  market: number;
  price: number;
  quantity: number;
  taker_side: number;
  time_ms: number;
  taker_order_id: number;
  maker_order_id: number;
  taker_account: number;
  maker_account: number;
  taker_fee: number;
  maker_fee: number;
  batch_id: number;
}

/** ReadModelObserver.hears bits (batchBegin and batchCommitted are always heard). */
export const HEARS_ACCEPTED = 1;
export const HEARS_REJECTED = 2;
export const HEARS_FILL = 4;
export const HEARS_ORDER_UPDATE = 8;
export const HEARS_BALANCE = 16;
export const HEARS_ALL = HEARS_ACCEPTED | HEARS_REJECTED | HEARS_FILL | HEARS_ORDER_UPDATE | HEARS_BALANCE;

/**
 * What the read model tells the front's other consumers about each event, after applying it.
 * `seq` is the front's number of the request the event answers (0 for batch markers and events of
 * no request). Called in the observers' declared order; an observer that throws is reported
 * (`onObserverError`) and the others still run.
 */
export interface ReadModelObserver {
  /**
   * Which calls this observer acts on now (HEARS_* bits; absent: every call). The observer tape
   * (observer_tape.ts) asks at each batchBegin and records only the calls some observer hears, so
   * a consumer with nothing to do for a kind of call (the WebSocket fan-out without private
   * subscribers: order updates, balances) costs nothing per such event. The answer may change
   * only between batches: a batch is recorded and replayed in one synchronous turn.
   */
  hears?(): number;
  batchBegin(batch_id: number, time_ms: number): void;
  accepted(seq: number, kind: number, account: number, order_id: number): void;
  rejected(seq: number, code: number, reason: number): void;
  /** `*_filled_units`: each order's filled quantity after this fill (its update comes later). */
  fill(seq: number, t: TradeView, taker_filled_units: number, maker_filled_units: number): void;
  /** `o` as updated (it stays valid even if the model forgets the order right after). */
  orderUpdate(seq: number, o: OrderView, reason: number): void;
  balance(account: number, asset: number, available_units: number, locked_units: number, reason: number): void;
  /**
   * After the batch's books got their new `book_sequence`; `changed_markets`: whose book changed;
   * `stages`: the matcher's stage timings of the batch (zeros unless it stamps them).
   */
  batchCommitted(batch_id: number, time_ms: number, changed_markets: ReadonlySet<number>, stages: BatchStages): void;
}

/** A committed batch's stage timings, epoch ms (BATCH_COMMITTED; 0 unless stage timings are on). */
export interface BatchStages {
  started_ms: number;
  applied_ms: number;
  durable_ms: number;
}

export interface PendingWithdrawalView {
  account: number;
  asset: number;
  amount: number;
  nonce: number;
  /** The batch that debited it (0: before a snapshot that did not record it). */
  batch_id: number;
}

/** What `o` hears now (HEARS_ALL without hears(), or when it throws: reported to `failed`). */
export function hearsOf(o: ReadModelObserver, failed: (e: unknown) => void): number {
  if (o.hears === undefined) return HEARS_ALL;
  try {
    return o.hears();
  } catch (e) {
    failed(e);
    return HEARS_ALL;
  }
}

/** An observer whose exceptions are reported instead of thrown into the event pump. */
export class GuardedObserver implements ReadModelObserver {
  private declare readonly o: ReadModelObserver;
  private declare readonly failed: (e: unknown) => void;
  constructor(o: ReadModelObserver, failed: (e: unknown) => void) {
    this.o = o;
    this.failed = failed;
  }
  batchBegin(batch_id: number, time_ms: number): void { try { this.o.batchBegin(batch_id, time_ms); } catch (e) { this.failed(e); } }
  accepted(seq: number, kind: number, account: number, order_id: number): void { try { this.o.accepted(seq, kind, account, order_id); } catch (e) { this.failed(e); } }
  rejected(seq: number, code: number, reason: number): void { try { this.o.rejected(seq, code, reason); } catch (e) { this.failed(e); } }
  fill(seq: number, t: TradeView, taker_filled: number, maker_filled: number): void { try { this.o.fill(seq, t, taker_filled, maker_filled); } catch (e) { this.failed(e); } }
  orderUpdate(seq: number, o: OrderView, reason: number): void { try { this.o.orderUpdate(seq, o, reason); } catch (e) { this.failed(e); } }
  balance(account: number, asset: number, available: number, locked: number, reason: number): void { try { this.o.balance(account, asset, available, locked, reason); } catch (e) { this.failed(e); } }
  batchCommitted(batch_id: number, time_ms: number, changed: ReadonlySet<number>, stages: BatchStages): void { try { this.o.batchCommitted(batch_id, time_ms, changed, stages); } catch (e) { this.failed(e); } }
}
