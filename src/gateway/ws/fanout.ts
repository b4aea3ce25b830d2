// The WebSocket fan-out: what the read model decodes from each committed event, published to the
// subscribed uWS topics (one `app.publish` per message, serialized once whatever the number of
// subscribers). It keeps the subscriber counts per topic (the hub's subscription protocol moves
// them), so an event nobody listens to costs a couple of array reads and is never serialized, and
// the book snapshots per market (one serialization per book sequence).
import type { TemplatedApp } from 'uWebSockets.js';
import { Side } from '../../engine/types.js';
import type { ReadModel } from '../../read_model/read_model.js';
import { HEARS_BALANCE, HEARS_FILL, HEARS_ORDER_UPDATE, type OrderView, type ReadModelObserver, type TradeView } from '../../read_model/views.js';
import { bookChecksum } from '../../util/book_checksum.js';
import { BookDeltaViews } from './book_delta.js';
import {
  balanceUpdateMessage, bookDeltaMessage, bookSnapshotMessage, fillMessage, orderUpdateMessage, PRIVATE_INDEX, tradeMessage, type Channel,
} from './messages.js';

/** The counters the fan-out moves (part of the hub's WsStats). */
export interface FanoutStats {
  /** Messages handed to app.publish (one per message, whatever the subscriber count). */
  published: number;
  /** Messages queued to subscribers: sum over publishes of the subscriber count. */
  delivered: number;
  /** Subscriptions held now, over all connections and channels. */
  subscriptions: number;
}

export class WsFanout implements ReadModelObserver {
  private readonly app: TemplatedApp;
  private readonly rm: ReadModel;
  private readonly book_depth_max: number;
  private readonly stats: FanoutStats;

  // Subscriber counts, per market index and per address ([fills, orders, balances]).
  private readonly book_subs: number[] = [];
  private readonly delta_subs: number[] = [];
  private readonly delta_views = new BookDeltaViews();
  private readonly trades_subs: number[] = [];
  /** Subscriptions to `trades:*` over all markets (hears()). */
  private trades_subs_total = 0;
  private readonly private_subs = new Map<string, Int32Array>();

  // Book snapshot state per market index.
  private readonly book_seq: number[] = [];
  private readonly book_time_ms: number[] = [];
  private readonly snapshot_cache: ({ sequence: number; json: string } | null)[] = [];

  // The batch being read.
  private batch_id = 0;
  private batch_time_ms = 0;
  private batch_iso: string | null = null;

  constructor(app: TemplatedApp, rm: ReadModel, book_depth_max: number, stats: FanoutStats) {
    this.app = app;
    this.rm = rm;
    this.book_depth_max = book_depth_max;
    this.stats = stats;
    // A subscriber joining before the next commit gets the book as restored or replayed.
    for (const mv of rm.markets) {
      if (mv === undefined) continue;
      this.book_seq[mv.index] = mv.book_sequence;
      this.book_time_ms[mv.index] = rm.batch_time_ms > 0 ? rm.batch_time_ms : Date.now();
    }
  }

