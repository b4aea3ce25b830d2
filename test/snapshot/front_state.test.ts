// The front part of a snapshot round-trips: a read model and market data fed by a random flow,
// encoded, decoded into fresh ones, answer exactly like the originals (same export), and keep
// answering alike when the same later events reach both.
import { describe, expect, it } from 'vitest';
import { ReplayExecutor } from '../../src/da/replay.js';
import { ReadModel } from '../../src/read_model/read_model.js';
import { MarketData } from '../../src/marketdata/market_data.js';
import { decodeFront, encodeFront, exportFront, importFront } from '../../src/snapshot/front_state.js';
import { generateSequence } from '../engine/generator.js';
import { recordsOf, recordable } from '../da/records.js';

const LIMITS = { fills_per_account_kept: 5, trades_per_market_kept: 5, closed_orders_kept: 8 };

describe('front snapshot part', () => {
  it('round-trips the read model and market data, which then follow the same events alike', () => {
    let compared = 0;
    let programme_rows = 0;
    for (let seed = 1; seed <= 25; seed++) {
      const g = generateSequence(seed, 400);
      const requests = g.requests.filter(recordable);
      const rm = new ReadModel(g.config.assets, LIMITS);
      const md = new MarketData(rm, { now: () => 0 });
      rm.observe([md]);
      let copy: { rm: ReadModel; md: MarketData } | null = null;
      const ex = new ReplayExecutor(g.config, {
        state_root: false,
        onEvent: (e) => {
          rm.apply(e);
          if (copy !== null) copy.rm.apply(e);
        },
      });
      ex.genesis();
      const half = requests.length >> 1;
      let batch_id = 0;
      for (let at = 0; at < requests.length; at += 7) {
        const part = requests.slice(at, at + 7);
        ex.apply(++batch_id, 60_000 * batch_id, recordsOf(part), part.length);
        if (copy === null && at + 7 >= half) {
          const rm2 = new ReadModel(g.config.assets, LIMITS);
          const md2 = new MarketData(rm2, { now: () => 0 });
          rm2.observe([md2]);
          // From a Node Buffer at an odd offset, as read back from a file.
          const bytes = encodeFront(rm, md);
          const file = Buffer.alloc(bytes.length + 3);
          file.set(bytes, 3);
          importFront(rm2, md2, decodeFront(file.subarray(3)));
          expect(exportFront(rm2, md2), `seed ${seed}: restored`).toEqual(exportFront(rm, md));
          copy = { rm: rm2, md: md2 };
        }
      }
      const c = copy as { rm: ReadModel; md: MarketData } | null;
      if (c === null) throw new Error('no copy made');
      expect(exportFront(c.rm, c.md), `seed ${seed}: after the same events`).toEqual(exportFront(rm, md));
      expect([...c.rm.orders.values()].map((o) => o.client_order_id)).toEqual([...rm.orders.values()].map((o) => o.client_order_id));
      compared += rm.orders.size + rm.fills_by_account.size;
      programme_rows += rm.programmes.referral_of.size + rm.programmes.entries.size;
    }
    expect(compared).toBeGreaterThan(100);
    expect(programme_rows).toBeGreaterThan(10);
  });
});
