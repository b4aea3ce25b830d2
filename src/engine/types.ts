// The engine's vocabulary: request kinds, codes, reasons and the event sink. Both the fast engine
// (src/engine/engine.ts) and the reference engine (src/engine/reference/) speak exactly this, so
// the differential tests can compare them event by event. Everything is a small integer so that
// requests and events can later be laid out as fixed-size ring records without translation.

/** Request kinds (a const enum, as Side below says why: apply dispatches on it for every request). */
export const enum RequestKind {
  DEPOSIT = 1,
  WITHDRAW = 2,
  PLACE = 3,
  CANCEL = 4,
  AMEND = 5,
  CANCEL_ALL = 6,
  PAUSE_MARKET = 7,
  RESUME_MARKET = 8,
  SET_FEES = 9,
  SET_CREDIT = 10,
  ADD_MARKET = 11,
  /** Signed by the referred user: binds it to a referrer (account ids of both; docs/engine.md). */
  REFER = 12,
  /** Signed envelope around another signed request: queued in the forced-inclusion inbox. */
  FORCE_INCLUDE = 13,
  /**
   * Signed: arms (or with timeout 0 disarms) the account's dead-man switch; `amount_units` carries
   * the timeout in ms (the request record has no free word, and no other field of it is used).
   */
  CANCEL_AFTER = 14,
  /**
   * Engine-issued at batch start, never accepted from the ring: a dead-man switch fell due. Its
   * ACCEPTED event (account, no nonce) opens the group of its cancels (reason dead_man_switch).
   */
  DEAD_MAN_CANCEL = 15,
  /**
   * Operator request (no signature, no nonce; consent origin operator, rule cancel_on_disconnect):
   * the account's opted-in WebSocket closed; every resting order is cancelled (reason disconnect).
   */
  DISCONNECT_CANCEL = 16,
  /**
   * Signed by the user (never an agent): approves `agent_account` (the second address) as an agent
   * key until `amount_units` ms (epoch; valid_until_ms rides there, as CANCEL_AFTER's timeout does),
   * named `client_order_id` (the agent's name; src/engine/agents.ts).
   */
  APPROVE_AGENT = 17,
  /** Signed by the user (never an agent): revokes `agent_account` (the second address). */
  REVOKE_AGENT = 18,
}
export type RequestKindValue = RequestKind;

// Const enums (tsc writes the numbers themselves into the code that uses them): an imported
// `as const` object costs, at every use in the engine's optimized code, a module variable load, a
// check of its temporal dead zone and a property load, and its bytecode counts against V8's
// inlining budget (docs/benchmarks.md, 2026-11-26, branch h15f).
export const enum Side { BID = 0, ASK = 1 }
export const enum OrderType { LIMIT = 0, MARKET = 1 }
export const enum Tif { GTC = 0, IOC = 1, FOK = 2, POST_ONLY = 3 }

/**
 * Self-trade prevention: what happens when a taker would meet a resting order of its own account
 * (DECISIONS "Market-maker features"; the taker's mode decides, as on Binance and Coinbase).
 */
export const enum Stp { EXPIRE_MAKER = 0, EXPIRE_TAKER = 1, EXPIRE_BOTH = 2 }
export const STP_NAMES = ['expire_maker', 'expire_taker', 'expire_both'] as const;

export const SIDE_NAMES = ['bid', 'ask'] as const;
export const ORDER_TYPE_NAMES = ['limit', 'market'] as const;
export const TIF_NAMES = ['gtc', 'ioc', 'fok', 'post_only'] as const;

