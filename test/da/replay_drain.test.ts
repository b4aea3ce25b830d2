// The ReplayExecutor's bare drain (no state root, no consumer: the recovery bench's timed replay)
// walks the event ring in runs of plain strides (src/da/replay.ts drainBare). Rings far smaller
// than a batch's events make it drain mid-batch (through the ring's wait for space) and wrap at
// every slot; it must see each commit marker once and count every event, as the general drain
// (a per-record consumer) does over the same requests.
import { describe, expect, it } from 'vitest';
import { ReplayExecutor } from '../../src/da/replay.js';
import { stateDigest } from '../../src/engine/state.js';
import { EventType, EV_TYPE_WORD } from '../../src/ring/event_records.js';
import { generateSequence } from '../engine/generator.js';
import { recordsOf, recordable } from './records.js';

describe('ReplayExecutor bare drain', () => {
  it('counts every event and closes every batch as the per-record drain does, on rings that wrap mid-batch', () => {
    for (const seed of [1, 2, 3]) {
      const g = generateSequence(seed, 300);
      const requests = g.requests.filter(recordable);
      for (const slots of [2, 8, 64, 128]) {
        const bare = new ReplayExecutor(g.config, { state_root: false, event_ring_slots: slots });
        let commits = 0;
        let records = 0;
        const counted = new ReplayExecutor(g.config, {
          state_root: false,
          event_ring_slots: slots,
          onRecord: (views, o) => {
            records++;
            if (views.i32[o + EV_TYPE_WORD] === EventType.BATCH_COMMITTED) commits++;
          },
        });
        expect(bare.genesis().batch_id).toBe(0);
        counted.genesis();
        let batch_id = 0;
        for (let at = 0; at < requests.length; at += 9) {
          const part = requests.slice(at, at + 9);
          batch_id++;
          // apply throws unless the drain met exactly this batch's commit marker.
          expect(bare.apply(batch_id, 1000 * batch_id, recordsOf(part), part.length).batch_id).toBe(batch_id);
          counted.apply(batch_id, 1000 * batch_id, recordsOf(part), part.length);
          expect(bare.events, `seed ${seed}, ${slots} slots, batch ${batch_id}`).toBe(records);
        }
        expect(commits).toBe(batch_id + 1);
        expect(bare.events).toBeGreaterThan(slots * 4);
        expect(stateDigest(bare.engine.canonicalState())).toBe(stateDigest(counted.engine.canonicalState()));
      }
    }
  });
});
