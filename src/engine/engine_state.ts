// The fast engine's state: markets, the ledger, the order and level pools, credit, the programme
// tables and the counters, with the checks and balance moves that only read or write this state.
// The engine is composed of parts that each hold this one object (engine.ts says which part does
// what): the books (engine_books.ts), the programmes (engine_programmes.ts), the matching of a
// taker (engine_matching.ts). Fields are public to those parts; nothing outside src/engine/ sees
// them (the engine's interface is MatchingEngine and the read-outs on FastEngine).
// Unchecked money arithmetic on validated inputs (engine.ts says why), except in addMarket,
// which takes configuration and admin input.
import {
  MONEY_OVERFLOW, Scale, feeCeilUnchecked as feeCeil, notionalCeil as notionalCeilChecked, notionalCeilUnchecked as notionalCeil,
  notionalFloor,
} from '../money/index.js';
import {
  INBOX_ENTRIES_MAX_DEFAULT, INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT, type EngineConfig, type EngineLimits,
} from './api.js';
import { BookSide, LevelStore, OrderStore } from './book.js';
import { CreditTable } from './credit.js';
import { Ledger } from './ledger.js';
import { DeadManTable, ForcedInbox, ReferralTable } from './programmes.js';
import { AGENTS_LIVE_MAX, AgentTable } from './agents.js';
import type { Request } from './types.js';
import { FORCE_INCLUSION_DEADLINE_MS } from './rules.js';
import { Reject as Reject_, REJECT_CODES as REJECT_CODES_ } from './codes.js';
import type { EventSink, MarketInfo } from './events.js';
// Module-local copies of imported constants used on hot paths: an imported binding is a cell
// that optimized code loads and hole-checks at each use, a module-local const folds to its value
// (src/ring/event_writer.ts; docs/benchmarks.md, h16k).
const Reject = Reject_;
const REJECT_CODES = REJECT_CODES_;

export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
/** A market's status (a const enum: tsc writes the number into the code; types.ts, Side, says why). */
export const enum MarketStatus { ACTIVE = 0, PAUSED = 1 }
const BPS_MAX = 10_000;

export interface PendingWithdrawal {
  account: number;
  nonce: number;
  asset: number;
  amount_units: number;
}

export class EngineState {
  // `declare`: typed by the constructor's first store, not undefined first (book.ts says why).
  declare readonly limits: EngineLimits;
  /**
   * limits.accounts_max in a field of its own: accountValid runs on every signed request (inlined
   * into FastEngine.apply), and `limits` is a copy of the configuration's object, whose shape
   * differs with the optional limits it names: a map check and a second load per request.
   */
  declare readonly accounts_max: number;
  /** limits.price_levels_per_book_max, a field of its own as accounts_max: AMEND's move and a resting PLACE read it. */
  declare readonly price_levels_max: number;
  declare readonly assets: string[];
  declare readonly asset_count: number;
  declare readonly ledger: Ledger;
  declare readonly orders: OrderStore;
  declare readonly levels: LevelStore;
  declare readonly credit: CreditTable;

  // Markets, as parallel arrays sized markets_max.
  market_count = 0;
  readonly market_id: string[] = [];
  declare readonly market_base: Int32Array;
  declare readonly market_quote: Int32Array;
  declare readonly market_tick: Float64Array;
  declare readonly market_lot: Float64Array;
  declare readonly market_status: Uint8Array;
  declare readonly market_fee_override: Uint8Array;
  declare readonly market_maker_bps: Int32Array;
  declare readonly market_taker_bps: Int32Array;
  declare readonly market_mark: Float64Array;
  /**
   * The book sides, market m's bids at `2 * m + Side.BID` and its asks at `2 * m + Side.ASK`
   * (bookSide): one array, so that a side and its opposite are one field load and an index
   * (`side ^ 1`), not a choice between two arrays' loads (AMEND reads both).
   */
  readonly sides: BookSide[] = [];

