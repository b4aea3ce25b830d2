// The front thread's part of a snapshot: everything its read model and market data hold at the
// snapshot's batch, including the history the engine state does not (closed orders, fills per
// account, trades, candles, the leaderboard window), so that GET answers after a restart from the
// snapshot are the answers before it.
//
// The large homogeneous lists (orders, fills, trades, leaderboard fills, balances, index sets)
// are stored as row-major Float64Arrays, one column per numeric field: msgpackr writes a typed
// array as one binary blob, about 50x faster than a million small objects (the front thread is
// paused while this runs). Strings (client order ids, addresses) stay arrays of strings.
import type { MarketData, MarketDataState } from '../marketdata/market_data.js';
import { snapshotPackr } from './snapshot_file.js';
import type { ReadModel } from '../read_model/read_model.js';
import type { MarketView, OrderView } from '../read_model/views.js';
import { FILL_ROW_WIDTH, TRADE_ROW_WIDTH } from '../read_model/fill_rows.js';
import type { ProgrammesState } from '../read_model/programmes_model.js';
import type { CanonicalAgentUser } from '../engine/api.js';

type MarketRow = Omit<MarketView, 'bids' | 'asks' | 'sorted_cache' | 'book_changed_in_batch'> & {
  bids: [number, number][];
  asks: [number, number][];
};

// Row codecs, one per record type: explicit object literals, so decoded records get the same
// hidden class as live ones (a generic key loop made dictionary-mode objects: 5x slower to build
// and slower for every later read).
const ORDER_WIDTH = 16;
function putOrder(f: Float64Array, at: number, o: OrderView): void {
  f[at] = o.order_id; f[at + 1] = o.account; f[at + 2] = o.market; f[at + 3] = o.side; f[at + 4] = o.order_type;
  f[at + 5] = o.tif; f[at + 6] = o.price; f[at + 7] = o.quantity; f[at + 8] = o.filled; f[at + 9] = o.remaining;
  f[at + 10] = o.status; f[at + 11] = o.last_fill_price; f[at + 12] = o.created_ms; f[at + 13] = o.updated_ms;
  f[at + 14] = o.resting_price; f[at + 15] = o.resting_quantity;
}
function getOrder(f: Float64Array, at: number, client_order_id: string): OrderView {
  return {
    order_id: f[at], account: f[at + 1], market: f[at + 2], side: f[at + 3], order_type: f[at + 4], tif: f[at + 5],
    price: f[at + 6], quantity: f[at + 7], filled: f[at + 8], remaining: f[at + 9], status: f[at + 10], client_order_id,
    last_fill_price: f[at + 11], created_ms: f[at + 12], updated_ms: f[at + 13], resting_price: f[at + 14],
    resting_quantity: f[at + 15],
  };
}
/**
 * A fill row is led by the account whose list holds it, then the read model's row (fill_rows.ts:
 * fill_id, order_id, market, side, price, quantity, fee, is_maker 1/0, batch_id, time_ms).
 */
const FILL_WIDTH = 1 + FILL_ROW_WIDTH;
/** A trade row is the read model's (fill_rows.ts). */
const TRADE_WIDTH = TRADE_ROW_WIDTH;
function rowsOf<T>(rows: readonly T[], width: number, put: (f: Float64Array, at: number, x: T) => void): Float64Array {
  const out = new Float64Array(rows.length * width);
  for (let i = 0; i < rows.length; i++) put(out, i * width, rows[i]);
  return out;
}

