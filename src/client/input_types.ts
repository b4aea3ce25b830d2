// Input types of the RingbookClient calls (docs/api.md): what a caller gives to place, cancel,
// amend, withdraw, deposit, create a market, register a referral or force an inclusion. Amounts
// are integer units (value x 1,000,000) unless noted. Re-exported by index.ts.
import type { OrderType, Side, TimeInForce } from './types.js';

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
