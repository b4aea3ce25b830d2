// Reading the committed events into the state's leaf changes (src/da/state_root.ts builds the
// root from them): each event records the latest value of the leaves it touches in the batch's
// PendingSet (src/da/pending_leaves.ts), so the order of touches within a batch does not matter
// and a leaf touched ten times is encoded and hashed once, at the batch's end. Also kept here:
// what leaves are built from beyond one event (markets, account addresses, the batch's fills,
// the batch's id and time, a FORCE_INCLUDE's acceptance until its INBOX_QUEUED).
import { RequestKind, Side } from '../engine/types.js';
import {
  AcceptedField, AccountField, AgentField, BalanceField, BatchField, CreditField, EventType, FeesField, FillField, InboxIncludedField, InboxQueuedField, MarketField, OrderUpdateField, ReferralField, ReferralShareField, type EventFields,
} from '../ring/event_records.js';
import type { FillLeaf } from './fills_tree.js';
import { SIGNED_KINDS, STATUS_CLOSED_MIN, ZERO_ADDRESS, getU64 } from './state_leaves.js';
import type { StateTree } from './state_tree.js';
import { referralEarnedLeafId, type InboxLeafFields } from './programme_leaves.js';
import { COUNTERS_LEAF_ID, countersOfLeaf, supplyLeafId, type Counters } from './engine_leaves.js';
import { BALANCE_KEY_SPAN, PendingSet, type MarketState } from './pending_leaves.js';
import type { CanonicalLeaves } from './canonical_leaves.js';

/**
 * The payload fields of a FORCE_INCLUDE's ACCEPTED event, kept until its INBOX_QUEUED (which
 * brings the rest: kind, nonce, referrer_account, reject).
 */
type ForceAccepted = Omit<InboxLeafFields, 'queued_ms' | 'deadline_ms' | 'kind' | 'nonce' | 'referrer_account' | 'reject'>;

/** The events of the batches being read -> their pending leaf changes and fills. */
export class StateEventReader {
  private readonly assets: readonly string[];
  /** Read only: the leaves as of the last hashed batch (counters, supply, referral earnings). */
  private readonly tree: StateTree;
  /** The leaves the batches read since the last `endBatch` changed (last value wins). */
  pending = new PendingSet();
  readonly markets: MarketState[] = [];
  private readonly addresses = new Map<number, string>([[0, ZERO_ADDRESS]]);
  private fills: FillLeaf[] = [];
  /** Batch id of the batch being read (from its BATCH_BEGIN). */
  batch_id = 0;
  /** Time of the batch being read (its BATCH_BEGIN): an inbox entry's queued time. */
  private batch_time_ms = 0;
  /** The last FORCE_INCLUDE accepted, until its INBOX_QUEUED (the next event) consumes it. */
  private force_accepted: ForceAccepted | null = null;

  /** `assets`: the asset symbols in index order (config), for market ids in fill leaves. */
  constructor(assets: readonly string[], tree: StateTree) {
    this.assets = assets;
    this.tree = tree;
  }

  /** The fills read since the last call (the batch's), handed over. */
  takeFills(): FillLeaf[] {
    const fills = this.fills;
    this.fills = [];
    return fills;
  }

  /** As if every event up to batch `batch_id` had been read into a snapshot's leaves (StateRootBuilder.restore). */
  restore(snapshot: CanonicalLeaves, batch_id: number): void {
    snapshot.markets.forEach((m, i) => {
      this.markets[i] = { ...m };
    });
    for (const [account, address] of snapshot.addresses) this.addresses.set(account, address);
    this.pending = new PendingSet();
    this.fills = [];
    this.batch_id = batch_id;
  }

  private address(account: number): string {
    const a = this.addresses.get(account);
    if (a === undefined) throw new Error(`state root: fill of account ${account} before its ACCOUNT event`);
    return a;
  }

