// Result and input types of the Ringbook HTTP API (docs/api.md). Amounts are integer units
// (value x 1,000,000) unless noted; book levels and public trades carry them as digit strings.

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

export interface AdminState {
  batch_id: string;
  state_root: string;
  state_root_batch_id?: string;
  operator_address: string;
  settlement: { contract: string; chain_id: number; assets: Record<string, string> };
  markets: AdminMarket[];
  accounts: number;
  open_orders: number;
  rings: { request_ring: number; event_ring: number };
  inflight_requests: number;
  signatures_verified: number;
  journal_bytes: number | null;
  /** Forced-inclusion entries still in the inbox, oldest first. */
  pending_forced_inclusions: PendingForcedInclusion[];
  uptime_s: number;
  [key: string]: unknown;
}

// ---- referral programme ----

/** `POST /referral/register`. */
export interface ReferralRegistration {
  /** Lowercase addresses. */
  referred: string;
  referrer: string;
  /** Batch time of the registration + 90 days (ISO 8601). */
  active_until: string;
  batch_id: string;
}

/** One user referred by the address (`referrals`; `active_referrals` has no `active`). */
export interface ReferralRecord {
  address: string;
  active_until: string;
  active: boolean;
  /** Shares earned from this user in USDC, as a digit string of units. */
  earned_usdc: string;
}

export type ActiveReferral = Omit<ReferralRecord, 'active'>;

/** `GET /referral/:address`. */
export interface ReferralStats {
  address: string;
  /** The code to share: the address itself. */
  referral_code: string;
  /** Every user ever referred (active or not). */
  referred_users: number;
  /** How many still share fees (all of them, not only the rows listed). */
  active_referral_count: number;
  /** USDC earned from all referred users, digit string of units (`"400000"` = 0.4 USDC). */
  total_earnings_usdc: string;
  /** The latest end among the active referrals, null when none is active. */
  active_until: string | null;
  /** The listed referrals still sharing fees. */
  active_referrals: ActiveReferral[];
  /** The `limit` most recent referrals (default 100), in registration order. */
  referrals: ReferralRecord[];
  /** Who referred this address, null when nobody did. */
  referred_by: { referrer: string; active_until: string } | null;
}

// ---- forced inclusion ----

import type { ForcedKind } from '../auth/messages.js';
export type { ForcedKind };
/** As the server reports an entry's kind: `unknown` for a payload it could not read at all. */
export type ForcedKindReported = ForcedKind | 'unknown';

/** `POST /force-include`: the queued inbox entry. */
export interface ForceInclusion {
  entry_id: number;
  user: string;
  kind: ForcedKindReported;
  /** keccak256 of the payload bytes (0x + 64 hex). */
  payload_hash: string;
  /** The envelope's nonce (consumed now). */
  nonce: number;
  /** The payload's own nonce (checked at inclusion). */
  payload_nonce: number;
  queued_at: string;
  /** queued_at + 24 h: the latest time the entry is included. */
  deadline: string;
  status: 'pending';
  batch_id: string;
}

/** What the included payload did. */
export interface ForcedResult {
  accepted: boolean;
  /** The error code the request was refused with (e.g. `DUPLICATE_NONCE`), null when accepted. */
  error: string | null;
  message: string | null;
  /** The order the payload placed or acted on, when there is one. */
  order_id: number | null;
}

/** `GET /force-include/:entry_id`. */
export interface ForceInclusionStatus {
  entry_id: number;
  user: string;
  kind: ForcedKindReported;
  nonce: number;
  payload_nonce: number;
  queued_at: string;
  deadline: string;
  status: 'pending' | 'included';
  included_at: string | null;
  /** Note: an integer here (batch ids are strings elsewhere). */
  included_batch_id: number | null;
  result: ForcedResult | null;
}

/** `GET /admin/state` `pending_forced_inclusions[]`. */
export interface PendingForcedInclusion {
  entry_id: number;
  user: string;
  kind: ForcedKindReported;
  payload_nonce: number;
  queued_at: string;
  deadline: string;
}

export interface CreditResult {
  address: string;
  credit_limit: number;
  auto_cancel_ratio: number;
}

export interface DaBatchHeader {
  batch_id: string;
  prev_state_root: string;
  state_root: string;
  fills_root: string;
  input_hash: string;
  timestamp: number;
}

export interface DaFillLeaf {
  batch_id: string | number;
  fill_id: string | number;
  taker_order_id: string | number;
  maker_order_id: string | number;
  taker: string;
  maker: string;
  market_id: string;
  taker_side: string | number;
  price: string | number;
  quantity: string | number;
  taker_fee: string | number;
  maker_fee: string | number;
  [key: string]: unknown;
}

export interface DaBatch {
  header: DaBatchHeader;
  inputs_hex: string;
  fills: DaFillLeaf[];
  state_diff: unknown[];
}

export interface DaProof {
  order_id: string | number;
  batch_id: string;
  merkle_root: string;
  merkle_proof: string[];
  fill_hash: string;
  fill_id: string | number;
  leaf: unknown[];
  leaf_types: string[];
}

// ---- inputs ----

export interface PlaceOrderInput {
  market_id: string;
  side: Side;
  /** Units; required for limit orders, must be absent for market orders. */
  price?: number;
  quantity: number;
  /** Default `limit`. */
  order_type?: OrderType;
  /** Default `gtc` (limit) / `ioc` (market). */
  time_in_force?: TimeInForce;
  client_order_id?: string;
  /** Self-trade prevention (server default `expire_maker`); signed in the JSON form when set. */
  stp?: SelfTradePrevention;
  /** Stale-order guard, epoch ms: refused with EXPIRED when the engine's batch is later. */
  expires_after_ms?: number;
  /** Explicit nonce (default: the client's nonce source). */
  nonce?: number;
}

export type SelfTradePrevention = 'expire_maker' | 'expire_taker' | 'expire_both';

export interface CancelInput {
  order_id?: number | string;
  client_order_id?: string;
  nonce?: number;
}

export interface AmendInput {
  order_id: number | string;
  price: number;
  /** New open quantity (not the total). */
  quantity: number;
  nonce?: number;
}

export interface WithdrawInput {
  asset: string;
  /** Smallest on-chain unit (wei for ETH): a digit string, bigint or safe integer. */
  amount: string | bigint | number;
  nonce?: number;
}

export interface WithdrawalSignatureInput {
  /** Default: the client's wallet. */
  user?: string;
  asset: string;
  /** Decimal string in whole units (`"0.5"` ETH). */
  amount: string;
  nonce: number;
}

export interface DepositInput {
  user: string;
  asset: string;
  /** Decimal string in whole units (`"1234.5"`); see toDecimal / formatUnits. */
  amount: string;
}

export interface CreateMarketInput {
  id?: string;
  base: string;
  quote: string;
  tick_size: number;
  lot_size: number;
}

export interface RegisterReferralInput {
  /** The referrer's address (an account already). The client's wallet is the referred user. */
  referrer: string;
  nonce?: number;
}

export interface ForceIncludeOptions {
  /** The envelope's nonce (default: the client's envelope nonce source). */
  nonce?: number;
  /** The payload's nonce (default: the client's trading nonce source); any value, checked at inclusion. */
  payload_nonce?: number;
  /** Write the `kind` member into the payload (default true; false lets the server infer it). */
  kind_member?: boolean;
}
