// The reference engine: docs/engine.md in code, written to be obviously right rather than fast.
//
// - Each book side is a plain array of order objects, re-sorted after every change (bids: price
//   descending, asks: price ascending, then priority_seq ascending).
// - Every money value is a bigint and every money computation is bigint arithmetic, so this engine
//   shares no arithmetic with src/money/ or the fast engine. Values leave the engine (events,
//   canonical state) through `num()`, which asserts they are safe integers.
// - Balance events are derived, not tracked: the (available, locked) of every (account, asset) a
//   request touches is remembered before the first touch, and at the end the pairs whose value
//   changed are reported with the highest reason that touched them.
//
// The differential tests (test/engine/differential.test.ts) hold the fast engine to this one.
//
// One class chain over three files, on the values of reference_values.ts (bigint money, plain
// objects): reference_state.ts (the state, books, balances and events), reference_orders.ts
// (PLACE and its matching, CANCEL / AMEND / CANCEL_ALL), and this one (batches and the inbox,
// apply, deposits and withdrawals, referrals and forced inclusion, agent keys and the dead-man
// switch, admin), as the fast engine keeps engine.ts apart from engine_orders.ts and
// engine_matching.ts.
import {
  INBOX_ENTRIES_MAX_DEFAULT,
  INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT,
  type EngineConfig,
  type MatchingEngine,
} from '../api.js';
import { forcedRequestOf, payloadRequest, requestOfForced } from '../programmes.js';
import { AGENT_VALIDITY_MS_MAX, AGENTS_LIVE_MAX } from '../agents.js';
import { NO_MARKET, RequestKind } from '../types.js';
import { BalanceReason, UpdateReason, type EventSink } from '../events.js';
import {
  DEAD_MAN_TIMEOUT_MS_MAX,
  DEAD_MAN_TIMEOUT_MS_MIN,
  FORCE_INCLUSION_DEADLINE_MS,
  REFERRAL_ACTIVE_MS,
  forcibleKind,
} from '../rules.js';
import { REJECT_CODES, Reject } from '../codes.js';
import type { Request } from '../types.js';
import { MAX_SAFE, Rejection, UNITS, isIndex } from './reference_values.js';
import { ReferenceOrders } from './reference_orders.js';

class ReferenceEngine extends ReferenceOrders implements MatchingEngine {
  // ---------------------------------------------------------------- batches and the inbox

  beginBatch(time_ms: number, out: EventSink): void {
    if (!(Number.isSafeInteger(time_ms) && time_ms >= this.time_ms)) throw new Error('reference engine: batch time went back');
    this.time_ms = time_ms;
    // Dead-man switches whose deadline has come, by (deadline, account): each cancels every
    // resting order of its account and disarms, before the inbox.
    const due = [...this.dead_man.entries()].filter(([, d]) => d <= time_ms).sort((x, y) => x[1] - y[1] || x[0] - y[0]);
    for (const [account] of due) {
      this.dead_man.delete(account);
      this.out = out;
      this.before = new Map();
      this.touchReason = new Map();
      out.accepted(RequestKind.DEAD_MAN_CANCEL, account, 0);
      for (const o of this.openOrdersOf(account)) this.cancelResting(o, UpdateReason.DEAD_MAN_SWITCH);
      this.emitBalances();
      this.out = null;
    }
    // Every entry whose hold has passed, oldest first.
    while (this.inbox.length > 0 && this.inbox[0].queued_ms + this.hold_ms <= time_ms) {
      const e = this.inbox.shift()!;
      const r = requestOfForced(e.account, e.request);
      out.inboxIncluded(e.entry_id, r);
      const reason = e.request.reject !== Reject.NONE ? e.request.reject
        : forcibleKind(r.kind) ? Reject.NONE : Reject.FORCED_KIND_INVALID;
      if (reason !== Reject.NONE) out.rejected(r.kind, r.account, REJECT_CODES[reason], reason);
      else this.apply(r, out);
    }
  }

  // ---------------------------------------------------------------- apply

