// Market data heard through the observer tape (as on the front: after the batch's answers, hearing
// fills but no order updates, hears()) keeps exactly the state it keeps as a direct observer of the
// read model hearing every call: best prices from the read model's rested_bid_max / rested_ask_min
// at commit, candles and the leaderboard from the fills. Generated flows through the real engine.
import { describe, expect, it } from 'vitest';
import { ReplayExecutor } from '../../src/da/replay.js';
import { ReadModel } from '../../src/read_model/read_model.js';
import { ObserverTape } from '../../src/read_model/observer_tape.js';
import { MarketData } from '../../src/marketdata/market_data.js';
import { EventType } from '../../src/ring/event_records.js';
import { HEARS_FILL, HEARS_ORDER_UPDATE } from '../../src/read_model/views.js';
import { generateSequence } from '../engine/generator.js';
import { recordsOf, recordable } from '../da/records.js';

const LIMITS = { fills_per_account_kept: 5, trades_per_market_kept: 5, closed_orders_kept: 8 };

describe('market data through the observer tape', () => {
  it('keeps the state it keeps hearing every call inside apply, without hearing order updates', () => {
    let best_moves = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const g = generateSequence(seed, 600);
      const requests = g.requests.filter(recordable);
      const direct_rm = new ReadModel(g.config.assets, LIMITS);
      const direct = new MarketData(direct_rm, { now: () => 0 });
      direct_rm.observe([direct]);
      const rm = new ReadModel(g.config.assets, LIMITS);
      const taped = new MarketData(rm, { now: () => 0 });
      expect(taped.hears() & HEARS_ORDER_UPDATE).toBe(0);
      expect(taped.hears() & HEARS_FILL).toBe(HEARS_FILL);
      const tape = new ObserverTape((e) => {
        throw e;
      });
      tape.observe([taped]);
      rm.observe([tape]);
      let last_best = '';
      const ex = new ReplayExecutor(g.config, {
        state_root: false,
        onEvent: (e) => {
          direct_rm.apply(e);
          rm.apply(e);
          if (e.type() === EventType.BATCH_COMMITTED) {
            tape.replay();
            const a = direct.exportState();
            const b = taped.exportState();
            expect(b.best_bid).toEqual(a.best_bid);
            expect(b.best_ask).toEqual(a.best_ask);
            const best = JSON.stringify([a.best_bid, a.best_ask]);
            if (best !== last_best) best_moves++;
            last_best = best;
          }
        },
      });
      ex.genesis();
      let batch_id = 0;
      for (let at = 0; at < requests.length; at += 7) {
        const part = requests.slice(at, at + 7);
        ex.apply(++batch_id, 60_000 * batch_id, recordsOf(part), part.length);
      }
      expect(taped.exportState(), `seed ${seed}`).toEqual(direct.exportState());
      expect(taped.leaderboard.top(50, String)).toEqual(direct.leaderboard.top(50, String));
    }
    expect(best_moves).toBeGreaterThan(100);
  });
});
