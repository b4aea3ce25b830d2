// A PROTOTYPE for bench/matcher_snapshot.ts (docs/benchmarks.md, "h29s"), not a snapshot path: the
// capture a matcher would make at a snapshot batch's boundary if only copies of the engine's
// typed arrays were taken there (the order and level pools, the book sides' level lists, the
// client id rows, the ledger's columns) plus the canonical form of the small tables (credit,
// programmes, agents: a few entries each), and the rest of today's capture (the walk into one
// object per order, msgpackr, the digest, the write) were done from the copies by another thread.
// It reaches into the engine's private fields (src/engine/ owns them): the real version belongs
// in src/engine/canonical.ts next to canonicalStateOf, which it reuses here unchanged by handing
// it an object that holds the copies where EngineState holds the originals.
import type { CanonicalState } from '../src/engine/api.js';
import { canonicalStateOf } from '../src/engine/canonical.js';
import { ClientIdIndex } from '../src/engine/client_id_index.js';
import type { EngineState } from '../src/engine/engine_state.js';
import type { Matcher } from '../src/matcher/matcher.js';

/** What is copied at the boundary: typed arrays (transferable) and the small tables' canonical rows. */
export interface EngineColumns {
  scalars: Pick<EngineState, 'market_count' | 'asset_count' | 'batch_time_ms' | 'next_order_id' | 'next_fill_id' |
    'next_priority_seq' | 'maker_bps_global' | 'taker_bps_global' | 'chain_deposit_high_water'>;
  market_id: string[];
  market: Record<'base' | 'quote' | 'tick' | 'lot' | 'status' | 'fee_override' | 'maker_bps' | 'taker_bps' | 'mark', Int32Array | Float64Array | Uint8Array>;
  sides: { count: number; levels: Int32Array }[];
  level_head: Int32Array;
  order_f: Float64Array;
  order_i: Int32Array;
  client_rows: Int32Array;
  client_entry_of_slot: Int32Array;
  account_high: number;
  available: Float64Array;
  locked: Float64Array;
  nonce_high_water: Float64Array;
  deposits: Float64Array;
  withdrawals: Float64Array;
  small: Pick<CanonicalState, 'credit' | 'pending_withdrawals' | 'referrals' | 'inbox' | 'next_inbox_entry_id' | 'envelope_nonces' | 'dead_man' | 'agents'>;
  addresses: Uint8Array;
}

interface ClientIdPrivate { rows: Int32Array; entry_of_slot: Int32Array }

function stateOf(m: Matcher): EngineState {
  return (m.engine as unknown as { st: EngineState }).st;
}

/** The boundary's part: copies only (the pause this design would leave). */
export function copyColumns(m: Matcher): EngineColumns {
  const st = stateOf(m);
  // As Matcher.captureState copies them (its registry keeps each address apart).
  const size = m.registry.size;
  const addresses = new Uint8Array(size * 20);
  for (let id = 1; id < size; id++) addresses.set(m.registry.addressBytes(id), id * 20);
  const L = st.ledger;
  const a = st.asset_count;
  const ci = st.orders.slot_by_client_id as unknown as ClientIdPrivate;
  const c = canonicalStateOf({ ...smallOnly(st) } as unknown as EngineState);
  return {
    scalars: {
      market_count: st.market_count, asset_count: a, batch_time_ms: st.batch_time_ms, next_order_id: st.next_order_id, next_fill_id: st.next_fill_id,
      next_priority_seq: st.next_priority_seq, maker_bps_global: st.maker_bps_global, taker_bps_global: st.taker_bps_global,
      chain_deposit_high_water: st.chain_deposit_high_water,
    },
    market_id: st.market_id.slice(),
    market: {
      base: st.market_base.slice(), quote: st.market_quote.slice(), tick: st.market_tick.slice(), lot: st.market_lot.slice(),
      status: st.market_status.slice(), fee_override: st.market_fee_override.slice(), maker_bps: st.market_maker_bps.slice(),
      taker_bps: st.market_taker_bps.slice(), mark: st.market_mark.slice(),
    },
    sides: st.sides.map((s) => ({ count: s.count, levels: s.levels.slice(0, s.count) })),
    level_head: st.levels.head.slice(),
    order_f: st.orders.f.slice(),
    order_i: st.orders.i.slice(),
    client_rows: ci.rows.slice(),
    client_entry_of_slot: ci.entry_of_slot.slice(),
    account_high: L.account_high,
    available: L.available.slice(0, L.account_high * a),
    locked: L.locked.slice(0, L.account_high * a),
    nonce_high_water: L.nonce_high_water.slice(0, L.account_high),
    deposits: st.deposits.slice(),
    withdrawals: st.withdrawals.slice(),
    small: {
      credit: c.credit, pending_withdrawals: c.pending_withdrawals, referrals: c.referrals, inbox: c.inbox,
      next_inbox_entry_id: c.next_inbox_entry_id, envelope_nonces: c.envelope_nonces, dead_man: c.dead_man, agents: c.agents,
    },
    addresses,
  };
}

