// Market data on the front thread: candles and the leaderboard, built only from committed events
// (an observer of the read model, which decodes them), so a restart rebuilds them by replaying
// the journal.
import { OrderStatus, Side } from '../engine/types.js';
import type { ReadModel } from '../read_model/read_model.js';
import { HEARS_FILL, type OrderView, type ReadModelObserver, type TradeView } from '../read_model/views.js';
import { CandleBuilder, midpoint, type CandlesState } from './candles.js';
import { Leaderboard } from './leaderboard.js';

export interface MarketDataState {
  batch_time_ms: number;
  candles: CandlesState;
  /** window: the fills as rows, LEADER_ROW_WIDTH numbers each, oldest first. */
  leaderboard: { window: Float64Array; last_price: number[] };
  best_bid: number[];
  best_ask: number[];
}

export interface MarketDataOptions {
  /** Wall clock for request-time defaults (the default `since` of candles); Date.now by default. */
  now?: () => number;
  candles_kept?: number;
  leaderboard_trades_max?: number;
}

export class MarketData implements ReadModelObserver {
  readonly candles: CandleBuilder;
  readonly leaderboard: Leaderboard;
  readonly now: () => number;
  private readonly rm: ReadModel;
  private batch_time_ms = 0;
  /** Best bid / ask per market as last known (0: none); see best(). */
  private readonly best_bid: number[] = [];
  private readonly best_ask: number[] = [];

  constructor(rm: ReadModel, opts: MarketDataOptions = {}) {
    this.rm = rm;
    this.now = opts.now ?? Date.now;
    this.candles = new CandleBuilder(opts.candles_kept);
    this.leaderboard = new Leaderboard({ trades_max: opts.leaderboard_trades_max });
  }

  // ReadModelObserver: the read model decoded the event and applied it.

  /**
   * Fills (and the batch markers): answers and balances change nothing here, and the prices orders
   * rested at in the batch are the read model's (rested_bid_max / rested_ask_min, read at commit),
   * so order updates need not be taped for market data (issue 11).
   */
  hears(): number {
    return HEARS_FILL;
  }

  batchBegin(_batch_id: number, time_ms: number): void {
    this.batch_time_ms = time_ms;
    this.candles.onBatchBegin(time_ms);
    this.leaderboard.advance(time_ms);
  }

  fill(_seq: number, t: TradeView): void {
    this.candles.onTrade(t.market, this.batch_time_ms, t.price, t.quantity);
    const mv = this.rm.markets[t.market];
    // The trade view is the leaderboard's trade as it is (no copy per fill): its time is the batch's,
    // as this.batch_time_ms (the read model stamps each fill with its batch's begin time).
    this.leaderboard.onTrade(t, mv !== undefined && mv.quote === 'USDC');
  }

  /**
   * A price an order rests at after this update is a candidate best (checked at commit). The batch's
   * candidates also come from the read model at commit (raise()), so this call changes nothing the
   * commit would not: it stays for an observer list that hands it anyway.
   */
  orderUpdate(_seq: number, o: OrderView): void {
    if ((o.status !== OrderStatus.OPEN && o.status !== OrderStatus.PARTIALLY_FILLED) || o.remaining <= 0) return;
    this.raise(o.market, o.side, o.price);
  }

  private raise(m: number, side: number, price: number): void {
    if (side === Side.BID) {
      if (price > (this.best_bid[m] ?? 0)) this.best_bid[m] = price;
    } else if (this.best_ask[m] === undefined || this.best_ask[m] === 0 || price < this.best_ask[m]) {
      this.best_ask[m] = price;
    }
  }

  /** The read model's books hold the batch; `changed_markets` names the markets whose book it changed. */
  batchCommitted(_batch_id: number, _time_ms: number, changed_markets: ReadonlySet<number>): void {
    // The batch's resting prices, every market's (an update that left the book as it was raises
    // nothing a commit has not seen, but raising them all is what orderUpdate did).
    const bids = this.rm.rested_bid_max;
    const asks = this.rm.rested_ask_min;
    for (let m = 0; m < bids.length; m++) if (bids[m] > 0) this.raise(m, Side.BID, bids[m]);
    for (let m = 0; m < asks.length; m++) if (asks[m] > 0) this.raise(m, Side.ASK, asks[m]);
    for (const m of changed_markets) {
      const mv = this.rm.markets[m];
      if (mv === undefined) continue;
      const bid = this.best(m, mv.bids, this.best_bid, true);
      const ask = this.best(m, mv.asks, this.best_ask, false);
      this.candles.onBookMid(m, this.batch_time_ms, bid > 0 && ask > 0 ? midpoint(bid, ask) : 0);
    }
  }

  accepted(): void {}
  rejected(): void {}
  balance(): void {}

  /** Candles, leaderboard and cached best prices in plain form (snapshots). */
  exportState(): MarketDataState {
    return {
      batch_time_ms: this.batch_time_ms, candles: this.candles.exportState(), leaderboard: this.leaderboard.exportState(),
      best_bid: Array.from(this.best_bid, (p) => p ?? 0), best_ask: Array.from(this.best_ask, (p) => p ?? 0),
    };
  }

  /** Loads what `exportState` gave into a fresh MarketData. */
  importState(state: MarketDataState): void {
    this.batch_time_ms = state.batch_time_ms;
    this.candles.importState(state.candles);
    this.leaderboard.importState(state.leaderboard);
    state.best_bid.forEach((p, m) => {
      this.best_bid[m] = p;
    });
    state.best_ask.forEach((p, m) => {
      this.best_ask[m] = p;
    });
  }

  /**
   * Best price of one book side after a batch: the cached best when its level still exists,
   * else a scan of the side's levels (no sort: O(levels), only when the best level went away).
   */
  private best(m: number, levels: Map<number, number>, cache: number[], highest: boolean): number {
    const cached = cache[m] ?? 0;
    if (cached > 0 && levels.has(cached)) return cached;
    let best = 0;
    for (const p of levels.keys()) if (best === 0 || (highest ? p > best : p < best)) best = p;
    cache[m] = best;
    return best;
  }
}