/** Error codes of the spec and DECISIONS. 0 is success. */
export const Code = {
  OK: 0,
  INVALID_SIGNATURE: 1,
  INSUFFICIENT_BALANCE: 2,
  DUPLICATE_NONCE: 3,
  MARKET_NOT_FOUND: 4,
  INVALID_ORDER: 5,
  CREDIT_BREACH: 6,
  MARKET_PAUSED: 7,
  RATE_LIMITED: 8,
  INTERNAL_ERROR: 9,
  UNAUTHORIZED: 10,
  NOT_FOUND: 11,
  INVALID_REQUEST: 12,
  INVALID_REFERRAL: 13,
  REFERRAL_EXISTS: 14,
  AUTH_TIMEOUT: 15,
  /** The order's expires_after_ms is before the time of the batch that would apply it. */
  EXPIRED: 16,
} as const;
export type CodeValue = (typeof Code)[keyof typeof Code];
export const CODE_NAMES: readonly string[] = [
  'OK', 'INVALID_SIGNATURE', 'INSUFFICIENT_BALANCE', 'DUPLICATE_NONCE', 'MARKET_NOT_FOUND',
  'INVALID_ORDER', 'CREDIT_BREACH', 'MARKET_PAUSED', 'RATE_LIMITED', 'INTERNAL_ERROR',
  'UNAUTHORIZED', 'NOT_FOUND', 'INVALID_REQUEST', 'INVALID_REFERRAL', 'REFERRAL_EXISTS',
  'AUTH_TIMEOUT', 'EXPIRED',
];
export const CODE_HTTP_STATUS: readonly number[] = [
  200, 401, 400, 400, 404, 400, 400, 400, 429, 500, 401, 404, 400, 400, 400, 401, 400,
];

/**
 * Why a request was rejected: the precise failed check. The message text is what INVALID_ORDER's
 * `message` says ("names the specific failed validation").
 */