  /** Consumes one committed event (any type; markers and rejections change nothing). */
  apply(e: EventFields): void {
    const p = this.pending;
    switch (e.type()) {
      case EventType.BATCH_BEGIN:
        this.batch_id = e.field(BatchField.BATCH_ID);
        this.batch_time_ms = e.field(BatchField.TIME_MS);
        return;
      case EventType.BALANCE: {
        const key = e.field(BalanceField.ACCOUNT) * BALANCE_KEY_SPAN + e.field(BalanceField.ASSET);
        const available = e.field(BalanceField.AVAILABLE_UNITS);
        const locked = e.field(BalanceField.LOCKED_UNITS);
        const b = p.balanceEntry(key);
        b.available = available;
        b.locked = locked;
        return;
      }
      case EventType.ACCEPTED: {
        const kind = e.field(AcceptedField.KIND);
        if (kind === RequestKind.DEAD_MAN_CANCEL) {
          p.dead_man.set(e.field(AcceptedField.ACCOUNT), null);
          return;
        }
        this.acceptedEngineLeaves(e, kind);
        if (!SIGNED_KINDS.has(kind)) return;
        const account = e.field(AcceptedField.ACCOUNT);
        const nonce = e.field(AcceptedField.NONCE);
        if (kind === RequestKind.FORCE_INCLUDE) p.envelope_nonce.set(account, nonce);
        // NONCE 0: an agent signed it; its mark is in the AGENT event that follows.
        else if (nonce > 0) p.nonce.entry(account).nonce = nonce;
        if (kind === RequestKind.CANCEL_AFTER) {
          // The request's timeout rides in AMOUNT_UNITS (RequestKind.CANCEL_AFTER); 0 disarms.
          const timeout_ms = e.field(AcceptedField.AMOUNT_UNITS);
          p.dead_man.set(account, timeout_ms === 0 ? null : this.batch_time_ms + timeout_ms);
        } else if (kind === RequestKind.WITHDRAW) {
          p.withdrawal.set(`${account}:${nonce}`, {
            account, nonce, asset: e.field(AcceptedField.ASSET), amount: e.field(AcceptedField.AMOUNT_UNITS),
          });
        } else if (kind === RequestKind.FORCE_INCLUDE) {
          // The envelope's ACCEPTED carries the payload's fields (EventWriter.accepted): the
          // INBOX_QUEUED right after it adds the payload's kind, nonce, referrer and verdict.
          this.force_accepted = {
            entry_id: e.field(AcceptedField.ORDER_ID), account, envelope_nonce: nonce,
            market: e.field(AcceptedField.MARKET), side: e.field(AcceptedField.SIDE),
            order_type: e.field(AcceptedField.ORDER_TYPE), tif: e.field(AcceptedField.TIF),
            price_units: e.field(AcceptedField.PRICE_UNITS), quantity_units: e.field(AcceptedField.QUANTITY_UNITS),
            asset: e.field(AcceptedField.ASSET), amount_units: e.field(AcceptedField.AMOUNT_UNITS),
            order_id: e.field(AcceptedField.REQUEST_ORDER_ID), client_order_id: e.clientOrderId(),
          };
        }
        return;
      }
      case EventType.REFERRAL:
        p.referral.set(e.field(ReferralField.REFERRED), {
          referrer: e.field(ReferralField.REFERRER), active_until_ms: e.field(ReferralField.ACTIVE_UNTIL_MS),
        });
        return;
      case EventType.REFERRAL_SHARE: {
        const referred = e.field(ReferralShareField.REFERRED);
        const asset = e.field(ReferralShareField.ASSET);
        const key = referred * BALANCE_KEY_SPAN + asset;
        const before = p.earned.get(key) ?? this.earnedLeaf(referred, asset);
        p.earned.set(key, before + e.field(ReferralShareField.AMOUNT_UNITS));
        return;
      }
      case EventType.INBOX_QUEUED: {
        const entry_id = e.field(InboxQueuedField.ENTRY_ID);
        const a = this.force_accepted;
        this.force_accepted = null;
        if (a === null || a.entry_id !== entry_id || a.account !== e.field(InboxQueuedField.ACCOUNT)) {
          throw new Error(`state root: inbox entry ${entry_id} queued without its FORCE_INCLUDE acceptance just before`);
        }
        p.inbox.set(entry_id, {
          entry_id, account: a.account, envelope_nonce: a.envelope_nonce, queued_ms: this.batch_time_ms,
          deadline_ms: e.field(InboxQueuedField.DEADLINE_MS), kind: e.field(InboxQueuedField.KIND),
          nonce: e.field(InboxQueuedField.NONCE), market: a.market, side: a.side,
          order_type: a.order_type, tif: a.tif, price_units: a.price_units, quantity_units: a.quantity_units,
          order_id: a.order_id, asset: a.asset, amount_units: a.amount_units,
          referrer_account: e.field(InboxQueuedField.REFERRER_ACCOUNT), reject: e.field(InboxQueuedField.REJECT), client_order_id: a.client_order_id,
        });
        return;
      }
      case EventType.INBOX_INCLUDED:
        p.inbox.set(e.field(InboxIncludedField.ENTRY_ID), null);
        return;
      case EventType.AGENT: {
        const user = e.field(AgentField.ACCOUNT);
        const agent = e.field(AgentField.AGENT);
        const valid_until_ms = e.field(AgentField.VALID_UNTIL_MS);
        p.agent.set(`${user}:${agent}`, {
          user, agent,
          entry: valid_until_ms === 0 ? null : { valid_until_ms, nonce_high_water: e.field(AgentField.NONCE_HIGH_WATER), name: e.clientOrderId() },
        });
        const floor = e.field(AgentField.NONCE_FLOOR);
        if (floor > 0) p.agent_floor.set(user, floor);
        return;
      }
      case EventType.ACCOUNT: {
        const account = e.field(AccountField.ACCOUNT);
        const address = e.addressHex();
        this.addresses.set(account, address);
        p.account.set(account, address);
        return;
      }
      case EventType.ORDER_UPDATE: {
        const order_id = e.field(OrderUpdateField.ORDER_ID);
        const status = e.field(OrderUpdateField.STATUS);
        const o = p.orderEntry(order_id);
        o.open = status < STATUS_CLOSED_MIN;
        if (!o.open) p.terms.entry(order_id).open = false;
        o.account = e.field(OrderUpdateField.ACCOUNT);
        o.market = e.field(OrderUpdateField.MARKET);
        o.side = e.field(OrderUpdateField.SIDE);
        o.status = status;
        o.price = e.field(OrderUpdateField.PRICE_UNITS);
        o.quantity = e.field(OrderUpdateField.QUANTITY_UNITS);
        o.filled = e.field(OrderUpdateField.FILLED_UNITS);
        o.remaining = e.field(OrderUpdateField.REMAINING_UNITS);
        o.locked = e.field(OrderUpdateField.LOCKED_UNITS);
        o.priority_seq = e.field(OrderUpdateField.PRIORITY_SEQ);
        o.last_fill_price = e.field(OrderUpdateField.LAST_FILL_PRICE_UNITS);
        // Every order entering a book is stamped the next priority and reported open at once, so
        // the counter is one past the highest priority an update carried.
        if (o.open && o.priority_seq >= this.countersNow().next_priority_seq) this.counters().next_priority_seq = o.priority_seq + 1;
        return;
      }
      case EventType.MARKET: {
        const m = e.field(MarketField.MARKET);
        const base = e.field(MarketField.BASE_ASSET);
        const quote = e.field(MarketField.QUOTE_ASSET);
        const prev = this.markets[m];
        this.markets[m] = {
          id: `${this.assets[base] ?? `#${base}`}-${this.assets[quote] ?? `#${quote}`}`,
          status: e.field(MarketField.STATUS), base, quote, tick: e.field(MarketField.TICK_UNITS),
          lot: e.field(MarketField.LOT_UNITS), fee_override: e.field(MarketField.FEE_OVERRIDE),
          maker_bps: e.field(MarketField.MAKER_FEE_BPS), taker_bps: e.field(MarketField.TAKER_FEE_BPS), mark_price: prev === undefined ? 0 : prev.mark_price,
        };
        p.market.touch(m);
        return;
      }
      case EventType.FEES:
        p.fees = { maker: e.field(FeesField.MAKER_FEE_BPS), taker: e.field(FeesField.TAKER_FEE_BPS) };
        return;
      case EventType.CREDIT:
        p.credit.set(e.field(CreditField.ACCOUNT), {
          limit: e.field(CreditField.CREDIT_LIMIT_UNITS), ratio_ppm: e.field(CreditField.AUTO_CANCEL_RATIO_PPM),
        });
        return;
      case EventType.FILL: {
        this.counters().next_fill_id = e.field(FillField.FILL_ID) + 1;
        const m = e.field(FillField.MARKET);
        const price = e.field(FillField.PRICE_UNITS);
        const mv = this.markets[m];
        if (mv === undefined) throw new Error(`state root: fill in market ${m} before its MARKET event`);
        mv.mark_price = price;
        p.market.touch(m);
        this.fills.push({
          batch_id: this.batch_id,
          fill_id: e.field(FillField.FILL_ID),
          taker_order_id: e.field(FillField.TAKER_ORDER_ID),
          maker_order_id: e.field(FillField.MAKER_ORDER_ID),
          taker: this.address(e.field(FillField.TAKER_ACCOUNT)),
          maker: this.address(e.field(FillField.MAKER_ACCOUNT)),
          market_id: mv.id,
          taker_side: e.field(FillField.TAKER_SIDE) === Side.BID ? 'bid' : 'ask',
          price,
          quantity: e.field(FillField.QUANTITY_UNITS),
          taker_fee: e.field(FillField.TAKER_FEE_UNITS),
          maker_fee: e.field(FillField.MAKER_FEE_UNITS),
        });
        return;
      }
      default:
        return;
    }
  }