export interface FrontState {
  batch_id: number;
  batch_time_ms: number;
  /** ReadModel.chain_deposit_high_water (absent in snapshots written before it: 0). */
  chain_deposit_high_water?: number;
  maker_fee_bps: number;
  taker_fee_bps: number;
  markets: MarketRow[];
  address_by_account: string[];
  assets: number;
  /** Rows: account, then [available, locked] per asset. */
  balances: Float64Array;
  /** Rows: account, then 1/0 per asset. */
  balance_seen: Float64Array;
  /** Rows: account, value. */
  nonce_high_water: Float64Array;
  credit: [number, { credit_limit: number; auto_cancel_ratio_ppm: number }][];
  /** Order rows (putOrder); client ids in the same order. */
  orders: Float64Array;
  order_client_ids: string[];
  /** Runs: account, count, order ids. */
  open_orders_by_account: Float64Array;
  order_ids_by_account: Float64Array;
  order_by_client_id_keys: string[];
  order_by_client_id_values: Float64Array;
  closed_order_ids: Float64Array;
  /** Fill rows (putFill: the account, then the fill). */
  fills: Float64Array;
  /** Trade rows (putTrade), every market (regrouped by `market` on import, order kept). */
  trades: Float64Array;
  /** `batch_id` absent in snapshots written before it (read as 0). */
  pending_withdrawals: [string, { account: number; asset: number; amount: number; nonce: number; batch_id?: number }][];
  market_data: Omit<MarketDataState, 'leaderboard'> & { leaderboard_window: Float64Array; leaderboard_last_price: number[] };
  /** Referrals (with earnings) and forced-inclusion entries, as GET /referral and /force-include answer them. */
  programmes: ProgrammesState;
  /** Agent keys as GET /account/:address/agents answers them (absent in snapshots before format 5). */
  agents?: CanonicalAgentUser[];
}

/** Map<number, Set<number>> as runs (key, size, members...): empty sets kept, orders kept. */
function runsOfSets(m: Map<number, Set<number>>): Float64Array {
  let n = 0;
  for (const set of m.values()) n += 2 + set.size;
  const out = new Float64Array(n);
  let at = 0;
  for (const [k, set] of m) {
    out[at++] = k;
    out[at++] = set.size;
    for (const v of set) out[at++] = v;
  }
  return out;
}

function setsOfRuns(flat: Float64Array, into: Map<number, Set<number>>): void {
  for (let at = 0; at < flat.length;) {
    const k = flat[at];
    const size = flat[at + 1];
    into.set(k, new Set(flat.subarray(at + 2, at + 2 + size)));
    at += 2 + size;
  }
}

/** Map<number, numeric array> as rows (key, values...). */
function rowsOfArrays(m: Map<number, ArrayLike<number>>, width: number): Float64Array {
  const out = new Float64Array(m.size * (width + 1));
  let at = 0;
  for (const [k, a] of m) {
    out[at++] = k;
    for (let j = 0; j < width; j++) out[at++] = a[j];
  }
  return out;
}

