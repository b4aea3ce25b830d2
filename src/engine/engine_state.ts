// The fast engine's state and the mechanics that keep it consistent: markets, the ledger, the
// order store and books, credit, and the helpers every request handler shares; plus the
// canonical state. The request handlers and the matching loop are in engine.ts (FastEngine).
// Unchecked money arithmetic on validated inputs (engine.ts says why), except in addMarket,
// which takes configuration and admin input.
import {
  MONEY_OVERFLOW, feeCeilUnchecked as feeCeil, notionalCeil as notionalCeilChecked, notionalCeilUnchecked as notionalCeil,
  notionalFloor,
} from '../money/index.js';
import {
  INBOX_ENTRIES_MAX_DEFAULT, INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT,
  type CanonicalAccount, type CanonicalMarket, type CanonicalOrder, type CanonicalState,
  type EngineConfig, type EngineLimits,
} from './api.js';
import { BookSide, LevelStore, NIL, OrderStore } from './book.js';
import { CreditTable } from './credit.js';
import { Ledger } from './ledger.js';
import { DeadManTable, ForcedInbox, ReferralTable } from './programmes.js';
import { AGENTS_LIVE_MAX, AgentTable } from './agents.js';
import {
  BalanceReason, FEE_ACCOUNT, FORCE_INCLUSION_DEADLINE_MS, NO_MARKET, OrderStatus, Reject, REJECT_CODES, Side, Stp, UpdateReason,
  type EventSink, type MarketInfo, type Request,
} from './types.js';

export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
export const MARKET_ACTIVE = 0;
export const MARKET_PAUSED = 1;
const BPS_MAX = 10_000;

export abstract class EngineState {
  protected readonly limits: EngineLimits;
  protected readonly assets: string[];
  protected readonly asset_count: number;
  protected readonly ledger: Ledger;
  protected readonly orders: OrderStore;
  protected readonly levels: LevelStore;
  protected readonly credit: CreditTable;

  // Markets, as parallel arrays sized markets_max.
  protected market_count = 0;
  protected readonly market_id: string[] = [];
  protected readonly market_base: Int32Array;
  protected readonly market_quote: Int32Array;
  protected readonly market_tick: Float64Array;
  protected readonly market_lot: Float64Array;
  protected readonly market_status: Uint8Array;
  protected readonly market_fee_override: Uint8Array;
  protected readonly market_maker_bps: Int32Array;
  protected readonly market_taker_bps: Int32Array;
  protected readonly market_mark: Float64Array;
  protected readonly bids: BookSide[] = [];
  protected readonly asks: BookSide[] = [];

  protected maker_bps_global: number;
  protected taker_bps_global: number;
  protected readonly deposits: Float64Array;
  protected readonly withdrawals: Float64Array;
  protected next_order_id = 1;
  protected next_fill_id = 1;
  protected next_priority_seq = 1;
  /** Pending withdrawals, kept ascending by (account, nonce); rare, so plain objects. */
  protected readonly pending_withdrawals: { account: number; nonce: number; asset: number; amount_units: number }[] = [];
  protected readonly scratch_slots: number[] = [];
  protected readonly referrals: ReferralTable;
  protected readonly inbox = new ForcedInbox();
  /** Account -> its last force-include envelope nonce (accounts that sent one). */
  protected readonly envelope_high_water = new Map<number, number>();
  protected readonly dead_man = new DeadManTable();
  protected readonly agents: AgentTable;
  protected readonly inbox_entries_max: number;
  protected readonly inbox_entries_per_account_max: number;
  protected readonly force_inclusion_hold_ms: number;
  /** The current batch's time (beginBatch); 0 until the first batch. */
  protected batch_time_ms = 0;
  /** The last on-chain deposit id credited (CanonicalState.chain_deposit_high_water). */
  protected chain_deposit_high_water = 0;

  // Effective fees of the market being matched.
  protected fee_maker_bps = 0;
  protected fee_taker_bps = 0;

