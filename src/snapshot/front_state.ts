// The front thread's part of a snapshot: everything its read model and market data hold at the
// snapshot's batch, including the history the engine state does not (closed orders, fills per
// account, trades, candles, the leaderboard window), so that GET answers after a restart from the
// snapshot are the answers before it. Plain arrays only (msgpackr keeps them compact); maps and
// typed arrays are rebuilt on import.
import type { MarketData, MarketDataState } from '../marketdata/market_data.js';
import type { FillView, MarketView, OrderView, ReadModel, TradeView } from '../gateway/read_model.js';

type MarketRow = Omit<MarketView, 'bids' | 'asks' | 'sorted_cache' | 'book_changed_in_batch'> & {
  bids: [number, number][];
  asks: [number, number][];
};

export interface FrontState {
  batch_id: number;
  batch_time_ms: number;
  maker_fee_bps: number;
  taker_fee_bps: number;
  markets: MarketRow[];
  address_by_account: string[];
  /** [account, [available, locked] per asset flattened] */
  balances: [number, number[]][];
  /** [account, 1/0 per asset] */
  balance_seen: [number, number[]][];
  nonce_high_water: [number, number][];
  credit: [number, { credit_limit: number; auto_cancel_ratio_ppm: number }][];
  orders: OrderView[];
  open_orders_by_account: [number, number[]][];
  order_ids_by_account: [number, number[]][];
  order_by_client_id: [string, number][];
  closed_order_ids: number[];
  fills_by_account: [number, FillView[]][];
  trades_by_market: TradeView[][];
  pending_withdrawals: [string, { account: number; asset: number; amount: number; nonce: number }][];
  market_data: MarketDataState;
}

function setsOf(m: Map<number, Set<number>>): [number, number[]][] {
  return [...m].map(([k, s]) => [k, [...s]]);
}

export function exportFront(rm: ReadModel, md: MarketData): FrontState {
  const indexes = rm.exportIndexes();
  return {
    batch_id: rm.batch_id,
    batch_time_ms: rm.batch_time_ms,
    maker_fee_bps: rm.maker_fee_bps,
    taker_fee_bps: rm.taker_fee_bps,
    markets: rm.markets.map((mv) => ({
      index: mv.index, id: mv.id, base: mv.base, quote: mv.quote, tick_size: mv.tick_size, lot_size: mv.lot_size,
      status: mv.status, fee_override: mv.fee_override, maker_fee_bps: mv.maker_fee_bps, taker_fee_bps: mv.taker_fee_bps,
      mark_price: mv.mark_price, book_sequence: mv.book_sequence, bids: [...mv.bids], asks: [...mv.asks],
    })),
    address_by_account: [...rm.address_by_account],
    balances: [...rm.balances].map(([a, b]) => [a, Array.from(b)]),
    balance_seen: [...rm.balance_seen].map(([a, s]) => [a, Array.from(s)]),
    nonce_high_water: [...rm.nonce_high_water],
    credit: [...rm.credit],
    orders: [...rm.orders.values()],
    open_orders_by_account: setsOf(rm.open_orders_by_account),
    order_ids_by_account: setsOf(rm.order_ids_by_account),
    order_by_client_id: indexes.order_by_client_id,
    closed_order_ids: indexes.closed_order_ids,
    fills_by_account: [...rm.fills_by_account],
    trades_by_market: rm.trades_by_market.map((t) => t ?? []),
    pending_withdrawals: [...rm.pending_withdrawals],
    market_data: md.exportState(),
  };
}

/** Loads a FrontState into a fresh read model and market data (nothing applied to them yet). */
export function importFront(rm: ReadModel, md: MarketData, s: FrontState): void {
  if (rm.batch_id !== 0 || rm.markets.length !== 0) throw new Error('snapshot: the read model must be fresh');
  rm.batch_id = s.batch_id;
  rm.batch_time_ms = s.batch_time_ms;
  rm.maker_fee_bps = s.maker_fee_bps;
  rm.taker_fee_bps = s.taker_fee_bps;
  for (const m of s.markets) {
    rm.markets[m.index] = {
      ...m, bids: new Map(m.bids), asks: new Map(m.asks), sorted_cache: null, book_changed_in_batch: false,
    };
  }
  s.address_by_account.forEach((address, id) => {
    rm.address_by_account[id] = address;
    if (id > 0) rm.account_by_address.set(address, id);
  });
  for (const [a, b] of s.balances) rm.balances.set(a, Float64Array.from(b));
  for (const [a, seen] of s.balance_seen) rm.balance_seen.set(a, Uint8Array.from(seen));
  for (const [a, n] of s.nonce_high_water) rm.nonce_high_water.set(a, n);
  for (const [a, c] of s.credit) rm.credit.set(a, c);
  for (const o of s.orders) rm.orders.set(o.order_id, o);
  for (const [a, ids] of s.open_orders_by_account) rm.open_orders_by_account.set(a, new Set(ids));
  for (const [a, ids] of s.order_ids_by_account) rm.order_ids_by_account.set(a, new Set(ids));
  rm.importIndexes({ order_by_client_id: s.order_by_client_id, closed_order_ids: s.closed_order_ids });
  for (const [a, fills] of s.fills_by_account) rm.fills_by_account.set(a, fills);
  s.trades_by_market.forEach((t, m) => {
    rm.trades_by_market[m] = t;
  });
  for (const [k, w] of s.pending_withdrawals) rm.pending_withdrawals.set(k, w);
  md.importState(s.market_data);
}
