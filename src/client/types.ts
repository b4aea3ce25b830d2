// The vocabulary and the result types of the Ringbook HTTP API's trading, account and admin
// routes (docs/api.md). Amounts are integer units (value x 1,000,000) unless noted; book levels and
// public trades carry them as digit strings. The programmes' results are programme_types.ts, the
// calls' inputs input_types.ts; index.ts re-exports all three.
import type { PendingForcedInclusion } from './programme_types.js';

export type Side = 'bid' | 'ask';
export type OrderType = 'limit' | 'market';
export type TimeInForce = 'gtc' | 'ioc' | 'fok' | 'post_only';
export type OrderStatus = 'open' | 'partially_filled' | 'filled' | 'cancelled';
export type OrderStatusFilter = OrderStatus | 'all';

export interface Health {
  status: string;
  batch_id: string;
  uptime_s: number;
}

export interface ServerTime {
  time_ms: number;
  iso: string;
}

export interface Market {
  id: string;
  base: string;
  quote: string;
  status: 'active' | 'paused';
  tick_size: number;
  lot_size: number;
  /** Decimal display strings, null when the side is empty / before the first trade. */
  best_bid: string | null;
  best_ask: string | null;
  spread: string | null;
  last_price: string | null;
}

/** `[price, quantity]` as digit strings of units. */
export type BookLevel = [string, string];

export interface OrderBook {
  market_id: string;
  sequence: number;
  bids: BookLevel[];
  asks: BookLevel[];
}

export interface PublicTrade {
  trade_id: string;
  market_id: string;
  price: string;
  quantity: string;
  side: Side;
  timestamp: string;
}

export interface Fees {
  maker_fee_bps: number;
  taker_fee_bps: number;
}

export interface MarketFees extends Fees {
  market_id: string;
}

export interface AssetBalance {
  available: number;
  locked: number;
}

export interface CreditInfo {
  credit_limit: number;
  auto_cancel_ratio: number;
  quoted_value: number;
  utilization: number;
}

/** `GET /account/:address/balances`, with the assets split from the two non-asset keys. */
export interface Balances {
  assets: Record<string, AssetBalance>;
  nonce_high_water: number;
  /** The last force-include envelope nonce (its own sequence). */
  envelope_nonce_high_water: number;
  credit: CreditInfo | null;
}

export interface OrderRecord {
  order_id: number;
  client_order_id: string;
  status: OrderStatus;
  market_id: string;
  side: Side;
  order_type: OrderType;
  time_in_force: TimeInForce;
  price: number;
  quantity: number;
  filled_quantity: number;
  remaining_quantity: number;
  last_fill_price: number;
  created_at: string;
  updated_at: string;
}

export interface TakerFill {
  fill_id: number;
  price: number;
  quantity: number;
  fee: number;
  is_maker: boolean;
}

export interface OrderResult extends OrderRecord {
  fills: TakerFill[];
  batch_id: string;
}

export interface CancelResult extends OrderRecord {
  batch_id: string;
}

export interface DeadManResult {
  /** ISO 8601 deadline now armed, or null when disarmed. */
  deadline: string | null;
  batch_id: string;
}

/** A running keep-alive of the dead-man switch (RingbookClient.keepDeadManAlive). */
export interface DeadManKeepAlive {
  /** Stops re-arming; with `disarm`, also sends timeout 0 (resolves when answered). */
  stop(opts?: { disarm?: boolean }): Promise<void>;
  /** The last answer (null before the first). */
  readonly last: DeadManResult | null;
}

/** `POST /agents`. */
export interface AgentApproval {
  user: string;
  agent: string;
  name: string;
  /** ISO 8601. */
  valid_until: string;
  valid_until_ms: number;
  batch_id: string;
}

/** `POST /agents/revoke`. */
export interface AgentRevocation {
  user: string;
  agent: string;
  revoked: true;
  batch_id: string;
}

