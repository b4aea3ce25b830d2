// Seeded generator of engine request sequences for the differential and property tests.
//
// Deterministic: a mulberry32 PRNG seeded by the sequence seed, never Math.random. The generator
// can run blind (generateSequence) or follow an engine (`observe` the events each request gave):
// following lets it target real open orders, their client ids and the current best prices, so
// cancels, amends, post_only crossings and duplicate client ids hit far more often. Following the
// reference engine keeps a seed reproducible, because the reference is deterministic.
import type { EngineConfig, EngineLimits } from '../../src/engine/api.js';
import type { EngineEvent } from '../../src/engine/event_log.js';
import {
  NO_MARKET,
  OrderStatus,
  OrderType,
  RequestKind,
  Side,
  Stp,
  Tif,
  emptyRequest,
} from '../../src/engine/types.js';
import { Reject } from '../../src/engine/codes.js';
import type { Request } from '../../src/engine/types.js';
import { mulberry32, Rng, type WeightTable } from '../../src/util/prng.js';

export { mulberry32, Rng, type WeightTable };

export function weightTable<K extends string>(weights: Record<K, number>): WeightTable<K> {
  const entries = Object.entries(weights) as [K, number][];
  return { keys: entries.map((e) => e[0]), weights: entries.map((e) => e[1]), sum: entries.reduce((s, e) => s + e[1], 0) };
}

export const ASSETS = ['ETH', 'BTC', 'USDC'] as const;
export const ETH = 0;
export const BTC = 1;
export const USDC = 2;
export const ETH_USDC = 0;
export const BTC_USDC = 1;

/** The two standard markets: ETH-USDC tick 0.01 lot 0.0001, BTC-USDC tick 0.1 lot 0.00001. */
export function standardConfig(limits?: Partial<EngineLimits>, fees?: { maker: number; taker: number }): EngineConfig {
  return {
    assets: [...ASSETS],
    markets: [
      { id: 'ETH-USDC', base: ETH, quote: USDC, tick_size_units: 10_000, lot_size_units: 100 },
      { id: 'BTC-USDC', base: BTC, quote: USDC, tick_size_units: 100_000, lot_size_units: 10 },
    ],
    maker_fee_bps: fees?.maker ?? 2,
    taker_fee_bps: fees?.taker ?? 5,
    limits: {
      accounts_max: 16,
      markets_max: 4,
      orders_open_max: 10_000,
      orders_open_per_account_max: 1_000,
      price_levels_per_book_max: 1_000,
      ...limits,
    },
  };
}

interface GenMarket {
  base: number;
  quote: number;
  tick: number;
  lot: number;
  /** Mid price in ticks; a random walk. */
  mid: number;
  /** Typical order size in lots. */
  lots: number;
  paused: boolean;
}

interface OpenOrder {
  order_id: number;
  account: number;
  market: number;
  side: number;
  tif: number;
  price: number;
  remaining: number;
  client_order_id: string;
}

const ADDED_MARKET = { base: ETH, quote: BTC, tick: 100, lot: 10_000, mid: 500, lots: 8 };

type Action =
  | 'deposit' | 'withdraw' | 'place' | 'cancel' | 'amend' | 'cancel_all' | 'pause' | 'resume'
  | 'set_fees' | 'set_credit' | 'add_market' | 'bad_place' | 'bad_other' | 'refer' | 'force' | 'cancel_after' | 'disconnect'
  | 'approve_agent' | 'revoke_agent' | 'agent_signed';

const ACTIONS = weightTable<Action>({
  deposit: 5, withdraw: 3, place: 46, cancel: 9, amend: 9, cancel_all: 2, pause: 0.6, resume: 3,
  set_fees: 2, set_credit: 3, add_market: 1, bad_place: 12, bad_other: 5, refer: 3, force: 4,
  cancel_after: 2, disconnect: 1, approve_agent: 3, revoke_agent: 0.7, agent_signed: 6,
});
const AGENT_NAMES = ['mm', 'quoter-1', 'hedge.bot', 'A_b-c.9', 'x'.repeat(16)];
const AGENT_NAMES_BAD = ['', 'has space', 'x'.repeat(17), 'a:b'];
const DAY_MS = 24 * 3600 * 1000;
/** Batch times start here (any date works; a real one reads better in failures). */
const TIME_START_MS = Date.UTC(2026, 10, 1);
const TIFS = weightTable({ gtc: 55, ioc: 15, fok: 12, post_only: 18 });
/** Self-trade prevention modes: mostly the default, every mode often enough to meet itself. */
const STPS = weightTable({ expire_maker: 50, expire_taker: 25, expire_both: 25 });
const STP_OF = { expire_maker: Stp.EXPIRE_MAKER, expire_taker: Stp.EXPIRE_TAKER, expire_both: Stp.EXPIRE_BOTH } as const;

