// The engine state in canonical form (docs/engine.md, "Canonical state"): what a snapshot holds,
// what the state digest and the state roots are computed over, and what both engines must agree
// on byte for byte. canonicalStateOf reads the fast engine's state out (one walk over its columns,
// canonicalOfColumns, which also walks copies of them that a snapshot thread holds:
// copyEngineColumns); loadCanonical puts one back into a freshly built engine. The state itself
// is engine_state.ts.
import type {
  CanonicalAccount, CanonicalMarket, CanonicalOrder, CanonicalState,
} from './api.js';
import { Link, OF, OI } from './book.js';
import { CLIENT_ID_WORDS, clientIdFromString, clientIdValid } from './client_id.js';
import { clientIdText } from './client_id_index.js';
import type { Books } from './engine_books.js';
import { assert, MarketStatus, type EngineState } from './engine_state.js';
import { FEE_ACCOUNT, Side } from './types.js';

/** The state's small tables, already in canonical form (a few entries each: taken whole, not copied by column). */
export type CanonicalSmallTables = Pick<CanonicalState, 'credit' | 'pending_withdrawals' | 'referrals' | 'inbox' |
  'next_inbox_entry_id' | 'envelope_nonces' | 'dead_man' | 'agents'>;

/**
 * What the canonical walk reads: the engine's columns, either the live ones (liveColumns, no copy)
 * or copies kept between snapshots (copyEngineColumns, for a snapshot thread to walk while the
 * engine moves on). Both are built by `columnsOf` so that the walk sees one object shape (a
 * second shape made V8's walk 3x slower, docs/benchmarks.md h29s). Plain objects and typed
 * arrays only: a copy crosses threads by structured clone (its arrays on SharedArrayBuffers).
 */
export interface EngineColumns {
  market_count: number;
  asset_count: number;
  batch_time_ms: number;
  next_order_id: number;
  next_fill_id: number;
  next_priority_seq: number;
  maker_bps_global: number;
  taker_bps_global: number;
  chain_deposit_high_water: number;
  market_id: string[];
  market_base: Int32Array;
  market_quote: Int32Array;
  market_tick: Float64Array;
  market_lot: Float64Array;
  market_status: Uint8Array;
  market_fee_override: Uint8Array;
  market_maker_bps: Int32Array;
  market_taker_bps: Int32Array;
  market_mark: Float64Array;
  /** Book side k (market k >> 1, Side k & 1): its level ids, best last (BookSide.levels up to count). */
  side_levels: Int32Array[];
  level_head: Int32Array;
  order_f: Float64Array;
  order_i: Int32Array;
  /** The client id index's rows and per-slot entries (ClientIdIndex.columns). */
  client_rows: Int32Array;
  client_entry_of_slot: Int32Array;
  account_high: number;
  /** Ledger columns up to account_high (available, locked: account_high x asset_count). */
  available: Float64Array;
  locked: Float64Array;
  nonce_high_water: Float64Array;
  deposits: Float64Array;
  withdrawals: Float64Array;
  small: CanonicalSmallTables;
}

function smallTablesOf(st: EngineState): CanonicalSmallTables {
  return {
    credit: st.credit.accounts_ascending.map((account) => {
      const e = st.credit.get(account);
      return { account, credit_limit_units: e.credit_limit_units, auto_cancel_ratio_ppm: e.auto_cancel_ratio_ppm };
    }),
    pending_withdrawals: st.pending_withdrawals.map((w) => ({ ...w })),
    referrals: st.referrals.canonical(),
    inbox: st.inbox.canonical(),
    next_inbox_entry_id: st.inbox.next_entry_id,
    envelope_nonces: [...st.envelope_high_water.entries()].sort((x, y) => x[0] - y[0])
      .map(([account, envelope_nonce]) => ({ account, envelope_nonce })),
    dead_man: st.dead_man.canonical(),
    agents: st.agents.canonical(),
  };
}