/** `GET /account/:address/agents`: the live agents (at the last batch's time). */
export interface AgentList {
  address: string;
  agents: { agent: string; name: string; valid_until: string; valid_until_ms: number; nonce_high_water: number }[];
  /** The nonce mark a newly approved agent starts at (the highest mark of the agents that left). */
  nonce_floor: number;
}

/** One item's answer in `POST /orders/batch`. */
export type BatchItemResult<T = OrderResult | CancelResult | CancelAllResult> =
  | { ok: true; data: T }
  | { ok: false; error: string; message: string };

export interface CancelAllResult {
  cancelled: OrderRecord[];
  batch_id: string;
}

export interface AccountFill {
  fill_id: number;
  order_id: number;
  market_id: string;
  side: Side;
  price: number;
  quantity: number;
  /** Paid in quote units; negative for a maker rebate. */
  fee: number;
  is_maker: boolean;
  batch_id: string;
  timestamp: string;
}

export interface DepositResult {
  user: string;
  asset: string;
  amount: number;
  balance: AssetBalance;
  batch_id: string;
}

export interface WithdrawalResult {
  address: string;
  asset: string;
  /** Smallest on-chain unit (wei for ETH), as a digit string. */
  amount: string;
  amount_units: number;
  nonce: number;
  status: 'pending';
}

export interface WithdrawalSignature {
  signature: string;
  user: string;
  /** Token address used by the settlement contract (zero address for ETH). */
  asset: string;
  amount_wei: string;
  nonce: number;
}

export interface AdminMarket extends Market {
  maker_fee_bps: number;
  taker_fee_bps: number;
}

/** GET /admin/state `verify_pool` (GET /health answers 503 while `broken` is not null). */
export interface AdminVerifyPool {
  threads: number;
  workers_ready: number;
  worker_restarts: number;
  broken: string | null;
  broken_at_ms: number | null;
}

/**
 * GET /admin/state `journal` (GET /health answers 503 while `status` is `failing`); the server
 * builds it as this type (gateway/journal_state.ts JournalState), so the two cannot drift apart.
 */
export interface AdminJournal {
  status: 'ok' | 'failing';
  /** While failing: since when (epoch ms) and the batch whose write is retried; else null. */
  failing_since_ms: number | null;
  failing_batch_id: number | null;
  /** The last failure since the start (its cause, LMDB's error; kept after it ended), else null. */
  last_error: string | null;
  last_error_batch_id: number | null;
  last_error_at_ms: number | null;
  /** When writes succeeded again after the last failure (null: none yet, or still failing). */
  recovered_at_ms: number | null;
  /** Stretches of failing writes since the start (ringbook_journal_faults_total). */
  faults: number;
}

export interface AdminState {
  batch_id: string;
  state_root: string;
  state_root_batch_id?: string;
  /** The front's messages to the DA thread and its DA store commits; null without a DA thread. */
  da_thread?: { messages_posted: number; store_commits: number } | null;
  operator_address: string;
  settlement: { contract: string; chain_id: number; assets: Record<string, string> };
  markets: AdminMarket[];
  accounts: number;
  open_orders: number;
  rings: { request_ring: number; event_ring: number };
  inflight_requests: number;
  /** The front's pooled stage stamps: taken and not given back (0 when idle), waiting, give-backs refused (0). */
  stage_stamps?: { outstanding: number; pooled: number; given_back_twice: number };
  signatures_verified: number;
  /** The verify pool: workers serving, replaced after dying, and why it refuses every check (docs/operations.md). */
  verify_pool?: AdminVerifyPool;
  /** The journal's files (journal/data.mdb + wal.log), bytes; null without a local journal (a cluster gateway). */
  journal_bytes: number | null;
  /** Whether the journal writes (a cluster gateway: the leader matcher's store into the event stream); null in a process with neither. */
  journal?: AdminJournal | null;
  /** Forced-inclusion entries still in the inbox, oldest first. */
  pending_forced_inclusions: PendingForcedInclusion[];
  uptime_s: number;
  [key: string]: unknown;
}

export interface CreditResult {
  address: string;
  credit_limit: number;
  auto_cancel_ratio: number;
}
