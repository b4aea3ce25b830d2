// What a batch changed, as plain numbers per leaf kind (the StateRootBuilder overwrites these as
// events arrive: last write wins), and its encoding into leaves at the batch's end.
import {
  EMPTY_KEY, LeafKind, ORDER_VALUE_BYTES, accountKey, accountValue, creditValue, feesValue, marketKey, marketValue,
  putU16, putU32, putU64, withdrawalKey, withdrawalValue, writeOrderValue, type MarketLeafValue, type OrderLeafValue,
} from './state_leaves.js';
import { agentFloorLeaf, agentLeaf, type AgentLeafFields } from './agent_leaves.js';
import {
  TERMS_VALUE_BYTES, chainDepositLeaf, countersLeaf, supplyLeaf, writeTermsValue, type Counters, type OrderTerms,
} from './engine_leaves.js';
import { BALANCE_KEY_SPAN, accountLeafId, balanceLeafIdOf, nonceLeafId, orderLeafId, orderTermsLeafId } from './leaf_ids.js';
import { REMOVED_LEAF, type LeafBatch } from './leaf_batch.js';
import {
  deadManLeaf, envelopeNonceLeaf, inboxKey, inboxLeaf, inboxLeafId, referralEarnedLeaf, referralLeaf, type InboxLeafFields,
} from './programme_leaves.js';

export interface MarketState extends MarketLeafValue {
  id: string;
}

export { BALANCE_KEY_SPAN };

export interface PendingOrder extends OrderLeafValue {
  open: boolean;
}

/**
 * What a batch changed, per leaf kind, as plain numbers: events only overwrite these (numeric
 * keys, one small object per leaf at first touch); bytes are encoded once per changed leaf, at
 * `endBatch`.
 */
export class PendingSet {
  balance = new Map<number, PendingBalance>();
  nonce = new Map<number, number>();
  /** account -> its last force-include envelope nonce. */
  envelope_nonce = new Map<number, number>();
  account = new Map<number, string>();
  order = new Map<number, PendingOrder>();
  market = new Set<number>();
  fees: { maker: number; taker: number } | null = null;
  /** account -> [limit, ratio]; limit 0 removes. */
  credit = new Map<number, { limit: number; ratio_ppm: number }>();
  withdrawal = new Map<string, { account: number; nonce: number; asset: number; amount: number }>();
  /** referred account -> its referral (written once). */
  referral = new Map<number, { referrer: number; active_until_ms: number }>();
  /** referred * BALANCE_KEY_SPAN + asset -> total earned so far (not the batch's increment). */
  earned = new Map<number, number>();
  /** entry id -> the queued entry, or null when it left the inbox. */
  inbox = new Map<number, InboxLeafFields | null>();
  /** The id counters, once the batch moved one (the whole value, not an increment). */
  counters: Counters | null = null;
  /** The last on-chain deposit id credited, when the batch credited one. */
  chain_deposit: number | null = null;
  /** asset -> [deposits, withdrawals] totals so far. */
  supply = new Map<number, [number, number]>();
  /** order id -> its terms, or null once it is no longer open. */
  terms = new Map<number, OrderTerms | null>();
  /** account -> its dead-man deadline, or null when disarmed or fired. */
  dead_man = new Map<number, number | null>();
  /** `${user}:${agent}` -> the agent entry, or null once it left. */
  agent = new Map<string, { user: number; agent: number; entry: AgentLeafFields | null }>();
  /** user -> its agent nonce floor (only once above 0). */
  agent_floor = new Map<number, number>();

  // The value objects of `balance` and `order`, reused from batch to batch: one per leaf at first
  // touch was the largest part of the pending set's garbage (with the maps' growth, a third of
  // the DA thread's allocated bytes at max rate: sampling heap profile, 2026-11-26).
  private readonly balance_pool: PendingBalance[] = [];
  private balance_used = 0;
  private readonly order_pool: PendingOrder[] = [];
  private order_used = 0;

  /** The balance entry of `key` (account x BALANCE_KEY_SPAN + asset), added at first touch. */
  balanceEntry(key: number): PendingBalance {
    let b = this.balance.get(key);
    if (b === undefined) {
      b = this.balance_pool[this.balance_used];
      if (b === undefined) {
        b = { available: 0, locked: 0 };
        this.balance_pool.push(b);
      }
      this.balance_used++;
      this.balance.set(key, b);
    }
    return b;
  }

  /** The order entry of `order_id`, added at first touch (every field is the caller's to set). */
  orderEntry(order_id: number): PendingOrder {
    let o = this.order.get(order_id);
    if (o === undefined) {
      o = this.order_pool[this.order_used];
      if (o === undefined) {
        o = {
          open: false, account: 0, market: 0, side: 0, status: 0, price: 0, quantity: 0, filled: 0, remaining: 0,
          locked: 0, priority_seq: 0, last_fill_price: 0,
        };
        this.order_pool.push(o);
      }
      this.order_used++;
      this.order.set(order_id, o);
    }
    return o;
  }