  constructor(config: EngineConfig) {
    this.limits = { ...config.limits };
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

  protected addMarket(base: number, quote: number, tick: number, lot: number): number {
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
    this.market_status[m] = MARKET_ACTIVE;
    this.bids.push(new BookSide(true, 64));
    this.asks.push(new BookSide(false, 64));
    return Reject.NONE;
  }

  /** Appends a slot (price, remaining set) at the tail of its price level, creating the level. */
  protected linkLevel(s: number): void {
    const o = this.orders;
    const m = o.market[s];
    const price = o.price[s];
    const side = o.side[s] === Side.BID ? this.bids[m] : this.asks[m];
    const i = side.find(price);
    let lvl: number;
    if (i >= 0) {
      lvl = side.levels[i];
    } else {
      lvl = this.levels.alloc(price);
      side.insertAt(-i - 1, lvl, price);
    }
    const levels = this.levels;
    o.level[s] = lvl;
    o.next[s] = NIL;
    o.prev[s] = levels.tail[lvl];
    if (levels.tail[lvl] === NIL) levels.head[lvl] = s;
    else o.next[levels.tail[lvl]] = s;
    levels.tail[lvl] = s;
    const remaining = o.remaining[s];
    levels.quantity[lvl] += remaining;
    const account = o.account[s];
    if (this.ledger.has_credit[account] === 1) {
      this.credit.onRestChange(account, m, remaining, notionalCeil(price, remaining));
    }
  }

  /** Takes a resting order out of its price level (removing the level when it empties). */
  protected unlinkLevel(s: number): void {
    const o = this.orders;
    const levels = this.levels;
    const lvl = o.level[s];
    const prev = o.prev[s];
    const next = o.next[s];
    if (prev === NIL) levels.head[lvl] = next;
    else o.next[prev] = next;
    if (next === NIL) levels.tail[lvl] = prev;
    else o.prev[next] = prev;
    levels.quantity[lvl] -= o.remaining[s];
    if (levels.head[lvl] === NIL) {
      const m = o.market[s];
      const side = o.side[s] === Side.BID ? this.bids[m] : this.asks[m];
      const i = side.count > 0 && side.levels[side.count - 1] === lvl ? side.count - 1 : side.find(levels.price[lvl]);
      assert(i >= 0 && side.levels[i] === lvl, 'a resting order belongs to a level of its side');
      side.removeAt(i);
      levels.release(lvl);
    }
    const account = o.account[s];
    if (this.ledger.has_credit[account] === 1 && o.remaining[s] > 0) {
      this.credit.onRestChange(account, o.market[s], -o.remaining[s], -notionalCeil(o.price[s], o.remaining[s]));
    }
  }

  /** Drops an order (already out of its level) from its account, the indexes, and frees its slot. */
  protected forget(s: number): void {
    const o = this.orders;
    const account = o.account[s];
    const L = this.ledger;
    const ap = o.acct_prev[s];
    const an = o.acct_next[s];
    if (ap === NIL) L.order_head[account] = an;
    else o.acct_next[ap] = an;
    if (an !== NIL) o.acct_prev[an] = ap;
    L.open_orders[account]--;
    if (o.client_order_id[s] !== '') o.slot_by_client_id.remove(s);
    o.release(s);
  }

  /** Unlinks a resting order from its level, its account and the indexes, and frees its slot. */
  protected removeResting(s: number): void {
    this.unlinkLevel(s);
    this.forget(s);
  }

  protected cancelResting(s: number, reason: number, out: EventSink): void {
    const o = this.orders;
    const m = o.market[s];
    const account = o.account[s];
    const lock_asset = o.side[s] === Side.BID ? this.market_quote[m] : this.market_base[m];
    if (o.locked[s] > 0) this.releaseLock(account, lock_asset, o.locked[s], BalanceReason.ORDER_CANCELLED);
    out.orderUpdate(o.id[s], account, m, o.side[s], OrderStatus.CANCELLED, o.price[s], o.quantity[s],
      o.filled[s], 0, o.last_fill_price[s], reason, 0, 0);
    this.removeResting(s);
  }

  protected cancelAccountOrders(account: number, market: number, reason: number, out: EventSink): void {
    const slots = this.scratch_slots;
    slots.length = 0;
    const o = this.orders;
    for (let s = this.ledger.order_head[account]; s !== NIL; s = o.acct_next[s]) {
      if (market === NO_MARKET || o.market[s] === market) slots.push(s);
    }
    this.cancelSlotsById(slots, reason, out);
  }

  /** Cancels the given slots in ascending order id (the documented, replayable order). */
  protected cancelSlotsById(slots: number[], reason: number, out: EventSink): void {
    const ids = this.orders.id;
    slots.sort((x, y) => ids[x] - ids[y]);
    for (let i = 0; i < slots.length; i++) this.cancelResting(slots[i], reason, out);
    slots.length = 0;
  }

  protected creditSweep(out: EventSink): void {
    const accounts = this.credit.accounts_ascending;
    for (let i = 0; i < accounts.length; i++) {
      const account = accounts[i];
      if (this.ledger.order_head[account] === NIL) continue;
      const entry = this.credit.get(account);
      if (this.quotedValue(entry.rest_quantity, entry.rest_value) > entry.threshold_units) {
        this.cancelAccountOrders(account, NO_MARKET, UpdateReason.CREDIT_AUTO_CANCEL, out);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers

  protected reject(r: Request, out: EventSink, reason: number): void {
    out.rejected(r.kind, r.account, REJECT_CODES[reason], reason);
  }

  protected checkSigned(r: Request): number {
    const account = r.account;
    if (!this.accountValid(account)) return Reject.ACCOUNT_UNKNOWN;
    this.ledger.ensure(account);
    // An agent's signature: judged against the agents live at this batch's time, its own mark.
    if (r.signer !== 0) return this.agents.checkSigner(account, r.signer, r.kind, r.nonce, this.batch_time_ms);
    if (!(r.nonce > this.ledger.nonce_high_water[account])) return Reject.NONCE_NOT_ABOVE_HIGH_WATER;
    return Reject.NONE;
  }

  /** A signed request is accepted: its signer's nonce mark moves, then its ACCEPTED (and an agent's AGENT event). */
  protected acceptSigned(r: Request, order_id: number, out: EventSink): void {
    if (r.signer === 0) this.ledger.nonce_high_water[r.account] = r.nonce;
    out.accepted(r.kind, r.account, order_id);
    if (r.signer !== 0) this.agents.markNonce(r.account, r.signer, r.nonce, out);
  }

  protected accountValid(account: number): boolean {
    return (account | 0) === account && account >= 1 && account < this.limits.accounts_max;
  }

  protected assetValid(asset: number): boolean {
    return (asset | 0) === asset && asset >= 0 && asset < this.asset_count;
  }

  protected marketValid(m: number): boolean {
    return (m | 0) === m && m >= 0 && m < this.market_count;
  }

  protected loadFees(m: number): void {
    if (this.market_fee_override[m] === 1) {
      this.fee_maker_bps = this.market_maker_bps[m];
      this.fee_taker_bps = this.market_taker_bps[m];
    } else {
      this.fee_maker_bps = this.maker_bps_global;
      this.fee_taker_bps = this.taker_bps_global;
    }
  }

  /** notionalCeil(p, q) + its worst-case (taker) fee, or MONEY_OVERFLOW. Needs loadFees. */
  protected bidLock(p: number, q: number): number {
    const n = notionalCeil(p, q);
    if (n === MONEY_OVERFLOW) return MONEY_OVERFLOW;
    const fee = feeCeil(n, this.fee_taker_bps);
    if (fee === MONEY_OVERFLOW || n + fee > MAX_SAFE) return MONEY_OVERFLOW;
    return n + fee;
  }

  protected crosses(opposite: BookSide, side: number, p: number): boolean {
    const best = opposite.best();
    if (best === NIL) return false;
    const bp = this.levels.price[best];
    return side === Side.BID ? p >= bp : p <= bp;
  }

  /**
   * Resting quantity on `book` a taker of `account` could fill, counted up to `enough`. Under
   * self-trade prevention the account's own orders are never filled: expire_maker skips them (they
   * would be cancelled and matching goes on), expire_taker / expire_both stop at the first one.
   * Only FOK orders ask (rare), so the walk goes order by order.
   */
  protected liquidity(book: BookSide, limited: boolean, side: number, limit: number, enough: number, account: number, stp: number): number {
    let total = 0;
    const o = this.orders;
    for (let i = book.count - 1; i >= 0 && total < enough; i--) {
      const lvl = book.levels[i];
      const price = this.levels.price[lvl];
      if (limited && (side === Side.BID ? price > limit : price < limit)) break;
      for (let s = this.levels.head[lvl]; s !== NIL && total < enough; s = o.next[s]) {
        if (o.account[s] === account) {
          if (stp !== Stp.EXPIRE_MAKER) return total;
          continue;
        }
        total += o.remaining[s];
      }
    }
    return total;
  }

  /** Notional + taker fee of one market-bid fill of `q` at `price`. Needs loadFees. */
  protected marketBidFillCost(price: number, q: number): number {
    const n = notionalCeil(price, q);
    return n + feeCeil(n, this.fee_taker_bps);
  }

  /** What a market bid for `q` by `account` would pay over the fills it would make (own orders as in liquidity). Needs loadFees. */
  protected marketBidCost(book: BookSide, q: number, account: number): number {
    let left = q;
    let cost = 0;
    const o = this.orders;
    for (let i = book.count - 1; i >= 0 && left > 0; i--) {
      const lvl = book.levels[i];
      const price = this.levels.price[lvl];
      for (let s = this.levels.head[lvl]; s !== NIL && left > 0; s = o.next[s]) {
        if (o.account[s] === account) continue;
        const take = left < o.remaining[s] ? left : o.remaining[s];
        cost += this.marketBidFillCost(price, take);
        left -= take;
      }
    }
    return cost;
  }

  protected moveToLocked(account: number, asset: number, amount: number, reason: number): void {
    const key = account * this.asset_count + asset;
    this.ledger.touch(account, asset, reason);
    this.ledger.available[key] -= amount;
    this.ledger.locked[key] += amount;
  }

  protected releaseLock(account: number, asset: number, amount: number, reason: number): void {
    const key = account * this.asset_count + asset;
    this.ledger.touch(account, asset, reason);
    this.ledger.locked[key] -= amount;
    this.ledger.available[key] += amount;
  }

  protected ownOpenOrder(account: number, order_id: number, client_order_id: string): number {
    let s: number | undefined;
    if (order_id !== 0) {
      s = this.orders.slot_by_id.get(order_id);
      if (s === NIL || this.orders.account[s] !== account) return NIL;
      if (client_order_id !== '' && this.orders.client_order_id[s] !== client_order_id) return NIL;
      return s;
    }
    if (client_order_id === '') return NIL;
    return this.orders.slot_by_client_id.find(account, client_order_id);
  }

  /** Quoted value Q of a credit account (docs/engine.md, Credit), saturating at MAX_SAFE. */
  protected quotedValue(rest_quantity: Float64Array, rest_value: Float64Array): number {
    let q = 0;
    for (let m = 0; m < this.market_count; m++) {
      const mark = this.market_mark[m];
      const v = mark > 0 ? notionalCeil(mark, rest_quantity[m]) : rest_value[m];
      if (v === MONEY_OVERFLOW || q + v > MAX_SAFE) return MAX_SAFE;
      q += v;
    }
    return q;
  }

  /** Whether adding (quantity, own-price value) in market m would bring Q to the limit or above. */
  protected creditWouldBreach(account: number, m: number, d_quantity: number, d_value: number): boolean {
    const entry = this.credit.get(account);
    entry.rest_quantity[m] += d_quantity;
    entry.rest_value[m] += d_value;
    const q = this.quotedValue(entry.rest_quantity, entry.rest_value);
    entry.rest_quantity[m] -= d_quantity;
    entry.rest_value[m] -= d_value;
    return q >= entry.credit_limit_units;
  }

  // ---------------------------------------------------------------------------------------------
  // Read-outs for the matcher's side events (rare: startup and admin requests)

  marketCount(): number {
    return this.market_count;
  }

  /** [status (0 active, 1 paused), base, quote, tick, lot, fee_override, maker_bps, taker_bps] */
  marketInfo(m: number): MarketInfo {
    this.loadFees(m);
    return {
      status: this.market_status[m], base_asset: this.market_base[m], quote_asset: this.market_quote[m],
      tick_units: this.market_tick[m], lot_units: this.market_lot[m], fee_override: this.market_fee_override[m],
      maker_fee_bps: this.fee_maker_bps, taker_fee_bps: this.fee_taker_bps,
    };
  }

  globalFees(): [number, number] {
    return [this.maker_bps_global, this.taker_bps_global];
  }

  // ---------------------------------------------------------------------------------------------
  // Canonical state

  canonicalState(): CanonicalState {
    const markets: CanonicalMarket[] = [];
    for (let m = 0; m < this.market_count; m++) {
      markets.push({
        id: this.market_id[m],
        base: this.market_base[m],
        quote: this.market_quote[m],
        tick_size_units: this.market_tick[m],
        lot_size_units: this.market_lot[m],
        status: this.market_status[m] === MARKET_ACTIVE ? 'active' : 'paused',
        fees: this.market_fee_override[m] === 1
          ? { maker_fee_bps: this.market_maker_bps[m], taker_fee_bps: this.market_taker_bps[m] }
          : null,
        mark_price_units: this.market_mark[m],
        bids: this.canonicalSide(this.bids[m]),
        asks: this.canonicalSide(this.asks[m]),
      });
    }
    const accounts: CanonicalAccount[] = [];
    const L = this.ledger;
    const a = this.asset_count;
    for (let acct = 0; acct < L.account_high; acct++) {
      const balances: [number, number][] = [];
      let any = acct === FEE_ACCOUNT || L.nonce_high_water[acct] > 0;
      for (let k = 0; k < a; k++) {
        const av = L.available[acct * a + k];
        const lk = L.locked[acct * a + k];
        if (av !== 0 || lk !== 0) any = true;
        balances.push([av, lk]);
      }
      if (any) accounts.push({ account: acct, nonce_high_water: L.nonce_high_water[acct], balances });
    }
    return {
      batch_time_ms: this.batch_time_ms,
      next_order_id: this.next_order_id,
      next_fill_id: this.next_fill_id,
      next_priority_seq: this.next_priority_seq,
      fees: { maker_fee_bps: this.maker_bps_global, taker_fee_bps: this.taker_bps_global },
      markets,
      accounts,
      deposits_units: Array.from(this.deposits),
      withdrawals_units: Array.from(this.withdrawals),
      credit: this.credit.accounts_ascending.map((account) => {
        const e = this.credit.get(account);
        return { account, credit_limit_units: e.credit_limit_units, auto_cancel_ratio_ppm: e.auto_cancel_ratio_ppm };
      }),
      pending_withdrawals: this.pending_withdrawals.map((w) => ({ ...w })),
      referrals: this.referrals.canonical(),
      inbox: this.inbox.canonical(),
      next_inbox_entry_id: this.inbox.next_entry_id,
      envelope_nonces: [...this.envelope_high_water.entries()].sort((x, y) => x[0] - y[0])
        .map(([account, envelope_nonce]) => ({ account, envelope_nonce })),
      dead_man: this.dead_man.canonical(),
      agents: this.agents.canonical(),
      chain_deposit_high_water: this.chain_deposit_high_water,
    };
  }

  /**
   * Loads a canonical state into this freshly constructed engine (built with the state's markets,
   * in index order, and no request applied yet). Everything the engine can observe comes back:
   * balances, nonces, counters, fees, marks, credit, pending withdrawals, and every resting order
   * at its place in its level's queue (rows are best first, then time priority). Slot and level
   * numbering inside the pools may differ; nothing depends on it. This is what a snapshot holds.
   */
  loadCanonical(s: CanonicalState): void {
    assert(this.next_order_id === 1 && this.orders.size === 0, 'loadCanonical needs a fresh engine');
    assert(s.markets.length === this.market_count, 'the engine was built with the state\'s markets');
    this.batch_time_ms = s.batch_time_ms;
    // `?? 0`: snapshots written before the field existed had credited no chain deposit.
    this.chain_deposit_high_water = s.chain_deposit_high_water ?? 0;
    this.next_order_id = s.next_order_id;
    this.next_fill_id = s.next_fill_id;
    this.next_priority_seq = s.next_priority_seq;
    this.maker_bps_global = s.fees.maker_fee_bps;
    this.taker_bps_global = s.fees.taker_fee_bps;
    const a = this.asset_count;
    const L = this.ledger;
    for (const acc of s.accounts) {
      L.ensure(acc.account);
      L.nonce_high_water[acc.account] = acc.nonce_high_water;
      for (let k = 0; k < a; k++) {
        L.available[acc.account * a + k] = acc.balances[k][0];
        L.locked[acc.account * a + k] = acc.balances[k][1];
      }
    }
    for (let k = 0; k < a; k++) {
      this.deposits[k] = s.deposits_units[k];
      this.withdrawals[k] = s.withdrawals_units[k];
    }
    for (const c of s.credit) {
      L.ensure(c.account);
      this.credit.set(c.account, c.credit_limit_units, c.auto_cancel_ratio_ppm);
      L.has_credit[c.account] = 1;
    }
    for (const w of s.pending_withdrawals) this.pending_withdrawals.push({ ...w });
    for (const r of s.referrals) {
      L.ensure(r.account);
      L.ensure(r.referrer);
    }
    this.referrals.load(s.referrals);
    for (const e of s.inbox) L.ensure(e.account);
    this.inbox.load(s.inbox, s.next_inbox_entry_id);
    for (const e of s.envelope_nonces) {
      L.ensure(e.account);
      this.envelope_high_water.set(e.account, e.envelope_nonce);
    }
    for (const d of s.dead_man) L.ensure(d.account);
    this.dead_man.load(s.dead_man);
    for (const u of s.agents) {
      L.ensure(u.account);
      for (const a of u.agents) L.ensure(a.agent);
    }
    this.agents.load(s.agents);
    s.markets.forEach((mk, m) => {
      assert(mk.tick_size_units === this.market_tick[m] && mk.lot_size_units === this.market_lot[m], `market ${mk.id} matches`);
      this.market_status[m] = mk.status === 'active' ? MARKET_ACTIVE : MARKET_PAUSED;
      if (mk.fees !== null) {
        this.market_fee_override[m] = 1;
        this.market_maker_bps[m] = mk.fees.maker_fee_bps;
        this.market_taker_bps[m] = mk.fees.taker_fee_bps;
      }
      this.market_mark[m] = mk.mark_price_units;
      for (const row of [...mk.bids, ...mk.asks]) this.restoreOrder(m, row);
    });
  }

  private restoreOrder(m: number, row: CanonicalOrder): void {
    const o = this.orders;
    const s = o.alloc(row.order_id);
    assert(s !== NIL, 'restored orders fit orders_open_max');
    const account = row.account;
    this.ledger.ensure(account);
    o.market[s] = m;
    o.side[s] = row.side;
    o.tif[s] = row.tif;
    o.price[s] = row.price_units;
    o.quantity[s] = row.quantity_units;
    o.filled[s] = row.filled_units;
    o.remaining[s] = row.remaining_units;
    o.locked[s] = row.locked_units;
    o.priority_seq[s] = row.priority_seq;
    o.last_fill_price[s] = row.last_fill_price_units;
    this.linkAccount(s, account, row.client_order_id);
    this.linkLevel(s);
  }

  /** Makes a new slot one of the account's open orders (its list, its count, its client id). */
  protected linkAccount(s: number, account: number, client_order_id: string): void {
    const o = this.orders;
    const L = this.ledger;
    o.account[s] = account;
    o.client_order_id[s] = client_order_id;
    const head = L.order_head[account];
    o.acct_prev[s] = NIL;
    o.acct_next[s] = head;
    if (head !== NIL) o.acct_prev[head] = s;
    L.order_head[account] = s;
    L.open_orders[account]++;
    if (client_order_id !== '') o.slot_by_client_id.add(s);
  }

  protected canonicalSide(side: BookSide): CanonicalOrder[] {
    const rows: CanonicalOrder[] = [];
    const o = this.orders;
    for (let i = side.count - 1; i >= 0; i--) {
      for (let s = this.levels.head[side.levels[i]]; s !== NIL; s = o.next[s]) {
        rows.push({
          order_id: o.id[s], account: o.account[s], side: o.side[s], tif: o.tif[s],
          price_units: o.price[s], quantity_units: o.quantity[s], filled_units: o.filled[s],
          remaining_units: o.remaining[s], locked_units: o.locked[s],
          priority_seq: o.priority_seq[s], client_order_id: o.client_order_id[s],
          last_fill_price_units: o.last_fill_price[s],
        });
      }
    }
    return rows;
  }
}

export function feesValid(maker: number, taker: number): boolean {
  return Number.isSafeInteger(maker) && Number.isSafeInteger(taker) && maker >= -BPS_MAX &&
    taker <= BPS_MAX && Math.abs(maker) <= taker;
}

export function assert(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`engine assertion failed: ${what}`);
}

