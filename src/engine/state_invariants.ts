// The state invariants (docs/engine.md, "Invariants"): checkInvariants on a CanonicalState, after
// every request of the differential and rules tests. Independent of src/money/ and of both
// engines: notionals are bigint; sums of balances and locks use numbers only where that is
// provably exact (see checkInvariants). The event-stream invariants are event_invariants.ts.
import { AGENT_NAME_PATTERN, AGENTS_LIVE_MAX } from './agents.js';
import {
  INBOX_ENTRIES_MAX_DEFAULT, INBOX_ENTRIES_PER_ACCOUNT_MAX_DEFAULT,
  type CanonicalOrder, type CanonicalState, type EngineConfig,
} from './api.js';
import { FEE_ACCOUNT, Side, Tif } from './types.js';
import { FORCE_INCLUSION_DEADLINE_MS } from './rules.js';
import { REJECT_CODES } from './codes.js';

const UNITS = 1_000_000n;
const CLIENT_ORDER_ID_RE = /^[A-Za-z0-9_-]{1,36}$/;

function notionalCeil(price: number, quantity: number): bigint {
  const p = BigInt(price) * BigInt(quantity);
  return (p + UNITS - 1n) / UNITS;
}

/** A safe integer >= 0: every count, amount and id of the state (and of balance events). */
export function isSafeNat(x: unknown): x is number {
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
