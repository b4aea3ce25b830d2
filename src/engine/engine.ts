// The fast engine: the deterministic state machine the matcher thread runs. Rules are in
// docs/engine.md; the reference engine (src/engine/reference/) is the same rules written plainly,
// and the differential tests hold the two to identical events and state.
//
// Hot-path discipline: no allocation per request in steady state (the taker lives in fields, not
// an object; events go straight to the sink), no bigint, no clock, no hash-order iteration.
// Unchecked money arithmetic: every number reaching it passed wellFormed (safe integers) and the
// sign checks of the request (src/money/muldiv.ts says why this matters).
import { notionalCeilUnchecked as notionalCeil_ } from '../money/index.js';
import type { CanonicalState, EngineConfig, MatchingEngine } from './api.js';
import { Link, OF, OI } from './book.js';
import { canonicalStateOf, copyEngineColumns, loadCanonical, type EngineColumns } from './canonical.js';
import { Books } from './engine_books.js';
import { Matching } from './engine_matching.js';
import { OrderRequests } from './engine_orders.js';
import { Programmes, type RequestApplier } from './engine_programmes.js';
import {
  EngineState, feesValid, MarketStatus, MAX_SAFE as MAX_SAFE_, reject as reject_,
} from './engine_state.js';
import { NO_MARKET as NO_MARKET_, RequestKind, type Request } from './types.js';
import { BalanceReason, UpdateReason, type EventSink, type MarketInfo } from './events.js';
import { Reject as Reject_, REJECT_CODES as REJECT_CODES_ } from './codes.js';
// Module-local copies of imported constants used on hot paths: an imported binding is a cell
// that optimized code loads and hole-checks at each use, a module-local const folds to its value
// (src/ring/event_writer.ts; docs/benchmarks.md, h16k).
const MAX_SAFE = MAX_SAFE_;
const NO_MARKET = NO_MARKET_;
const Reject = Reject_;
const REJECT_CODES = REJECT_CODES_;
// Imported functions of the hot paths too: a module-local const is a known target (no cell load, no check).
const notionalCeil = notionalCeil_;
const reject = reject_;

/** The configuration of FastEngine.shapes: two assets and one market (a book's sides exist per market). */
const SHAPES_CONFIG: EngineConfig = {
  assets: ['BASE', 'QUOTE'],
  markets: [{ id: 'BASE-QUOTE', base: 0, quote: 1, tick_size_units: 10_000, lot_size_units: 100 }],
  maker_fee_bps: 0,
  taker_fee_bps: 0,
  limits: {
    accounts_max: 16, markets_max: 1, orders_open_max: 16, orders_open_per_account_max: 16, price_levels_per_book_max: 16,
  },
};

export class FastEngine implements MatchingEngine, RequestApplier {
  // `declare`: typed by the constructor's first store, not undefined first (book.ts says why).
  /**
   * A small engine kept for the life of the process, so that the hidden classes (V8 maps) of an
   * engine's objects never die: they are reached from their classes only through weak links.
   * Once the last engine of a process was collected (a benchmark between contenders, a test
   * between cases), the optimized engine code was thrown away ("weak objects") and the next
   * engine ran on new maps with code re-optimized during its set-up: the matcher bench's fast
   * engine ran 2.2-2.4 M ops per CPU-second after another contender's run against 3.4-3.7 M alone
   * (docs/benchmarks.md, 2026-11-26). The server's matcher keeps its one engine; this makes every
   * other process behave like it. A static field: a module-level constant nobody reads is not kept.
   */
  private static readonly shapes: FastEngine = new FastEngine(SHAPES_CONFIG);
  // The engine's parts, each an object with its own job, all over the one state:
  private declare readonly st: EngineState;
  /** Linking, unlinking and cancelling resting orders; the walks the checks need. */
  private declare readonly books: Books;
  /** Referrals, forced inclusion, dead-man switches and batch start. */
  private declare readonly programmes: Programmes;
  /** One taker order against the book. */
  private declare readonly matching: Matching;
  /** Place, amend, cancel, cancel-all. */
  private declare readonly orders: OrderRequests;

  constructor(config: EngineConfig) {
    this.st = new EngineState(config);
    this.books = new Books(this.st);
    this.programmes = new Programmes(this.st, this.books, this);
    this.matching = new Matching(this.st, this.books, this.programmes);
    this.orders = new OrderRequests(this.st, this.books, this.matching);
  }

