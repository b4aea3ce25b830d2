// A fresh fast engine, built after the previous one was collected, runs on the same hidden classes
// (V8 maps) as the one kept for the process's life (FastEngine.shapes): otherwise the optimized
// engine code is thrown away with the old engine's maps and rebuilt slower (docs/engine.md,
// docs/benchmarks.md 2026-11-26). V8's own judgement (%HaveSameMap) in a child process started with
// --allow-natives-syntax, on the compiled engine in dist/.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ENGINE_JS = fileURLToPath(new URL('../../dist/src/engine/engine.js', import.meta.url));

// Deposits, a resting ask, a bid that fills part of it, an amend that moves the rest, a cancel:
// every taker field gets a price-sized value (beyond V8's small integers).
const SCRIPT = `
const { createFastEngine, FastEngine } = await import(process.env.ENGINE_JS);
const config = {
  assets: ['ETH', 'USDC'],
  markets: [{ id: 'ETH-USDC', base: 0, quote: 1, tick_size_units: 10000, lot_size_units: 100 }],
  maker_fee_bps: -1, taker_fee_bps: 5,
  limits: { accounts_max: 64, markets_max: 2, orders_open_max: 1000, orders_open_per_account_max: 100, price_levels_per_book_max: 100 },
};
const counts = { accepted: 0, rejected: 0, fills: 0 };
const sink = {
  accepted() { counts.accepted++; }, rejected() { counts.rejected++; }, fill() { counts.fills++; },
  orderUpdate() {}, balance() {}, referral() {}, referralShare() {}, inboxQueued() {}, inboxIncluded() {}, agent() {},
};
function request(fields) {
  return { kind: 0, account: 0, nonce: 0, market: 0, side: 0, order_type: 0, tif: 0, price_units: 0, quantity_units: 0,
    order_id: 0, client_order_id: '', asset: 0, asset_quote: 0, amount_units: 0, maker_fee_bps: 0, taker_fee_bps: 0,
    credit_limit_units: 0, auto_cancel_ratio_ppm: 0, tick_size_units: 0, lot_size_units: 0, referrer_account: 0,
    inner_kind: 0, inner_nonce: 0, inner_reject: 0, stp: 0, expires_after_ms: 0, signer: 0, agent_account: 0, ...fields };
}
function run() {
  const e = createFastEngine(config);
  for (const account of [1, 2]) {
    e.apply(request({ kind: 1, account, asset: 0, amount_units: 1e12 }), sink);
    e.apply(request({ kind: 1, account, asset: 1, amount_units: 1e14 }), sink);
  }
  e.apply(request({ kind: 3, account: 1, nonce: 1, side: 1, price_units: 3000000000, quantity_units: 2000000 }), sink);
  e.apply(request({ kind: 3, account: 2, nonce: 1, side: 0, price_units: 3000010000, quantity_units: 500000 }), sink);
  e.apply(request({ kind: 5, account: 1, nonce: 2, order_id: 1, price_units: 3000020000, quantity_units: 1000000 }), sink);
  e.apply(request({ kind: 3, account: 2, nonce: 2, side: 0, price_units: 2990000000, quantity_units: 300000 }), sink);
  e.apply(request({ kind: 4, account: 2, nonce: 3, order_id: 3 }), sink);
  return e;
}
const kept = FastEngine.shapes;
let first = run();
const first_same = %HaveSameMap(first, kept);
first = null;
globalThis.gc();
const second = run();
console.log(JSON.stringify({
  counts,
  first_same,
  second_same: %HaveSameMap(second, kept),
  ledger_same: %HaveSameMap(second.st.ledger, kept.st.ledger),
  orders_same: %HaveSameMap(second.st.orders, kept.st.orders),
  matching_same: %HaveSameMap(second.matching, kept.matching),
  requests_same: %HaveSameMap(second.orders, kept.orders),
  books_same: %HaveSameMap(second.books, kept.books),
  state_same: %HaveSameMap(second.st, kept.st),
  levels_same: %HaveSameMap(second.st.levels, kept.st.levels),
  index_same: %HaveSameMap(second.st.orders.slot_by_id, kept.st.orders.slot_by_id),
  bids_same: %HaveSameMap(second.st.sides[0], kept.st.sides[0]),
  programmes_same: %HaveSameMap(second.programmes, kept.programmes),
}));
`;

describe('fast engine hidden classes', () => {
  it('dist is compiled', () => {
    expect(fs.existsSync(ENGINE_JS), `${ENGINE_JS}: run npx tsc -p tsconfig.json`).toBe(true);
  });

  it('an engine built after the previous one was collected shares the kept engine\'s maps', () => {
    const res = spawnSync(process.execPath, ['--allow-natives-syntax', '--expose-gc', '--input-type=module', '-e', SCRIPT], {
      env: { ...process.env, ENGINE_JS }, encoding: 'utf8', timeout: 60_000,
    });
    expect(res.status, res.stderr).toBe(0);
    const out = JSON.parse(res.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
    // The flow did what it says in both engines: 2 x (4 deposits, 3 places, 1 amend, 1 cancel), 1 fill each.
    expect(out.counts).toEqual({ accepted: 18, rejected: 0, fills: 2 });
    expect(out.first_same).toBe(true);
    expect(out.second_same).toBe(true);
    expect(out.ledger_same).toBe(true);
    expect(out.orders_same).toBe(true);
    expect(out.matching_same).toBe(true);
    // Every part of the engine: OrderRequests' bid lock (a small integer at first, then a price-sized
    // value) gave it a new map per engine until the field started as a float64.
    for (const part of ['requests', 'books', 'state', 'levels', 'index', 'bids', 'programmes']) {
      expect(out[`${part}_same`], part).toBe(true);
    }
  });
});