  apply(request: Request, out: EventSink): void {
    this.out = out;
    this.before = new Map();
    this.touchReason = new Map();
    this.filledThisRequest = false;
    const r = request;
    try {
      if (!this.wellFormed(r)) throw new Rejection(Reject.REQUEST_MALFORMED);
      switch (r.kind) {
        case RequestKind.DEPOSIT: this.deposit(r); break;
        case RequestKind.WITHDRAW: this.withdraw(r); break;
        case RequestKind.PLACE: this.place(r); break;
        case RequestKind.CANCEL: this.cancel(r); break;
        case RequestKind.AMEND: this.amend(r); break;
        case RequestKind.CANCEL_ALL: this.cancelAll(r); break;
        case RequestKind.PAUSE_MARKET: this.pauseResume(r, 'paused'); break;
        case RequestKind.RESUME_MARKET: this.pauseResume(r, 'active'); break;
        case RequestKind.SET_FEES: this.setFees(r); break;
        case RequestKind.SET_CREDIT: this.setCredit(r); break;
        case RequestKind.ADD_MARKET: this.addMarket(r); break;
        case RequestKind.REFER: this.refer(r); break;
        case RequestKind.FORCE_INCLUDE: this.forceInclude(r); break;
        case RequestKind.CANCEL_AFTER: this.cancelAfter(r); break;
        case RequestKind.DISCONNECT_CANCEL: this.disconnectCancel(r); break;
        case RequestKind.APPROVE_AGENT: this.approveAgent(r); break;
        case RequestKind.REVOKE_AGENT: this.revokeAgent(r); break;
        default: throw new Rejection(Reject.KIND_UNKNOWN);
      }
    } catch (e) {
      if (!(e instanceof Rejection)) throw e;
      // Every handler validates completely before its first mutation.
      if (this.before.size !== 0) throw new Error('reference engine: rejected after a mutation');
      out.rejected(r.kind, r.account, REJECT_CODES[e.reason], e.reason);
      this.out = null;
      return;
    }
    if (this.filledThisRequest) this.creditAutoCancel();
    this.emitBalances();
    this.out = null;
  }

  /**
   * Out-of-contract input (never the decoder's output): numeric fields that are not safe integers.
   * Answered INVALID_REQUEST (REQUEST_MALFORMED) before any other check, so nothing below has to
   * guard against fractions, NaN or huge values.
   */
  private wellFormed(r: Request): boolean {
    const fields = [
      r.kind, r.account, r.nonce, r.market, r.side, r.order_type, r.tif, r.price_units,
      r.quantity_units, r.order_id, r.asset, r.asset_quote, r.amount_units, r.maker_fee_bps,
      r.taker_fee_bps, r.credit_limit_units, r.auto_cancel_ratio_ppm, r.tick_size_units,
      r.lot_size_units, r.referrer_account, r.inner_kind, r.inner_nonce, r.inner_reject, r.stp, r.expires_after_ms,
      r.signer, r.agent_account,
    ];
    return fields.every((x) => Number.isSafeInteger(x)) && typeof r.client_order_id === 'string';
  }

  // ---------------------------------------------------------------- DEPOSIT / WITHDRAW

  private deposit(r: Request): void {
    // An on-chain deposit (nonce = its contract deposit id) is credited once: ids only go up.
    if (r.nonce < 0) throw new Rejection(Reject.REQUEST_MALFORMED);
    if (r.nonce > 0 && r.nonce <= this.chain_deposit_high_water) throw new Rejection(Reject.NONCE_NOT_ABOVE_HIGH_WATER);
    if (!isIndex(r.asset, this.assets.length)) throw new Rejection(Reject.ASSET_UNKNOWN);
    const amount = BigInt(r.amount_units);
    if (amount <= 0n) throw new Rejection(Reject.AMOUNT_NOT_POSITIVE);
    // Lifetime deposits stay safe integers (so does supply, which is never larger).
    if (this.deposits[r.asset] + amount > MAX_SAFE) throw new Rejection(Reject.AMOUNT_TOO_LARGE);
    // The account comes last (docs/engine.md): a refused deposit never registers an address.
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    this.out!.accepted(r.kind, r.account, 0);
    if (r.nonce > 0) this.chain_deposit_high_water = r.nonce;
    this.addAvailable(r.account, r.asset, amount, BalanceReason.DEPOSIT);
    this.deposits[r.asset] += amount;
  }

  private withdraw(r: Request): void {
    this.checkSigned(r);
    if (!isIndex(r.asset, this.assets.length)) throw new Rejection(Reject.ASSET_UNKNOWN);
    const amount = BigInt(r.amount_units);
    if (amount <= 0n) throw new Rejection(Reject.AMOUNT_NOT_POSITIVE);
    if (this.available(r.account, r.asset) < amount) throw new Rejection(Reject.INSUFFICIENT_BALANCE);
    this.acceptSigned(r, 0);
    this.addAvailable(r.account, r.asset, -amount, BalanceReason.WITHDRAWAL);
    this.withdrawals[r.asset] += amount;
    this.pending.push({ account: r.account, nonce: r.nonce, asset: r.asset, amount });
  }

  // ---------------------------------------------------------------- REFER / FORCE_INCLUDE