  apply(r: Request, out: EventSink): void {
    this.st.ledger.beginRequest();
    this.matching.had_fill = false;
    if (!wellFormed(r)) {
      // Out of contract (the ring decoder never produces it): refused before any other check, so
      // no rule below has to guard against fractions, NaN or values beyond 2^53.
      out.rejected(r.kind, r.account, REJECT_CODES[Reject.REQUEST_MALFORMED], Reject.REQUEST_MALFORMED);
      return;
    }
    if (isSigned(r.kind)) {
      // Every request a user (or an agent) signs starts with these checks; made here, once, not
      // as the first line of each handler: V8 inlines checkSigned into this function, and amend
      // (82% of the matcher bench), whose inlining budget it had exhausted, now inlines its
      // crossing test instead of calling it (docs/benchmarks.md, 2026-11-26, branch h15e).
      // Nothing was touched yet: nothing to flush.
      const reason = this.st.checkSigned(r);
      if (reason !== Reject.NONE) return reject(r, out, reason);
    }
    switch (r.kind) {
      case RequestKind.PLACE: this.orders.place(r, out); break;
      case RequestKind.AMEND: this.orders.amend(r, out); break;
      case RequestKind.CANCEL: this.orders.cancel(r, out); break;
      case RequestKind.CANCEL_ALL: this.orders.cancelAll(r, out); break;
      case RequestKind.DEPOSIT: this.deposit(r, out); break;
      case RequestKind.WITHDRAW: this.withdraw(r, out); break;
      case RequestKind.PAUSE_MARKET: this.pauseOrResume(r, out, true); break;
      case RequestKind.RESUME_MARKET: this.pauseOrResume(r, out, false); break;
      case RequestKind.SET_FEES: this.setFees(r, out); break;
      case RequestKind.SET_CREDIT: this.setCredit(r, out); break;
      case RequestKind.ADD_MARKET: this.addMarketRequest(r, out); break;
      case RequestKind.REFER: this.programmes.refer(r, out); break;
      case RequestKind.FORCE_INCLUDE: this.programmes.forceInclude(r, out); break;
      case RequestKind.CANCEL_AFTER: this.programmes.cancelAfter(r, out); break;
      case RequestKind.DISCONNECT_CANCEL: this.programmes.disconnectCancel(r, out); break;
      case RequestKind.APPROVE_AGENT: this.programmes.approveAgent(r, out); break;
      case RequestKind.REVOKE_AGENT: this.programmes.revokeAgent(r, out); break;
      default: reject(r, out, Reject.KIND_UNKNOWN); return;
    }
    if (this.matching.had_fill && this.st.credit.count > 0) this.books.creditSweep(out);
    this.st.ledger.flush(out);
  }

  // ---------------------------------------------------------------------------------------------
  // Requests

  private deposit(r: Request, out: EventSink): void {
    // Asset and amount before the account: the matcher registers a new address only for a
    // deposit that would be accepted (depositRejectReason), so its reason must come first.
    const reason = this.depositRejectReason(r.asset, r.amount_units, r.nonce);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    const account = r.account;
    if (!this.st.accountValid(account)) return reject(r, out, Reject.ACCOUNT_UNKNOWN);
    const asset = r.asset;
    const amount = r.amount_units;
    this.st.ledger.ensure(account);
    out.accepted(RequestKind.DEPOSIT, account, 0);
    if (r.nonce > 0) this.st.chain_deposit_high_water = r.nonce;
    this.st.ledger.touch(account, asset, BalanceReason.DEPOSIT);
    this.st.ledger.available[account * this.st.asset_count + asset] += amount;
    this.st.deposits[asset] += amount;
  }

  /**
   * The deposit checks that do not depend on the account (Reject.NONE when they pass).
   * `chain_deposit_id` > 0: an on-chain deposit, credited once (above the high-water mark).
   */
  depositRejectReason(asset: number, amount: number, chain_deposit_id: number): number {
    if (!(chain_deposit_id >= 0)) return Reject.REQUEST_MALFORMED;
    if (chain_deposit_id > 0 && !(chain_deposit_id > this.st.chain_deposit_high_water)) return Reject.NONCE_NOT_ABOVE_HIGH_WATER;
    if (!this.st.assetValid(asset)) return Reject.ASSET_UNKNOWN;
    if (!(amount > 0)) return Reject.AMOUNT_NOT_POSITIVE;
    // Lifetime deposits stay a safe integer; so then does the supply (deposits - withdrawals) and
    // every balance and sum of balances.
    if (this.st.deposits[asset] + amount > MAX_SAFE) return Reject.AMOUNT_TOO_LARGE;
    return Reject.NONE;
  }

