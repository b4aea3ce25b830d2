// The state root (docs/verifiability.md, "State root"): a commitment to the engine state as the
// committed event stream describes it, computed off the matcher by whoever reads the events (the
// front's DA publisher, the verifier re-executing published batches, the recovery bench).
//
// Leaves: kind byte || key || value, fixed-width big-endian integers (see LeafKind and the
// encoders below). leaf_hash = keccak256(kind || key || value); the leaves sit in a compact
// sparse Merkle trie of arity 4 at path keccak256(kind || key) (src/da/state_tree.ts).
//
// Incremental: `apply` only records the latest value of each leaf the batch touched (so the
// order of touches within a batch does not matter, and a leaf touched ten times is hashed once);
// `endBatch` hashes the changed leaves and each trie node on their paths once.
import { RequestKind, Side } from '../engine/types.js';
import {
  AcceptedField, AccountField, AgentField, BalanceField, BatchField, CreditField, EventType, FeesField, FillField, InboxIncludedField, InboxQueuedField, MarketField, OrderUpdateField, ReferralField, ReferralShareField, type EventFields,
} from '../ring/event_records.js';
import { FillsTree, EMPTY_FILLS_ROOT, type FillLeaf } from './fills_tree.js';
import { bytesToHex0x, hexToBytes } from './hex.js';
import {
  LEAF_KIND_NAMES, SIGNED_KINDS, STATUS_CLOSED_MIN, ZERO_ADDRESS, changesToHex, describeLeaf,
  getU64, hex, type LeafChange, type LeafRecord, type RawLeaf,
} from './state_leaves.js';
import { StateTree, type LeafProof, type LeafView } from './state_tree.js';
import { referralEarnedLeafId, type InboxLeafFields } from './programme_leaves.js';
import { COUNTERS_LEAF_ID, countersOfLeaf, supplyLeafId, type Counters } from './engine_leaves.js';
import { BALANCE_KEY_SPAN, PendingSet, encodePending, type MarketState } from './pending_leaves.js';
import { decodeChanges, describeChange, firstDifferingChange } from './state_diff.js';
import { LeafBatch } from './leaf_batch.js';
import type { CanonicalLeaves } from './canonical_leaves.js';
// ---------------------------------------------------------------------------------------------
// The builder: events -> leaves

export interface BatchRoots {
  batch_id: number;
  state_root: string;
  fills: FillLeaf[];
  fills_root: string;
  /** The leaves this batch changed, in sort-key order (value null = removed); hex made on first read. */
  readonly state_diff: LeafChange[];
  /** How many leaves the batch changed (the diff's length). */
  leaves_changed: number;
  /** The same changes in binary form (state_diff.ts encodeLeafBatch): what the DA store keeps. */
  readonly state_diff_bytes: Uint8Array;
}

/**
 * The payload fields of a FORCE_INCLUDE's ACCEPTED event, kept until its INBOX_QUEUED (which
 * brings the rest: kind, nonce, referrer_account, reject).
 */
type ForceAccepted = Omit<InboxLeafFields, 'queued_ms' | 'deadline_ms' | 'kind' | 'nonce' | 'referrer_account' | 'reject'>;

export class StateRootBuilder {
  private readonly assets: readonly string[];
  private readonly tree: StateTree;
  private pending = new PendingSet();
  /** The batch's leaves as encoded at endBatch (one arena, reused). */
  private readonly leaf_batch = new LeafBatch();
  private readonly markets: MarketState[] = [];
  private readonly addresses = new Map<number, string>([[0, ZERO_ADDRESS]]);
  private fills: FillLeaf[] = [];
  private batch_id = 0;
  /** Time of the batch being read (its BATCH_BEGIN): an inbox entry's queued time. */
  private batch_time_ms = 0;
  /** The last FORCE_INCLUDE accepted, until its INBOX_QUEUED (the next event) consumes it. */
  private force_accepted: ForceAccepted | null = null;
  private root_hex: string;
  /** Batches ended so far. */
  batches = 0;

  /**
   * `assets`: the asset symbols in index order (config), for market ids in fill leaves.
   * `keep_revert` false: the last batch's previous values are not kept (`rootIfLastBatchMade`
   * and `previousValue` then throw); the DA publisher, which never asks, saves their copies.
   */
  constructor(assets: readonly string[], opts: { keep_revert?: boolean } = {}) {
    this.assets = assets;
    this.tree = new StateTree({ keep_revert: opts.keep_revert ?? true });
    this.root_hex = bytesToHex0x(this.tree.root());
  }

  /** The root after the last `endBatch` (the empty tree's root before any). */
  stateRoot(): string {
    return this.root_hex;
  }

  /** Batch id of the batch being read (from its BATCH_BEGIN). */
  currentBatchId(): number {
    return this.batch_id;
  }

  /** Number of leaves. */
  leafCount(): number {
    return this.tree.size;
  }