export const Reject = {
  NONE: 0,
  NONCE_NOT_ABOVE_HIGH_WATER: 1,
  MARKET_UNKNOWN: 2,
  MARKET_PAUSED: 3,
  ACCOUNT_UNKNOWN: 4,
  SIDE_INVALID: 5,
  ORDER_TYPE_INVALID: 6,
  TIF_INVALID: 7,
  QUANTITY_NOT_POSITIVE: 8,
  QUANTITY_NOT_LOT_MULTIPLE: 9,
  PRICE_NOT_POSITIVE: 10,
  PRICE_NOT_TICK_MULTIPLE: 11,
  MARKET_ORDER_TIF: 12,
  MARKET_ORDER_WITH_PRICE: 13,
  NOTIONAL_TOO_LARGE: 14,
  CLIENT_ORDER_ID_INVALID: 15,
  CLIENT_ORDER_ID_DUPLICATE: 16,
  ACCOUNT_OPEN_ORDERS_MAX: 17,
  ENGINE_OPEN_ORDERS_MAX: 18,
  POST_ONLY_WOULD_TAKE: 19,
  INSUFFICIENT_BALANCE: 20,
  CREDIT_BREACH: 21,
  ORDER_NOT_FOUND: 22,
  AMOUNT_NOT_POSITIVE: 23,
  AMOUNT_TOO_LARGE: 24,
  ASSET_UNKNOWN: 25,
  FEES_INVALID: 26,
  CREDIT_INVALID: 27,
  MARKET_INVALID: 28,
  MARKET_EXISTS: 29,
  BOOK_LEVELS_MAX: 30,
  ACCOUNTS_MAX: 31,
  MARKETS_MAX: 32,
  KIND_UNKNOWN: 33,
  REQUEST_MALFORMED: 34,
  REFERRER_UNKNOWN: 35,
  SELF_REFERRAL: 36,
  REFERRAL_EXISTS: 37,
  INBOX_FULL: 38,
  INBOX_ACCOUNT_FULL: 39,
  FORCED_KIND_INVALID: 40,
  FORCED_PAYLOAD_MALFORMED: 41,
  FORCED_SIGNATURE_INVALID: 42,
  FORCED_SIGNER_MISMATCH: 43,
  ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER: 44,
  TIMEOUT_INVALID: 45,
  NOTHING_TO_CANCEL: 46,
  EXPIRED: 47,
  STP_INVALID: 48,
  /** The request's signer is not an approved, unexpired agent of its user (at the batch time). */
  AGENT_NOT_APPROVED: 49,
  /** An agent signed a kind only the user may sign (withdrawal, referral, agent change, force-include). */
  AGENT_NOT_ALLOWED: 50,
  AGENTS_MAX: 51,
  AGENT_VALIDITY_INVALID: 52,
  AGENT_NAME_INVALID: 53,
  AGENT_NOT_FOUND: 54,
  AGENT_SELF: 55,
} as const;
export type RejectValue = (typeof Reject)[keyof typeof Reject];
export const REJECT_MESSAGES: readonly string[] = [
  '',
  'nonce must be greater than the account nonce high-water mark',
  'market not found',
  'market is paused',
  'the account cannot be registered: the engine holds its maximum number of accounts',
  'side must be bid or ask',
  'order_type must be limit or market',
  'time_in_force must be gtc, ioc, fok or post_only',
  'quantity must be positive',
  'quantity must be a multiple of the lot size',
  'price must be positive',
  'price must be a multiple of the tick size',
  'a market order must use time_in_force ioc or fok',
  'a market order must not carry a price',
  'price x quantity is too large',
  'client_order_id must be 1 to 36 characters of [A-Za-z0-9_-]',
  'client_order_id is already used by an open order of this account',
  'the account has too many open orders',
  'the engine holds its maximum number of open orders',
  'post_only order would take liquidity',
  'insufficient balance',
  'order would bring credit utilization to 1.0 or above',
  'order not found among the account open orders',
  'amount must be positive',
  'amount is too large',
  'asset not found',
  'fees must satisfy -10000 <= maker_fee_bps, |maker_fee_bps| <= taker_fee_bps <= 10000',
  'credit_limit must be a non-negative integer and auto_cancel_ratio in (0, 1]',
  'tick_size and lot_size must be positive and tick_size x lot_size a multiple of 1,000,000',
  'market already exists',
  'the book holds its maximum number of price levels',
  'the engine holds its maximum number of accounts',
  'the engine holds its maximum number of markets',
  'unknown request kind',
  'numeric fields must be safe integers',
  'the referrer cannot be registered: the engine holds its maximum number of accounts',
  'a user cannot refer itself',
  'the referred user already has a referrer',
  'the forced-inclusion inbox is full',
  'the account has too many pending forced inclusions',
  'a forced payload must be an order, cancel, amend, cancel-all, withdrawal or referral request',
  'the forced payload is not a well-formed signed request body',
  'the forced payload signature is invalid',
  'the forced payload is signed by another address than the user',
  'the envelope nonce must be greater than the account last force-include envelope nonce',
  'timeout_ms must be 0 (disarm) or 1000 to 86400000',
  'the account has no resting order to cancel',
  'the order expired: the batch time is past its expires_after_ms',
  'stp must be expire_maker, expire_taker or expire_both',
  'the signature is not the user\'s nor that of an approved, unexpired agent of the user',
  'an agent may sign orders, cancels, amends, cancel-all and cancel-after only, never withdrawals, referrals, agent changes or force-include',
  'the user already has 10 live agents (revoke one first)',
  'valid_until_ms must be after the batch time and at most 180 days after it',
  'name must be 1 to 16 characters of [A-Za-z0-9_.-]',
  'this address is not an agent of the user',
  'a user cannot approve its own address as its agent',
];

/** The code each reject reason answers with. */
export const REJECT_CODES: readonly CodeValue[] = [
  Code.OK,
  Code.DUPLICATE_NONCE,
  Code.MARKET_NOT_FOUND,
  Code.MARKET_PAUSED,
  Code.INVALID_REQUEST,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INVALID_ORDER,
  Code.INSUFFICIENT_BALANCE,
  Code.CREDIT_BREACH,
  Code.NOT_FOUND,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_ORDER,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REFERRAL,
  Code.REFERRAL_EXISTS,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_SIGNATURE,
  Code.INVALID_SIGNATURE,
  Code.DUPLICATE_NONCE,
  Code.INVALID_REQUEST,
  Code.NOT_FOUND,
  Code.EXPIRED,
  Code.INVALID_ORDER,
  Code.INVALID_SIGNATURE,
  Code.INVALID_SIGNATURE,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.INVALID_REQUEST,
  Code.NOT_FOUND,
  Code.INVALID_REQUEST,
];
if (REJECT_MESSAGES.length !== REJECT_CODES.length || REJECT_CODES.length !== Object.keys(Reject).length) {
  throw new Error('every reject reason needs one message and one code');
}