  /** The credit-setting checks that do not depend on the account (Reject.NONE when they pass). */
  creditRejectReason(limit: number, ratio_ppm: number): number {
    if (!Number.isSafeInteger(limit) || limit < 0 || !Number.isSafeInteger(ratio_ppm) || ratio_ppm <= 0 || ratio_ppm > 1_000_000) {
      return Reject.CREDIT_INVALID;
    }
    return Reject.NONE;
  }

  /** A signed request: checkSigned passed (apply). */
  private withdraw(r: Request, out: EventSink): void {
    const account = r.account;
    const asset = r.asset;
    if (!this.st.assetValid(asset)) return reject(r, out, Reject.ASSET_UNKNOWN);
    const amount = r.amount_units;
    if (!(amount > 0)) return reject(r, out, Reject.AMOUNT_NOT_POSITIVE);
    const key = account * this.st.asset_count + asset;
    if (!(this.st.ledger.available[key] >= amount)) return reject(r, out, Reject.INSUFFICIENT_BALANCE);
    this.st.acceptSigned(r, 0, out);
    this.st.ledger.touch(account, asset, BalanceReason.WITHDRAWAL);
    this.st.ledger.available[key] -= amount;
    this.st.withdrawals[asset] += amount;
    // Nonces only grow per account, so appending keeps (account, nonce) order within an account;
    // insert to keep the whole list ascending by account.
    let i = this.st.pending_withdrawals.length;
    while (i > 0 && this.st.pending_withdrawals[i - 1].account > account) i--;
    this.st.pending_withdrawals.splice(i, 0, { account, nonce: r.nonce, asset, amount_units: amount });
  }

  private pauseOrResume(r: Request, out: EventSink, pause: boolean): void {
    const m = r.market;
    if (!this.st.marketValid(m)) return reject(r, out, Reject.MARKET_UNKNOWN);
    out.accepted(r.kind, r.account, 0);
    if (!pause) {
      this.st.market_status[m] = MarketStatus.ACTIVE;
      return;
    }
    if (this.st.market_status[m] === MarketStatus.PAUSED) return;
    this.st.market_status[m] = MarketStatus.PAUSED;
    this.books.cancelMarketOrders(m, UpdateReason.MARKET_PAUSED, out);
  }

  private setFees(r: Request, out: EventSink): void {
    const m = r.market;
    if (m !== NO_MARKET && !this.st.marketValid(m)) return reject(r, out, Reject.MARKET_UNKNOWN);
    if (!feesValid(r.maker_fee_bps, r.taker_fee_bps)) return reject(r, out, Reject.FEES_INVALID);
    out.accepted(RequestKind.SET_FEES, r.account, 0);
    if (m === NO_MARKET) {
      this.st.maker_bps_global = r.maker_fee_bps;
      this.st.taker_bps_global = r.taker_fee_bps;
    } else {
      this.st.market_fee_override[m] = 1;
      this.st.market_maker_bps[m] = r.maker_fee_bps;
      this.st.market_taker_bps[m] = r.taker_fee_bps;
    }
  }

  private setCredit(r: Request, out: EventSink): void {
    const limit = r.credit_limit_units;
    const ratio = r.auto_cancel_ratio_ppm;
    const reason = this.creditRejectReason(limit, ratio);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    const account = r.account;
    if (!this.st.accountValid(account)) return reject(r, out, Reject.ACCOUNT_UNKNOWN);
    this.st.ledger.ensure(account);
    out.accepted(RequestKind.SET_CREDIT, account, 0);
    if (limit === 0) {
      this.st.credit.remove(account);
      this.st.ledger.has_credit[account] = 0;
      return;
    }
    const entry = this.st.credit.set(account, limit, ratio);
    if (this.st.ledger.has_credit[account] === 0) {
      // Start tracking: count what the account already has resting.
      entry.rest_quantity.fill(0);
      entry.rest_value.fill(0);
      const o = this.st.orders;
      for (let s = this.st.ledger.order_head[account]; s !== Link.NIL; s = o.i[s * OI.STRIDE + OI.ACCT_NEXT]) {
        entry.rest_quantity[o.i[s * OI.STRIDE + OI.MARKET]] += o.f[s * OF.STRIDE + OF.REMAINING];
        entry.rest_value[o.i[s * OI.STRIDE + OI.MARKET]] += notionalCeil(o.f[s * OF.STRIDE + OF.PRICE], o.f[s * OF.STRIDE + OF.REMAINING]);
      }
      this.st.ledger.has_credit[account] = 1;
    }
  }