  /** Hash operations done so far (cost accounting). */
  hashCount(): number {
    return this.tree.hashes;
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
        else if (nonce > 0) p.nonce.set(account, nonce);
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
        if (!o.open) p.terms.set(order_id, null);
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
        p.market.add(m);
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
        p.market.add(m);
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
      p.terms.set(order_id, { order_type: e.field(AcceptedField.ORDER_TYPE), tif: e.field(AcceptedField.TIF), client_order_id: e.clientOrderId() });
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

  /**
   * Closes a batch without hashing: its changes stay pending and merge with the next batches'
   * (last value wins), so a run of batches whose roots are already known (a restart replaying
   * published batches) costs one rehash of what they changed, at the next `endBatch`.
   */
  skipBatch(): void {
    this.fills = [];
    this.batches++;
  }

  /** Closes the batch: hashes what it changed and returns its roots and fills. */
  endBatch(): BatchRoots {
    const leaves = this.leaf_batch;
    // encodePending adds each leaf once (one pending entry per leaf id).
    leaves.clear(true);
    try {
      encodePending(this.pending, this.markets, leaves);
    } finally {
      // The set and its entries are reused by the next batch (its bytes are in `leaves` now).
      this.pending.clear();
    }
    const changes = this.tree.update(leaves);
    this.root_hex = bytesToHex0x(this.tree.root());
    const fills = this.fills;
    this.fills = [];
    const fills_root = fills.length === 0 ? EMPTY_FILLS_ROOT : FillsTree.build(fills).root();
    this.batches++;
    let diff: LeafChange[] | null = null;
    return {
      batch_id: this.batch_id, state_root: this.root_hex, fills, fills_root, leaves_changed: changes.count,
      get state_diff(): LeafChange[] {
        return (diff ??= decodeChanges(changes.bytes));
      },
      state_diff_bytes: changes.bytes,
    };
  }

  /**
   * Starts an empty builder from a snapshot's leaves (src/da/canonical_leaves.ts) as if it had
   * read every event up to batch `batch_id`: one hash per leaf and per path, every trie node
   * once. Returns the root.
   */
  restore(snapshot: CanonicalLeaves, batch_id: number): string {
    if (this.tree.size !== 0 || this.batches !== 0) throw new Error('state root: restore needs an empty builder');
    this.tree.update(LeafBatch.of(snapshot.entries), false);
    snapshot.markets.forEach((m, i) => {
      this.markets[i] = { ...m };
    });
    for (const [account, address] of snapshot.addresses) this.addresses.set(account, address);
    this.pending = new PendingSet();
    this.fills = [];
    this.batch_id = batch_id;
    this.root_hex = bytesToHex0x(this.tree.root());
    return this.root_hex;
  }

  /** Root the state would have after applying `changes` to it now (between batches). */
  rootAfter(changes: readonly LeafChange[]): string {
    return bytesToHex0x(this.tree.rootAfter(changes));
  }

  /**
   * Root the state would have had if the last batch had made `changes` instead of what it made
   * (fraud proofs: does the operator's published state diff reproduce its claimed root?).
   */
  rootIfLastBatchMade(changes: readonly LeafChange[]): string {
    return bytesToHex0x(this.tree.rootAfter([...changesToHex(this.tree.last_revert), ...changes]));
  }

  /** The value a leaf had before the last batch (hex; null = absent), when that batch changed it. */
  previousValue(kind: number, key_hex: string): string | null | undefined {
    const k = key_hex.toLowerCase();
    const r = this.tree.last_revert.find((c) => c.kind === kind && hex(c.key) === k);
    return r === undefined ? undefined : r.value === null ? null : hex(r.value);
  }

  /** The current leaf of a change's key (for fraud proofs), or null when absent. */
  leafOf(kind: number, key_hex: string): LeafRecord | null {
    const leaf = this.tree.find(kind, hexToBytes(key_hex, undefined, 'leaf key'));
    return leaf === undefined ? null : recordOf(leaf);
  }

  /** The membership proof of one leaf against stateRoot() (null: no such leaf). */
  proofOfLeaf(kind: number, key: Uint8Array): LeafProof | null {
    return this.tree.proofOfLeaf(kind, key);
  }

  /** Every leaf, canonical order (by sort key = path), decoded: for debugging fraud proofs. */
  leaves(): LeafRecord[] {
    const out: LeafRecord[] = [];
    for (const e of this.tree.all()) out.push(recordOf(e));
    return out;
  }

  /** Every leaf in raw form (tests: recompute the root from scratch). */
  rawLeaves(): RawLeaf[] {
    const out: RawLeaf[] = [];
    for (const e of this.tree.all()) out.push({ kind: e.kind, key: e.key, value: e.value });
    return out;
  }
}

function recordOf(e: LeafView): LeafRecord {
  const d = describeLeaf(e.kind, e.key, e.value);
  return {
    id: d.id, kind: LEAF_KIND_NAMES[e.kind] ?? String(e.kind), key: hex(e.key), value: hex(e.value),
    leaf_hash: hex(e.hash), sort_key: hex(e.sort_key), fields: d.fields,
  };
}

export { describeChange, firstDifferingChange };

// Leaf encodings and the tree are part of this module's public surface.
export {
  LeafKind, LEAF_KIND_NAMES, ZERO_ADDRESS, balanceKey, accountKey, orderKey,
  marketKey, withdrawalKey, balanceValue, nonceValue, accountValue, orderValue, marketValue,
  feesValue, creditValue, withdrawalValue, changesToHex, describeLeaf,
  type OrderLeafValue, type MarketLeafValue, type RawLeaf, type PendingLeaf, type RawChange,
  type LeafChange, type LeafRecord,
} from './state_leaves.js';
export { StateTree } from './state_tree.js';
export { stateRootOfLeaves } from './state_tree_hash.js';
