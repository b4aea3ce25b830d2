// The reference engine's state and bookkeeping over the plain objects and bigint money of
// reference_values.ts: the account, balance and book helpers every rule uses, balance
// events derived from before/after values, credit valuation, and the canonical state. The rules
// themselves are in reference_orders.ts (orders and matching) and reference_engine.ts (the rest).
import type {
  CanonicalAccount, CanonicalForcedRequest, CanonicalMarket, CanonicalOrder, CanonicalState, EngineConfig,
  MatchingEngine,
} from '../api.js';
import { FEE_ACCOUNT, OrderStatus, RequestKind, Side } from '../types.js';
import { BalanceReason, UpdateReason, type EventSink } from '../events.js';
import { Reject } from '../codes.js';
import type { Request } from '../types.js';
import {
  UNITS, num, refNotionalCeil, type RefOrder, type RefMarket, type RefAccount, type CreditSetting, Rejection,
} from './reference_values.js';

/** Balance reasons ranked: fill > order_cancelled > order_placed > deposit / withdrawal. */
export function reasonRank(reason: number): number {
  switch (reason) {
    case BalanceReason.FILL:
      return 4;
    case BalanceReason.ORDER_CANCELLED:
      return 3;
    case BalanceReason.ORDER_PLACED:
      return 2;
    default:
      return 1;
  }
}

function sortSide(orders: RefOrder[], side: number): void {
  orders.sort((a, b) => {
    if (a.price !== b.price) {
      const better = side === Side.BID ? a.price > b.price : a.price < b.price;
      return better ? -1 : 1;
    }
    return a.priority_seq - b.priority_seq;
  });
}

export abstract class ReferenceState implements MatchingEngine {
  protected readonly assets: string[];
  protected readonly limits: EngineConfig['limits'];
  protected readonly markets: RefMarket[] = [];
  protected readonly accounts = new Map<number, RefAccount>();
  protected readonly credit = new Map<number, CreditSetting>();
  protected readonly pending: { account: number; nonce: number; asset: number; amount: bigint }[] = [];
  protected readonly deposits: bigint[];
  /** The last on-chain deposit id credited (0: none). */
  protected chain_deposit_high_water = 0;
  protected readonly withdrawals: bigint[];
  protected maker_bps: bigint;
  protected taker_bps: bigint;
  protected next_order_id = 1;
  protected next_fill_id = 1;
  protected next_priority_seq = 1;
  protected readonly referrals = new Map<number, { referrer: number; until_ms: number; earned: bigint[] }>();
  protected readonly inbox: {
    entry_id: number; account: number; envelope_nonce: number; queued_ms: number; deadline_ms: number;
    request: CanonicalForcedRequest;
  }[] = [];
  protected next_inbox_entry_id = 1;
  /** Account -> its last force-include envelope nonce. */
  protected readonly envelope_nonces = new Map<number, number>();
  /** Armed dead-man switches: account -> deadline ms. */
  protected readonly dead_man = new Map<number, number>();
  /** Agent keys: user -> its nonce floor and agent -> entry (docs/engine.md, "Agent keys"). */
  protected readonly agent_keys = new Map<number, { floor: number; agents: Map<number, { name: string; until_ms: number; nonce: number }> }>();
  protected readonly hold_ms: number;
  protected time_ms = 0;

  // Per-request scratch.
  protected out: EventSink | null = null;
  protected before = new Map<number, [bigint, bigint]>();
  protected touchReason = new Map<number, number>();
  protected filledThisRequest = false;

  constructor(config: EngineConfig) {
    this.assets = config.assets.slice();
    this.limits = { ...config.limits };
    this.maker_bps = BigInt(config.maker_fee_bps);
    this.taker_bps = BigInt(config.taker_fee_bps);
    this.deposits = config.assets.map(() => 0n);
    this.withdrawals = config.assets.map(() => 0n);
    this.hold_ms = config.force_inclusion_hold_ms ?? 0;
    for (const m of config.markets) {
      this.markets.push({
        id: m.id, base: m.base, quote: m.quote,
        tick: BigInt(m.tick_size_units), lot: BigInt(m.lot_size_units),
        status: 'active', fees: null, mark: 0n, bids: [], asks: [],
      });
    }
    this.account(FEE_ACCOUNT);
  }