  /** A subscription to `ch` was added (+1) or removed (-1). */
  count(ch: Channel, delta: number): void {
    this.stats.subscriptions += delta;
    if (ch.private) {
      let counts = this.private_subs.get(ch.address);
      if (counts === undefined) {
        counts = new Int32Array(3);
        this.private_subs.set(ch.address, counts);
      }
      counts[PRIVATE_INDEX[ch.kind]] += delta;
      if (counts[0] === 0 && counts[1] === 0 && counts[2] === 0) this.private_subs.delete(ch.address);
    } else {
      const list = ch.kind === 'book' ? this.book_subs : ch.kind === 'book_delta' ? this.delta_subs : this.trades_subs;
      if (list === this.trades_subs) this.trades_subs_total += delta;
      list[ch.market] = (list[ch.market] ?? 0) + delta;
      if (ch.kind === 'book_delta') {
        if (list[ch.market] === 0) this.delta_views.release(ch.market);
        else if (delta > 0) {
          // The first subscriber's snapshot (sent right after) is the book the deltas start from.
          const book = this.rm.sortedBook(ch.market, this.book_depth_max);
          this.delta_views.hold(ch.market, this.rm.markets[ch.market].book_sequence, book.bids, book.asks);
        }
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Fan-out (called by the matcher link, after the batch is committed)

  private publish(topic: string, message: string, subscribers: number): void {
    this.app.publish(topic, message, false, false);
    this.stats.published++;
    this.stats.delivered += subscribers;
  }

  private iso(): string {
    if (this.batch_iso === null) this.batch_iso = new Date(this.batch_time_ms).toISOString();
    return this.batch_iso;
  }

  // ReadModelObserver: the read model decoded each committed event and applied it; the hub
  // publishes what it decoded (nothing uncommitted, in batch order).

  /**
   * What the fan-out publishes from now on (asked at each batch's begin; subscriptions move only
   * between batches): fills with a trades or a private subscriber, order updates and balances with
   * a private one; book snapshots and deltas come from batchCommitted, always heard.
   */
  hears(): number {
    const private_subs = this.private_subs.size > 0;
    return (private_subs || this.trades_subs_total > 0 ? HEARS_FILL : 0) | (private_subs ? HEARS_ORDER_UPDATE | HEARS_BALANCE : 0);
  }

  batchBegin(batch_id: number, time_ms: number): void {
    this.batch_id = batch_id;
    this.batch_time_ms = time_ms;
    this.batch_iso = null;
  }

  fill(_seq: number, t: TradeView, taker_filled_units: number, maker_filled_units: number): void {
    const trades = this.trades_subs[t.market] ?? 0;
    const rm = this.rm;
    const mv = rm.markets[t.market];
    if (mv === undefined) return;
    if (trades > 0) {
      this.publish(`trades:${mv.id}`, tradeMessage(mv.id, t.fill_id, t.price, t.quantity, t.taker_side, this.iso()), trades);
    }
    if (this.private_subs.size === 0) return;
    const taker = rm.address_by_account[t.taker_account];
    const maker = rm.address_by_account[t.maker_account];
    const tc = taker === undefined ? undefined : this.private_subs.get(taker);
    const mc = maker === undefined ? undefined : this.private_subs.get(maker);
    if (tc !== undefined && tc[0] > 0) {
      this.publish(`fills:${taker}`, fillMessage(
        t.fill_id, t.taker_order_id, mv.id, t.taker_side, t.price, t.quantity, taker_filled_units, false,
        t.taker_fee, this.batch_id, this.iso(),
      ), tc[0]);
    }
    if (mc !== undefined && mc[0] > 0) {
      const maker_side = t.taker_side === Side.BID ? Side.ASK : Side.BID;
      this.publish(`fills:${maker}`, fillMessage(
        t.fill_id, t.maker_order_id, mv.id, maker_side, t.price, t.quantity, maker_filled_units, true,
        t.maker_fee, this.batch_id, this.iso(),
      ), mc[0]);
    }
  }

  orderUpdate(_seq: number, o: OrderView, reason: number): void {
    if (this.private_subs.size === 0) return;
    const rm = this.rm;
    const address = rm.address_by_account[o.account];
    const counts = address === undefined ? undefined : this.private_subs.get(address);
    if (counts === undefined || counts[1] === 0) return;
    const mv = rm.markets[o.market];
    if (mv === undefined) return;
    this.publish(`orders:${address}`, orderUpdateMessage(
      o.order_id, o.client_order_id, mv.id, o.side, o.status, o.price, o.quantity, o.filled, o.remaining,
      o.last_fill_price, reason, this.iso(),
    ), counts[1]);
  }

  balance(account: number, asset: number, available_units: number, locked_units: number, reason: number): void {
    if (this.private_subs.size === 0) return;
    const rm = this.rm;
    const address = rm.address_by_account[account];
    if (address === undefined || address === '') return;
    const counts = this.private_subs.get(address);
    if (counts === undefined || counts[2] === 0) return;
    this.publish(`balances:${address}`, balanceUpdateMessage(rm.assets[asset], available_units, locked_units, reason, this.iso()), counts[2]);
  }

  /** The read model's books hold the batch: book snapshots of the markets whose book changed. */
  batchCommitted(batch_id: number, time_ms: number): void {
    this.snapshots(batch_id, time_ms);
  }

  accepted(): void {}
  rejected(): void {}

  private snapshots(_batch_id: number, time_ms: number): void {
    const markets = this.rm.markets;
    for (let m = 0; m < markets.length; m++) {
      const mv = markets[m];
      if (mv === undefined || mv.book_sequence === this.book_seq[m]) continue;
      this.book_seq[m] = mv.book_sequence;
      this.book_time_ms[m] = time_ms;
      this.snapshot_cache[m] = null;
      const subs = this.book_subs[m] ?? 0;
      if (subs > 0) this.publish(`book:${mv.id}`, this.snapshot(m), subs);
      const delta_subs = this.delta_subs[m] ?? 0;
      if (delta_subs > 0) {
        const book = this.rm.sortedBook(m, this.book_depth_max);
        const d = this.delta_views.advance(m, mv.book_sequence, book.bids, book.asks);
        if (d !== null) {
          this.publish(`book_delta:${mv.id}`, bookDeltaMessage(
            mv.id, mv.book_sequence, d.prev_sequence, d.bids, d.asks, d.checksum, new Date(time_ms).toISOString(),
          ), delta_subs);
        }
      }
    }
  }

  /** The current snapshot of market `m`, serialized once per sequence. */
  snapshot(m: number): string {
    const rm = this.rm;
    const mv = rm.markets[m];
    const cached = this.snapshot_cache[m];
    if (cached !== null && cached !== undefined && cached.sequence === mv.book_sequence) return cached.json;
    const book = rm.sortedBook(m, this.book_depth_max);
    const time_ms = this.book_seq[m] === mv.book_sequence ? this.book_time_ms[m] : rm.batch_time_ms;
    const json = bookSnapshotMessage(
      mv.id, mv.book_sequence, book.bids, book.asks, bookChecksum(book.bids, book.asks), new Date(time_ms || Date.now()).toISOString(),
    );
    this.snapshot_cache[m] = { sequence: mv.book_sequence, json };
    return json;
  }
}
