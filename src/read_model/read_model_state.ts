// What the front's read model holds (read_model.ts builds it from the event stream): every map and
// list GET endpoints answer from, the limits it keeps them to, and the reads over them that are
// more than a lookup (a book's sorted levels, a credit account's quoted value, the zero balance
// leaves and the private indexes snapshots carry). ReadModel extends it with the decoder.
// Protected, not private, because ReadModel's appliers (read_model.ts) use them: client_ids
// (set at a placement, deleted when the order is forgotten), closed_order_ids / closed_head (the
// closed orders, oldest forgotten first) and `limits` (fills, trades and closed orders kept); and the
// per-account rows (row(), balancesOf(), orderIdsOf()) through which the appliers reach an account's entries.
import { ProgrammesModel } from './programmes_model.js';
import { AgentsModel } from './agents_model.js';
import { ClientIdIndex } from './client_id_index.js';
import type { MarketView, OrderView, PendingWithdrawalView } from './views.js';
import { FillRows, type TradeRows } from './fill_rows.js';

/** The read model's private indexes in plain form (snapshots). */
export interface ReadModelIndexes {
  /** `account:client_order_id` -> the newest order using it. */
  client_id_keys: string[];
  client_id_orders: Float64Array;
  /** Closed orders, oldest first (the next to be forgotten first). */
  closed_order_ids: Float64Array;
}

export interface ReadModelLimits {
  fills_per_account_kept: number;
  trades_per_market_kept: number;
  /** Closed orders kept readable (the newest ones): config `limits.closed_orders_kept`. */
  closed_orders_kept: number;
}

/** One account's entries of the per-account maps (null: not looked up yet). */
interface AccountRow {
  balances: Float64Array | null;
  seen: Uint8Array | null;
  open: Set<number> | null;
  ids: Set<number> | null;
  fills: FillRows | null;
}

export abstract class ReadModelState {
  declare readonly assets: string[];
  readonly markets: MarketView[] = [];
  maker_fee_bps = 0;
  taker_fee_bps = 0;
  readonly account_by_address = new Map<string, number>();
  readonly address_by_account: string[] = [''];
  readonly balances = new Map<number, Float64Array>();
  /**
   * Per account, 1 for each asset that had a BALANCE event: exactly the balance leaves of the
   * state root (they are never removed), which a snapshot needs for its zero balances.
   */
  readonly balance_seen = new Map<number, Uint8Array>();
  readonly nonce_high_water = new Map<number, number>();
  readonly credit = new Map<number, { credit_limit: number; auto_cancel_ratio_ppm: number }>();
  readonly orders = new Map<number, OrderView>();
  readonly open_orders_by_account = new Map<number, Set<number>>();
  /** Every order the read model still holds, per account (open and recently closed). */
  readonly order_ids_by_account = new Map<number, Set<number>>();
  /**
   * (account, client_order_id) -> the newest order using it (client_id_index.ts: keyed by a hash of
   * the pair, not by a string per order). One index of every such order, not one per account:
   * tried on branch h11m, the per-account tables were promoted each time they grew (young, small),
   * where this one's tables are large objects a scavenge never copies; in the load bench's
   * survivors that cost what the key strings saved.
   */
  protected declare readonly client_ids: ClientIdIndex;
  protected readonly closed_order_ids: number[] = [];
  protected closed_head = 0;
  /** Rows, not objects (fill_rows.ts): the newest `fills_per_account_kept` at least, oldest first. */
  readonly fills_by_account = new Map<number, FillRows>();
  /** Rows (fill_rows.ts): the newest `trades_per_market_kept` at least, oldest first. */
  readonly trades_by_market: TradeRows[] = [];
  /** `${account}:${nonce}` -> a pending withdrawal and the batch that debited it. */
  readonly pending_withdrawals = new Map<string, PendingWithdrawalView>();
  protected declare readonly limits: ReadModelLimits;
  batch_id = 0;
  batch_time_ms = 0;
  /** The last on-chain deposit id the engine credited (the chain watcher resumes after it). */
  chain_deposit_high_water = 0;
  /** Markets whose book changed in the batch being read (for snapshots at commit). */
  readonly changed_markets = new Set<number>();
  /**
   * Per market, the highest bid and the lowest ask price an order rested at after one of its
   * updates in the batch being read (0: none), from its begin until the next batch's begin, so that
   * an observer hearing the batch after it was applied (market data's best prices, at its commit)
   * needs no call per order update (issue 11).
   */
  readonly rested_bid_max: number[] = [];
  readonly rested_ask_min: number[] = [];
  /** Referrals and forced inclusions. */
  declare readonly programmes: ProgrammesModel;
  /** Agent keys (AGENT events). */
  readonly agents = new AgentsModel();
  /** Per account id, its entries of the per-account maps (row()). */
  private readonly rows: (AccountRow | undefined)[] = [];

  constructor(assets: string[], limits: ReadModelLimits) {
    this.assets = assets;
    this.limits = limits;
    this.programmes = new ProgrammesModel(assets.length);
    this.client_ids = new ClientIdIndex(this.orders);
  }