  // ---------------------------------------------------------------- accounts and balances

  protected account(id: number): RefAccount {
    let a = this.accounts.get(id);
    if (a === undefined) {
      a = { nonce: 0, available: this.assets.map(() => 0n), locked: this.assets.map(() => 0n) };
      this.accounts.set(id, a);
    }
    return a;
  }

  protected touch(account: number, asset: number, reason: number): RefAccount {
    const a = this.account(account);
    const key = account * this.assets.length + asset;
    if (!this.before.has(key)) this.before.set(key, [a.available[asset], a.locked[asset]]);
    const prev = this.touchReason.get(key);
    if (prev === undefined || reasonRank(reason) > reasonRank(prev)) this.touchReason.set(key, reason);
    return a;
  }

  protected addAvailable(account: number, asset: number, delta: bigint, reason: number): void {
    const a = this.touch(account, asset, reason);
    a.available[asset] += delta;
    if (a.available[asset] < 0n) throw new Error(`reference engine: negative available ${account}/${asset}`);
  }

  protected addLocked(account: number, asset: number, delta: bigint, reason: number): void {
    const a = this.touch(account, asset, reason);
    a.locked[asset] += delta;
    if (a.locked[asset] < 0n) throw new Error(`reference engine: negative locked ${account}/${asset}`);
  }

  /** Moves `amount` from available to locked (negative: back). */
  protected lock(account: number, asset: number, amount: bigint, reason: number): void {
    this.addAvailable(account, asset, -amount, reason);
    this.addLocked(account, asset, amount, reason);
  }

  protected available(account: number, asset: number): bigint {
    const a = this.accounts.get(account);
    return a === undefined ? 0n : a.available[asset];
  }

  protected nonceOf(account: number): number {
    const a = this.accounts.get(account);
    return a === undefined ? 0 : a.nonce;
  }

  // ---------------------------------------------------------------- books

  protected fees(m: RefMarket): { maker: bigint; taker: bigint } {
    return m.fees ?? { maker: this.maker_bps, taker: this.taker_bps };
  }

  protected sideOf(m: RefMarket, side: number): RefOrder[] {
    return side === Side.BID ? m.bids : m.asks;
  }

  protected allOpenOrders(): RefOrder[] {
    const all: RefOrder[] = [];
    for (const m of this.markets) all.push(...m.bids, ...m.asks);
    all.sort((a, b) => a.order_id - b.order_id);
    return all;
  }

  protected openOrdersOf(account: number): RefOrder[] {
    return this.allOpenOrders().filter((o) => o.account === account);
  }

  protected findOpen(order_id: number): RefOrder | undefined {
    return this.allOpenOrders().find((o) => o.order_id === order_id);
  }

  /** Would a limit order at `price` on `side` cross the opposite best? */
  protected crosses(m: RefMarket, side: number, price: bigint): boolean {
    if (side === Side.BID) return m.asks.length > 0 && price >= m.asks[0].price;
    return m.bids.length > 0 && price <= m.bids[0].price;
  }

  protected removeFromBook(o: RefOrder): void {
    const m = this.markets[o.market];
    const list = this.sideOf(m, o.side);
    const i = list.indexOf(o);
    if (i < 0) throw new Error(`reference engine: order ${o.order_id} not in its book`);
    list.splice(i, 1);
  }

  protected rest(o: RefOrder): void {
    const m = this.markets[o.market];
    o.priority_seq = this.next_priority_seq++;
    const list = this.sideOf(m, o.side);
    list.push(o);
    sortSide(list, o.side);
  }

  protected lockAsset(o: RefOrder): number {
    const m = this.markets[o.market];
    return o.side === Side.BID ? m.quote : m.base;
  }

  /** Releases the order's whole remaining lock to available. */
  protected releaseLock(o: RefOrder, reason: number): void {
    if (o.locked !== 0n) this.lock(o.account, this.lockAsset(o), -o.locked, reason);
    o.locked = 0n;
  }

  /** Sets the order's lock to `amount`, moving the difference between available and locked. */
  protected setLock(o: RefOrder, amount: bigint, reason: number): void {
    const delta = amount - o.locked;
    if (delta !== 0n) this.lock(o.account, this.lockAsset(o), delta, reason);
    o.locked = amount;
  }