export class RequestGenerator {
  readonly config: EngineConfig;
  readonly accounts: number;
  private readonly rng: Rng;
  private readonly markets: GenMarket[];
  private readonly nonces: number[];
  /** Per account, the last force-include envelope nonce handed out (index 0: bad accounts). */
  private readonly envelope_nonces: number[];
  private readonly open = new Map<number, OpenOrder>();
  private readonly clientIdsUsed: string[][];
  private step = 0;
  private placedGuess = 0;
  private marketAdded = false;
  /** Accounts that got only a small deposit (market bids run out of quote, FOKs fail). */
  private readonly poor: boolean[];
  private time_ms = TIME_START_MS;
  private batches = 0;
  /** The last on-chain deposit id handed out (chain deposits carry it as their nonce). */
  private chain_deposit_id = 0;
  /** user -> agent -> valid_until_ms, as the AGENT events said (expired ones stay until pruned). */
  private readonly agents = new Map<number, Map<number, number>>();
  /** `${user}:${agent}` -> the agent's last nonce handed out (raised to the engine's mark by AGENT events). */
  private readonly agent_nonces = new Map<string, number>();

  constructor(readonly seed: number) {
    const rng = new Rng(seed);
    this.rng = rng;
    this.accounts = rng.int(4, 8);
    const tight = rng.chance(0.2);
    const fees = rng.pick([
      { maker: 2, taker: 5 }, { maker: 0, taker: 10 }, { maker: -2, taker: 5 }, { maker: -1, taker: 3 },
      { maker: 3, taker: 3 }, { maker: 0, taker: 0 }, { maker: 10, taker: 25 },
    ]);
    this.config = standardConfig({
      accounts_max: this.accounts + 1,
      markets_max: rng.chance(0.5) ? 3 : 2,
      orders_open_max: tight ? rng.int(4, 12) : 500,
      orders_open_per_account_max: tight ? rng.int(2, 5) : 100,
      price_levels_per_book_max: tight ? rng.int(2, 4) : 100,
      inbox_entries_max: tight ? rng.int(1, 4) : 100,
      inbox_entries_per_account_max: tight ? rng.int(1, 2) : 8,
      // Few enough that approvals reach the limit among this seed's 4 to 8 accounts.
      agents_live_per_account_max: rng.int(1, 3),
    }, fees);
    // How long the sequencer holds forced inclusions: mostly the next batch, sometimes seconds, or
    // nearly the whole 24 hours (entries then pile up and the inbox limits are reached).
    this.config.force_inclusion_hold_ms = rng.pick([0, 0, 0, 2_000, 23 * 3600 * 1000]);
    this.markets = [
      { base: ETH, quote: USDC, tick: 10_000, lot: 100, mid: 200_000 + rng.int(-500, 500), lots: 40, paused: false },
      { base: BTC, quote: USDC, tick: 100_000, lot: 10, mid: 600_000 + rng.int(-500, 500), lots: 30, paused: false },
    ];
    this.nonces = new Array<number>(this.accounts + 1).fill(0);
    this.envelope_nonces = new Array<number>(this.accounts + 1).fill(0);
    this.clientIdsUsed = Array.from({ length: this.accounts + 1 }, () => []);
    this.poor = Array.from({ length: this.accounts + 1 }, () => rng.chance(0.3));
  }

  /** Feed the events the request just produced (from the engine being followed). */
  observe(request: Request, events: readonly EngineEvent[]): void {
    const first = events[0];
    if (first === undefined) return;
    if (first.type === 'accepted') {
      if (request.kind === RequestKind.ADD_MARKET) {
        this.markets.push({ ...ADDED_MARKET, paused: false });
      }
      if (request.kind === RequestKind.PAUSE_MARKET) this.markets[request.market].paused = true;
      if (request.kind === RequestKind.RESUME_MARKET) this.markets[request.market].paused = false;
    }
    for (const e of events) {
      if (e.type === 'agent') {
        let mine = this.agents.get(e.account);
        if (mine === undefined) this.agents.set(e.account, mine = new Map());
        if (e.valid_until_ms === 0) mine.delete(e.agent);
        else mine.set(e.agent, e.valid_until_ms);
        const key = `${e.account}:${e.agent}`;
        if (e.valid_until_ms !== 0) this.agent_nonces.set(key, Math.max(this.agent_nonces.get(key) ?? 0, e.nonce_high_water));
        continue;
      }
      if (e.type !== 'orderUpdate') continue;
      if (e.status === OrderStatus.OPEN || e.status === OrderStatus.PARTIALLY_FILLED) {
        const known = this.open.get(e.order_id);
        const placing = request.kind === RequestKind.PLACE && first.type === 'accepted' && first.order_id === e.order_id;
        this.open.set(e.order_id, {
          order_id: e.order_id, account: e.account, market: e.market, side: e.side,
          tif: known?.tif ?? (placing ? request.tif : Tif.GTC), price: e.price_units, remaining: e.remaining_units,
          client_order_id: known?.client_order_id ?? (placing ? request.client_order_id : ''),
        });
      } else {
        this.open.delete(e.order_id);
      }
    }
  }