export function exportFront(rm: ReadModel, md: MarketData): FrontState {
  // Written straight into preallocated columns: the front's heap is large, and every temporary
  // array here is garbage the collector has to trace it for while the front thread waits.
  const indexes = rm.exportIndexes();
  const orders = new Float64Array(rm.orders.size * ORDER_WIDTH);
  const order_client_ids: string[] = [];
  let order_at = 0;
  for (const o of rm.orders.values()) {
    putOrder(orders, order_at, o);
    order_at += ORDER_WIDTH;
    order_client_ids.push(o.client_order_id);
  }
  const nonces = new Float64Array(rm.nonce_high_water.size * 2);
  let nonce_at = 0;
  for (const [account, n] of rm.nonce_high_water) {
    nonces[nonce_at++] = account;
    nonces[nonce_at++] = n;
  }
  // The read model's rows are the snapshot's rows (fill_rows.ts), less the account for fills.
  let fill_count = 0;
  for (const list of rm.fills_by_account.values()) fill_count += list.length;
  const fills = new Float64Array(fill_count * FILL_WIDTH);
  let fill_at = 0;
  for (const [account, list] of rm.fills_by_account) {
    const rows = list.rows();
    for (let r = 0; r < rows.length; r += FILL_ROW_WIDTH) {
      fills[fill_at] = account;
      for (let k = 0; k < FILL_ROW_WIDTH; k++) fills[fill_at + 1 + k] = rows[r + k];
      fill_at += FILL_WIDTH;
    }
  }
  let trade_count = 0;
  for (const list of rm.trades_by_market) if (list) trade_count += list.length;
  const trades = new Float64Array(trade_count * TRADE_WIDTH);
  let trade_at = 0;
  for (const list of rm.trades_by_market) {
    if (list) {
      trades.set(list.rows(), trade_at);
      trade_at += list.length * TRADE_WIDTH;
    }
  }
  const { leaderboard, ...market_data } = md.exportState();
  const a = rm.assets.length;
  return {
    batch_id: rm.batch_id,
    batch_time_ms: rm.batch_time_ms,
    chain_deposit_high_water: rm.chain_deposit_high_water,
    maker_fee_bps: rm.maker_fee_bps,
    taker_fee_bps: rm.taker_fee_bps,
    markets: rm.markets.map((mv) => ({
      index: mv.index, id: mv.id, base: mv.base, quote: mv.quote, tick_size: mv.tick_size, lot_size: mv.lot_size,
      status: mv.status, fee_override: mv.fee_override, maker_fee_bps: mv.maker_fee_bps, taker_fee_bps: mv.taker_fee_bps,
      mark_price: mv.mark_price, book_sequence: mv.book_sequence, bids: [...mv.bids], asks: [...mv.asks],
    })),
    address_by_account: [...rm.address_by_account],
    assets: a,
    balances: rowsOfArrays(rm.balances, a * 2),
    balance_seen: rowsOfArrays(rm.balance_seen, a),
    nonce_high_water: nonces,
    credit: [...rm.credit],
    orders,
    order_client_ids,
    open_orders_by_account: runsOfSets(rm.open_orders_by_account),
    order_ids_by_account: runsOfSets(rm.order_ids_by_account),
    order_by_client_id_keys: indexes.client_id_keys,
    order_by_client_id_values: indexes.client_id_orders,
    closed_order_ids: indexes.closed_order_ids,
    fills,
    trades,
    pending_withdrawals: [...rm.pending_withdrawals],
    programmes: rm.programmes.exportState(),
    agents: rm.agents.exportState(),
    market_data: { ...market_data, leaderboard_window: leaderboard.window, leaderboard_last_price: leaderboard.last_price },
  };
}

/** Loads a FrontState into a fresh read model and market data (nothing applied to them yet). */
export function importFront(rm: ReadModel, md: MarketData, s: FrontState): void {
  if (rm.batch_id !== 0 || rm.markets.length !== 0) throw new Error('snapshot: the read model must be fresh');
  if (s.assets !== rm.assets.length) throw new Error(`snapshot: ${s.assets} assets, the config has ${rm.assets.length}`);
  rm.batch_id = s.batch_id;
  rm.batch_time_ms = s.batch_time_ms;
  rm.chain_deposit_high_water = s.chain_deposit_high_water ?? 0;
  rm.maker_fee_bps = s.maker_fee_bps;
  rm.taker_fee_bps = s.taker_fee_bps;
  for (const m of s.markets) {
    rm.markets[m.index] = { ...m, bids: new Map(m.bids), asks: new Map(m.asks), sorted_cache: null, book_changed_in_batch: false };
    rm.resetTrades(m.index);
  }
  s.address_by_account.forEach((address, id) => {
    rm.address_by_account[id] = address;
    if (id > 0) rm.account_by_address.set(address, id);
  });
  const a = s.assets;
  for (let at = 0; at < s.balances.length; at += 1 + a * 2) rm.balances.set(s.balances[at], s.balances.slice(at + 1, at + 1 + a * 2));
  for (let at = 0; at < s.balance_seen.length; at += 1 + a) {
    rm.balance_seen.set(s.balance_seen[at], Uint8Array.from(s.balance_seen.subarray(at + 1, at + 1 + a)));
  }
  for (let at = 0; at < s.nonce_high_water.length; at += 2) rm.nonce_high_water.set(s.nonce_high_water[at], s.nonce_high_water[at + 1]);
  for (const [acct, c] of s.credit) rm.credit.set(acct, c);
  for (let i = 0, at = 0; at < s.orders.length; i++, at += ORDER_WIDTH) {
    const o = getOrder(s.orders, at, s.order_client_ids[i]);
    rm.orders.set(o.order_id, o);
  }
  setsOfRuns(s.open_orders_by_account, rm.open_orders_by_account);
  setsOfRuns(s.order_ids_by_account, rm.order_ids_by_account);
  rm.importIndexes({
    client_id_keys: s.order_by_client_id_keys, client_id_orders: s.order_by_client_id_values, closed_order_ids: s.closed_order_ids,
  });
  for (let at = 0; at < s.fills.length; at += FILL_WIDTH) rm.fillsOf(s.fills[at]).pushRow(s.fills.subarray(at + 1, at + FILL_WIDTH));
  for (let at = 0; at < s.trades.length; at += TRADE_WIDTH) rm.trades_by_market[s.trades[at + 1]].pushRow(s.trades.subarray(at, at + TRADE_WIDTH));
  for (const [k, w] of s.pending_withdrawals) rm.pending_withdrawals.set(k, { ...w, batch_id: w.batch_id ?? 0 });
  rm.programmes.importState(s.programmes);
  rm.agents.importState(s.agents ?? []);
  const { leaderboard_window, leaderboard_last_price, ...market_data } = s.market_data;
  md.importState({ ...market_data, leaderboard: { window: leaderboard_window, last_price: leaderboard_last_price } });
}