  // ---------------------------------------------------------------- events

  /** A closing update (filled, cancelled) carries no lock and no priority: the order left the book. */
  protected emitUpdate(o: RefOrder, status: number, reason: number): void {
    const open = status === OrderStatus.OPEN || status === OrderStatus.PARTIALLY_FILLED;
    this.out!.orderUpdate(
      o.order_id, o.account, o.market, o.side, status, num(o.price), num(o.quantity),
      num(o.filled), num(o.remaining), num(o.last_fill_price), reason,
      open ? num(o.locked) : 0, open ? o.priority_seq : 0,
    );
  }

  /** Removes a resting order, releases its lock and reports it cancelled. */
  protected cancelResting(o: RefOrder, reason: number): void {
    this.removeFromBook(o);
    this.releaseLock(o, BalanceReason.ORDER_CANCELLED);
    o.remaining = 0n;
    this.emitUpdate(o, OrderStatus.CANCELLED, reason);
  }

  protected emitBalances(): void {
    const n = this.assets.length;
    const keys = [...this.before.keys()].sort((a, b) => a - b);
    for (const key of keys) {
      const account = Math.floor(key / n);
      const asset = key % n;
      const a = this.account(account);
      const [av0, lk0] = this.before.get(key)!;
      if (a.available[asset] === av0 && a.locked[asset] === lk0) continue;
      this.out!.balance(account, asset, num(a.available[asset]), num(a.locked[asset]), this.touchReason.get(key)!);
    }
  }

  /**
   * Signed requests: account in [1, accounts_max), nonce above the signer's high-water mark. The
   * signer is the user (0) or an agent: then only the agent kinds, and only while the agent's
   * entry is live at the batch time.
   */
  protected checkSigned(r: Request): void {
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    if (r.signer !== 0) {
      const kinds: number[] = [RequestKind.PLACE, RequestKind.CANCEL, RequestKind.AMEND, RequestKind.CANCEL_ALL, RequestKind.CANCEL_AFTER];
      if (!kinds.includes(r.kind)) throw new Rejection(Reject.AGENT_NOT_ALLOWED);
      const e = this.agent_keys.get(r.account)?.agents.get(r.signer);
      if (e === undefined || !(e.until_ms > this.time_ms)) throw new Rejection(Reject.AGENT_NOT_APPROVED);
      if (!(r.nonce > e.nonce)) throw new Rejection(Reject.NONCE_NOT_ABOVE_HIGH_WATER);
      return;
    }
    if (!(r.nonce > this.nonceOf(r.account))) throw new Rejection(Reject.NONCE_NOT_ABOVE_HIGH_WATER);
  }

  protected acceptSigned(r: Request, order_id: number): void {
    if (r.signer === 0) this.account(r.account).nonce = r.nonce;
    this.out!.accepted(r.kind, r.account, order_id);
    if (r.signer !== 0) {
      const u = this.agent_keys.get(r.account)!;
      const e = u.agents.get(r.signer)!;
      e.nonce = r.nonce;
      this.out!.agent(r.account, r.signer, e.until_ms, e.nonce, u.floor, e.name);
    }
  }

  // ---------------------------------------------------------------- credit

  /** Quoted value Q of an account (docs/engine.md, "Credit"). */
  protected quotedValue(account: number): bigint {
    let q = 0n;
    for (const m of this.markets) {
      const mine = [...m.bids, ...m.asks].filter((o) => o.account === account);
      if (mine.length === 0) continue;
      if (m.mark > 0n) {
        q += refNotionalCeil(m.mark, mine.reduce((s, o) => s + o.remaining, 0n));
      } else {
        for (const o of mine) q += refNotionalCeil(o.price, o.remaining);
      }
    }
    return q;
  }

  /** Value an order of `quantity` at `price` adds to Q in market m. */
  protected orderValue(m: RefMarket, price: bigint, quantity: bigint): bigint {
    return refNotionalCeil(quantity, m.mark > 0n ? m.mark : price);
  }

