// What an engine is, from the outside: its configuration, the one method that applies a request,
// and the canonical state both implementations must agree on byte for byte.
import type { Request } from './types.js';
import type { EventSink } from './events.js';

/** Named limits (TIGER_STYLE): every table the matcher owns has a maximum, checked on entry. */
export interface EngineLimits {
  accounts_max: number;
  markets_max: number;
  orders_open_max: number;
  orders_open_per_account_max: number;
  price_levels_per_book_max: number;
  /** Forced-inclusion entries waiting in the inbox, in all (default 10,000) and per account (16). */
  inbox_entries_max?: number;
  inbox_entries_per_account_max?: number;
  /**
   * Live agent keys per user (default AGENTS_LIVE_MAX = 10, DECISIONS; src/engine/agents.ts). The
   * server keeps the default; the differential tests lower it so that generated flow reaches it.
   */
  agents_live_per_account_max?: number;
}

export const INBOX_ENTRIES_MAX_DEFAULT = 10_000;
export const INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT = 16;

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
  /**
   * How long the sequencer may hold a forced-inclusion entry: the engine includes it at the start
   * of the first batch whose time is at least queued time + hold. 0 (the default) = the next
   * batch; must stay below FORCE_INCLUSION_DEADLINE_MS (24 h), so the deadline always holds.
   */
  force_inclusion_hold_ms?: number;
}

export interface MatchingEngine {
  /** Applies one request and writes its events to `out`, in order. Never throws on bad input. */
  apply(request: Request, out: EventSink): void;
  /**
   * Starts a batch at `time_ms` (the sequencer's clock, never read by the engine itself; batch
   * times never decrease): referral windows are judged at this time, dead-man switches that are
   * due fire (their cancels first), and forced-inclusion entries that are due are included now, in
   * order, their events written to `out`.
   */
  beginBatch(time_ms: number, out: EventSink): void;
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
  /** The time of the last batch begun (0 before the first): referral windows and inbox entries are judged at it. */
  batch_time_ms: number;
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
  /** Ascending by referred account. */
  referrals: CanonicalReferral[];
  /** The forced-inclusion inbox, oldest first. */
  inbox: CanonicalInboxEntry[];
  next_inbox_entry_id: number;
  /**
   * Per account, the last force-include envelope nonce (its own sequence, apart from the trading
   * high-water mark: DECISIONS, "Forced inclusion"); ascending by account, accounts above 0 only.
   */
  envelope_nonces: { account: number; envelope_nonce: number }[];
  /** Armed dead-man switches, ascending by account. */
  dead_man: CanonicalDeadMan[];
  /**
   * Agent keys (src/engine/agents.ts), ascending by user account: users with an agent entry or a
   * nonce floor above 0 only.
   */
  agents: CanonicalAgentUser[];
  /**
   * The id of the last on-chain deposit credited (the settlement contract numbers deposits from
   * 1; 0: none). A DEPOSIT whose `nonce` is a chain deposit id must be above it (docs/settlement.md).
   */
  chain_deposit_high_water: number;
}

/** An armed dead-man switch: at the first batch stamped at or after `deadline_ms`, the account's orders are cancelled. */
export interface CanonicalDeadMan {
  account: number;
  deadline_ms: number;
}

/** A user's agent keys and the floor new agents' nonce marks start at. */
export interface CanonicalAgentUser {
  account: number;
  nonce_floor: number;
  /** Ascending by agent account; some may have expired (valid_until_ms <= batch time) and wait to be pruned. */
  agents: CanonicalAgent[];
}

export interface CanonicalAgent {
  agent: number;
  name: string;
  valid_until_ms: number;
  nonce_high_water: number;
}

export interface CanonicalReferral {
  /** The referred user. */
  account: number;
  referrer: number;
  /** Registration time + 90 days: taker fees of fills in batches before this time are shared. */
  active_until_ms: number;
  /** Shares paid to the referrer from this user's fees, per asset index. */
  earned_units: number[];
}

/**
 * The integer fields a forced-inclusion payload carries into the inbox, in the order the inbox
 * entry leaf encodes them (src/da/state_leaves.ts). The one list: the engine's inbox, the
 * canonical state, the state leaves and the state root all derive their field sets from it.
 * `reject` is the front's verdict on the payload: Reject.NONE, or the reason it will be refused with.
 */
export const FORCED_PAYLOAD_FIELDS = [
  'kind', 'nonce', 'market', 'side', 'order_type', 'tif', 'price_units', 'quantity_units', 'order_id',
  'asset', 'amount_units', 'referrer_account', 'reject',
] as const;
export type ForcedPayloadFields = Record<(typeof FORCED_PAYLOAD_FIELDS)[number], number>;

/** The request a forced-inclusion payload carries, as the engine will apply it. */
export interface CanonicalForcedRequest extends ForcedPayloadFields {
  client_order_id: string;
}

export interface CanonicalInboxEntry {
  entry_id: number;
  account: number;
  /** The envelope's nonce (already consumed when queued). */
  envelope_nonce: number;
  queued_ms: number;
  deadline_ms: number;
  request: CanonicalForcedRequest;
}