  /**
   * Empties the set for the next batch, keeping the maps and the pooled entries (the entries
   * handed out before are reused: read them only until this call).
   */
  clear(): void {
    for (const m of [this.balance, this.nonce, this.envelope_nonce, this.account, this.order, this.market, this.credit,
      this.withdrawal, this.referral, this.earned, this.inbox, this.supply, this.terms, this.dead_man, this.agent, this.agent_floor]) {
      m.clear();
    }
    this.fees = null;
    this.counters = null;
    this.chain_deposit = null;
    this.balance_used = 0;
    this.order_used = 0;
  }
}

export interface PendingBalance {
  available: number;
  locked: number;
}

/**
 * The pending changes as encoded leaves (id, kind, key, value or REMOVED_LEAF) appended to
 * `out`. The kinds nearly every request changes (balances, nonces, open orders, order terms) are
 * written straight into the batch's arena; the rest go through their leaf functions.
 */
export function encodePending(p: PendingSet, markets: readonly MarketLeafValue[], out: LeafBatch): void {
  // forEach, not for..of: no [key, value] array per entry (the hot maps hold ~5 leaves a request).
  p.balance.forEach((b, k) => {
    const account = Math.floor(k / BALANCE_KEY_SPAN);
    const asset = k - account * BALANCE_KEY_SPAN;
    // balanceKey, balanceValue
    const at = out.add(balanceLeafIdOf(k), LeafKind.BALANCE, 6, 16);
    const v = out.bytes;
    putU32(v, at, account); putU16(v, at + 4, asset); putU64(v, at + 6, b.available); putU64(v, at + 14, b.locked);
  });
  p.nonce.forEach((nonce, account) => {
    // accountKey, nonceValue
    const at = out.add(nonceLeafId(account), LeafKind.NONCE, 4, 8);
    const v = out.bytes;
    putU32(v, at, account); putU64(v, at + 4, nonce);
  });
  for (const [account, nonce] of p.envelope_nonce) out.push(...envelopeNonceLeaf(account, nonce));
  for (const [account, address] of p.account) {
    out.push(accountLeafId(account), { kind: LeafKind.ACCOUNT, key: accountKey(account), value: accountValue(address) });
  }
  p.order.forEach((o, order_id) => {
    // orderKey, orderValue
    const at = out.add(orderLeafId(order_id), LeafKind.OPEN_ORDER, 8, o.open ? ORDER_VALUE_BYTES : REMOVED_LEAF);
    const v = out.bytes;
    putU64(v, at, order_id);
    if (o.open) writeOrderValue(v, at + 8, o);
  });
  for (const m of p.market) {
    out.push(`5:${m}`, { kind: LeafKind.MARKET, key: marketKey(m), value: marketValue(markets[m]) });
  }
  if (p.fees !== null) out.push('6', { kind: LeafKind.GLOBAL_FEES, key: EMPTY_KEY, value: feesValue(p.fees.maker, p.fees.taker) });
  for (const [account, c] of p.credit) {
    out.push(`7:${account}`, { kind: LeafKind.CREDIT, key: accountKey(account), value: c.limit === 0 ? null : creditValue(c.limit, c.ratio_ppm) });
  }
  for (const [id, w] of p.withdrawal) {
    out.push(`8:${id}`, { kind: LeafKind.PENDING_WITHDRAWAL, key: withdrawalKey(w.account, w.nonce), value: withdrawalValue(w.asset, w.amount) });
  }
  for (const [referred, r] of p.referral) out.push(...referralLeaf(referred, r.referrer, r.active_until_ms));
  for (const [k, earned] of p.earned) {
    const referred = Math.floor(k / BALANCE_KEY_SPAN);
    out.push(...referralEarnedLeaf(referred, k - referred * BALANCE_KEY_SPAN, earned));
  }
  if (p.counters !== null) out.push(...countersLeaf(p.counters));
  if (p.chain_deposit !== null) out.push(...chainDepositLeaf(p.chain_deposit));
  for (const [asset, [d, w]] of p.supply) out.push(...supplyLeaf(asset, d, w));
  p.terms.forEach((t, order_id) => {
    // orderTermsLeaf
    const at = out.add(orderTermsLeafId(order_id), LeafKind.ORDER_TERMS, 8, t === null ? REMOVED_LEAF : TERMS_VALUE_BYTES);
    const v = out.bytes;
    putU64(v, at, order_id);
    if (t !== null) writeTermsValue(v, at + 8, t);
  });
  for (const [entry_id, entry] of p.inbox) {
    if (entry === null) out.push(inboxLeafId(entry_id), { kind: LeafKind.INBOX_ENTRY, key: inboxKey(entry_id), value: null });
    else out.push(...inboxLeaf(entry));
  }
  for (const [account, deadline_ms] of p.dead_man) out.push(...deadManLeaf(account, deadline_ms));
  for (const a of p.agent.values()) out.push(...agentLeaf(a.user, a.agent, a.entry));
  for (const [user, floor] of p.agent_floor) out.push(...agentFloorLeaf(user, floor));
}
