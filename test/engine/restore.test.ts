// Snapshots' foundation: a fast engine restored from another's canonical state behaves exactly
// like the original from then on (same events, same states), on generated request flow.
import { describe, expect, it } from 'vitest';
import { createFastEngine, restoreFastEngine } from '../../src/engine/engine.js';
import { EventLog } from '../../src/engine/event_log.js';
import { canonicalJson } from '../../src/engine/state.js';
import { mulberry32 } from '../../src/util/prng.js';
import { RequestGenerator, sequenceLength } from './generator.js';

const SEQUENCES = Number(process.env.RINGBOOK_RESTORE_SEQUENCES ?? 400);

describe('restoreFastEngine', () => {
  it(`continues identically after a restore at a random point (${SEQUENCES} generated sequences)`, () => {
    for (let seed = 1; seed <= SEQUENCES; seed++) {
      const g = new RequestGenerator(seed);
      const original = createFastEngine(g.config);
      const log = new EventLog();
      const length = sequenceLength(seed);
      const cut = Math.floor(mulberry32(seed)() * length);
      let restored: ReturnType<typeof restoreFastEngine> | null = null;
      const log2 = new EventLog();
      for (let i = 0; i < length; i++) {
        if (i === cut) {
          const state = original.canonicalState();
          restored = restoreFastEngine(g.config, state);
          expect(canonicalJson(restored.canonicalState()), `seed ${seed}: restored state`).toBe(canonicalJson(state));
          // The programme tables too (canonicalJson leaves them out): inbox, dead-man switches, agents.
          expect(restored.canonicalState(), `seed ${seed}: restored canonical state`).toEqual(state);
        }
        const time_ms = g.batch();
        if (time_ms !== null) {
          original.beginBatch(time_ms, log);
          const included = log.take();
          restored?.beginBatch(time_ms, log2);
          if (restored !== null) expect(log2.take(), `seed ${seed}, batch before request ${i}`).toEqual(included);
        }
        const r = g.next();
        original.apply(r, log);
        const events = log.take();
        g.observe(r, events);
        if (restored !== null) {
          restored.apply(r, log2);
          expect(log2.take(), `seed ${seed}, request ${i}`).toEqual(events);
        }
      }
      if (restored !== null) expect(restored.canonicalState()).toEqual(original.canonicalState());
    }
  });
});
