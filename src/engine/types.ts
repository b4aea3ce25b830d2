// The engine's request vocabulary: request kinds, an order's side, type, time in force,
// self-trade prevention and status, and the Request record itself. Both the fast engine
// (src/engine/engine.ts) and the reference engine (src/engine/reference/) speak exactly this, so
// the differential tests can compare them event by event. Everything is a small integer so that
// requests and events can later be laid out as fixed-size ring records without translation.
// The answer codes are in codes.ts, the rules' numbers in rules.ts, the events in events.ts.

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

/** An order's status (a const enum: see Side). */
export const enum OrderStatus {
  OPEN = 0,
  PARTIALLY_FILLED = 1,
  FILLED = 2,
  CANCELLED = 3,
  REJECTED = 4,
}
export const ORDER_STATUS_NAMES = ['open', 'partially_filled', 'filled', 'cancelled', 'rejected'] as const;

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
 * What an order keeps for its whole life (an amend changes its price and quantity only): the
 * fields every record of an order starts with, the reference engine's (reference_values.ts
 * RefOrder, in bigints) and OrderProgress's.
 */
export interface OrderFixedTerms {
  order_id: number;
  account: number;
  market: number;
  side: number;
  order_type: number;
  tif: number;
}

/**
 * An order's terms and fill progress as a PLACE request and the order's updates tell them, in
 * units (price 0 for market orders): the one field list both trackers of orders built from the
 * event stream share, the event invariants' (event_invariants.ts) and the read model's
 * (read_model/views.ts OrderView), each adding what it alone follows.
 */
export interface OrderProgress extends OrderFixedTerms {
  price: number;
  quantity: number;
  /** Sum of the order's fills. */
  filled: number;
  remaining: number;
}
