// State leaves from a snapshot: the leaves the incremental StateRootBuilder would hold after the
// events that led to `canonical`, built from the engine's canonical state instead of events. A
// server resuming from a snapshot starts its state-root builder from these, and asserts that
// their root is the root published for the snapshot's batch.
//
// Kept in its own file so that new leaf kinds (new engine state) are added here next to their
// event-side twin in state_root.ts; test/snapshot/canonical_leaves.test.ts compares the two roots
// after random flows, so a kind missing here fails there.
//
// The one fact the canonical state cannot give: a balance leaf exists for every (account, asset)
// that ever had a BALANCE event, and is never removed, so a zero balance may or may not be a leaf
// (an account that only ever held USDC has no ETH leaf; one that sold all its ETH has a zero ETH
// leaf). The snapshot carries the zero-valued ones (`zero_balance_leaves`, from the front's read
// model, which sees the same events); non-zero balances are always leaves.
import type { CanonicalState } from '../engine/api.js';
import { OrderStatus } from '../engine/types.js';
import { programmeLeavesOfCanonical } from './programme_leaves.js';
import { engineLeavesOfCanonical } from './engine_leaves.js';
import { agentLeavesOfCanonical } from './agent_leaves.js';
import { accountLeafId, balanceLeafId, nonceLeafId, orderLeafId, type LeafId } from './leaf_ids.js';
import {
  EMPTY_KEY, LeafKind, ZERO_ADDRESS, accountKey, accountValue, balanceKey, balanceValue, creditValue,
  feesValue, marketKey, marketValue, nonceValue, orderKey, orderValue, withdrawalKey, withdrawalValue,
  type MarketLeafValue, type PendingLeaf,
} from './state_leaves.js';

export interface CanonicalLeavesInput {
  canonical: CanonicalState;
  /** Account id -> address, 0x hex (index 0, the fee account, has no address leaf). */
  addresses: readonly string[];
  /** [account, asset] pairs whose balance leaf exists with available = locked = 0. */
  zero_balance_leaves: readonly (readonly [number, number])[];
  /** Asset symbols in index order (market ids of fill leaves). */
  assets: readonly string[];
}

export interface CanonicalLeaves {
  /** Leaves keyed by the builder's leaf ids (the ids StateRootBuilder's encodePending uses). */
  entries: [LeafId, PendingLeaf][];
  /** Per market: what the builder keeps to write market leaves and fill leaves later. */
  markets: (MarketLeafValue & { id: string })[];
  /** Account id -> address, as the builder keeps them for fill leaves (0 = zero address). */
  addresses: Map<number, string>;
}

export function leavesFromCanonical(input: CanonicalLeavesInput): CanonicalLeaves {
  const s = input.canonical;
  const entries: [LeafId, PendingLeaf][] = [];
  const addresses = new Map<number, string>([[0, ZERO_ADDRESS]]);
  for (let id = 1; id < input.addresses.length; id++) {
    const address = input.addresses[id];
    addresses.set(id, address);
    entries.push([accountLeafId(id), { kind: LeafKind.ACCOUNT, key: accountKey(id), value: accountValue(address) }]);
  }
  for (const a of s.accounts) {
    a.balances.forEach(([available, locked], asset) => {
      if (available === 0 && locked === 0) return; // a leaf only if listed in zero_balance_leaves
      entries.push([balanceLeafId(a.account, asset), { kind: LeafKind.BALANCE, key: balanceKey(a.account, asset), value: balanceValue(available, locked) }]);
    });
    if (a.nonce_high_water > 0) {
      entries.push([nonceLeafId(a.account), { kind: LeafKind.NONCE, key: accountKey(a.account), value: nonceValue(a.nonce_high_water) }]);
    }
  }
  for (const [account, asset] of input.zero_balance_leaves) {
    entries.push([balanceLeafId(account, asset), { kind: LeafKind.BALANCE, key: balanceKey(account, asset), value: balanceValue(0, 0) }]);
  }
  const markets: (MarketLeafValue & { id: string })[] = [];
  s.markets.forEach((m, index) => {
    // A market leaf carries the effective fees (the override, else the global ones), as the
    // MARKET event does.
    const fees = m.fees ?? s.fees;
    const value: MarketLeafValue & { id: string } = {
      id: `${input.assets[m.base] ?? `#${m.base}`}-${input.assets[m.quote] ?? `#${m.quote}`}`,
      status: m.status === 'active' ? 0 : 1, base: m.base, quote: m.quote, tick: m.tick_size_units,
      lot: m.lot_size_units, fee_override: m.fees === null ? 0 : 1, maker_bps: fees.maker_fee_bps,
      taker_bps: fees.taker_fee_bps, mark_price: m.mark_price_units,
    };
    markets.push(value);
    entries.push([`5:${index}`, { kind: LeafKind.MARKET, key: marketKey(index), value: marketValue(value) }]);
    for (const o of [...m.bids, ...m.asks]) {
      // Resting orders are the open ones; their status is what their last ORDER_UPDATE said.
      const status = o.filled_units > 0 ? OrderStatus.PARTIALLY_FILLED : OrderStatus.OPEN;
      entries.push([orderLeafId(o.order_id), {
        kind: LeafKind.OPEN_ORDER, key: orderKey(o.order_id),
        value: orderValue({
          account: o.account, market: index, side: o.side, price: o.price_units, quantity: o.quantity_units,
          filled: o.filled_units, remaining: o.remaining_units, status, locked: o.locked_units,
          priority_seq: o.priority_seq, last_fill_price: o.last_fill_price_units,
        }),
      }]);
    }
  });
  entries.push(['6', { kind: LeafKind.GLOBAL_FEES, key: EMPTY_KEY, value: feesValue(s.fees.maker_fee_bps, s.fees.taker_fee_bps) }]);
  for (const c of s.credit) {
    if (c.credit_limit_units === 0) continue;
    entries.push([`7:${c.account}`, { kind: LeafKind.CREDIT, key: accountKey(c.account), value: creditValue(c.credit_limit_units, c.auto_cancel_ratio_ppm) }]);
  }
  for (const w of s.pending_withdrawals) {
    entries.push([`8:${w.account}:${w.nonce}`, { kind: LeafKind.PENDING_WITHDRAWAL, key: withdrawalKey(w.account, w.nonce), value: withdrawalValue(w.asset, w.amount_units) }]);
  }
  // Referrals, their earnings and the forced-inclusion inbox: all in the canonical state.
  entries.push(...programmeLeavesOfCanonical(s));
  // Counters, supply, open orders' terms.
  entries.push(...engineLeavesOfCanonical(s));
  // Agent keys and their users' nonce floors.
  entries.push(...agentLeavesOfCanonical(s));
  return { entries, markets, addresses };
}