// msgpackr's own typed-array extension did not round-trip Float64Arrays here (it decoded other
// bytes), so the Float64Array fields travel as plain binary (their bytes) and are copied back into
// aligned Float64Arrays on decode.
type Wire<T> = { [K in keyof T]: T[K] extends Float64Array ? Uint8Array : T[K] };

function toWire<T extends object>(o: T): Wire<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = v instanceof Float64Array ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : v;
  return out as Wire<T>;
}

function fromWire<T extends object>(o: Wire<T>, keys: readonly string[]): T {
  const out: Record<string, unknown> = { ...o };
  for (const k of keys) {
    const b = out[k] as Uint8Array;
    if (!(b instanceof Uint8Array) || b.length % 8 !== 0) throw new Error(`snapshot: front field ${k} is not a float64 column`);
    // A copy into a buffer of its own (8-aligned): a decoded Buffer may be a view into a larger one.
    out[k] = new Float64Array(new Uint8Array(b).buffer);
  }
  return out as T;
}

const F64_FIELDS = [
  'balances', 'balance_seen', 'nonce_high_water', 'orders', 'open_orders_by_account', 'order_ids_by_account',
  'order_by_client_id_values', 'closed_order_ids', 'fills', 'trades',
] as const satisfies readonly (keyof FrontState)[];

/** The front part's bytes (a copy: the packer reuses its buffer). */
export function encodeFront(rm: ReadModel, md: MarketData): Uint8Array {
  return packFront(exportFront(rm, md));
}

/** Packs an exported FrontState (the snapshot writer thread does this for the server). */
export function packFront(s: FrontState): Uint8Array {
  return new Uint8Array(snapshotPackr.pack({ ...toWire(s), market_data: toWire(s.market_data) }));
}

/** The buffers of a FrontState's columns (transferred, not copied, to the writer thread). */
export function frontBuffers(s: FrontState): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const k of F64_FIELDS) out.push(s[k].buffer as ArrayBuffer);
  out.push(s.market_data.leaderboard_window.buffer as ArrayBuffer);
  return out;
}

export function decodeFront(bytes: Uint8Array): FrontState {
  const w = snapshotPackr.unpack(bytes) as Wire<FrontState> & { market_data: Wire<FrontState['market_data']> };
  const s = fromWire<FrontState>(w, F64_FIELDS);
  s.market_data = fromWire<FrontState['market_data']>(w.market_data, ['leaderboard_window']);
  return s;
}