  declare maker_bps_global: number;
  declare taker_bps_global: number;
  declare readonly deposits: Float64Array;
  declare readonly withdrawals: Float64Array;
  next_order_id = 1;
  next_fill_id = 1;
  next_priority_seq = 1;
  /** Pending withdrawals, kept ascending by (account, nonce); rare, so plain objects. */
  readonly pending_withdrawals: PendingWithdrawal[] = [];
  declare readonly referrals: ReferralTable;
  readonly inbox = new ForcedInbox();
  /** Account -> its last force-include envelope nonce (accounts that sent one). */
  readonly envelope_high_water = new Map<number, number>();
  readonly dead_man = new DeadManTable();
  declare readonly agents: AgentTable;
  declare readonly inbox_entries_max: number;
  declare readonly inbox_entries_per_account_max: number;
  declare readonly force_inclusion_hold_ms: number;
  /** The current batch's time (beginBatch); 0 until the first batch. */
  batch_time_ms = 0;
  /** The last on-chain deposit id credited (CanonicalState.chain_deposit_high_water). */
  chain_deposit_high_water = 0;

  // Effective fees of the market being matched (loadFees).
  fee_maker_bps = 0;
  fee_taker_bps = 0;

  constructor(config: EngineConfig) {
    this.limits = { ...config.limits };
    this.accounts_max = this.limits.accounts_max;
    this.price_levels_max = this.limits.price_levels_per_book_max;
    this.assets = config.assets.slice();
    this.asset_count = this.assets.length;
    assert(this.asset_count > 0, 'at least one asset');
    assert(feesValid(config.maker_fee_bps, config.taker_fee_bps), 'configured fees are valid');
    const mmax = this.limits.markets_max;
    this.market_base = new Int32Array(mmax);
    this.market_quote = new Int32Array(mmax);
    this.market_tick = new Float64Array(mmax);
    this.market_lot = new Float64Array(mmax);
    this.market_status = new Uint8Array(mmax);
    this.market_fee_override = new Uint8Array(mmax);
    this.market_maker_bps = new Int32Array(mmax);
    this.market_taker_bps = new Int32Array(mmax);
    this.market_mark = new Float64Array(mmax);
    this.maker_bps_global = config.maker_fee_bps;
    this.taker_bps_global = config.taker_fee_bps;
    this.deposits = new Float64Array(this.asset_count);
    this.withdrawals = new Float64Array(this.asset_count);
    this.ledger = new Ledger(this.asset_count, this.limits.accounts_max, 1024);
    this.orders = new OrderStore(Math.min(this.limits.orders_open_max, 1 << 16), this.limits.orders_open_max);
    this.levels = new LevelStore(1024);
    this.credit = new CreditTable(mmax);
    this.referrals = new ReferralTable(this.asset_count);
    this.inbox_entries_max = this.limits.inbox_entries_max ?? INBOX_ENTRIES_MAX_DEFAULT;
    this.inbox_entries_per_account_max = this.limits.inbox_entries_per_account_max ?? INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT;
    this.agents = new AgentTable(this.limits.agents_live_per_account_max ?? AGENTS_LIVE_MAX);
    this.force_inclusion_hold_ms = config.force_inclusion_hold_ms ?? 0;
    assert(Number.isSafeInteger(this.force_inclusion_hold_ms) && this.force_inclusion_hold_ms >= 0 &&
      this.force_inclusion_hold_ms < FORCE_INCLUSION_DEADLINE_MS, 'force_inclusion_hold_ms is in [0, 24 h)');
    for (const m of config.markets) {
      const reason = this.addMarket(m.base, m.quote, m.tick_size_units, m.lot_size_units);
      assert(reason === Reject.NONE, `configured market ${m.id} is valid`);
      assert(this.market_id[this.market_count - 1] === m.id, `market id ${m.id} is BASE-QUOTE`);
    }
  }

