// The engine state in canonical form (docs/engine.md, "Canonical state"): what a snapshot holds,
// what the state digest and the state roots are computed over, and what both engines must agree
// on byte for byte. canonicalStateOf reads the fast engine's state out; loadCanonical puts one
// back into a freshly built engine. The state itself is engine_state.ts.
import type {
  CanonicalAccount, CanonicalMarket, CanonicalOrder, CanonicalState,
} from './api.js';
import { Link, OF, OI, type BookSide } from './book.js';
import { CLIENT_ID_WORDS, clientIdFromString, clientIdValid } from './client_id.js';
import type { Books } from './engine_books.js';
import { assert, MarketStatus, type EngineState } from './engine_state.js';
import { FEE_ACCOUNT, Side } from './types.js';

export function canonicalStateOf(st: EngineState): CanonicalState {
  const markets: CanonicalMarket[] = [];
  for (let m = 0; m < st.market_count; m++) {
    markets.push({
      id: st.market_id[m],
      base: st.market_base[m],
      quote: st.market_quote[m],
      tick_size_units: st.market_tick[m],
      lot_size_units: st.market_lot[m],
      status: st.market_status[m] === MarketStatus.ACTIVE ? 'active' : 'paused',
      fees: st.market_fee_override[m] === 1
        ? { maker_fee_bps: st.market_maker_bps[m], taker_fee_bps: st.market_taker_bps[m] }
        : null,
      mark_price_units: st.market_mark[m],
      bids: canonicalSide(st, st.bookSide(m, Side.BID)),
      asks: canonicalSide(st, st.bookSide(m, Side.ASK)),
    });
  }
  const accounts: CanonicalAccount[] = [];
  const L = st.ledger;
  const a = st.asset_count;
  for (let acct = 0; acct < L.account_high; acct++) {
    const balances: [number, number][] = [];
    let any = acct === FEE_ACCOUNT || L.nonce_high_water[acct] > 0;
    for (let k = 0; k < a; k++) {
      const av = L.available[acct * a + k];
      const lk = L.locked[acct * a + k];
      if (av !== 0 || lk !== 0) any = true;
      balances.push([av, lk]);
    }
    if (any) accounts.push({ account: acct, nonce_high_water: L.nonce_high_water[acct], balances });
  }
  return {
    batch_time_ms: st.batch_time_ms,
    next_order_id: st.next_order_id,
    next_fill_id: st.next_fill_id,
    next_priority_seq: st.next_priority_seq,
    fees: { maker_fee_bps: st.maker_bps_global, taker_fee_bps: st.taker_bps_global },
    markets,
    accounts,
    deposits_units: Array.from(st.deposits),
    withdrawals_units: Array.from(st.withdrawals),
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
    chain_deposit_high_water: st.chain_deposit_high_water,
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

function canonicalSide(st: EngineState, side: BookSide): CanonicalOrder[] {
  const rows: CanonicalOrder[] = [];
  const o = st.orders;
  for (let i = side.count - 1; i >= 0; i--) {
    for (let s = st.levels.head[side.levels[i]]; s !== Link.NIL; s = o.i[s * OI.STRIDE + OI.NEXT]) {
      rows.push({
        order_id: o.f[s * OF.STRIDE + OF.ID], account: o.i[s * OI.STRIDE + OI.ACCOUNT], side: o.i[s * OI.STRIDE + OI.SIDE], tif: o.i[s * OI.STRIDE + OI.TIF],
        price_units: o.f[s * OF.STRIDE + OF.PRICE], quantity_units: o.f[s * OF.STRIDE + OF.QUANTITY], filled_units: o.f[s * OF.STRIDE + OF.FILLED],
        remaining_units: o.f[s * OF.STRIDE + OF.REMAINING], locked_units: o.f[s * OF.STRIDE + OF.LOCKED],
        priority_seq: o.f[s * OF.STRIDE + OF.PRIORITY_SEQ], client_order_id: o.slot_by_client_id.text(s),
        last_fill_price_units: o.f[s * OF.STRIDE + OF.LAST_FILL_PRICE],
      });
    }
  }
  return rows;
}