  /**
   * Called before each request: null, or the time of a new batch to begin (beginBatch) before it.
   * Mostly small steps; sometimes hours or months, so inclusion holds and referral windows end.
   */
  batch(): number | null {
    if (this.batches > 0 && !this.rng.chance(0.15)) return null;
    this.batches++;
    const x = this.rng.float();
    this.time_ms += x < 0.8 ? this.rng.int(0, 3_000) : x < 0.93 ? this.rng.int(1, 25) * 3600 * 1000 : this.rng.int(20, 95) * DAY_MS;
    return this.time_ms;
  }

  next(): Request {
    this.step++;
    const r = this.make();
    if (r.kind === RequestKind.PLACE) this.placedGuess++;
    return r;
  }

  // ------------------------------------------------------------------ helpers

  private account(): number {
    return this.rng.int(1, this.accounts);
  }

  /** Mostly the owner of some open order, so cancels and amends find their targets. */
  private ownerOrAny(): number {
    if (this.open.size > 0 && this.rng.chance(0.75)) {
      const xs = this.openOf(null);
      return this.rng.pick(xs).account;
    }
    return this.account();
  }

  private badAccount(): number {
    return this.rng.pick([0, this.accounts + 1, this.accounts + 7, -1]);
  }

  /** Mostly the next nonce; sometimes a gap, a reuse or zero. */
  private nonce(account: number): number {
    if (account < 1 || account > this.accounts) return this.rng.int(1, 100);
    const x = this.rng.float();
    if (x < 0.05 && this.nonces[account] > 0) return this.rng.int(0, this.nonces[account]);
    this.nonces[account] += x < 0.1 ? this.rng.int(2, 5) : 1;
    return this.nonces[account];
  }

  private market(): number {
    return this.rng.int(0, this.markets.length - 1);
  }

  private bestPrice(market: number, side: number): number | null {
    let best: number | null = null;
    for (const o of this.open.values()) {
      if (o.market !== market || o.side !== side) continue;
      if (best === null || (side === Side.BID ? o.price > best : o.price < best)) best = o.price;
    }
    return best;
  }

  /** A price near the moving mid; bids lean low, asks high, so books rest and cross often. */
  private price(market: number, side: number): number {
    const m = this.markets[market];
    if (this.rng.chance(0.3)) m.mid += this.rng.int(-2, 2);
    if (m.mid < 10) m.mid = 10;
    const off = side === Side.BID ? this.rng.int(-4, 2) : this.rng.int(-2, 4);
    return (m.mid + off) * m.tick;
  }

  private quantity(market: number): number {
    const m = this.markets[market];
    const x = this.rng.float();
    const lots = x < 0.6 ? this.rng.int(1, m.lots) : x < 0.9 ? this.rng.int(m.lots, m.lots * 4) : this.rng.int(1, 3);
    return lots * m.lot;
  }

