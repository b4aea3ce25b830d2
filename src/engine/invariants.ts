// Invariant checks (docs/engine.md, "Invariants"), independent of both engines:
// - checkInvariants: the state invariants, on a CanonicalState.
// - OrderTracker: the event-stream invariants, fed (request, events) one request at a time; it also
//   rebuilds balances and open orders from the events alone, so checkAgainstState can prove the
//   events are a faithful account of every state change.
// Independent of src/money/ and of both engines: notionals are bigint; sums of balances and locks
// use numbers only where that is provably exact (see checkInvariants).
import { AGENT_NAME_PATTERN, AGENTS_LIVE_MAX } from './agents.js';
import {
  INBOX_ENTRIES_MAX_DEFAULT, INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT,
  type CanonicalOrder, type CanonicalState, type EngineConfig,
} from './api.js';
import type { EngineEvent } from './event_log.js';
import {
  FEE_ACCOUNT,
  FORCE_INCLUSION_DEADLINE_MS,
  NO_MARKET,
  REFERRAL_SHARE_PERCENT,
  OrderStatus,
  OrderType,
  REJECT_CODES,
  RequestKind,
  Side,
  Tif,
  UpdateReason,
} from './types.js';
import type { Request } from './types.js';

const UNITS = 1_000_000n;
const CLIENT_ORDER_ID_RE = /^[A-Za-z0-9_-]{1,36}$/;

function notionalCeil(price: number, quantity: number): bigint {
  const p = BigInt(price) * BigInt(quantity);
  return (p + UNITS - 1n) / UNITS;
}