  /** Counters, supply and order terms (engine_leaves.ts) from an ACCEPTED event. */
  private acceptedEngineLeaves(e: EventFields, kind: number): void {
    const p = this.pending;
    if (kind === RequestKind.PLACE) {
      const order_id = e.field(AcceptedField.ORDER_ID);
      this.counters().next_order_id = order_id + 1;
      const t = p.terms.entry(order_id);
      t.open = true;
      t.order_type = e.field(AcceptedField.ORDER_TYPE);
      t.tif = e.field(AcceptedField.TIF);
      t.client_order_id = e.clientOrderId();
    } else if (kind === RequestKind.FORCE_INCLUDE) {
      this.counters().next_inbox_entry_id = e.field(AcceptedField.ORDER_ID) + 1;
    } else if (kind === RequestKind.DEPOSIT || kind === RequestKind.WITHDRAW) {
      // An on-chain deposit (its nonce is the contract's deposit id) moves the chain cursor.
      if (kind === RequestKind.DEPOSIT && e.field(AcceptedField.NONCE) > 0) p.chain_deposit = e.field(AcceptedField.NONCE);
      const asset = e.field(AcceptedField.ASSET);
      let s = p.supply.get(asset);
      if (s === undefined) {
        const value = this.tree.value(supplyLeafId(asset));
        s = value === undefined ? [0, 0] : [getU64(value, 0), getU64(value, 8)];
        p.supply.set(asset, s);
      }
      s[kind === RequestKind.DEPOSIT ? 0 : 1] += e.field(AcceptedField.AMOUNT_UNITS);
    }
  }

  /** The batch's counters to change, starting from the tree's leaf (or from 1 before any). */
  private counters(): Counters {
    const p = this.pending;
    if (p.counters === null) p.counters = this.countersNow();
    return p.counters;
  }

  /** The counters as they stand, to read (a copy when the batch has not changed them yet). */
  private countersNow(): Counters {
    return this.pending.counters ?? countersOfLeaf(this.tree.value(COUNTERS_LEAF_ID));
  }

  /** A referral's earnings in an asset as the tree holds them (0 when no share was paid yet). */
  private earnedLeaf(referred: number, asset: number): number {
    const value = this.tree.value(referralEarnedLeafId(referred, asset));
    return value === undefined ? 0 : getU64(value, 0);
  }
}