  private refer(r: Request): void {
    this.checkSigned(r);
    if (!(r.referrer_account >= 1 && r.referrer_account < this.limits.accounts_max)) throw new Rejection(Reject.REFERRER_UNKNOWN);
    if (r.referrer_account === r.account) throw new Rejection(Reject.SELF_REFERRAL);
    if (this.referrals.has(r.account)) throw new Rejection(Reject.REFERRAL_EXISTS);
    this.acceptSigned(r, 0);
    const until = this.time_ms + REFERRAL_ACTIVE_MS;
    this.referrals.set(r.account, { referrer: r.referrer_account, until_ms: until, earned: this.assets.map(() => 0n) });
    this.out!.referral(r.account, r.referrer_account, until);
  }

  /** The envelope's nonce is its own per-account sequence; the trading mark is not touched. */
  private forceInclude(r: Request): void {
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    if (r.signer !== 0) throw new Rejection(Reject.AGENT_NOT_ALLOWED);
    if (!(r.nonce > (this.envelope_nonces.get(r.account) ?? 0))) throw new Rejection(Reject.ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER);
    if (!(Number.isSafeInteger(r.inner_reject) && r.inner_reject >= 0 && r.inner_reject < REJECT_CODES.length)) {
      throw new Rejection(Reject.REQUEST_MALFORMED);
    }
    const max = this.limits.inbox_entries_max ?? INBOX_ENTRIES_MAX_DEFAULT;
    const per_account = this.limits.inbox_entries_per_account_max ?? INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT;
    if (this.inbox.length >= max) throw new Rejection(Reject.INBOX_FULL);
    if (this.inbox.filter((e) => e.account === r.account).length >= per_account) throw new Rejection(Reject.INBOX_ACCOUNT_FULL);
    const entry_id = this.next_inbox_entry_id++;
    this.envelope_nonces.set(r.account, r.nonce);
    this.out!.accepted(r.kind, r.account, entry_id);
    const deadline = this.time_ms + FORCE_INCLUSION_DEADLINE_MS;
    this.inbox.push({
      entry_id, account: r.account, envelope_nonce: r.nonce, queued_ms: this.time_ms, deadline_ms: deadline,
      request: forcedRequestOf(payloadRequest(r), r.inner_reject),
    });
    this.out!.inboxQueued(entry_id, r.account, r.inner_kind, r.inner_nonce, deadline, r.referrer_account, r.inner_reject);
  }

  /** Operator request: the account's opted-in WebSocket closed. Refused when nothing rests. */
  private disconnectCancel(r: Request): void {
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    const open = this.openOrdersOf(r.account);
    if (open.length === 0) throw new Rejection(Reject.NOTHING_TO_CANCEL);
    this.out!.accepted(r.kind, r.account, 0);
    for (const o of open) this.cancelResting(o, UpdateReason.DISCONNECT);
  }

  // ---------------------------------------------------------------- agent keys