  addMarket(base: number, quote: number, tick: number, lot: number): number {
    if (!this.assetValid(base) || !this.assetValid(quote) || base === quote) return Reject.ASSET_UNKNOWN;
    if (!Number.isSafeInteger(tick) || !Number.isSafeInteger(lot) || tick <= 0 || lot <= 0) return Reject.MARKET_INVALID;
    // tick x lot a multiple of 1e6 makes every fill notional an exact integer (docs/engine.md).
    const n = notionalFloor(tick, lot);
    if (n === MONEY_OVERFLOW || n !== notionalCeilChecked(tick, lot)) return Reject.MARKET_INVALID;
    for (let i = 0; i < this.market_count; i++) {
      if (this.market_base[i] === base && this.market_quote[i] === quote) return Reject.MARKET_EXISTS;
    }
    if (this.market_count >= this.limits.markets_max) return Reject.MARKETS_MAX;
    const m = this.market_count++;
    this.market_id.push(`${this.assets[base]}-${this.assets[quote]}`);
    this.market_base[m] = base;
    this.market_quote[m] = quote;
    this.market_tick[m] = tick;
    this.market_lot[m] = lot;
    this.market_status[m] = MarketStatus.ACTIVE;
    this.sides.push(new BookSide(true, 64), new BookSide(false, 64));
    return Reject.NONE;
  }

  /**
   * Market m's book side `side` (Side.BID or Side.ASK). A method, not the index written at each
   * site: its bytecode is under V8's small-function size, inlined without counting against the
   * caller's budget (written out, place's callers shrank and V8 compiled them in another order:
   * placeAccepted lost restPlaced's inlining, +2.0 engine JS per row; docs/benchmarks.md, h19f).
   */
  bookSide(m: number, side: number): BookSide {
    return this.sides[(2 * m + side) | 0];
  }

  // ---------------------------------------------------------------------------------------------
  // Checks

  /** The signed-request checks every user request starts with (Reject.NONE when they pass). */
  checkSigned(r: Request): number {
    const account = r.account;
    if (!this.accountValid(account)) return Reject.ACCOUNT_UNKNOWN;
    // Ledger.ensure written out: its call of admit would carry the feedback of every caller
    // (deposits admit accounts all the time), V8 would inline admit here, and this function
    // would grow too big to be inlined into FastEngine.apply (docs/benchmarks.md, h15e).
    const L = this.ledger;
    if (account >= L.account_high) L.admit(account);
    if (r.signer !== 0) return this.checkAgentSigned(r);
    if (!(r.nonce > L.nonce_high_water[account])) return Reject.NONCE_NOT_ABOVE_HIGH_WATER;
    return Reject.NONE;
  }

  /**
   * An agent's signature: judged against the agents live at this batch's time, its own mark. A
   * call of its own (rare): its five arguments were ~15 bytes of checkSigned's bytecode, which
   * counts against FastEngine.apply's inlining budget (docs/benchmarks.md, h17e).
   */
  private checkAgentSigned(r: Request): number {
    return this.agents.checkSigner(r.account, r.signer, r.kind, r.nonce, this.batch_time_ms);
  }

  /** A signed request is accepted: its signer's nonce mark moves, then its ACCEPTED (and an agent's AGENT event). */
  acceptSigned(r: Request, order_id: number, out: EventSink): void {
    if (r.signer !== 0) return this.acceptAgentSigned(r, order_id, out);
    this.ledger.nonce_high_water[r.account] = r.nonce;
    out.accepted(r.kind, r.account, order_id);
  }

  /**
   * An agent's request accepted: its ACCEPTED, then the agent's nonce mark and AGENT event. A
   * call of its own (rare): acceptSigned is inlined into amend, and its bytecode counts against
   * amend's inlining budget (docs/benchmarks.md, h17e).
   */
  private acceptAgentSigned(r: Request, order_id: number, out: EventSink): void {
    out.accepted(r.kind, r.account, order_id);
    this.agents.markNonce(r.account, r.signer, r.nonce, out);
  }

  accountValid(account: number): boolean {
    return (account | 0) === account && account >= 1 && account < this.accounts_max;
  }

  assetValid(asset: number): boolean {
    return (asset | 0) === asset && asset >= 0 && asset < this.asset_count;
  }

  marketValid(m: number): boolean {
    return (m | 0) === m && m >= 0 && m < this.market_count;
  }

  // ---------------------------------------------------------------------------------------------
  // Fees and balances

  loadFees(m: number): void {
    // A truth test of the 0/1 byte, not `=== 1`: 5 bytes less of amend's inlining budget, which
    // has ~10 to spare with Books.unlinkLevel in it (docs/benchmarks.md, h17e).
    if (this.market_fee_override[m]) {
      this.fee_maker_bps = this.market_maker_bps[m];
      this.fee_taker_bps = this.market_taker_bps[m];
    } else {
      this.fee_maker_bps = this.maker_bps_global;
      this.fee_taker_bps = this.taker_bps_global;
    }
  }