  protected creditAutoCancel(): void {
    const accounts = [...this.credit.keys()].sort((a, b) => a - b);
    for (const account of accounts) {
      const c = this.credit.get(account)!;
      const threshold = (c.limit * c.ratio_ppm) / UNITS;
      if (this.quotedValue(account) > threshold) {
        for (const o of this.openOrdersOf(account)) this.cancelResting(o, UpdateReason.CREDIT_AUTO_CANCEL);
      }
    }
  }

  // ---------------------------------------------------------------- canonical state

  canonicalState(): CanonicalState {
    const order = (o: RefOrder): CanonicalOrder => ({
      order_id: o.order_id, account: o.account, side: o.side, tif: o.tif, price_units: num(o.price),
      quantity_units: num(o.quantity), filled_units: num(o.filled), remaining_units: num(o.remaining),
      locked_units: num(o.locked), priority_seq: o.priority_seq, client_order_id: o.client_order_id,
      last_fill_price_units: num(o.last_fill_price),
    });
    const markets: CanonicalMarket[] = this.markets.map((m) => ({
      id: m.id, base: m.base, quote: m.quote, tick_size_units: num(m.tick), lot_size_units: num(m.lot),
      status: m.status,
      fees: m.fees === null ? null : { maker_fee_bps: num(m.fees.maker), taker_fee_bps: num(m.fees.taker) },
      mark_price_units: num(m.mark), bids: m.bids.map(order), asks: m.asks.map(order),
    }));
    const accounts: CanonicalAccount[] = [...this.accounts.entries()]
      .filter(([id, a]) => id === FEE_ACCOUNT || a.nonce > 0 || a.available.some((x) => x !== 0n) || a.locked.some((x) => x !== 0n))
      .sort((x, y) => x[0] - y[0])
      .map(([id, a]) => ({
        account: id, nonce_high_water: a.nonce,
        balances: a.available.map((av, i): [number, number] => [num(av), num(a.locked[i])]),
      }));
    return {
      batch_time_ms: this.time_ms,
      next_order_id: this.next_order_id,
      next_fill_id: this.next_fill_id,
      next_priority_seq: this.next_priority_seq,
      fees: { maker_fee_bps: num(this.maker_bps), taker_fee_bps: num(this.taker_bps) },
      markets,
      accounts,
      deposits_units: this.deposits.map(num),
      withdrawals_units: this.withdrawals.map(num),
      credit: [...this.credit.entries()].sort((x, y) => x[0] - y[0]).map(([account, c]) => ({
        account, credit_limit_units: num(c.limit), auto_cancel_ratio_ppm: num(c.ratio_ppm),
      })),
      pending_withdrawals: this.pending
        .slice()
        .sort((x, y) => x.account - y.account || x.nonce - y.nonce)
        .map((w) => ({ account: w.account, nonce: w.nonce, asset: w.asset, amount_units: num(w.amount) })),
      referrals: [...this.referrals.entries()].sort((x, y) => x[0] - y[0]).map(([account, e]) => ({
        account, referrer: e.referrer, active_until_ms: e.until_ms, earned_units: e.earned.map(num),
      })),
      inbox: this.inbox.map((e) => ({ ...e, request: { ...e.request } })),
      next_inbox_entry_id: this.next_inbox_entry_id,
      envelope_nonces: [...this.envelope_nonces.entries()].sort((x, y) => x[0] - y[0])
        .map(([account, envelope_nonce]) => ({ account, envelope_nonce })),
      agents: [...this.agent_keys.entries()].filter(([, u]) => u.floor > 0 || u.agents.size > 0).sort((x, y) => x[0] - y[0])
        .map(([account, u]) => ({
          account, nonce_floor: u.floor,
          agents: [...u.agents.entries()].sort((x, y) => x[0] - y[0])
            .map(([agent, e]) => ({ agent, name: e.name, valid_until_ms: e.until_ms, nonce_high_water: e.nonce })),
        })),
      dead_man: [...this.dead_man.entries()].sort((x, y) => x[0] - y[0]).map(([account, deadline_ms]) => ({ account, deadline_ms })),
      chain_deposit_high_water: this.chain_deposit_high_water,
    };
  }

  abstract apply(request: Request, out: EventSink): void;
  abstract beginBatch(time_ms: number, out: EventSink): void;
}
