// What an engine is, from the outside: its configuration, the one method that applies a request,
// and the canonical state both implementations must agree on byte for byte.
import type { EventSink, Request } from './types.js';

/** Named limits (TIGER_STYLE): every table the matcher owns has a maximum, checked on entry. */
export interface EngineLimits {
  accounts_max: number;
  markets_max: number;
  orders_open_max: number;
  orders_open_per_account_max: number;
  price_levels_per_book_max: number;
}

export interface EngineMarketConfig {
  id: string;
  base: number;
  quote: number;
  tick_size_units: number;
  lot_size_units: number;
}

export interface EngineConfig {
  /** Asset symbols; the index is the asset id used in requests and events. */
  assets: string[];
  markets: EngineMarketConfig[];
  maker_fee_bps: number;
  taker_fee_bps: number;
  limits: EngineLimits;
}

export interface MatchingEngine {
  /** Applies one request and writes its events to `out`, in order. Never throws on bad input. */
  apply(request: Request, out: EventSink): void;
  /** The whole state in canonical form (see docs/engine.md, "Canonical state"). */
  canonicalState(): CanonicalState;
}

export interface CanonicalOrder {
  order_id: number;
  account: number;
  side: number;
  tif: number;
  price_units: number;
  /** Original quantity (filled + open + cancelled); an amend sets it to filled + new open quantity. */
  quantity_units: number;
  filled_units: number;
  remaining_units: number;
  /** Quote (bids) or base (asks) held for this order. */
  locked_units: number;
  /** Time priority: a global counter stamped each time an order enters a book. */
  priority_seq: number;
  client_order_id: string;
  /** The order's latest fill price (0 before its first fill), reported in its order updates. */
  last_fill_price_units: number;
}

export interface CanonicalMarket {
  id: string;
  base: number;
  quote: number;
  tick_size_units: number;
  lot_size_units: number;
  status: 'active' | 'paused';
  /** Per-market fee override, or null to use the global fees. */
  fees: { maker_fee_bps: number; taker_fee_bps: number } | null;
  /** Last trade price, 0 before the first trade. */
  mark_price_units: number;
  /** Best first, then time priority. */
  bids: CanonicalOrder[];
  asks: CanonicalOrder[];
}

export interface CanonicalAccount {
  account: number;
  nonce_high_water: number;
  /** Per asset index: [available, locked]. */
  balances: [number, number][];
}

export interface CanonicalState {
  next_order_id: number;
  next_fill_id: number;
  next_priority_seq: number;
  fees: { maker_fee_bps: number; taker_fee_bps: number };
  markets: CanonicalMarket[];
  /** Accounts with a non-zero balance or nonce, ascending; the fee account 0 always. */
  accounts: CanonicalAccount[];
  deposits_units: number[];
  withdrawals_units: number[];
  /** Ascending by account. */
  credit: { account: number; credit_limit_units: number; auto_cancel_ratio_ppm: number }[];
  /** Ascending by (account, nonce). */
  pending_withdrawals: { account: number; nonce: number; asset: number; amount_units: number }[];
}