  /**
   * The account's row: its entries of the per-account maps, found by an array index instead of a
   * probe of each map per event (issue 11). A null field is looked up in its map at first use
   * (a snapshot loads the maps, not the rows); an entry, once in a map, is never replaced or deleted.
   */
  protected row(account: number): AccountRow {
    let r = this.rows[account];
    if (r === undefined) {
      r = { balances: null, seen: null, open: null, ids: null, fills: null };
      this.rows[account] = r;
    }
    return r;
  }

  /** The account's balances (made zero, with their seen flags, at its first BALANCE). */
  protected balancesOf(account: number): Float64Array {
    let b = this.balances.get(account);
    if (b === undefined) {
      b = new Float64Array(this.assets.length * 2);
      this.balances.set(account, b);
      this.balance_seen.set(account, new Uint8Array(this.assets.length));
    }
    return b;
  }

  /** The account's fills (made empty at its first). */
  fillsOf(account: number): FillRows {
    const row = this.row(account);
    if (row.fills !== null) return row.fills;
    let list = this.fills_by_account.get(account);
    if (list === undefined) {
      list = new FillRows(this.limits.fills_per_account_kept);
      this.fills_by_account.set(account, list);
    }
    row.fills = list;
    return list;
  }

  /** The ids of the account's held orders (made empty at its first). */
  protected orderIdsOf(account: number): Set<number> {
    const row = this.row(account);
    if (row.ids !== null) return row.ids;
    let ids = this.order_ids_by_account.get(account);
    if (ids === undefined) {
      ids = new Set();
      this.order_ids_by_account.set(account, ids);
    }
    row.ids = ids;
    return ids;
  }

  /** [account, asset] of every balance leaf whose value is zero (snapshots; see balance_seen). */
  zeroBalanceLeaves(): [number, number][] {
    const out: [number, number][] = [];
    for (const [account, seen] of this.balance_seen) {
      const b = this.balances.get(account) as Float64Array;
      for (let k = 0; k < seen.length; k++) if (seen[k] === 1 && b[k * 2] === 0 && b[k * 2 + 1] === 0) out.push([account, k]);
    }
    return out;
  }

  /** The private indexes in plain form (src/snapshot/front_state.ts). */
  exportIndexes(): ReadModelIndexes {
    const keys: string[] = [];
    const ids = new Float64Array(this.client_ids.size);
    for (const [k, v] of this.client_ids.entries()) ids[keys.push(k) - 1] = v;
    return { client_id_keys: keys, client_id_orders: ids, closed_order_ids: Float64Array.from(this.closed_order_ids.slice(this.closed_head)) };
  }

  importIndexes(x: ReadModelIndexes): void {
    // The orders are loaded first (front_state.ts): the index checks a key's owner in them.
    x.client_id_keys.forEach((k, i) => this.client_ids.setKey(k, x.client_id_orders[i]));
    this.closed_order_ids.length = 0;
    for (const id of x.closed_order_ids) this.closed_order_ids.push(id);
    this.closed_head = 0;
  }

  orderByClientId(account: number, client_order_id: string): OrderView | undefined {
    const id = this.client_ids.get(account, client_order_id);
    return id === undefined ? undefined : this.orders.get(id);
  }

  /** Levels best first, at most `depth` per side. */
  sortedBook(m: number, depth: number): { bids: [number, number][]; asks: [number, number][] } {
    const mv = this.markets[m];
    if (mv.sorted_cache === null) {
      mv.sorted_cache = {
        bids: [...mv.bids.entries()].sort((a, b) => b[0] - a[0]),
        asks: [...mv.asks.entries()].sort((a, b) => a[0] - b[0]),
      };
    }
    return { bids: mv.sorted_cache.bids.slice(0, depth), asks: mv.sorted_cache.asks.slice(0, depth) };
  }

  marketIndex(id: string): number {
    for (const m of this.markets) if (m.id === id) return m.index;
    return -1;
  }

  /** Quoted value of a credit account, the way the engine computes it (docs/engine.md). */
  quotedValue(account: number): number {
    const open = this.open_orders_by_account.get(account);
    if (!open) return 0;
    const rest_quantity = new Map<number, number>();
    const rest_value = new Map<number, bigint>();
    for (const id of open) {
      const o = this.orders.get(id);
      if (!o) continue;
      rest_quantity.set(o.market, (rest_quantity.get(o.market) ?? 0) + o.resting_quantity);
      rest_value.set(o.market, (rest_value.get(o.market) ?? 0n) + ceilDiv(BigInt(o.resting_price) * BigInt(o.resting_quantity), 1_000_000n));
    }
    let q = 0n;
    for (const [m, qty] of rest_quantity) {
      const mark = this.markets[m].mark_price;
      q += mark > 0 ? ceilDiv(BigInt(mark) * BigInt(qty), 1_000_000n) : (rest_value.get(m) ?? 0n);
    }
    return Number(q);
  }
}

function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