  /**
   * The user approves `agent_account` until amount_units (epoch ms), named client_order_id. Entries
   * not live at the batch time leave first (their marks raise the floor); a new entry's nonce mark
   * starts at the floor, so an agent approved again cannot have its old signatures replayed.
   */
  private approveAgent(r: Request): void {
    this.checkSigned(r);
    const agent = r.agent_account;
    if (!(agent >= 1 && agent < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNTS_MAX);
    if (agent === r.account) throw new Rejection(Reject.AGENT_SELF);
    if (!/^[A-Za-z0-9_.-]{1,16}$/.test(r.client_order_id)) throw new Rejection(Reject.AGENT_NAME_INVALID);
    const until = r.amount_units;
    if (!(until > this.time_ms && until - this.time_ms <= AGENT_VALIDITY_MS_MAX)) throw new Rejection(Reject.AGENT_VALIDITY_INVALID);
    const u = this.agent_keys.get(r.account) ?? { floor: 0, agents: new Map() };
    const live = [...u.agents.entries()].filter(([, e]) => e.until_ms > this.time_ms);
    if (!live.some(([a]) => a === agent) && live.length >= (this.limits.agents_live_per_account_max ?? AGENTS_LIVE_MAX)) throw new Rejection(Reject.AGENTS_MAX);
    this.agent_keys.set(r.account, u);
    this.acceptSigned(r, 0);
    for (const a of [...u.agents.keys()].sort((x, y) => x - y)) {
      if (u.agents.get(a)!.until_ms <= this.time_ms) this.dropAgent(r.account, a);
    }
    const e = u.agents.get(agent) ?? { name: '', until_ms: 0, nonce: u.floor };
    e.name = r.client_order_id;
    e.until_ms = until;
    u.agents.set(agent, e);
    this.out!.agent(r.account, agent, until, e.nonce, u.floor, e.name);
  }

  private revokeAgent(r: Request): void {
    this.checkSigned(r);
    if (this.agent_keys.get(r.account)?.agents.has(r.agent_account) !== true) throw new Rejection(Reject.AGENT_NOT_FOUND);
    this.acceptSigned(r, 0);
    this.dropAgent(r.account, r.agent_account);
  }

  private dropAgent(account: number, agent: number): void {
    const u = this.agent_keys.get(account)!;
    const e = u.agents.get(agent)!;
    u.agents.delete(agent);
    u.floor = Math.max(u.floor, e.nonce);
    this.out!.agent(account, agent, 0, 0, u.floor, '');
  }

  /** Arms the dead-man switch at batch time + timeout (amount_units); 0 disarms. */
  private cancelAfter(r: Request): void {
    this.checkSigned(r);
    const t = r.amount_units;
    if (!(t === 0 || (t >= DEAD_MAN_TIMEOUT_MS_MIN && t <= DEAD_MAN_TIMEOUT_MS_MAX))) throw new Rejection(Reject.TIMEOUT_INVALID);
    this.acceptSigned(r, 0);
    if (t === 0) this.dead_man.delete(r.account);
    else this.dead_man.set(r.account, this.time_ms + t);
  }

  // ---------------------------------------------------------------- admin

  private pauseResume(r: Request, status: 'active' | 'paused'): void {
    if (!isIndex(r.market, this.markets.length)) throw new Rejection(Reject.MARKET_UNKNOWN);
    const m = this.markets[r.market];
    this.out!.accepted(r.kind, r.account, 0);
    m.status = status;
    if (status === 'paused') {
      const resting = [...m.bids, ...m.asks].sort((a, b) => a.order_id - b.order_id);
      for (const o of resting) this.cancelResting(o, UpdateReason.MARKET_PAUSED);
    }
  }

  private setFees(r: Request): void {
    if (r.market !== NO_MARKET && !isIndex(r.market, this.markets.length)) throw new Rejection(Reject.MARKET_UNKNOWN);
    const maker = r.maker_fee_bps;
    const taker = r.taker_fee_bps;
    if (!(maker >= -10000 && Math.abs(maker) <= taker && taker <= 10000)) throw new Rejection(Reject.FEES_INVALID);
    this.out!.accepted(r.kind, r.account, 0);
    if (r.market === NO_MARKET) {
      this.maker_bps = BigInt(maker);
      this.taker_bps = BigInt(taker);
    } else {
      this.markets[r.market].fees = { maker: BigInt(maker), taker: BigInt(taker) };
    }
  }

  private setCredit(r: Request): void {
    if (!(r.credit_limit_units >= 0 && r.auto_cancel_ratio_ppm > 0 && r.auto_cancel_ratio_ppm <= 1_000_000)) {
      throw new Rejection(Reject.CREDIT_INVALID);
    }
    if (!(r.account >= 1 && r.account < this.limits.accounts_max)) throw new Rejection(Reject.ACCOUNT_UNKNOWN);
    this.out!.accepted(r.kind, r.account, 0);
    if (r.credit_limit_units === 0) this.credit.delete(r.account);
    else this.credit.set(r.account, { limit: BigInt(r.credit_limit_units), ratio_ppm: BigInt(r.auto_cancel_ratio_ppm) });
  }

  private addMarket(r: Request): void {
    const base = r.asset;
    const quote = r.asset_quote;
    if (!isIndex(base, this.assets.length) || !isIndex(quote, this.assets.length) || base === quote) {
      throw new Rejection(Reject.ASSET_UNKNOWN);
    }
    const tick = BigInt(r.tick_size_units);
    const lot = BigInt(r.lot_size_units);
    if (tick <= 0n || lot <= 0n || (tick * lot) % UNITS !== 0n) throw new Rejection(Reject.MARKET_INVALID);
    if (this.markets.some((m) => m.base === base && m.quote === quote)) throw new Rejection(Reject.MARKET_EXISTS);
    if (this.markets.length >= this.limits.markets_max) throw new Rejection(Reject.MARKETS_MAX);
    this.out!.accepted(r.kind, r.account, 0);
    this.markets.push({
      id: `${this.assets[base]}-${this.assets[quote]}`, base, quote, tick, lot, status: 'active',
      fees: null, mark: 0n, bids: [], asks: [],
    });
  }

}

export function createReferenceEngine(config: EngineConfig): MatchingEngine {
  return new ReferenceEngine(config);
}