/** How long a referral shares the referred user's taker fees: 90 days (DECISIONS, "Referral"). */
export const REFERRAL_ACTIVE_MS = 90 * 24 * 3600 * 1000;
/** The referrer's share of each taker fee, in percent, floored (DECISIONS). */
export const REFERRAL_SHARE_PERCENT = 20;
/** A forced-inclusion entry is included at the latest this long after it was queued (DECISIONS). */
export const FORCE_INCLUSION_DEADLINE_MS = 24 * 3600 * 1000;
/** Dead-man switch timeouts (DECISIONS, "Dead-man switch"): 1 s to 24 h; 0 disarms. */
export const DEAD_MAN_TIMEOUT_MS_MIN = 1_000;
export const DEAD_MAN_TIMEOUT_MS_MAX = 86_400_000;
export function deadManTimeoutValid(timeout_ms: number): boolean {
  return timeout_ms === 0 || (timeout_ms >= DEAD_MAN_TIMEOUT_MS_MIN && timeout_ms <= DEAD_MAN_TIMEOUT_MS_MAX);
}
/** The request kinds a forced-inclusion payload may carry: the user-signed ones. */
export function forcibleKind(kind: number): boolean {
  return kind === RequestKind.PLACE || kind === RequestKind.CANCEL || kind === RequestKind.AMEND ||
    kind === RequestKind.CANCEL_ALL || kind === RequestKind.WITHDRAW || kind === RequestKind.REFER;
}

/** Parts per million in one (auto_cancel_ratio_ppm: the engine's unit for a ratio). */
export const PPM_ONE = 1_000_000;

/**
 * A ratio in (0, 1] as the wire and config write it -> the engine's parts per million. The one
 * conversion (config, the admin route); the answer converts back with ppmToRatio.
 */
export function ratioToPpm(ratio: number): number {
  return Math.round(ratio * PPM_ONE);
}

export function ppmToRatio(ppm: number): number {
  return ppm / PPM_ONE;
}

/** An order's status (a const enum: see Side). */
export const enum OrderStatus {
  OPEN = 0,
  PARTIALLY_FILLED = 1,
  FILLED = 2,
  CANCELLED = 3,
  REJECTED = 4,
}
export const ORDER_STATUS_NAMES = ['open', 'partially_filled', 'filled', 'cancelled', 'rejected'] as const;

/** Why an order update happened. */
export const enum UpdateReason {
  PLACED = 0,
  FILL = 1,
  USER_CANCEL = 2,
  CANCEL_ALL = 3,
  MARKET_PAUSED = 4,
  CREDIT_AUTO_CANCEL = 5,
  /** IOC or market remainder with no more liquidity; FOK that could not fill completely. */
  UNFILLED_REMAINDER = 6,
  /** A market bid stopped because the next fill would exceed the available quote balance. */
  INSUFFICIENT_BALANCE = 7,
  AMENDED = 8,
  /** The account's dead-man switch fell due (POST /orders/cancel-after). */
  DEAD_MAN_SWITCH = 9,
  /** The account's opted-in WebSocket connection closed (cancel_on_disconnect). */
  DISCONNECT = 10,
  /** Self-trade prevention cancelled the order (a maker, the taker's remainder, or both). */
  SELF_TRADE_PREVENTED = 11,
}
export const UPDATE_REASON_NAMES = [
  'placed', 'fill', 'user_cancel', 'cancel_all', 'market_paused', 'credit_auto_cancel',
  'unfilled_remainder', 'insufficient_balance', 'amended', 'dead_man_switch', 'disconnect', 'self_trade_prevented',
] as const;

/** Why a balance changed (the spec's balance_update reasons). */
export const enum BalanceReason {
  FILL = 0,
  ORDER_PLACED = 1,
  ORDER_CANCELLED = 2,
  DEPOSIT = 3,
  WITHDRAWAL = 4,
}
export const BALANCE_REASON_NAMES = ['fill', 'order_placed', 'order_cancelled', 'deposit', 'withdrawal'] as const;