type ColumnArrays = Pick<EngineColumns, 'market_base' | 'market_quote' | 'market_tick' | 'market_lot' | 'market_status' |
  'market_fee_override' | 'market_maker_bps' | 'market_taker_bps' | 'market_mark' | 'side_levels' | 'level_head' | 'order_f' |
  'order_i' | 'client_rows' | 'client_entry_of_slot' | 'available' | 'locked' | 'nonce_high_water' | 'deposits' | 'withdrawals'>;

/** The one constructor of EngineColumns (one shape): the scalars and small tables of `st`, the arrays given. */
function columnsOf(st: EngineState, a: ColumnArrays): EngineColumns {
  return {
    market_count: st.market_count, asset_count: st.asset_count, batch_time_ms: st.batch_time_ms, next_order_id: st.next_order_id,
    next_fill_id: st.next_fill_id, next_priority_seq: st.next_priority_seq, maker_bps_global: st.maker_bps_global,
    taker_bps_global: st.taker_bps_global, chain_deposit_high_water: st.chain_deposit_high_water,
    market_id: st.market_id.slice(0, st.market_count),
    market_base: a.market_base, market_quote: a.market_quote, market_tick: a.market_tick, market_lot: a.market_lot,
    market_status: a.market_status, market_fee_override: a.market_fee_override, market_maker_bps: a.market_maker_bps,
    market_taker_bps: a.market_taker_bps, market_mark: a.market_mark,
    side_levels: a.side_levels, level_head: a.level_head, order_f: a.order_f, order_i: a.order_i,
    client_rows: a.client_rows, client_entry_of_slot: a.client_entry_of_slot,
    account_high: st.ledger.account_high, available: a.available, locked: a.locked, nonce_high_water: a.nonce_high_water,
    deposits: a.deposits, withdrawals: a.withdrawals,
    small: smallTablesOf(st),
  };
}

/** The live columns of `st` (views, no copy): valid until the engine next changes. */
export function liveColumns(st: EngineState): EngineColumns {
  const L = st.ledger;
  const n = L.account_high * st.asset_count;
  const client = st.orders.slot_by_client_id.columns();
  return columnsOf(st, {
    market_base: st.market_base, market_quote: st.market_quote, market_tick: st.market_tick, market_lot: st.market_lot,
    market_status: st.market_status, market_fee_override: st.market_fee_override, market_maker_bps: st.market_maker_bps,
    market_taker_bps: st.market_taker_bps, market_mark: st.market_mark,
    side_levels: st.sides.map((s) => s.levels.subarray(0, s.count)),
    level_head: st.levels.head, order_f: st.orders.f, order_i: st.orders.i,
    client_rows: client.rows, client_entry_of_slot: client.entry_of_slot,
    available: L.available.subarray(0, n), locked: L.locked.subarray(0, n), nonce_high_water: L.nonce_high_water.subarray(0, L.account_high),
    deposits: st.deposits, withdrawals: st.withdrawals,
  });
}

type Column = Int32Array | Float64Array | Uint8Array;

/**
 * A kept copy outgrown by its pool is reallocated with this much room (the pools grow by steps;
 * without room, every snapshot after each step would allocate again).
 */