  private addMarketRequest(r: Request, out: EventSink): void {
    const reason = this.st.addMarket(r.asset, r.asset_quote, r.tick_size_units, r.lot_size_units);
    if (reason !== Reject.NONE) return reject(r, out, reason);
    out.accepted(RequestKind.ADD_MARKET, r.account, 0);
  }

  // ---------------------------------------------------------------------------------------------
  // Batch start and read-outs (the matcher's; rare)

  beginBatch(time_ms: number, out: EventSink): void {
    this.programmes.beginBatch(time_ms, out);
  }

  /** When the next batch must start even on an idle exchange (Programmes.nextDueMs). */
  nextDueMs(): number {
    return this.programmes.nextDueMs();
  }

  marketCount(): number {
    return this.st.market_count;
  }

  marketInfo(m: number): MarketInfo {
    return this.st.marketInfo(m);
  }

  globalFees(): [number, number] {
    return [this.st.maker_bps_global, this.st.taker_bps_global];
  }

  // ---------------------------------------------------------------------------------------------
  // Canonical state

  canonicalState(): CanonicalState {
    return canonicalStateOf(this.st);
  }

  /** Copies of the state's columns for a snapshot thread's walk (canonical.ts, copyEngineColumns; `kept`: reused). */
  copyColumns(kept: EngineColumns | null): EngineColumns {
    return copyEngineColumns(this.st, kept);
  }

  /** Loads a canonical state into this freshly constructed engine (canonical.ts, loadCanonical). */
  loadCanonical(state: CanonicalState): void {
    loadCanonical(this.st, this.books, state);
  }

}

/**
 * A fast engine in the state `state` (a snapshot): built with the state's markets in index order,
 * then loaded. Applying the same requests to it and to the engine the state was taken from gives
 * the same events and states (test/engine/restore.test.ts).
 */
export function restoreFastEngine(config: EngineConfig, state: CanonicalState): FastEngine {
  const markets = state.markets.map((m) => ({
    id: m.id, base: m.base, quote: m.quote, tick_size_units: m.tick_size_units, lot_size_units: m.lot_size_units,
  }));
  const engine = new FastEngine({ ...config, markets });
  engine.loadCanonical(state);
  return engine;
}

export function createFastEngine(config: EngineConfig): MatchingEngine {
  return new FastEngine(config);
}
const isSafe = Number.isSafeInteger;

/**
 * The kinds a user (or an agent) signs, one bit each (a const enum: tsc writes the number into the
 * code, no module variable to load).
 */
const enum Signed {
  KINDS = (1 << RequestKind.PLACE) | (1 << RequestKind.AMEND) | (1 << RequestKind.CANCEL) |
    (1 << RequestKind.CANCEL_ALL) | (1 << RequestKind.WITHDRAW) | (1 << RequestKind.REFER) |
    (1 << RequestKind.CANCEL_AFTER) | (1 << RequestKind.APPROVE_AGENT) | (1 << RequestKind.REVOKE_AGENT),
}

/**
 * Whether apply runs checkSigned before the kind's handler. A bit test, not nine comparisons: its
 * bytecode counts against apply's inlining budget, and at 62 bytes (with wellFormed's 431 and
 * flush's 237) it left checkSigned a call on every signed request (docs/benchmarks.md, h15k).
 */
function isSigned(kind: number): boolean {
  return kind >= 0 && kind < 31 && ((Signed.KINDS >> kind) & 1) === 1;
}

/** Every numeric field a safe integer (the engine's input contract; docs/engine.md). */
function wellFormed(r: Request): boolean {
  return isSafe(r.kind) && isSafe(r.account) && isSafe(r.nonce) && isSafe(r.market) && isSafe(r.side) &&
    isSafe(r.order_type) && isSafe(r.tif) && isSafe(r.price_units) && isSafe(r.quantity_units) &&
    isSafe(r.order_id) && isSafe(r.asset) && isSafe(r.asset_quote) && isSafe(r.amount_units) &&
    isSafe(r.maker_fee_bps) && isSafe(r.taker_fee_bps) && isSafe(r.credit_limit_units) &&
    isSafe(r.auto_cancel_ratio_ppm) && isSafe(r.tick_size_units) && isSafe(r.lot_size_units) &&
    isSafe(r.referrer_account) && isSafe(r.inner_kind) && isSafe(r.inner_nonce) && isSafe(r.inner_reject) &&
    isSafe(r.stp) && isSafe(r.expires_after_ms) && isSafe(r.signer) && isSafe(r.agent_account);
}