/** An EngineState stand-in with no market, no account and no book: canonicalStateOf then reads only the small tables. */
function smallOnly(st: EngineState): Partial<EngineState> {
  return {
    market_count: 0, asset_count: st.asset_count, ledger: { account_high: 0 } as EngineState['ledger'], deposits: st.deposits, withdrawals: st.withdrawals,
    credit: st.credit, pending_withdrawals: st.pending_withdrawals, referrals: st.referrals, inbox: st.inbox, envelope_high_water: st.envelope_high_water,
    dead_man: st.dead_man, agents: st.agents,
  };
}

/** The other thread's part: the canonical state from the copies, by canonicalStateOf itself. */
export function canonicalOfColumns(c: EngineColumns): CanonicalState {
  const client = Object.create(ClientIdIndex.prototype) as ClientIdPrivate;
  client.rows = c.client_rows;
  client.entry_of_slot = c.client_entry_of_slot;
  const fake = {
    ...c.scalars,
    market_id: c.market_id,
    market_base: c.market.base, market_quote: c.market.quote, market_tick: c.market.tick, market_lot: c.market.lot,
    market_status: c.market.status, market_fee_override: c.market.fee_override, market_maker_bps: c.market.maker_bps,
    market_taker_bps: c.market.taker_bps, market_mark: c.market.mark,
    sides: c.sides,
    bookSide(m: number, side: number) {
      return c.sides[2 * m + side];
    },
    levels: { head: c.level_head },
    orders: { f: c.order_f, i: c.order_i, slot_by_client_id: client },
    ledger: { account_high: c.account_high, available: c.available, locked: c.locked, nonce_high_water: c.nonce_high_water },
    deposits: c.deposits, withdrawals: c.withdrawals,
    // The small tables were taken in canonical form at the boundary: hand them back as such.
    credit: { accounts_ascending: [] },
    pending_withdrawals: [], referrals: { canonical: () => [] }, inbox: { canonical: () => [], next_entry_id: 0 },
    envelope_high_water: new Map<number, number>(), dead_man: { canonical: () => [] }, agents: { canonical: () => [] },
  };
  const s = canonicalStateOf(fake as unknown as EngineState);
  // Spread over s: the keys keep canonicalStateOf's order (msgpackr's records follow it).
  return { ...s, ...c.small };
}

/**
 * The same copies into buffers kept from one snapshot to the next (`into`: a previous copy; a
 * shared staging area in a real version, one write at a time): no fresh 20 MB a snapshot, whose
 * allocation makes V8 collect (external memory pressure), which is most of copyColumns' time.
 */
export function copyColumnsInto(m: Matcher, into: EngineColumns): void {
  const st = stateOf(m);
  const ci = st.orders.slot_by_client_id as unknown as ClientIdPrivate;
  const L = st.ledger;
  const a = st.asset_count;
  if (st.orders.f.length !== into.order_f.length || ci.rows.length !== into.client_rows.length || L.account_high !== into.account_high) {
    throw new Error('prototype: the pools grew since the copy it reuses');
  }
  into.order_f.set(st.orders.f);
  into.order_i.set(st.orders.i);
  into.level_head.set(st.levels.head);
  into.client_rows.set(ci.rows);
  into.client_entry_of_slot.set(ci.entry_of_slot);
  into.available.set(L.available.subarray(0, L.account_high * a));
  into.locked.set(L.locked.subarray(0, L.account_high * a));
  into.nonce_high_water.set(L.nonce_high_water.subarray(0, L.account_high));
  for (let id = 1; id < m.registry.size; id++) into.addresses.set(m.registry.addressBytes(id), id * 20);
  st.sides.forEach((s, k) => into.sides[k].levels.set(s.levels.subarray(0, s.count)));
}