/** A tuple's indexes, as strings ("0" | "1" | ...). */
type TupleIndexes<T extends readonly unknown[]> = Exclude<keyof T, keyof readonly unknown[]>;
/** true when a names tuple has one name at each value of the enum E, and no name at any other index. */
type NamedEachValue<T extends readonly unknown[], E extends number> =
  [TupleIndexes<T>] extends [`${E}`] ? ([`${E}`] extends [TupleIndexes<T>] ? true : false) : false;
type MustHold<T extends true> = T;
// The wire names are looked up by the value (ws/messages.ts; the const enums have no object to
// list at run time): a reason added without its name, or a name without its reason, fails tsc here.
export type UpdateReasonsNamed = MustHold<NamedEachValue<typeof UPDATE_REASON_NAMES, UpdateReason>>;
export type BalanceReasonsNamed = MustHold<NamedEachValue<typeof BALANCE_REASON_NAMES, BalanceReason>>;

/** The operator's fee account is always account 0. */
export const FEE_ACCOUNT = 0;
/** `market` value meaning "no market" (global fees, cancel-all across markets). */
export const NO_MARKET = -1;

/**
 * One request, already authenticated and decoded. A single mutable instance is reused by the
 * ring decoder and the benchmark replayer, so no request allocates. Unused fields are 0 / ''.
 */
export interface Request {
  kind: number;
  /** Account id (>= 1 for users; the fee account 0 never signs). */
  account: number;
  /**
   * Signed requests: strictly above the account's high-water mark. DEPOSIT: the settlement
   * contract's deposit id when the deposit comes from the chain (strictly above the engine's
   * chain deposit high-water mark), 0 for an admin deposit. Other unsigned requests: 0.
   */
  nonce: number;
  /** Market index, or NO_MARKET. */
  market: number;
  side: number;
  order_type: number;
  tif: number;
  price_units: number;
  quantity_units: number;
  /** Target of CANCEL / AMEND; 0 when client_order_id names the order. */
  order_id: number;
  /** PLACE: optional client id; CANCEL: alternative target. '' = none. */
  client_order_id: string;
  /** DEPOSIT / WITHDRAW: asset index and amount. ADD_MARKET: base asset index in `asset`, quote in `asset_quote`. */
  asset: number;
  asset_quote: number;
  amount_units: number;
  /** SET_FEES (market NO_MARKET = global). */
  maker_fee_bps: number;
  taker_fee_bps: number;
  /** SET_CREDIT: limit in quote units (0 removes tracking) and auto-cancel ratio in parts per million. */
  credit_limit_units: number;
  auto_cancel_ratio_ppm: number;
  /** ADD_MARKET: tick and lot sizes in units. */
  tick_size_units: number;
  lot_size_units: number;
  /** REFER: the referrer's account id (the matcher resolves its address; unknown = accounts_max). */
  referrer_account: number;
  /**
   * FORCE_INCLUDE: the payload's request. `nonce` and `account` are the envelope's; the payload's
   * own kind and nonce are here, its other fields in the fields above. `inner_reject` is the
   * front's verdict on the payload (Reject.NONE, or why its shape or signature is bad): the
   * engine records it at inclusion, so a bad payload is refused visibly, never dropped.
   */
  inner_kind: number;
  inner_nonce: number;
  inner_reject: number;
  /** PLACE: self-trade prevention mode (Stp; 0 = expire_maker, the default). */
  stp: number;
  /** PLACE: refused with EXPIRED when the batch time is later (epoch ms; 0 = no guard). */
  expires_after_ms: number;
  /**
   * Who signed: 0 = the user itself; else the account id of the agent key that signed for the user
   * (the matcher resolves the record's signer address; unknown = accounts_max, never an agent).
   * The engine re-checks at apply time that it is an approved, unexpired agent (src/engine/agents.ts).
   */
  signer: number;
  /** APPROVE_AGENT / REVOKE_AGENT: the agent's account id (the matcher resolves the second address). */
  agent_account: number;
}