export const KEPT_COPY_ROOM = 1.25;
interface ColumnType<T extends Column> {
  new (buffer: SharedArrayBuffer, offset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * `src` copied into `kept` when its SharedArrayBuffer holds it (a view of the first src.length
 * elements), else into a new one with KEPT_COPY_ROOM (pools grow; so does their copy).
 */
function copied<T extends Column>(src: T, kept: T | undefined, type: ColumnType<T>): T {
  const bytes = src.length * type.BYTES_PER_ELEMENT;
  const room = kept !== undefined && kept.buffer instanceof SharedArrayBuffer && kept.buffer.byteLength >= bytes;
  const buffer = room ? kept.buffer as SharedArrayBuffer : new SharedArrayBuffer(Math.max(8, Math.ceil(bytes * KEPT_COPY_ROOM / 8) * 8));
  const out = new type(buffer, 0, src.length);
  out.set(src as never);
  return out;
}

/**
 * Copies `st`'s columns into the SharedArrayBuffers of `kept` (a previous copy; null: new ones),
 * and takes the small tables in canonical form: what a snapshot's walk needs, at the cost of
 * typed array copies (~21 MB for 112k open orders; docs/benchmarks.md h29s, h29w). The caller
 * must not hand `kept` in while another thread still reads it (one snapshot write at a time).
 */
export function copyEngineColumns(st: EngineState, kept: EngineColumns | null): EngineColumns {
  const live = liveColumns(st);
  const k = kept ?? undefined;
  return columnsOf(st, {
    market_base: copied(live.market_base, k?.market_base, Int32Array), market_quote: copied(live.market_quote, k?.market_quote, Int32Array),
    market_tick: copied(live.market_tick, k?.market_tick, Float64Array), market_lot: copied(live.market_lot, k?.market_lot, Float64Array),
    market_status: copied(live.market_status, k?.market_status, Uint8Array),
    market_fee_override: copied(live.market_fee_override, k?.market_fee_override, Uint8Array),
    market_maker_bps: copied(live.market_maker_bps, k?.market_maker_bps, Int32Array),
    market_taker_bps: copied(live.market_taker_bps, k?.market_taker_bps, Int32Array),
    market_mark: copied(live.market_mark, k?.market_mark, Float64Array),
    side_levels: live.side_levels.map((levels, i) => copied(levels, k?.side_levels[i], Int32Array)),
    level_head: copied(live.level_head, k?.level_head, Int32Array),
    order_f: copied(live.order_f, k?.order_f, Float64Array), order_i: copied(live.order_i, k?.order_i, Int32Array),
    client_rows: copied(live.client_rows, k?.client_rows, Int32Array),
    client_entry_of_slot: copied(live.client_entry_of_slot, k?.client_entry_of_slot, Int32Array),
    available: copied(live.available, k?.available, Float64Array), locked: copied(live.locked, k?.locked, Float64Array),
    nonce_high_water: copied(live.nonce_high_water, k?.nonce_high_water, Float64Array),
    deposits: copied(live.deposits, k?.deposits, Float64Array), withdrawals: copied(live.withdrawals, k?.withdrawals, Float64Array),
  });
}

export function canonicalStateOf(st: EngineState): CanonicalState {
  return canonicalOfColumns(liveColumns(st));
}

/** Whether the canonical state lists account `acct` (< account_high): the fee account, a nonce, or a balance. */
export function listedAccount(c: EngineColumns, acct: number): boolean {
  if (acct === FEE_ACCOUNT || c.nonce_high_water[acct] > 0) return true;
  const a = c.asset_count;
  for (let k = 0; k < a; k++) if (c.available[acct * a + k] !== 0 || c.locked[acct * a + k] !== 0) return true;
  return false;
}

/** The canonical state of the columns: the one walk, over live columns or their copies. */
export function canonicalOfColumns(c: EngineColumns): CanonicalState {
  const markets: CanonicalMarket[] = [];
  for (let m = 0; m < c.market_count; m++) {
    markets.push({
      id: c.market_id[m],
      base: c.market_base[m],
      quote: c.market_quote[m],
      tick_size_units: c.market_tick[m],
      lot_size_units: c.market_lot[m],
      status: c.market_status[m] === MarketStatus.ACTIVE ? 'active' : 'paused',
      fees: c.market_fee_override[m] === 1
        ? { maker_fee_bps: c.market_maker_bps[m], taker_fee_bps: c.market_taker_bps[m] }
        : null,
      mark_price_units: c.market_mark[m],
      bids: canonicalSide(c, c.side_levels[2 * m + Side.BID]),
      asks: canonicalSide(c, c.side_levels[2 * m + Side.ASK]),
    });
  }
  const accounts: CanonicalAccount[] = [];
  const a = c.asset_count;
  for (let acct = 0; acct < c.account_high; acct++) {
    if (!listedAccount(c, acct)) continue;
    const balances: [number, number][] = [];
    for (let k = 0; k < a; k++) balances.push([c.available[acct * a + k], c.locked[acct * a + k]]);
    accounts.push({ account: acct, nonce_high_water: c.nonce_high_water[acct], balances });
  }
  const s = c.small;
  return {
    batch_time_ms: c.batch_time_ms,
    next_order_id: c.next_order_id,
    next_fill_id: c.next_fill_id,
    next_priority_seq: c.next_priority_seq,
    fees: { maker_fee_bps: c.maker_bps_global, taker_fee_bps: c.taker_bps_global },
    markets,
    accounts,
    deposits_units: Array.from(c.deposits),
    withdrawals_units: Array.from(c.withdrawals),
    credit: s.credit,
    pending_withdrawals: s.pending_withdrawals,
    referrals: s.referrals,
    inbox: s.inbox,
    next_inbox_entry_id: s.next_inbox_entry_id,
    envelope_nonces: s.envelope_nonces,
    dead_man: s.dead_man,
    agents: s.agents,
    chain_deposit_high_water: c.chain_deposit_high_water,
  };
}

/**
 * Loads a canonical state into this freshly constructed engine (built with the state's markets,
 * in index order, and no request applied yet). Everything the engine can observe comes back:
 * balances, nonces, counters, fees, marks, credit, pending withdrawals, and every resting order
 * at its place in its level's queue (rows are best first, then time priority). Slot and level
 * numbering inside the pools may differ; nothing depends on it. This is what a snapshot holds.
 */
export function loadCanonical(st: EngineState, books: Books, s: CanonicalState): void {
  assert(st.next_order_id === 1 && st.orders.size === 0, 'loadCanonical needs a fresh engine');
  assert(s.markets.length === st.market_count, 'the engine was built with the state\'s markets');
  st.batch_time_ms = s.batch_time_ms;
  // `?? 0`: snapshots written before the field existed had credited no chain deposit.
  st.chain_deposit_high_water = s.chain_deposit_high_water ?? 0;
  st.next_order_id = s.next_order_id;
  st.next_fill_id = s.next_fill_id;
  st.next_priority_seq = s.next_priority_seq;
  st.maker_bps_global = s.fees.maker_fee_bps;
  st.taker_bps_global = s.fees.taker_fee_bps;
  const a = st.asset_count;
  const L = st.ledger;
  for (const acc of s.accounts) {
    L.ensure(acc.account);
    L.nonce_high_water[acc.account] = acc.nonce_high_water;
    for (let k = 0; k < a; k++) {
      L.available[acc.account * a + k] = acc.balances[k][0];
      L.locked[acc.account * a + k] = acc.balances[k][1];
    }
  }
  for (let k = 0; k < a; k++) {
    st.deposits[k] = s.deposits_units[k];
    st.withdrawals[k] = s.withdrawals_units[k];
  }
  for (const c of s.credit) {
    L.ensure(c.account);
    st.credit.set(c.account, c.credit_limit_units, c.auto_cancel_ratio_ppm);
    L.has_credit[c.account] = 1;
  }
  for (const w of s.pending_withdrawals) st.pending_withdrawals.push({ ...w });
  for (const r of s.referrals) {
    L.ensure(r.account);
    L.ensure(r.referrer);
  }
  st.referrals.load(s.referrals);
  for (const e of s.inbox) L.ensure(e.account);
  st.inbox.load(s.inbox, s.next_inbox_entry_id);
  for (const e of s.envelope_nonces) {
    L.ensure(e.account);
    st.envelope_high_water.set(e.account, e.envelope_nonce);
  }
  for (const d of s.dead_man) L.ensure(d.account);
  st.dead_man.load(s.dead_man);
  for (const u of s.agents) {
    L.ensure(u.account);
    for (const a of u.agents) L.ensure(a.agent);
  }
  st.agents.load(s.agents);
  s.markets.forEach((mk, m) => {
    assert(mk.tick_size_units === st.market_tick[m] && mk.lot_size_units === st.market_lot[m], `market ${mk.id} matches`);
    st.market_status[m] = mk.status === 'active' ? MarketStatus.ACTIVE : MarketStatus.PAUSED;
    if (mk.fees !== null) {
      st.market_fee_override[m] = 1;
      st.market_maker_bps[m] = mk.fees.maker_fee_bps;
      st.market_taker_bps[m] = mk.fees.taker_fee_bps;
    }
    st.market_mark[m] = mk.mark_price_units;
    for (const row of [...mk.bids, ...mk.asks]) restoreOrder(st, books, m, row);
  });
}

function restoreOrder(st: EngineState, books: Books, m: number, row: CanonicalOrder): void {
  const o = st.orders;
  const s = o.alloc(row.order_id);
  assert(s !== Link.NIL, 'restored orders fit orders_open_max');
  const account = row.account;
  st.ledger.ensure(account);
  o.i[s * OI.STRIDE + OI.MARKET] = m;
  o.i[s * OI.STRIDE + OI.SIDE] = row.side;
  o.i[s * OI.STRIDE + OI.TIF] = row.tif;
  o.f[s * OF.STRIDE + OF.PRICE] = row.price_units;
  o.f[s * OF.STRIDE + OF.QUANTITY] = row.quantity_units;
  o.f[s * OF.STRIDE + OF.FILLED] = row.filled_units;
  o.f[s * OF.STRIDE + OF.REMAINING] = row.remaining_units;
  o.f[s * OF.STRIDE + OF.LOCKED] = row.locked_units;
  o.f[s * OF.STRIDE + OF.PRIORITY_SEQ] = row.priority_seq;
  o.f[s * OF.STRIDE + OF.LAST_FILL_PRICE] = row.last_fill_price_units;
  // The id as words (client_id.ts); a snapshot holds only ids its engine accepted.
  const client_id = new Int32Array(CLIENT_ID_WORDS);
  clientIdFromString(row.client_order_id, client_id, 0);
  assert(row.client_order_id === '' || clientIdValid(client_id, 0), 'restored client ids are valid');
  books.linkAccount(s, account, client_id);
  books.linkLevel(s);
}

function canonicalSide(c: EngineColumns, levels: Int32Array): CanonicalOrder[] {
  const rows: CanonicalOrder[] = [];
  const f = c.order_f;
  const i32 = c.order_i;
  for (let i = levels.length - 1; i >= 0; i--) {
    for (let s = c.level_head[levels[i]]; s !== Link.NIL; s = i32[s * OI.STRIDE + OI.NEXT]) {
      rows.push({
        order_id: f[s * OF.STRIDE + OF.ID], account: i32[s * OI.STRIDE + OI.ACCOUNT], side: i32[s * OI.STRIDE + OI.SIDE], tif: i32[s * OI.STRIDE + OI.TIF],
        price_units: f[s * OF.STRIDE + OF.PRICE], quantity_units: f[s * OF.STRIDE + OF.QUANTITY], filled_units: f[s * OF.STRIDE + OF.FILLED],
        remaining_units: f[s * OF.STRIDE + OF.REMAINING], locked_units: f[s * OF.STRIDE + OF.LOCKED],
        priority_seq: f[s * OF.STRIDE + OF.PRIORITY_SEQ], client_order_id: clientIdText(c.client_rows, c.client_entry_of_slot, s),
        last_fill_price_units: f[s * OF.STRIDE + OF.LAST_FILL_PRICE],
      });
    }
  }
  return rows;
}
