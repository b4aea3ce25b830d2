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
import { PendingTable } from './pending_table.js';
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
 * keys); bytes are encoded once per changed leaf, at `endBatch`. The kinds nearly every request
 * changes (balances, nonces, open orders, order terms, markets) are PendingTables: no allocation
 * per batch once sized (src/da/pending_table.ts says why not Maps); the rarer ones are Maps,
 * cleared only when a batch used them.
 */
export class PendingSet {
  /** balance key (account x BALANCE_KEY_SPAN + asset) -> its new balance. */
  readonly balance = new PendingTable<PendingBalance>(() => ({ available: 0, locked: 0 }));
  /** account -> its new trading nonce high-water. */
  readonly nonce = new PendingTable<{ nonce: number }>(() => ({ nonce: 0 }));
  /** account -> its last force-include envelope nonce. */
  envelope_nonce = new Map<number, number>();
  account = new Map<number, string>();
  readonly order = new PendingTable<PendingOrder>(() => ({
    open: false, account: 0, market: 0, side: 0, status: 0, price: 0, quantity: 0, filled: 0, remaining: 0,
    locked: 0, priority_seq: 0, last_fill_price: 0,
  }));
  /** Markets whose leaf the batch rewrites (the value is the builder's `markets`). */
  readonly market = new PendingTable<null>(() => null);
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
  /** order id -> its terms, or `open` false once it is no longer open (the leaf removed). */
  readonly terms = new PendingTable<PendingTerms>(() => ({ open: false, order_type: 0, tif: 0, client_order_id: '' }));
  /** account -> its dead-man deadline, or null when disarmed or fired. */
  dead_man = new Map<number, number | null>();
  /** `${user}:${agent}` -> the agent entry, or null once it left. */
  agent = new Map<string, { user: number; agent: number; entry: AgentLeafFields | null }>();
  /** user -> its agent nonce floor (only once above 0). */
  agent_floor = new Map<number, number>();

  /** The balance entry of `key` (account x BALANCE_KEY_SPAN + asset): set both fields. */
  balanceEntry(key: number): PendingBalance {
    return this.balance.entry(key);
  }

  /** The order entry of `order_id`: every field is the caller's to set. */
  orderEntry(order_id: number): PendingOrder {
    return this.order.entry(order_id);
  }

  /** Empties the set for the next batch (the entries handed out before are reused: read them only until this call). */
  clear(): void {
    this.balance.clear();
    this.nonce.clear();
    this.order.clear();
    this.market.clear();
    this.terms.clear();
    // A Map's clear() allocates a new table (in the old generation: see pending_table.ts), so
    // only the maps a batch used are cleared. Written out, not a loop over an array literal:
    // that built an 11-element array every batch.
    clearIfUsed(this.envelope_nonce);
    clearIfUsed(this.account);
    clearIfUsed(this.credit);
    clearIfUsed(this.withdrawal);
    clearIfUsed(this.referral);
    clearIfUsed(this.earned);
    clearIfUsed(this.inbox);
    clearIfUsed(this.supply);
    clearIfUsed(this.dead_man);
    clearIfUsed(this.agent);
    clearIfUsed(this.agent_floor);
    this.fees = null;
    this.counters = null;
    this.chain_deposit = null;
  }
}

/** Clears `m` only when it holds something (PendingSet.clear says why). */
function clearIfUsed(m: { readonly size: number; clear(): void }): void {
  if (m.size !== 0) m.clear();
}

/** An order's pending terms: `open` false removes the leaf (the other fields are then stale). */
export interface PendingTerms extends OrderTerms {
  open: boolean;
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
  for (let i = 0; i < p.balance.count; i++) {
    const k = p.balance.keyAt(i);
    const b = p.balance.entryAt(i);
    const account = Math.floor(k / BALANCE_KEY_SPAN);
    const asset = k - account * BALANCE_KEY_SPAN;
    // balanceKey, balanceValue
    const at = out.add(balanceLeafIdOf(k), LeafKind.BALANCE, 6, 16);
    const v = out.bytes;
    putU32(v, at, account); putU16(v, at + 4, asset); putU64(v, at + 6, b.available); putU64(v, at + 14, b.locked);
  }
  for (let i = 0; i < p.nonce.count; i++) {
    const account = p.nonce.keyAt(i);
    // accountKey, nonceValue
    const at = out.add(nonceLeafId(account), LeafKind.NONCE, 4, 8);
    const v = out.bytes;
    putU32(v, at, account); putU64(v, at + 4, p.nonce.entryAt(i).nonce);
  }
  for (const [account, nonce] of p.envelope_nonce) out.push(...envelopeNonceLeaf(account, nonce));
  for (const [account, address] of p.account) {
    out.push(accountLeafId(account), { kind: LeafKind.ACCOUNT, key: accountKey(account), value: accountValue(address) });
  }
  for (let i = 0; i < p.order.count; i++) {
    const order_id = p.order.keyAt(i);
    const o = p.order.entryAt(i);
    // orderKey, orderValue
    const at = out.add(orderLeafId(order_id), LeafKind.OPEN_ORDER, 8, o.open ? ORDER_VALUE_BYTES : REMOVED_LEAF);
    const v = out.bytes;
    putU64(v, at, order_id);
    if (o.open) writeOrderValue(v, at + 8, o);
  }
  for (let i = 0; i < p.market.count; i++) {
    const m = p.market.keyAt(i);
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
  for (let i = 0; i < p.terms.count; i++) {
    const order_id = p.terms.keyAt(i);
    const t = p.terms.entryAt(i);
    // orderTermsLeaf
    const at = out.add(orderTermsLeafId(order_id), LeafKind.ORDER_TERMS, 8, t.open ? TERMS_VALUE_BYTES : REMOVED_LEAF);
    const v = out.bytes;
    putU64(v, at, order_id);
    if (t.open) writeTermsValue(v, at + 8, t);
  }
  for (const [entry_id, entry] of p.inbox) {
    if (entry === null) out.push(inboxLeafId(entry_id), { kind: LeafKind.INBOX_ENTRY, key: inboxKey(entry_id), value: null });
    else out.push(...inboxLeaf(entry));
  }
  for (const [account, deadline_ms] of p.dead_man) out.push(...deadManLeaf(account, deadline_ms));
  for (const a of p.agent.values()) out.push(...agentLeaf(a.user, a.agent, a.entry));
  for (const [user, floor] of p.agent_floor) out.push(...agentFloorLeaf(user, floor));
}