export function emptyRequest(): Request {
  return {
    kind: 0, account: 0, nonce: 0, market: NO_MARKET, side: 0, order_type: 0, tif: 0,
    price_units: 0, quantity_units: 0, order_id: 0, client_order_id: '', asset: 0, asset_quote: 0,
    amount_units: 0, maker_fee_bps: 0, taker_fee_bps: 0, credit_limit_units: 0,
    auto_cancel_ratio_ppm: 0, tick_size_units: 0, lot_size_units: 0, referrer_account: 0,
    inner_kind: 0, inner_nonce: 0, inner_reject: 0, stp: 0, expires_after_ms: 0, signer: 0, agent_account: 0,
  };
}

/**
 * Where an engine writes the events of a request, in order. Implementations are allocation-free
 * writers into preallocated buffers (EventBuffer) or collectors used by tests.
 */
/** A market's parameters as the MARKET event announces them (EngineState.marketInfo). */
export interface MarketInfo {
  /** 0 active, 1 paused. */
  status: number;
  base_asset: number;
  quote_asset: number;
  tick_units: number;
  lot_units: number;
  /** 1 when the market has its own fees. */
  fee_override: number;
  /** The market's effective fees (its own or the global ones). */
  maker_fee_bps: number;
  taker_fee_bps: number;
}

export interface EventSink {
  /** First event of an accepted request. order_id is the new or target order (0 when none). */
  accepted(kind: number, account: number, order_id: number): void;
  /** The only event of a rejected request. */
  rejected(kind: number, account: number, code: number, reason: number): void;
  fill(
    fill_id: number, market: number, taker_order_id: number, maker_order_id: number,
    taker_account: number, maker_account: number, taker_side: number, price_units: number,
    quantity_units: number, taker_fee_units: number, maker_fee_units: number,
  ): void;
  /**
   * An order's new state. `last_fill_price_units` is its latest fill's price (0 before any);
   * `locked_units` what it holds locked now and `priority_seq` its time priority, both 0 once the
   * update closes it (filled, cancelled): the state root's open-order leaf commits to all three.
   */
  orderUpdate(
    order_id: number, account: number, market: number, side: number, status: number,
    price_units: number, quantity_units: number, filled_units: number, remaining_units: number,
    last_fill_price_units: number, reason: number, locked_units: number, priority_seq: number,
  ): void;
  balance(account: number, asset: number, available_units: number, locked_units: number, reason: number): void;
  /** After an accepted REFER: the relationship and the end of its fee sharing. */
  referral(referred: number, referrer: number, active_until_ms: number): void;
  /** After a fill whose taker has an active referral: the share moved from the fee account. */
  referralShare(fill_id: number, referred: number, referrer: number, asset: number, amount_units: number): void;
  /**
   * After an accepted FORCE_INCLUDE: the new inbox entry. `referrer_account` (the payload's
   * resolved referrer, 0 unless a REFER) and `reject` (the front's verdict) are the two payload
   * facts its ACCEPTED event does not carry; the state root commits to them (docs/verifiability.md).
   */
  inboxQueued(entry_id: number, account: number, kind: number, nonce: number, deadline_ms: number,
    referrer_account: number, reject: number): void;
  /**
   * An inbox entry leaves the inbox for execution; the events of its request follow (its own
   * accepted or rejected first). `request` is the payload's request, as the engine applies it.
   */
  inboxIncluded(entry_id: number, request: Request): void;
  /**
   * An agent entry of `account` changed (src/engine/agents.ts): after an accepted APPROVE_AGENT
   * (one per entry it pruned, then the approved one), REVOKE_AGENT, and every accepted request an
   * agent signed (its new nonce mark). `valid_until_ms` 0 = the entry is gone; `nonce_floor` is the
   * user's floor for new agents' nonce marks after the change.
   */
  agent(account: number, agent: number, valid_until_ms: number, nonce_high_water: number, nonce_floor: number, name: string): void;
}