  /**
   * notionalCeil(p, q) + its worst-case (taker) fee, or MONEY_OVERFLOW. Needs loadFees. The
   * products within 2^53 (every order of the bench flows) written out, the rest in bidLockWide:
   * V8 inlines this into amend, and with notionalCeil and feeCeil inlined into it (their wide
   * paths' calls included) it took 212 bytes of amend's inlining budget, which left the
   * unlinking of a moved order a call (docs/benchmarks.md, h17e).
   */
  bidLock(p: number, q: number): number {
    const pq = p * q;
    const n = Math.ceil(pq / Scale.UNITS_PER_WHOLE);
    const nf = n * this.fee_taker_bps;
    // A double product <= 2^53 - 1 is exact, and Math.ceil of its quotient then is (muldiv.ts);
    // n and nf are used only then. No overflow test of the sum: n <= 2^53 / 1e6 and the fee
    // <= 2^53 / 1e4, so n + fee < 2^50.
    // 2^53 - 1 (Number.MAX_SAFE_INTEGER) as a literal: one constant load in the bytecode, not a
    // global's property read twice (amend's inlining budget again).
    if (pq > 9_007_199_254_740_991 || nf > 9_007_199_254_740_991) return this.bidLockWide(p, q);
    return n + Math.ceil(nf / Scale.BPS_PER_WHOLE);
  }

  /** bidLock for products beyond 2^53: the exact wide arithmetic (money/muldiv.ts). */
  private bidLockWide(p: number, q: number): number {
    const n = notionalCeil(p, q);
    // Scale's constant and Number.MAX_SAFE_INTEGER (folded by V8), not module variables (money/fixed.ts says why).
    if (n === Scale.MONEY_OVERFLOW) return Scale.MONEY_OVERFLOW;
    const fee = feeCeil(n, this.fee_taker_bps);
    if (fee === Scale.MONEY_OVERFLOW || n + fee > Number.MAX_SAFE_INTEGER) return Scale.MONEY_OVERFLOW;
    return n + fee;
  }

  /** Notional + taker fee of one market-bid fill of `q` at `price`. Needs loadFees. */
  marketBidFillCost(price: number, q: number): number {
    const n = notionalCeil(price, q);
    return n + feeCeil(n, this.fee_taker_bps);
  }

  moveToLocked(account: number, asset: number, amount: number, reason: number): void {
    const key = account * this.asset_count + asset;
    this.ledger.touch(account, asset, reason);
    this.ledger.available[key] -= amount;
    this.ledger.locked[key] += amount;
  }

  releaseLock(account: number, asset: number, amount: number, reason: number): void {
    const key = account * this.asset_count + asset;
    this.ledger.touch(account, asset, reason);
    this.ledger.locked[key] -= amount;
    this.ledger.available[key] += amount;
  }

  // ---------------------------------------------------------------------------------------------
  // Read-outs for the matcher's side events (rare: startup and admin requests)

  /** [status (0 active, 1 paused), base, quote, tick, lot, fee_override, maker_bps, taker_bps] */
  marketInfo(m: number): MarketInfo {
    this.loadFees(m);
    return {
      status: this.market_status[m], base_asset: this.market_base[m], quote_asset: this.market_quote[m],
      tick_units: this.market_tick[m], lot_units: this.market_lot[m], fee_override: this.market_fee_override[m],
      maker_fee_bps: this.fee_maker_bps, taker_fee_bps: this.fee_taker_bps,
    };
  }
}

/** Writes the refusal of `r` with `reason` (a Reject index). */
export function reject(r: Request, out: EventSink, reason: number): void {
  out.rejected(r.kind, r.account, REJECT_CODES[reason], reason);
}

export function feesValid(maker: number, taker: number): boolean {
  return Number.isSafeInteger(maker) && Number.isSafeInteger(taker) && maker >= -BPS_MAX &&
    taker <= BPS_MAX && Math.abs(maker) <= taker;
}

export function assert(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`engine assertion failed: ${what}`);
}