function isSafeNat(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Every state invariant that fails, as a sentence; empty when the state is sound. Runs after every
 * request of the differential tests, so the passing path allocates little: messages are built only
 * on failure, and sums use numbers where that is provably exact (partial sums of naturals that
 * must end at most MAX_SAFE_INTEGER: exceeding it is itself the violation), bigint elsewhere.
 */
export function checkInvariants(state: CanonicalState, config: EngineConfig): string[] {
  const v: string[] = [];
  const nAssets = config.assets.length;
  const limits = config.limits;

  if (!isSafeNat(state.next_order_id) || state.next_order_id < 1) v.push(`next_order_id = ${state.next_order_id} is not a positive safe integer`);
  if (!isSafeNat(state.next_fill_id) || state.next_fill_id < 1) v.push(`next_fill_id = ${state.next_fill_id} is not a positive safe integer`);
  if (!isSafeNat(state.next_priority_seq) || state.next_priority_seq < 1) v.push(`next_priority_seq = ${state.next_priority_seq} is not a positive safe integer`);
  if (!feesValid(state.fees)) v.push(`global fees ${JSON.stringify(state.fees)} invalid`);

  // Balances: safe, non-negative, accounts ascending, fee account listed. total[i] and
  // lockedSum[account * nAssets + i] are exact while <= MAX_SAFE (inputs are checked naturals).
  const total = new Array<number>(nAssets).fill(0);
  const accountLocked = new Map<number, number>();
  let prevAccount = -1;
  for (const a of state.accounts) {
    if (!(Number.isSafeInteger(a.account) && a.account > prevAccount)) v.push(`accounts not ascending at ${a.account}`);
    prevAccount = a.account;
    if (a.account !== FEE_ACCOUNT && !(a.account >= 1 && a.account < limits.accounts_max)) {
      v.push(`account ${a.account} outside [1, accounts_max)`);
    }
    if (!isSafeNat(a.nonce_high_water)) v.push(`account ${a.account} nonce ${a.nonce_high_water} not a safe natural`);
    if (a.balances.length !== nAssets) v.push(`account ${a.account} has ${a.balances.length} balances, ${nAssets} assets`);
    let nonZero = a.nonce_high_water > 0;
    for (let i = 0; i < a.balances.length && i < nAssets; i++) {
      const b = a.balances[i];
      const av = b[0];
      const lk = b[1];
      if (!isSafeNat(av)) v.push(`account ${a.account} asset ${i} available ${av} not a safe natural`);
      if (!isSafeNat(lk)) v.push(`account ${a.account} asset ${i} locked ${lk} not a safe natural`);
      if (av !== 0 || lk !== 0) nonZero = true;
      total[i] += av + lk;
      if (lk !== 0) accountLocked.set(a.account * nAssets + i, lk);
    }
    if (!nonZero && a.account !== FEE_ACCOUNT) v.push(`account ${a.account} listed with zero balances and nonce`);
  }
  if (state.accounts.length === 0 || state.accounts[0].account !== FEE_ACCOUNT) v.push('fee account 0 not listed first');

  // Conservation.
  if (state.deposits_units.length !== nAssets || state.withdrawals_units.length !== nAssets) {
    v.push('deposits/withdrawals arrays do not have one entry per asset');
  }
  for (let i = 0; i < nAssets; i++) {
    const d = state.deposits_units[i];
    const w = state.withdrawals_units[i];
    if (!isSafeNat(d) || !isSafeNat(w)) {
      v.push(`asset ${i} deposits ${d} / withdrawals ${w} not safe naturals`);
      continue;
    }
    if (w > d) v.push(`asset ${i}: withdrawals ${w} exceed deposits ${d}`);
    if (total[i] > MAX_SAFE || total[i] !== d - w) {
      v.push(`conservation: asset ${i} balances sum ${total[i]} != deposits - withdrawals ${d - w}`);
    }
  }

  // Books.
  const orderLocked = new Map<number, number>();
  const seenIds = new Set<number>();
  const seenSeqs = new Set<number>();
  const openPerAccount = new Map<number, number>();
  let coids: Set<string> | null = null;
  let openTotal = 0;
  for (let mi = 0; mi < state.markets.length; mi++) {
    const m = state.markets[mi];
    if (!(m.base >= 0 && m.base < nAssets && m.quote >= 0 && m.quote < nAssets && m.base !== m.quote)) {
      v.push(`${marketAt(mi, m.id)}: bad assets ${m.base}/${m.quote}`);
      continue;
    }
    if (!(isSafeNat(m.tick_size_units) && m.tick_size_units > 0 && isSafeNat(m.lot_size_units) && m.lot_size_units > 0 &&
      (BigInt(m.tick_size_units) * BigInt(m.lot_size_units)) % UNITS === 0n)) {
      v.push(`${marketAt(mi, m.id)}: bad tick/lot ${m.tick_size_units}/${m.lot_size_units}`);
      continue;
    }
    if (m.status !== 'active' && m.status !== 'paused') v.push(`${marketAt(mi, m.id)}: status ${String(m.status)}`);
    if (m.status === 'paused' && (m.bids.length > 0 || m.asks.length > 0)) v.push(`${marketAt(mi, m.id)}: paused with resting orders`);
    if (!isSafeNat(m.mark_price_units) || m.mark_price_units % m.tick_size_units !== 0) v.push(`${marketAt(mi, m.id)}: mark ${m.mark_price_units}`);
    if (m.fees !== null && !feesValid(m.fees)) v.push(`${marketAt(mi, m.id)}: fees ${JSON.stringify(m.fees)} invalid`);
    for (let side = 0; side < 2; side++) {
      const orders = side === Side.BID ? m.bids : m.asks;
      const asset = side === Side.BID ? m.quote : m.base;
      let prev: CanonicalOrder | null = null;
      for (const o of orders) {
        if (!(isSafeNat(o.order_id) && isSafeNat(o.account) && isSafeNat(o.price_units) && isSafeNat(o.quantity_units) &&
          isSafeNat(o.filled_units) && isSafeNat(o.remaining_units) && isSafeNat(o.locked_units) && isSafeNat(o.priority_seq))) {
          v.push(`${orderAt(mi, m.id, side, o.order_id)}: a field is not a safe natural: ${JSON.stringify(o)}`);
          continue;
        }
        if (o.side !== side) v.push(`${orderAt(mi, m.id, side, o.order_id)}: side ${o.side} on the wrong side`);
        if (o.tif !== Tif.GTC && o.tif !== Tif.POST_ONLY) v.push(`${orderAt(mi, m.id, side, o.order_id)}: tif ${o.tif} rests (only gtc/post_only may)`);
        if (!(o.order_id >= 1 && o.order_id < state.next_order_id)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: id not below next_order_id`);
        if (!(o.priority_seq >= 1 && o.priority_seq < state.next_priority_seq)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: priority_seq ${o.priority_seq} not below next`);
        if (seenIds.has(o.order_id)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: order id rests twice`);
        seenIds.add(o.order_id);
        if (seenSeqs.has(o.priority_seq)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: priority_seq ${o.priority_seq} used twice`);
        seenSeqs.add(o.priority_seq);
        if (!(o.account >= 1 && o.account < limits.accounts_max)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: account ${o.account} out of range`);
        if (!(o.price_units > 0) || o.price_units % m.tick_size_units !== 0) v.push(`${orderAt(mi, m.id, side, o.order_id)}: price ${o.price_units} not a positive tick multiple`);
        if (!(o.remaining_units > 0)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: rests with remaining ${o.remaining_units}`);
        if (o.quantity_units % m.lot_size_units !== 0 || o.filled_units % m.lot_size_units !== 0 ||
          o.remaining_units % m.lot_size_units !== 0) {
          v.push(`${orderAt(mi, m.id, side, o.order_id)}: quantity/filled/remaining not lot multiples`);
        }
        if (o.filled_units + o.remaining_units !== o.quantity_units) {
          v.push(`${orderAt(mi, m.id, side, o.order_id)}: filled ${o.filled_units} + remaining ${o.remaining_units} != quantity ${o.quantity_units}`);
        }
        if (side === Side.ASK) {
          if (o.locked_units !== o.remaining_units) v.push(`${orderAt(mi, m.id, side, o.order_id)}: ask lock ${o.locked_units} != remaining ${o.remaining_units}`);
        } else if (BigInt(o.locked_units) < notionalCeil(o.price_units, o.remaining_units)) {
          v.push(`${orderAt(mi, m.id, side, o.order_id)}: bid lock ${o.locked_units} < notionalCeil(${o.price_units}, ${o.remaining_units})`);
        }
        if (o.client_order_id !== '') {
          if (!CLIENT_ORDER_ID_RE.test(o.client_order_id)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: client_order_id ${JSON.stringify(o.client_order_id)} invalid`);
          if (coids === null) coids = new Set();
          const key = `${o.account}:${o.client_order_id}`;
          if (coids.has(key)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: client_order_id ${o.client_order_id} duplicated among open orders`);
          coids.add(key);
        }
        if (prev !== null) {
          if (prev.price_units === o.price_units) {
            if (!(prev.priority_seq < o.priority_seq)) v.push(`${orderAt(mi, m.id, side, o.order_id)}: FIFO broken at price ${o.price_units} (seq ${prev.priority_seq} before ${o.priority_seq})`);
          } else if (side === Side.BID ? prev.price_units < o.price_units : prev.price_units > o.price_units) {
            v.push(`${orderAt(mi, m.id, side, o.order_id)}: not sorted best-first (${prev.price_units} before ${o.price_units})`);
          }
        }
        prev = o;
        const key = o.account * nAssets + asset;
        orderLocked.set(key, (orderLocked.get(key) ?? 0) + o.locked_units);
        openPerAccount.set(o.account, (openPerAccount.get(o.account) ?? 0) + 1);
        openTotal++;
      }
    }
    if (m.bids.length > 0 && m.asks.length > 0 && !(m.bids[0].price_units < m.asks[0].price_units)) {
      v.push(`${marketAt(mi, m.id)}: crossed book, best bid ${m.bids[0].price_units} >= best ask ${m.asks[0].price_units}`);
    }
  }
  if (state.markets.length > limits.markets_max) v.push(`${state.markets.length} markets > markets_max`);
  if (openTotal > limits.orders_open_max) v.push(`${openTotal} open orders > orders_open_max`);
  for (const [account, n] of openPerAccount) {
    if (n > limits.orders_open_per_account_max) v.push(`account ${account}: ${n} open orders > per-account max`);
  }

  // Locked balances equal what open orders hold (both maps hold only non-zero entries).
  for (const [key, lk] of accountLocked) {
    const need = orderLocked.get(key) ?? 0;
    if (need > MAX_SAFE || lk !== need) {
      v.push(`account ${Math.floor(key / nAssets)} asset ${key % nAssets}: locked ${lk} != open orders' locks ${need}`);
    }
  }
  for (const [key, need] of orderLocked) {
    if (!accountLocked.has(key) && need !== 0) {
      v.push(`account ${Math.floor(key / nAssets)} asset ${key % nAssets}: locked 0 != open orders' locks ${need}`);
    }
  }

  // Credit settings and pending withdrawals.
  let prevCredit = -1;
  for (const c of state.credit) {
    if (!(c.account > prevCredit)) v.push(`credit not ascending at ${c.account}`);
    prevCredit = c.account;
    if (!(isSafeNat(c.credit_limit_units) && c.credit_limit_units > 0)) v.push(`credit ${c.account}: limit ${c.credit_limit_units}`);
    if (!(c.auto_cancel_ratio_ppm > 0 && c.auto_cancel_ratio_ppm <= 1_000_000)) v.push(`credit ${c.account}: ratio ${c.auto_cancel_ratio_ppm}`);
  }
  if (state.pending_withdrawals.length > 0) {
    const pendingSum = new Array<number>(nAssets).fill(0);
    let prevW: { account: number; nonce: number } | null = null;
    for (const w of state.pending_withdrawals) {
      if (prevW !== null && !(w.account > prevW.account || (w.account === prevW.account && w.nonce > prevW.nonce))) {
        v.push(`pending withdrawals not ascending at (${w.account}, ${w.nonce})`);
      }
      prevW = w;
      if (!(isSafeNat(w.amount_units) && w.amount_units > 0)) v.push(`pending withdrawal (${w.account}, ${w.nonce}) amount ${w.amount_units}`);
      if (w.asset >= 0 && w.asset < nAssets) pendingSum[w.asset] += w.amount_units;
      else v.push(`pending withdrawal (${w.account}, ${w.nonce}) asset ${w.asset}`);
    }
    for (let i = 0; i < nAssets; i++) {
      if (pendingSum[i] > state.withdrawals_units[i]) {
        v.push(`asset ${i}: pending withdrawals ${pendingSum[i]} exceed withdrawals ${state.withdrawals_units[i]}`);
      }
    }
  }
  checkProgrammes(state, config, v);
  return v;
}

/** Referrals and the forced-inclusion inbox (docs/engine.md, "Referrals", "Forced inclusion"). */
function checkProgrammes(state: CanonicalState, config: EngineConfig, v: string[]): void {
  const limits = config.limits;
  let prev = 0;
  for (const r of state.referrals) {
    if (!(r.account > prev)) v.push(`referrals not ascending at ${r.account}`);
    prev = r.account;
    if (r.referrer === r.account) v.push(`account ${r.account} refers itself`);
    if (!(r.referrer >= 1 && r.referrer < limits.accounts_max)) v.push(`referral ${r.account}: referrer ${r.referrer} is not an account id`);
    if (!isSafeNat(r.active_until_ms)) v.push(`referral ${r.account}: active_until ${r.active_until_ms}`);
    if (r.earned_units.length !== config.assets.length || !r.earned_units.every(isSafeNat)) {
      v.push(`referral ${r.account}: earnings ${JSON.stringify(r.earned_units)}`);
    }
  }
  const max = limits.inbox_entries_max ?? INBOX_ENTRIES_MAX_DEFAULT;
  const per_account_max = limits.inbox_entries_per_account_max ?? INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT;
  if (state.inbox.length > max) v.push(`inbox holds ${state.inbox.length} entries, limit ${max}`);
  const per_account = new Map<number, number>();
  let prevId = 0;
  let prevQueued = 0;
  for (const e of state.inbox) {
    if (!(e.entry_id > prevId && e.entry_id < state.next_inbox_entry_id)) v.push(`inbox entry ${e.entry_id} out of order or not below ${state.next_inbox_entry_id}`);
    prevId = e.entry_id;
    if (e.queued_ms < prevQueued) v.push(`inbox entry ${e.entry_id} queued before the entry ahead of it`);
    prevQueued = e.queued_ms;
    if (e.deadline_ms !== e.queued_ms + FORCE_INCLUSION_DEADLINE_MS) v.push(`inbox entry ${e.entry_id}: deadline is not queued + 24 h`);
    if (!(e.account >= 1 && e.account < limits.accounts_max)) v.push(`inbox entry ${e.entry_id}: account ${e.account}`);
    per_account.set(e.account, (per_account.get(e.account) ?? 0) + 1);
    if (!(e.request.reject >= 0 && e.request.reject < REJECT_CODES.length)) v.push(`inbox entry ${e.entry_id}: verdict ${e.request.reject}`);
  }
  for (const [account, n] of per_account) if (n > per_account_max) v.push(`account ${account} has ${n} inbox entries, limit ${per_account_max}`);
  let prevDeadMan = 0;
  for (const d of state.dead_man) {
    if (!(d.account > prevDeadMan && d.account < limits.accounts_max)) v.push(`dead-man switch of account ${d.account} out of order or not an account id`);
    prevDeadMan = d.account;
    // Armed at batch time + at least 1 s, fired by the first batch at or past it: never due now.
    if (!(isSafeNat(d.deadline_ms) && d.deadline_ms > state.batch_time_ms)) v.push(`dead-man switch of account ${d.account}: deadline ${d.deadline_ms} not after the batch time ${state.batch_time_ms}`);
  }
  checkAgents(state, config, v);
}

/**
 * Agent keys (src/engine/agents.ts): ascending users and agents, account ids, never the user
 * itself; names of the pattern; at most the limit of entries (an approval prunes the expired ones
 * first, so even the expired entries awaiting pruning stay within it).
 */
function checkAgents(state: CanonicalState, config: EngineConfig, v: string[]): void {
  const limits = config.limits;
  const live_max = limits.agents_live_per_account_max ?? AGENTS_LIVE_MAX;
  let prev = 0;
  for (const u of state.agents) {
    if (!(u.account > prev && u.account < limits.accounts_max)) v.push(`agents of account ${u.account} out of order or not an account id`);
    prev = u.account;
    if (!isSafeNat(u.nonce_floor)) v.push(`agents of account ${u.account}: nonce floor ${u.nonce_floor}`);
    if (u.agents.length === 0 && u.nonce_floor === 0) v.push(`agents of account ${u.account}: an empty row`);
    if (u.agents.length > live_max) v.push(`account ${u.account} has ${u.agents.length} agent entries, limit ${live_max}`);
    let prevAgent = 0;
    for (const a of u.agents) {
      const at = `agent ${a.agent} of account ${u.account}`;
      if (!(a.agent > prevAgent && a.agent < limits.accounts_max)) v.push(`${at}: out of order or not an account id`);
      prevAgent = a.agent;
      if (a.agent === u.account) v.push(`${at}: the user itself`);
      if (!AGENT_NAME_PATTERN.test(a.name)) v.push(`${at}: name ${JSON.stringify(a.name)}`);
      if (!(isSafeNat(a.valid_until_ms) && a.valid_until_ms > 0)) v.push(`${at}: valid_until ${a.valid_until_ms}`);
      if (!isSafeNat(a.nonce_high_water)) v.push(`${at}: nonce ${a.nonce_high_water}`);
    }
  }
}

function marketAt(mi: number, id: string): string {
  return `market ${mi} (${id})`;
}

function orderAt(mi: number, id: string, side: number, order_id: number): string {
  return `${marketAt(mi, id)} ${side === Side.BID ? 'bids' : 'asks'} order ${order_id}`;
}

function feesValid(f: { maker_fee_bps: number; taker_fee_bps: number }): boolean {
  return Number.isSafeInteger(f.maker_fee_bps) && Number.isSafeInteger(f.taker_fee_bps) &&
    f.maker_fee_bps >= -10000 && Math.abs(f.maker_fee_bps) <= f.taker_fee_bps && f.taker_fee_bps <= 10000;
}

interface TrackedOrder {
  order_id: number;
  account: number;
  market: number;
  side: number;
  order_type: number;
  tif: number;
  price: number;
  quantity: number;
  /** Sum of the order's fills seen in fill events. */
  filled: number;
  remaining: number;
  /** Lock, time priority and last fill price as its last update carried them. */
  locked: number;
  priority_seq: number;
  last_fill_price: number;
  done: boolean;
}

/**
 * Consumes (request, events) pairs in order and checks the event-stream invariants:
 * - event shape: one `rejected` alone (with the code its reason answers with), or `accepted` of
 *   the request's kind first; balance events last, ascending by (account, asset), non-negative;
 * - post_only orders never take; FOK takers fill completely or not at all; ioc, fok and market
 *   orders never end open or partially filled;
 * - every order update: filled + remaining + cancelled = quantity, remaining 0 when terminal,
 *   filled equal to the sum of the order's fills, nothing after a terminal update; a live one has
 *   a time priority, a terminal one neither lock nor priority (checkAgainstState then holds each
 *   resting order's lock, priority and last fill price, and next_priority_seq, to its updates);
 * - fills at the maker's price, never worse than the taker's limit, fill ids consecutive.
 */
export class OrderTracker {
  private readonly orders = new Map<number, TrackedOrder>();
  /** Balances rebuilt from balance events: key account * nAssets + asset. */
  private readonly balances = new Map<number, [number, number]>();
  private nextFillId = -1;
  /** 1 + the highest time priority an order update carried (every order entering a book gets one). */
  private next_priority_seq = 1;

  constructor(private readonly config: EngineConfig) {}

  observe(request: Request, events: readonly EngineEvent[]): string[] {
    const v: string[] = [];
    if (events.length === 0) return ['no events for a request'];
    const first = events[0];
    if (first.type === 'rejected') {
      if (events.length !== 1) v.push('rejected is not the only event');
      if (first.kind !== request.kind || first.account !== request.account) v.push('rejected kind/account differ from the request');
      if (first.reason > 0 && first.code !== REJECT_CODES[first.reason]) v.push(`rejected code ${first.code} is not the code of reason ${first.reason}`);
      return v;
    }
    if (first.type !== 'accepted') return ['first event is neither accepted nor rejected'];
    if (first.kind !== request.kind || first.account !== request.account) v.push('accepted kind/account differ from the request');

    let takerId = 0;
    if (request.kind === RequestKind.PLACE) {
      takerId = first.order_id;
      if (this.orders.has(takerId)) v.push(`PLACE accepted with reused order id ${takerId}`);
      this.orders.set(takerId, {
        order_id: takerId, account: request.account, market: request.market, side: request.side,
        order_type: request.order_type, tif: request.tif,
        price: request.order_type === OrderType.MARKET ? 0 : request.price_units,
        quantity: request.quantity_units, filled: 0, remaining: request.quantity_units,
        locked: 0, priority_seq: 0, last_fill_price: 0, done: false,
      });
    } else if (request.kind === RequestKind.AMEND) {
      takerId = first.order_id;
      const o = this.orders.get(takerId);
      if (o === undefined || o.done) {
        v.push(`AMEND accepted for order ${takerId} not known open`);
      } else {
        o.price = request.price_units;
        o.quantity = o.filled + request.quantity_units;
      }
    } else if (request.kind === RequestKind.CANCEL) {
      const o = this.orders.get(first.order_id);
      if (o === undefined || o.done) v.push(`CANCEL accepted for order ${first.order_id} not known open`);
    }

    let sawBalance = false;
    let lastBalanceKey = -1;
    let takerUpdates = 0;
    const nAssets = this.config.assets.length;
    for (let i = 1; i < events.length; i++) {
      const e = events[i];
      switch (e.type) {
        case 'accepted':
        case 'rejected':
          v.push(`event ${i}: a second ${e.type}`);
          break;
        case 'fill': {
          if (sawBalance) v.push(`event ${i}: fill after balance events`);
          if (this.nextFillId >= 0 && e.fill_id !== this.nextFillId) v.push(`fill id ${e.fill_id}, expected ${this.nextFillId}`);
          this.nextFillId = e.fill_id + 1;
          if (e.taker_order_id !== takerId) v.push(`fill ${e.fill_id}: taker ${e.taker_order_id} is not the request's order ${takerId}`);
          if (!(e.quantity_units > 0)) v.push(`fill ${e.fill_id}: quantity ${e.quantity_units}`);
          if (!(e.taker_fee_units >= 0)) v.push(`fill ${e.fill_id}: taker fee ${e.taker_fee_units} negative`);
          if (e.maker_fee_units < 0 && -e.maker_fee_units > e.taker_fee_units) v.push(`fill ${e.fill_id}: rebate above the taker fee`);
          const t = this.orders.get(e.taker_order_id);
          const m = this.orders.get(e.maker_order_id);
          if (t === undefined || m === undefined) {
            v.push(`fill ${e.fill_id}: unknown taker or maker`);
            break;
          }
          if (t.tif === Tif.POST_ONLY) v.push(`fill ${e.fill_id}: post_only order ${t.order_id} took liquidity`);
          if (m.done) v.push(`fill ${e.fill_id}: maker ${m.order_id} already terminal`);
          if (t.side === m.side || e.taker_side !== t.side) v.push(`fill ${e.fill_id}: sides wrong`);
          if (t.market !== m.market || e.market !== t.market) v.push(`fill ${e.fill_id}: markets differ`);
          if (e.taker_account !== t.account || e.maker_account !== m.account) v.push(`fill ${e.fill_id}: accounts wrong`);
          // Self-trade prevention (DECISIONS "Market-maker features"): never one account on both sides.
          if (e.taker_account === e.maker_account) v.push(`fill ${e.fill_id}: account ${e.taker_account} on both sides (a self-trade)`);
          if (e.price_units !== m.price) v.push(`fill ${e.fill_id}: price ${e.price_units} is not the maker price ${m.price}`);
          if (t.order_type === OrderType.LIMIT) {
            const worse = t.side === Side.BID ? e.price_units > t.price : e.price_units < t.price;
            if (worse) v.push(`fill ${e.fill_id}: price ${e.price_units} worse than the taker limit ${t.price}`);
          }
          for (const o of [t, m]) {
            o.filled += e.quantity_units;
            if (o.filled > o.quantity) v.push(`fill ${e.fill_id}: order ${o.order_id} overfilled`);
          }
          break;
        }
        case 'orderUpdate': {
          if (sawBalance) v.push(`event ${i}: order update after balance events`);
          const o = this.orders.get(e.order_id);
          const at = `order ${e.order_id} update (status ${e.status}, reason ${e.reason})`;
          if (o === undefined) {
            v.push(`${at}: unknown order`);
            break;
          }
          if (o.done) v.push(`${at}: after a terminal update`);
          if (e.account !== o.account || e.market !== o.market || e.side !== o.side) v.push(`${at}: account/market/side changed`);
          if (e.price_units !== o.price) v.push(`${at}: price ${e.price_units}, expected ${o.price}`);
          if (e.quantity_units !== o.quantity) v.push(`${at}: quantity ${e.quantity_units}, expected ${o.quantity}`);
          if (e.filled_units !== o.filled) v.push(`${at}: filled ${e.filled_units}, fills sum to ${o.filled}`);
          const terminal = e.status === OrderStatus.FILLED || e.status === OrderStatus.CANCELLED;
          if (terminal && e.remaining_units !== 0) v.push(`${at}: terminal with remaining ${e.remaining_units}`);
          switch (e.status) {
            case OrderStatus.OPEN:
              if (e.filled_units !== 0) v.push(`${at}: open with fills`);
              break;
            case OrderStatus.PARTIALLY_FILLED:
              if (!(e.filled_units > 0)) v.push(`${at}: partially filled without fills`);
              break;
            case OrderStatus.FILLED:
              if (e.filled_units !== e.quantity_units) v.push(`${at}: filled ${e.filled_units} != quantity ${e.quantity_units}`);
              break;
            case OrderStatus.CANCELLED:
              if (!(e.filled_units < e.quantity_units)) v.push(`${at}: cancelled with nothing left to cancel`);
              break;
            default:
              v.push(`${at}: unexpected status`);
          }
          if (!terminal) {
            if (!(e.remaining_units > 0)) v.push(`${at}: live with remaining ${e.remaining_units}`);
            if (e.filled_units + e.remaining_units !== e.quantity_units) v.push(`${at}: filled + remaining != quantity`);
            if (o.order_type === OrderType.MARKET || o.tif === Tif.IOC || o.tif === Tif.FOK) {
              v.push(`${at}: ${o.order_type === OrderType.MARKET ? 'market' : 'ioc/fok'} order left live`);
            }
          }
          if (e.order_id === takerId && e.reason !== UpdateReason.CREDIT_AUTO_CANCEL) {
            takerUpdates++;
            if (terminal && o.tif === Tif.FOK && e.filled_units !== 0 && e.filled_units !== e.quantity_units) {
              v.push(`${at}: FOK partially filled`);
            }
          }
          if (terminal && (e.locked_units !== 0 || e.priority_seq !== 0)) v.push(`${at}: closed with lock ${e.locked_units}, priority ${e.priority_seq}`);
          if (!terminal && !(e.priority_seq >= 1)) v.push(`${at}: live without a time priority`);
          o.remaining = e.remaining_units;
          o.locked = e.locked_units;
          o.priority_seq = e.priority_seq;
          o.last_fill_price = e.last_fill_price_units;
          if (e.priority_seq >= this.next_priority_seq) this.next_priority_seq = e.priority_seq + 1;
          if (terminal) o.done = true;
          break;
        }
        case 'referral':
          if (request.kind !== RequestKind.REFER || i !== 1) v.push(`event ${i}: referral outside an accepted REFER`);
          else if (e.referred !== request.account || e.referrer !== request.referrer_account) v.push('referral event names other accounts than the request');
          break;
        case 'referralShare': {
          if (sawBalance) v.push(`event ${i}: referral share after balance events`);
          const f = events[i - 1];
          if (f.type !== 'fill' || f.fill_id !== e.fill_id) {
            v.push(`event ${i}: referral share does not follow its fill ${e.fill_id}`);
          } else {
            if (f.taker_account !== e.referred) v.push(`referral share of fill ${e.fill_id} credited for a non-taker`);
            const cap = Math.floor((f.taker_fee_units * REFERRAL_SHARE_PERCENT) / 100);
            if (!(e.amount_units > 0 && e.amount_units <= cap)) v.push(`referral share ${e.amount_units} of fill ${e.fill_id} outside (0, ${cap}]`);
          }
          break;
        }
        case 'inboxQueued':
          if (request.kind !== RequestKind.FORCE_INCLUDE || i !== 1) v.push(`event ${i}: inbox entry outside an accepted FORCE_INCLUDE`);
          else if (e.entry_id !== first.order_id || e.kind !== request.inner_kind || e.nonce !== request.inner_nonce ||
            e.referrer_account !== request.referrer_account || e.reject !== request.inner_reject) v.push('inbox entry differs from its request');
          break;
        case 'inboxIncluded':
          v.push(`event ${i}: an inclusion inside a request's events`);
          break;
        case 'balance': {
          sawBalance = true;
          const key = e.account * nAssets + e.asset;
          if (!(e.asset >= 0 && e.asset < nAssets)) v.push(`balance event for asset ${e.asset}`);
          if (key <= lastBalanceKey) v.push(`balance events not ascending / duplicated at (${e.account}, ${e.asset})`);
          lastBalanceKey = key;
          if (!isSafeNat(e.available_units) || !isSafeNat(e.locked_units)) v.push(`balance (${e.account}, ${e.asset}) negative or unsafe`);
          const prev = this.balances.get(key) ?? [0, 0];
          if (prev[0] === e.available_units && prev[1] === e.locked_units) v.push(`balance event (${e.account}, ${e.asset}) without a change`);
          this.balances.set(key, [e.available_units, e.locked_units]);
          break;
        }
      }
    }
    if ((request.kind === RequestKind.PLACE || request.kind === RequestKind.AMEND) && takerUpdates !== 1) {
      v.push(`the request's order ${takerId} got ${takerUpdates} updates of its own, expected 1`);
    }
    if (request.kind === RequestKind.CANCEL) {
      const o = this.orders.get(first.order_id);
      if (o !== undefined && !o.done) v.push(`CANCEL of ${first.order_id} left it live`);
    }
    if (request.kind === RequestKind.CANCEL_ALL || request.kind === RequestKind.DEAD_MAN_CANCEL || request.kind === RequestKind.DISCONNECT_CANCEL) {
      const market = request.kind === RequestKind.CANCEL_ALL ? request.market : NO_MARKET;
      for (const o of this.orders.values()) {
        if (!o.done && o.account === request.account && (market === NO_MARKET || o.market === market)) {
          v.push(`cancel-all of kind ${request.kind} left order ${o.order_id} live`);
        }
      }
    }
    if (request.kind === RequestKind.PAUSE_MARKET) {
      for (const o of this.orders.values()) {
        if (!o.done && o.market === request.market) v.push(`PAUSE_MARKET left order ${o.order_id} live`);
      }
    }
    return v;
  }

  /** Compares what the events said with the state: balances and the set of open orders. */
  checkAgainstState(state: CanonicalState): string[] {
    const v: string[] = [];
    const nAssets = this.config.assets.length;
    const fromState = new Map<number, [number, number]>();
    for (const a of state.accounts) {
      a.balances.forEach((b, asset) => {
        if (b[0] !== 0 || b[1] !== 0) fromState.set(a.account * nAssets + asset, b);
      });
    }
    const keys = new Set<number>([...fromState.keys(), ...this.balances.keys()]);
    for (const key of [...keys].sort((a, b) => a - b)) {
      const s = fromState.get(key) ?? [0, 0];
      const e = this.balances.get(key) ?? [0, 0];
      if (s[0] !== e[0] || s[1] !== e[1]) {
        v.push(`balance (${Math.floor(key / nAssets)}, ${key % nAssets}): state ${JSON.stringify(s)}, events say ${JSON.stringify(e)}`);
      }
    }
    const resting = new Map<number, CanonicalOrder>();
    state.markets.forEach((m) => [...m.bids, ...m.asks].forEach((o) => resting.set(o.order_id, o)));
    for (const o of this.orders.values()) {
      if (o.done) continue;
      const s = resting.get(o.order_id);
      if (s === undefined) {
        v.push(`order ${o.order_id} live by its events, not in the book`);
        continue;
      }
      if (s.remaining_units !== o.remaining || s.filled_units !== o.filled || s.price_units !== o.price ||
        s.quantity_units !== o.quantity || s.account !== o.account || s.side !== o.side ||
        s.locked_units !== o.locked || s.priority_seq !== o.priority_seq || s.last_fill_price_units !== o.last_fill_price) {
        v.push(`order ${o.order_id}: book ${JSON.stringify(s)} disagrees with its events ${JSON.stringify(o)}`);
      }
      resting.delete(o.order_id);
    }
    for (const id of resting.keys()) v.push(`order ${id} rests without an open/partially_filled update`);
    if (state.next_priority_seq !== this.next_priority_seq) {
      v.push(`next_priority_seq ${state.next_priority_seq}, order updates say ${this.next_priority_seq}`);
    }
    return v;
  }

  /** Forgets terminal orders (keeps memory flat over long runs). */
  compact(): void {
    for (const [id, o] of this.orders) if (o.done) this.orders.delete(id);
  }
}
