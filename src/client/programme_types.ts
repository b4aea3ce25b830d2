// Result types of the Ringbook programmes and proofs over HTTP (docs/api.md): the referral
// programme, the forced-inclusion inbox, and the data-availability batches and fill proofs.
// Re-exported by index.ts with the other API types (types.ts, input_types.ts).
import type { ForcedKind } from '../auth/messages.js';

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

// ---- data availability ----

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
