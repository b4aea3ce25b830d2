// The state digest: keccak256 over the canonical JSON of the whole engine state. Used by tests now
// and as the input to state roots later; both engines must produce the same bytes, so the JSON is
// rebuilt here in one fixed key order whatever order an engine built its objects in.
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import type { CanonicalMarket, CanonicalOrder, CanonicalState } from './api.js';

function orderRow(o: CanonicalOrder): unknown[] {
  return [
    o.order_id, o.account, o.side, o.tif, o.price_units, o.quantity_units, o.filled_units,
    o.remaining_units, o.locked_units, o.priority_seq, o.client_order_id, o.last_fill_price_units,
  ];
}

function marketRow(m: CanonicalMarket): unknown[] {
  return [
    m.id, m.base, m.quote, m.tick_size_units, m.lot_size_units, m.status,
    m.fees === null ? null : [m.fees.maker_fee_bps, m.fees.taker_fee_bps],
    m.mark_price_units, m.bids.map(orderRow), m.asks.map(orderRow),
  ];
}

export function canonicalJson(s: CanonicalState): string {
  return JSON.stringify([
    s.next_order_id, s.next_fill_id, s.next_priority_seq,
    [s.fees.maker_fee_bps, s.fees.taker_fee_bps],
    s.markets.map(marketRow),
    s.accounts.map((a) => [a.account, a.nonce_high_water, a.balances]),
    s.deposits_units, s.withdrawals_units,
    s.credit.map((c) => [c.account, c.credit_limit_units, c.auto_cancel_ratio_ppm]),
    s.pending_withdrawals.map((w) => [w.account, w.nonce, w.asset, w.amount_units]),
    s.chain_deposit_high_water,
  ]);
}

export function stateDigest(state: CanonicalState): string {
  return '0x' + bytesToHex(keccak_256(utf8ToBytes(canonicalJson(state))));
}