  private newClientId(account: number): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
    const len = this.rng.chance(0.1) ? 36 : this.rng.int(1, 10);
    let s = '';
    for (let i = 0; i < len; i++) s += alphabet[this.rng.int(0, alphabet.length - 1)];
    if (account >= 0 && account < this.clientIdsUsed.length) this.clientIdsUsed[account].push(s);
    return s;
  }

  private usedClientId(account: number): string {
    const used = account >= 0 && account < this.clientIdsUsed.length ? this.clientIdsUsed[account] : [];
    return used.length > 0 ? this.rng.pick(used) : 'none-such';
  }

  private openOf(account: number | null): OpenOrder[] {
    const xs = [...this.open.values()].filter((o) => account === null || o.account === account);
    xs.sort((a, b) => a.order_id - b.order_id);
    return xs;
  }

  /** An order id: mostly a live one when following, else near the recently placed ids. */
  private someOrderId(account: number): number {
    const mine = this.openOf(account);
    const x = this.rng.float();
    if (x < 0.7 && mine.length > 0) return this.rng.pick(mine).order_id;
    if (x < 0.8) {
      const any = this.openOf(null);
      if (any.length > 0) return this.rng.pick(any).order_id;
    }
    if (x < 0.9) return Math.max(1, this.placedGuess - this.rng.int(0, 10));
    return this.rng.pick([999_999, -3, this.placedGuess + 50]);
  }

  // ------------------------------------------------------------------ requests

  private make(): Request {
    // Warm-up: every account gets quote and base first.
    const warm = this.accounts * 3;
    if (this.step <= warm) {
      const i = this.step - 1;
      const account = 1 + Math.floor(i / 3);
      return this.deposit(account, [USDC, ETH, BTC][i % 3], false);
    }
    const action = this.rng.weighted(ACTIONS);
    switch (action) {
      case 'deposit': return this.deposit(this.account(), this.rng.pick([ETH, BTC, USDC]), this.rng.chance(0.2));
      case 'withdraw': return this.withdraw();
      case 'place': return this.place();
      case 'cancel': return this.cancel();
      case 'amend': return this.amend();
      case 'cancel_all': return this.cancelAll();
      case 'pause': return this.pauseResume(RequestKind.PAUSE_MARKET);
      case 'resume': return this.pauseResume(RequestKind.RESUME_MARKET);
      case 'set_fees': return this.setFees();
      case 'set_credit': return this.setCredit();
      case 'add_market': return this.addMarket();
      case 'bad_place': return this.badPlace();
      case 'bad_other': return this.badOther();
      case 'refer': return this.refer(this.account());
      case 'force': return this.force();
      case 'cancel_after': return this.cancelAfter();
      case 'approve_agent': return this.approveAgent();
      case 'revoke_agent': return this.revokeAgent();
      case 'agent_signed': return this.agentSigned();
      case 'disconnect': {
        // An opted-in connection of an account (mostly one with resting orders) closed.
        const r = emptyRequest();
        r.kind = RequestKind.DISCONNECT_CANCEL;
        r.account = this.rng.chance(0.03) ? this.badAccount() : this.ownerOrAny();
        return r;
      }
    }
  }

  /**
   * Arms a dead-man switch: mostly 1-3 s (batch steps are 0-3 s, so switches fire within a few
   * batches, often on accounts with resting orders), sometimes disarms, hours, or an invalid timeout.
   */
  private cancelAfter(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.CANCEL_AFTER;
    r.account = this.rng.chance(0.03) ? this.badAccount() : this.ownerOrAny();
    r.nonce = this.nonce(r.account);
    const x = this.rng.float();
    r.amount_units = x < 0.6 ? this.rng.int(1_000, 3_000) : x < 0.75 ? 0 : x < 0.85 ? this.rng.int(1, 24) * 3600 * 1000
      : this.rng.pick([1, 999, 86_400_001, -1_000]);
    return r;
  }

  /**
   * APPROVE_AGENT: mostly another account of the seed as the agent, valid for a few seconds (so it
   * expires within a few batches) or hours; sometimes a bad name, a bad validity, itself, an
   * unknown agent, or signed by an agent (refused: only the user approves).
   */
  private approveAgent(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.APPROVE_AGENT;
    r.account = this.rng.chance(0.03) ? this.badAccount() : this.account();
    r.nonce = this.nonce(r.account);
    const x = this.rng.float();
    r.agent_account = x < 0.85 ? this.account() : x < 0.92 ? r.account : this.accounts + 1;
    r.client_order_id = this.rng.chance(0.06) ? this.rng.pick(AGENT_NAMES_BAD) : this.rng.pick(AGENT_NAMES);
    const y = this.rng.float();
    r.amount_units = y < 0.35 ? this.time_ms + this.rng.int(1_000, 8_000) : y < 0.9 ? this.time_ms + this.rng.int(1, 48) * 3600 * 1000
      : this.rng.pick([this.time_ms, this.time_ms - 1, this.time_ms + 180 * DAY_MS, this.time_ms + 180 * DAY_MS + 1, 0]);
    if (this.rng.chance(0.04)) this.signAsAgent(r);
    return r;
  }

  /** REVOKE_AGENT: mostly an agent the user has (live or expired), sometimes one it has not. */
  private revokeAgent(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.REVOKE_AGENT;
    r.account = this.account();
    r.nonce = this.nonce(r.account);
    const mine = [...(this.agents.get(r.account)?.keys() ?? [])];
    r.agent_account = mine.length > 0 && this.rng.chance(0.8) ? this.rng.pick(mine) : this.account();
    if (this.rng.chance(0.04)) this.signAsAgent(r);
    return r;
  }

  /**
   * A request an agent signs for its user: mostly the agent kinds (order, cancel, amend,
   * cancel-all, cancel-after) by one of the user's agents with the agent's next nonce; sometimes
   * a kind an agent may not sign, a signer that is no agent (or an unknown address), a stale nonce.
   */
  private agentSigned(): Request {
    const x = this.rng.float();
    const inner = x < 0.5 ? this.place() : x < 0.62 ? this.cancel() : x < 0.74 ? this.amend() : x < 0.8 ? this.cancelAll()
      : x < 0.9 ? this.cancelAfter() : this.rng.pick([this.withdraw(), this.refer(this.account()), this.force()]);
    const r = { ...inner };
    // Mostly for a user that has a live agent (its own orders as the targets).
    const users = [...this.agents.entries()].filter(([, m]) => [...m.values()].some((until) => until > this.time_ms)).map(([u]) => u);
    if (users.length > 0 && this.rng.chance(0.85) && r.account >= 1 && r.account <= this.accounts) {
      r.account = this.rng.pick(users.sort((a, b) => a - b));
      if (r.kind === RequestKind.CANCEL || r.kind === RequestKind.AMEND) {
        r.order_id = this.someOrderId(r.account);
        r.client_order_id = '';
      }
    }
    this.signAsAgent(r);
    return r;
  }

  private signAsAgent(r: Request): void {
    const all = [...(this.agents.get(r.account)?.entries() ?? [])];
    const live = all.filter(([, until]) => until > this.time_ms);
    const mine = (live.length > 0 && this.rng.chance(0.9) ? live : all).map(([a]) => a);
    const y = this.rng.float();
    r.signer = mine.length > 0 && y < 0.85 ? this.rng.pick(mine) : y < 0.95 ? this.account() : this.accounts + 1;
    const key = `${r.account}:${r.signer}`;
    const last = this.agent_nonces.get(key) ?? 0;
    if (this.rng.chance(0.05) && last > 0) {
      r.nonce = this.rng.int(0, last);
    } else {
      r.nonce = last + (this.rng.chance(0.1) ? this.rng.int(2, 5) : 1);
      this.agent_nonces.set(key, r.nonce);
    }
  }

  private refer(account: number): Request {
    const r = emptyRequest();
    r.kind = RequestKind.REFER;
    r.account = this.rng.chance(0.05) ? this.badAccount() : account;
    r.nonce = this.nonce(r.account);
    const x = this.rng.float();
    r.referrer_account = x < 0.8 ? this.account() : x < 0.9 ? r.account : this.badAccount();
    return r;
  }

  /**
   * A FORCE_INCLUDE: the envelope takes the next nonce of its own sequence (sometimes a reuse or
   * zero); the payload keeps the trading nonce it was signed with (this.nonce(): mostly fresh,
   * sometimes stale, so some fail DUPLICATE_NONCE at inclusion).
   */
  private force(): Request {
    const x = this.rng.float();
    const inner = x < 0.45 ? this.place() : x < 0.6 ? this.cancel() : x < 0.7 ? this.amend() : x < 0.77 ? this.cancelAll()
      : x < 0.85 ? this.withdraw() : x < 0.93 ? this.refer(this.account())
      : this.rng.pick([this.deposit(this.account(), USDC, false), this.setFees(), this.badPlace()]);
    const r = { ...inner };
    // A forced payload carries no stp / expires_after_ms (the front refuses them; docs/api.md).
    r.stp = 0;
    r.expires_after_ms = 0;
    r.kind = RequestKind.FORCE_INCLUDE;
    r.inner_kind = inner.kind;
    if (!(r.account >= 1 && r.account <= this.accounts)) r.account = this.rng.chance(0.5) ? this.account() : r.account;
    r.inner_nonce = inner.nonce;
    const e = r.account >= 1 && r.account <= this.accounts ? r.account : 0;
    const y = this.rng.float();
    if (y < 0.05) r.nonce = 0;
    else if (y < 0.1 && this.envelope_nonces[e] > 0) r.nonce = this.rng.int(1, this.envelope_nonces[e]);
    else r.nonce = this.envelope_nonces[e] += this.rng.chance(0.1) ? this.rng.int(2, 5) : 1;
    const v = this.rng.float();
    r.inner_reject = v < 0.85 ? Reject.NONE : this.rng.pick([
      Reject.FORCED_PAYLOAD_MALFORMED, Reject.FORCED_SIGNATURE_INVALID, Reject.FORCED_SIGNER_MISMATCH,
      Reject.FORCED_KIND_INVALID,
    ]);
    return r;
  }

  private deposit(account: number, asset: number, small: boolean): Request {
    const r = emptyRequest();
    r.kind = RequestKind.DEPOSIT;
    r.account = account;
    r.asset = asset;
    const poor = this.poor[account] ?? false;
    if (small) {
      r.amount_units = this.rng.int(1, 5_000);
    } else if (asset === USDC) {
      r.amount_units = poor ? this.rng.int(1, 200) * 100_000 : this.rng.int(500, 20_000) * 1_000_000;
    } else if (asset === ETH) {
      r.amount_units = poor ? this.rng.int(1, 50) * 100 : this.rng.int(10, 500) * 10_000;
    } else {
      r.amount_units = poor ? this.rng.int(1, 50) * 10 : this.rng.int(10, 500) * 1_000;
    }
    // Every third deposit comes from the chain with the next deposit id; now and then the chain
    // watcher replays an id already credited (a restart): DUPLICATE_NONCE, nothing credited.
    // Chosen by the step counter, not the rng, so every seed's other requests stay as they were.
    if (this.step % 3 === 0) {
      r.nonce = this.step % 17 === 0 && this.chain_deposit_id > 0 ? this.chain_deposit_id : ++this.chain_deposit_id;
    }
    return r;
  }

  private withdraw(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.WITHDRAW;
    r.account = this.account();
    r.nonce = this.nonce(r.account);
    r.asset = this.rng.pick([ETH, BTC, USDC]);
    r.amount_units = this.rng.chance(0.5) ? this.rng.int(1, 1_000_000) : this.rng.int(1, 100) * 100_000_000;
    return r;
  }

  private basePlace(account: number, market: number): Request {
    const r = emptyRequest();
    r.kind = RequestKind.PLACE;
    r.account = account;
    r.nonce = this.nonce(account);
    r.market = market;
    r.side = this.rng.chance(0.5) ? Side.BID : Side.ASK;
    const x = this.rng.float();
    if (x < 0.17) {
      r.order_type = OrderType.MARKET;
      r.tif = this.rng.chance(0.6) ? Tif.IOC : Tif.FOK;
      r.price_units = 0;
    } else {
      r.order_type = OrderType.LIMIT;
      const tifs = { gtc: Tif.GTC, ioc: Tif.IOC, fok: Tif.FOK, post_only: Tif.POST_ONLY } as const;
      r.tif = tifs[this.rng.weighted(TIFS)];
      r.price_units = this.price(market, r.side);
    }
    r.quantity_units = this.quantity(market);
    if (this.rng.chance(0.35)) r.client_order_id = this.newClientId(account);
    return r;
  }

  /**
   * The market-maker guards of an order: an stp mode, and sometimes an expires_after_ms just
   * before or after the current batch time (the engine refuses the stale ones with EXPIRED).
   */
  private guards(r: Request): Request {
    r.stp = STP_OF[this.rng.weighted(STPS)];
    if (this.rng.chance(0.1)) r.expires_after_ms = this.time_ms + this.rng.int(-2_000, 2_000);
    return r;
  }

  /**
   * An order crossing a resting order of its own account (self-trade prevention's case): the
   * opposite side of some open order, at or through its price.
   */
  private selfCross(): Request {
    const target = this.rng.pick(this.openOf(null));
    const r = this.basePlace(target.account, target.market);
    r.side = 1 - target.side;
    if (r.order_type === OrderType.LIMIT) {
      const tick = this.markets[target.market].tick;
      const through = this.rng.int(0, 2) * tick;
      r.price_units = r.side === Side.BID ? target.price + through : Math.max(tick, target.price - through);
    }
    return this.guards(r);
  }

  private place(): Request {
    if (this.open.size > 0 && this.rng.chance(0.15)) return this.selfCross();
    const r = this.guards(this.basePlace(this.account(), this.market()));
    // post_only at the touch sometimes, to rest without crossing when following.
    if (r.tif === Tif.POST_ONLY && this.rng.chance(0.5)) {
      const opp = this.bestPrice(r.market, 1 - r.side);
      const tick = this.markets[r.market].tick;
      if (opp !== null) r.price_units = r.side === Side.BID ? opp - tick : opp + tick;
      if (r.price_units <= 0) r.price_units = tick;
    }
    return r;
  }

  private badPlace(): Request {
    const account = this.account();
    const r = this.basePlace(account, this.market());
    const m = this.markets[r.market];
    const kind = this.rng.int(0, 21);
    switch (kind) {
      case 0: r.order_type = OrderType.LIMIT; r.price_units = this.price(r.market, r.side) + Math.floor(m.tick / 2); break;
      case 1: r.quantity_units += this.rng.int(1, m.lot - 1); break;
      case 2: r.quantity_units = this.rng.pick([0, -m.lot, -1]); break;
      case 3: r.order_type = OrderType.MARKET; r.tif = Tif.IOC; r.price_units = this.price(r.market, r.side); break;
      case 4: r.order_type = OrderType.MARKET; r.tif = this.rng.pick([Tif.GTC, Tif.POST_ONLY]); r.price_units = 0; break;
      case 5: r.nonce = this.nonces[account] > 0 ? this.rng.int(0, this.nonces[account]) : 0; break;
      case 6: r.market = this.rng.pick([this.markets.length, 7, -1, -2]); break;
      case 7: {
        r.order_type = OrderType.LIMIT;
        r.tif = Tif.POST_ONLY;
        const opp = this.bestPrice(r.market, 1 - r.side);
        if (opp !== null) r.price_units = opp + (r.side === Side.BID ? 1 : -1) * this.rng.int(0, 2) * m.tick;
        else r.price_units = (m.mid + (r.side === Side.BID ? 6 : -6)) * m.tick;
        if (r.price_units <= 0) r.price_units = m.tick;
        break;
      }
      case 8: {
        const mine = this.openOf(account).filter((o) => o.client_order_id !== '');
        r.client_order_id = mine.length > 0 ? this.rng.pick(mine).client_order_id : this.usedClientId(account);
        break;
      }
      case 9: r.client_order_id = this.rng.pick(['x'.repeat(37), 'has space', 'dot.id', 'é', 'a/b', 'tab\t', '💥']); break;
      case 10: r.side = this.rng.pick([2, -1, 7]); break;
      case 11: r.order_type = this.rng.pick([2, -1]); break;
      case 12: r.tif = this.rng.pick([4, -1, 9]); break;
      case 13: r.order_type = OrderType.LIMIT; r.tif = Tif.GTC; r.price_units = this.rng.pick([0, -m.tick]); break;
      case 14: r.order_type = OrderType.LIMIT; r.price_units = m.tick * Math.floor(9e14 / m.tick); r.quantity_units = m.lot * 100_000; break;
      case 15: r.account = this.badAccount(); break;
      case 16: {
        // A big order to run balances out.
        r.quantity_units = m.lot * m.lots * this.rng.int(20, 200);
        break;
      }
      case 17: {
        // FOK deeper than the book.
        r.tif = Tif.FOK;
        r.quantity_units = m.lot * m.lots * this.rng.int(5, 30);
        break;
      }
      case 18: {
        // Market bid with everything: stops on balance.
        r.side = Side.BID;
        r.order_type = OrderType.MARKET;
        r.tif = this.rng.chance(0.5) ? Tif.IOC : Tif.FOK;
        r.price_units = 0;
        r.quantity_units = m.lot * m.lots * this.rng.int(5, 50);
        break;
      }
      case 20: r.stp = this.rng.pick([3, -1, 9, 0.5]); break;
      case 21: r.expires_after_ms = this.time_ms - this.rng.int(1, 10_000); break;
      default: {
        // Maximum-size price: notional check boundary.
        r.order_type = OrderType.LIMIT;
        r.price_units = m.tick * this.rng.int(1, 3);
        break;
      }
    }
    return r;
  }

  private cancel(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.CANCEL;
    r.account = this.rng.chance(0.03) ? this.badAccount() : this.ownerOrAny();
    r.nonce = this.nonce(r.account);
    const x = this.rng.float();
    const mine = this.openOf(r.account);
    if (x < 0.5) {
      r.order_id = this.someOrderId(r.account);
    } else if (x < 0.75) {
      const withId = mine.filter((o) => o.client_order_id !== '');
      r.client_order_id = withId.length > 0 && this.rng.chance(0.8) ? this.rng.pick(withId).client_order_id : this.usedClientId(r.account);
    } else if (x < 0.88) {
      const withId = mine.filter((o) => o.client_order_id !== '');
      if (withId.length > 0) {
        const o = this.rng.pick(withId);
        r.order_id = o.order_id;
        r.client_order_id = this.rng.chance(0.6) ? o.client_order_id : this.usedClientId(r.account);
      } else {
        r.order_id = this.someOrderId(r.account);
        r.client_order_id = this.usedClientId(r.account);
      }
    } else if (x < 0.95) {
      // Someone else's order.
      const others = this.openOf(null).filter((o) => o.account !== r.account);
      r.order_id = others.length > 0 ? this.rng.pick(others).order_id : this.someOrderId(r.account);
    } else {
      r.order_id = 0;
      r.client_order_id = '';
    }
    return r;
  }

  private amend(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.AMEND;
    r.account = this.ownerOrAny();
    const mine = this.openOf(r.account);
    const x = this.rng.float();
    let target: OpenOrder | null = null;
    if (x < 0.8 && mine.length > 0) target = this.rng.pick(mine);
    else if (x < 0.9) {
      const any = this.openOf(null);
      if (any.length > 0) target = this.rng.pick(any);
    }
    r.nonce = this.nonce(r.account);
    if (target === null) {
      r.order_id = this.someOrderId(r.account);
      r.market = this.market();
      r.price_units = this.price(r.market, Side.BID);
      r.quantity_units = this.quantity(r.market);
      return r;
    }
    const m = this.markets[target.market];
    r.order_id = target.order_id;
    const y = this.rng.int(0, 9);
    r.price_units = target.price;
    r.quantity_units = target.remaining;
    switch (y) {
      case 0: case 1:
        r.quantity_units = Math.max(m.lot, target.remaining - m.lot * this.rng.int(1, m.lots));
        break;
      case 2:
        r.quantity_units = target.remaining + m.lot * this.rng.int(1, m.lots);
        break;
      case 3: case 4:
        r.price_units = this.price(target.market, target.side);
        r.quantity_units = this.quantity(target.market);
        break;
      case 5: {
        // Cross the book.
        const opp = this.bestPrice(target.market, 1 - target.side);
        r.price_units = opp ?? this.price(target.market, target.side);
        if (this.rng.chance(0.5)) r.price_units += (target.side === Side.BID ? 1 : -1) * m.tick * this.rng.int(1, 3);
        if (r.price_units <= 0) r.price_units = m.tick;
        break;
      }
      case 6:
        r.price_units = target.price + this.rng.int(1, m.tick - 1);
        break;
      case 7:
        r.quantity_units = this.rng.pick([0, -m.lot, target.remaining + 1]);
        break;
      case 8:
        r.price_units = this.rng.pick([0, -m.tick]);
        break;
      default:
        // Same price, same quantity.
        break;
    }
    return r;
  }

  private cancelAll(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.CANCEL_ALL;
    r.account = this.account();
    r.nonce = this.nonce(r.account);
    const x = this.rng.float();
    r.market = x < 0.5 ? NO_MARKET : x < 0.9 ? this.market() : this.rng.pick([9, -2]);
    return r;
  }

  private pauseResume(kind: number): Request {
    const r = emptyRequest();
    r.kind = kind;
    r.account = 0;
    const paused = this.markets.map((m, i) => (m.paused ? i : -1)).filter((i) => i >= 0);
    if (kind === RequestKind.RESUME_MARKET && paused.length > 0 && this.rng.chance(0.9)) r.market = this.rng.pick(paused);
    else r.market = this.rng.chance(0.9) ? this.market() : this.rng.pick([NO_MARKET, 5]);
    return r;
  }

  private setFees(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.SET_FEES;
    r.market = this.rng.chance(0.4) ? NO_MARKET : this.rng.chance(0.9) ? this.market() : 6;
    const x = this.rng.float();
    if (x < 0.8) {
      r.maker_fee_bps = this.rng.pick([-5, -2, -1, 0, 1, 2, 4, 10]);
      r.taker_fee_bps = Math.abs(r.maker_fee_bps) + this.rng.int(0, 12);
    } else {
      const bad = this.rng.int(0, 3);
      r.maker_fee_bps = [-3, 0, -10001, 5][bad];
      r.taker_fee_bps = [2, 10001, 10001, 4][bad];
    }
    return r;
  }

  private setCredit(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.SET_CREDIT;
    r.account = this.rng.chance(0.05) ? this.badAccount() : this.account();
    const x = this.rng.float();
    if (x < 0.75) {
      r.credit_limit_units = (this.rng.chance(0.7) ? this.rng.int(20, 400) : this.rng.int(400, 3_000)) * 1_000_000;
      r.auto_cancel_ratio_ppm = this.rng.pick([500_000, 800_000, 900_000, 1_000_000, this.rng.int(1, 1_000_000)]);
    } else if (x < 0.88) {
      r.credit_limit_units = 0;
      r.auto_cancel_ratio_ppm = 900_000;
    } else {
      const bad = this.rng.int(0, 2);
      r.credit_limit_units = [-1, 1_000_000, 1_000_000][bad];
      r.auto_cancel_ratio_ppm = [900_000, 0, 1_000_001][bad];
    }
    return r;
  }

  private addMarket(): Request {
    const r = emptyRequest();
    r.kind = RequestKind.ADD_MARKET;
    const x = this.rng.float();
    r.asset = ADDED_MARKET.base;
    r.asset_quote = ADDED_MARKET.quote;
    r.tick_size_units = ADDED_MARKET.tick;
    r.lot_size_units = ADDED_MARKET.lot;
    if (x < 0.5 && !this.marketAdded) {
      this.marketAdded = true;
    } else if (x < 0.6) {
      r.asset = ETH; r.asset_quote = USDC; // exists
    } else if (x < 0.7) {
      r.asset_quote = r.asset; // same asset
    } else if (x < 0.8) {
      r.asset_quote = this.rng.pick([3, -1]);
    } else if (x < 0.9) {
      r.tick_size_units = this.rng.pick([0, 3, -100]);
    } else {
      r.asset = BTC; r.asset_quote = ETH; // a further market: MARKETS_MAX or accepted
    }
    return r;
  }

  private badOther(): Request {
    const r = emptyRequest();
    const k = this.rng.int(0, 7);
    switch (k) {
      case 0: // deposit to an unknown account, sometimes also with a bad asset or amount
        r.kind = RequestKind.DEPOSIT; r.account = this.badAccount();
        r.asset = this.rng.chance(0.2) ? 5 : USDC;
        r.amount_units = this.rng.pick([1_000_000, 1_000_000, 0, Number.MAX_SAFE_INTEGER]);
        break;
      case 1: // deposit of an unknown asset
        r.kind = RequestKind.DEPOSIT; r.account = this.account(); r.asset = this.rng.pick([3, -1]); r.amount_units = 5;
        break;
      case 2: // deposit not positive
        r.kind = RequestKind.DEPOSIT; r.account = this.account(); r.asset = USDC; r.amount_units = this.rng.pick([0, -5]);
        break;
      case 3: // deposit too large
        r.kind = RequestKind.DEPOSIT; r.account = this.account(); r.asset = this.rng.pick([ETH, USDC]);
        r.amount_units = Number.MAX_SAFE_INTEGER - this.rng.int(0, 1000);
        break;
      case 4: // withdraw more than available
        r.kind = RequestKind.WITHDRAW; r.account = this.account(); r.nonce = this.nonce(r.account);
        r.asset = this.rng.pick([ETH, BTC, USDC]); r.amount_units = 9_000_000_000_000;
        break;
      case 5: // withdraw unknown asset / not positive
        r.kind = RequestKind.WITHDRAW; r.account = this.account(); r.nonce = this.nonce(r.account);
        r.asset = this.rng.chance(0.5) ? 4 : USDC; r.amount_units = r.asset === 4 ? 5 : this.rng.pick([0, -1]);
        break;
      case 6: // withdraw from an unknown account / reused nonce
        r.kind = RequestKind.WITHDRAW;
        r.account = this.rng.chance(0.5) ? this.badAccount() : this.account();
        r.nonce = this.rng.chance(0.5) ? 0 : this.nonces[r.account] ?? 1;
        r.asset = USDC; r.amount_units = 1;
        break;
      default: // cancel-all / set credit with an unknown account
        r.kind = this.rng.chance(0.5) ? RequestKind.CANCEL_ALL : RequestKind.SET_CREDIT;
        r.account = this.badAccount();
        r.nonce = 1;
        r.market = NO_MARKET;
        r.credit_limit_units = this.rng.chance(0.2) ? -1 : 1_000_000;
        r.auto_cancel_ratio_ppm = this.rng.chance(0.2) ? 0 : 900_000;
        break;
    }
    return r;
  }
}

/** A whole sequence without following an engine (ids and prices are guesses). */
export function generateSequence(seed: number, length: number): { config: EngineConfig; requests: Request[] } {
  const g = new RequestGenerator(seed);
  const requests: Request[] = [];
  for (let i = 0; i < length; i++) requests.push(g.next());
  return { config: g.config, requests };
}

/** Sequence length for a seed: 60 to 150 requests. */
export function sequenceLength(seed: number): number {
  return 60 + (Math.imul(seed ^ 0x5bd1e995, 0x27d4eb2d) >>> 0) % 91;
}
