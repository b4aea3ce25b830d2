// EngineState.bidLock (the lock of a limit bid: notional rounded up + the worst-case taker fee)
// against a BigInt oracle: its products within 2^53 are written out, the rest go to bidLockWide
// (docs/benchmarks.md, h17e); both must give the exact lock, or MONEY_OVERFLOW when the lock is
// beyond 2^53 - 1, on each side of both products' 2^53 boundary.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EngineState } from '../../src/engine/engine_state.js';
import type { EngineConfig } from '../../src/engine/api.js';
import { MAX, MAX_BIG, OVERFLOW, productNear2p53 } from '../money/reference.js';

const CONFIG: EngineConfig = {
  assets: ['BASE', 'QUOTE'],
  markets: [{ id: 'BASE-QUOTE', base: 0, quote: 1, tick_size_units: 10_000, lot_size_units: 100 }],
  maker_fee_bps: 0,
  taker_fee_bps: 0,
  limits: {
    accounts_max: 16, markets_max: 1, orders_open_max: 16, orders_open_per_account_max: 16, price_levels_per_book_max: 16,
  },
};

function ceilDiv(a: bigint, d: bigint): bigint {
  return (a + d - 1n) / d;
}

/** The lock by BigInt: ceil(p q / 1e6) + ceil(n bps / 1e4), OVERFLOW when any part or the sum passes 2^53 - 1. */
function refBidLock(p: number, q: number, bps: number): number {
  const n = ceilDiv(BigInt(p) * BigInt(q), 1_000_000n);
  if (n > MAX_BIG) return OVERFLOW;
  const fee = ceilDiv(n * BigInt(bps), 10_000n);
  if (fee > MAX_BIG || n + fee > MAX_BIG) return OVERFLOW;
  return Number(n + fee);
}

function lockOf(st: EngineState, p: number, q: number, bps: number): number {
  // loadFees reads the global taker fee for a market without an override.
  st.taker_bps_global = bps;
  st.loadFees(0);
  return st.bidLock(p, q);
}

describe('EngineState.bidLock', () => {
  const st = new EngineState(CONFIG);
  const bps = fc.integer({ min: 0, max: 10_000 });
  const safe = fc.integer({ min: 1, max: MAX });

  it('equals the BigInt lock for any price and quantity (mostly products beyond 2^53)', () => {
    fc.assert(fc.property(safe, safe, bps, (p, q, b) => {
      expect(lockOf(st, p, q, b)).toBe(refBidLock(p, q, b));
    }), { numRuns: 5_000 });
  });

  it('equals it for products within 2^53 and for products at the boundary', () => {
    const small = fc.integer({ min: 1, max: 94_906_265 }); // sqrt(2^53): p q within 2^53
    fc.assert(fc.property(small, small, bps, (p, q, b) => {
      expect(lockOf(st, p, q, b)).toBe(refBidLock(p, q, b));
    }), { numRuns: 5_000 });
    fc.assert(fc.property(productNear2p53, bps, ([p, q], b) => {
      expect(lockOf(st, p, q, b)).toBe(refBidLock(p, q, b));
    }), { numRuns: 5_000 });
  });

  it('gives MONEY_OVERFLOW exactly when the lock passes 2^53 - 1 (fee at the cap)', () => {
    // At 10,000 bps the fee equals the notional: a notional above 2^52 fits, notional + fee does not.
    const n = 9_006_298_634_877_503;
    expect(lockOf(st, n, 1_000_000, 10_000)).toBe(refBidLock(n, 1_000_000, 10_000));
    expect(lockOf(st, n, 1_000_000, 10_000)).toBe(OVERFLOW);
    expect(lockOf(st, 4_503_599_627_370_495, 1_000_000, 10_000)).toBe(MAX - 1);
  });
});
