// The C reference book (native-bench/matcher_book.c) against the fast engine: on generated bench
// flows and on a hand-made flow that reaches the reject and partial paths, the C replay must give
// the same event counts and the same canonical-state digest. A divergence of the two books is
// then caught by `make test`, not only by `make bench`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFastEngine } from '../../src/engine/engine.js';
import { stateDigest } from '../../src/engine/state.js';
import { OrderType, RequestKind, Side, Tif, emptyRequest, type Request } from '../../src/engine/types.js';
import {
  CountingSink, FLOW_DEFAULTS, allocFlow, benchConfig, generateFlow, loadRequest, record,
  type EventCounts, type Flow,
} from '../../bench/flow.js';
import { readFlowFile, writeFlowFile } from '../../bench/flow_file.js';
import { buildNative, runNativeBook } from '../../bench/native.js';

let dir = '';
beforeAll(() => {
  buildNative();
  dir = mkdtempSync(join(tmpdir(), 'ringbook-native-'));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Counts of the measured rows and the final digest of a fast engine replaying the flow. */
function fastReplay(f: Flow): { counts: EventCounts; digest: string } {
  const engine = createFastEngine(benchConfig());
  const r = emptyRequest();
  const sink = new CountingSink();
  for (let i = 0; i < f.setup_end; i++) {
    loadRequest(r, f, i);
    engine.apply(r, sink);
  }
  sink.reset();
  for (let i = f.setup_end; i < f.length; i++) {
    loadRequest(r, f, i);
    engine.apply(r, sink);
  }
  return { counts: sink.counts(f.length - f.setup_end), digest: stateDigest(engine.canonicalState()) };
}

function writeFlow(name: string, f: Flow): string {
  const path = join(dir, name);
  writeFlowFile(path, f, benchConfig());
  return path;
}

describe('native-bench/matcher_book (C) against the fast engine', () => {
  it('gives the same counts and state digest on generated bench flows', () => {
    for (const seed of [1, 0x5eed_2026]) {
      const { flow } = generateFlow({ ...FLOW_DEFAULTS, seed, accounts: 200, prefill_per_market: 150, ops: 15_000 });
      const path = writeFlow(`gen-${seed}.bin`, flow);
      const js = fastReplay(flow);
      const c = runNativeBook(path, 1);
      expect(js.counts.fills).toBeGreaterThan(100);
      expect(c.counts).toEqual(js.counts);
      expect(c.digest).toBe(js.digest);
    }
  });

  it('agrees on rejections, partial fills, FOK misses and balance-limited market bids', () => {
    const f = allocFlow(64);
    const r = emptyRequest();
    const put = (fields: Partial<Request>): void => {
      Object.assign(r, emptyRequest(), fields);
      record(f, r, 0);
    };
    const nonce = [0, 0, 0, 0];
    const signed = (account: number): { account: number; nonce: number } => ({ account, nonce: ++nonce[account] });
    const limit = (account: number, side: number, price: number, qty: number, tif: number = Tif.GTC): Partial<Request> =>
      ({ kind: RequestKind.PLACE, ...signed(account), market: 0, side, order_type: OrderType.LIMIT, tif, price_units: price, quantity_units: qty });
    // Set-up: small balances so that balance checks bite.
    put({ kind: RequestKind.DEPOSIT, account: 1, asset: 0, amount_units: 5_000_000 });
    put({ kind: RequestKind.DEPOSIT, account: 1, asset: 2, amount_units: 20_000_000_000 });
    put({ kind: RequestKind.DEPOSIT, account: 2, asset: 0, amount_units: 5_000_000 });
    put({ kind: RequestKind.DEPOSIT, account: 3, asset: 2, amount_units: 4_000_000_000 });
    f.setup_end = f.length;
    put(limit(1, Side.ASK, 3_000_000_000, 1_000_000)); // order 1
    put(limit(2, Side.ASK, 3_010_000_000, 2_000_000)); // order 2
    put(limit(1, Side.BID, 2_990_000_000, 1_000_000)); // order 3
    put(limit(2, Side.ASK, 3_000_000_000, 9_000_000)); // rejected: insufficient ETH
    put(limit(1, Side.BID, 2_990_000_000, 1_050)); // rejected: not a lot multiple
    put(limit(1, Side.BID, 2_990_005_000, 1_000)); // rejected: not a tick multiple
    put({ ...limit(1, Side.BID, 2_990_000_000, 1_000), nonce: 1 }); // rejected: nonce not above high water
    put({ kind: RequestKind.CANCEL, ...signed(1), market: 0, order_id: 99 }); // rejected: no such order
    put({ kind: RequestKind.CANCEL, ...signed(1), market: 0, order_id: 2 }); // rejected: not its order
    put(limit(3, Side.BID, 3_010_000_000, 5_000_000, Tif.FOK)); // FOK: 3 ETH on offer, unfilled
    // Market bid for more than account 3 can pay: stops on its balance.
    put({ kind: RequestKind.PLACE, ...signed(3), market: 0, side: Side.BID, order_type: OrderType.MARKET, tif: Tif.IOC, quantity_units: 3_000_000 });
    put({ kind: RequestKind.AMEND, ...signed(2), market: 0, order_id: 2, price_units: 2_990_000_000, quantity_units: 500_000 }); // crosses order 3 partly
    put({ kind: RequestKind.AMEND, ...signed(1), market: 0, order_id: 3, price_units: 2_990_000_000, quantity_units: 300_000 }); // size down in place
    put(limit(3, Side.ASK, 2_980_000_000, 100_000, Tif.IOC)); // rejected: no ETH
    put({ kind: RequestKind.CANCEL, ...signed(1), market: 0, order_id: 3 });
    put({ kind: RequestKind.PLACE, ...signed(2), market: 0, side: Side.ASK, order_type: OrderType.MARKET, tif: Tif.FOK, quantity_units: 100 }); // empty bid side: FOK unfilled
    put({ kind: RequestKind.DEPOSIT, account: 3, asset: 7, amount_units: 1 }); // rejected: unknown asset
    const path = writeFlow('hand.bin', f);
    const js = fastReplay(f);
    const c = runNativeBook(path, 1);
    expect(js.counts.rejected).toBeGreaterThanOrEqual(8);
    expect(js.counts.fills).toBeGreaterThanOrEqual(2);
    expect(c.counts).toEqual(js.counts);
    expect(c.digest).toBe(js.digest);

    // The comparison has teeth: one changed quantity in the C's copy of the flow changes its digest.
    const changed = readFlowFile(path).flow;
    changed.quantity[f.setup_end] += 100_000; // order 1, which the market bid takes from
    const c2 = runNativeBook(writeFlow('hand-changed.bin', changed), 1);
    expect(c2.digest).not.toBe(js.digest);
  });

  it('reads back what it writes (flow file round trip)', () => {
    const { flow } = generateFlow({ ...FLOW_DEFAULTS, seed: 7, accounts: 20, prefill_per_market: 10, ops: 300 });
    const path = writeFlow('roundtrip.bin', flow);
    const back = readFlowFile(path);
    expect(back.config).toEqual(benchConfig());
    expect(back.flow).toEqual({ ...flow, ...sliceColumns(flow) });
    // Rewriting what was read gives the same bytes.
    writeFlowFile(join(dir, 'roundtrip2.bin'), back.flow, back.config);
    expect(readFileSync(join(dir, 'roundtrip2.bin'))).toEqual(readFileSync(path));
    writeFileSync(join(dir, 'bad.bin'), Buffer.from('NOTAFLOW'));
    expect(() => readFlowFile(join(dir, 'bad.bin'))).toThrow(/not a flow file/);
    expect(() => runNativeBook(join(dir, 'bad.bin'), 1)).toThrow(/magic RBFLOW01/);
  });
});

/** The flow's columns cut to its length (generateFlow allocates exactly, so this is the identity check). */
function sliceColumns(f: Flow): Partial<Flow> {
  return {
    kind: f.kind.slice(0, f.length), account: f.account.slice(0, f.length), nonce: f.nonce.slice(0, f.length),
    market: f.market.slice(0, f.length), side: f.side.slice(0, f.length), order_type: f.order_type.slice(0, f.length),
    tif: f.tif.slice(0, f.length), asset: f.asset.slice(0, f.length), price: f.price.slice(0, f.length),
    quantity: f.quantity.slice(0, f.length), order_id: f.order_id.slice(0, f.length), new_order_id: f.new_order_id.slice(0, f.length),
  };
}
