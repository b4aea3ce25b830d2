// leavesFromCanonical (src/da/canonical_leaves.ts) builds, from an engine's canonical state, the
// leaves the incremental StateRootBuilder built from the events: after random request flows run
// through the real Matcher, the two roots are equal at every checked batch, and a builder started
// from the canonical leaves then follows the live one batch for batch (so its leaf ids are the
// builder's too). A leaf kind added to the event side but not here fails this test.
import { describe, expect, it } from 'vitest';
import { leavesFromCanonical } from '../../src/da/canonical_leaves.js';
import { ReplayExecutor } from '../../src/da/replay.js';
import { StateRootBuilder, stateRootOfLeaves } from '../../src/da/state_root.js';
import { ReadModel } from '../../src/read_model/read_model.js';
import { EventType } from '../../src/ring/event_records.js';
import { mulberry32 } from '../../src/util/prng.js';
import { addressesHex } from '../../src/snapshot/snapshot_file.js';
import { generateSequence } from '../engine/generator.js';
import { recordsOf, recordable } from '../da/records.js';

const SEEDS = Number(process.env.RINGBOOK_LEAVES_SEEDS ?? 60);

function registryAddresses(ex: ReplayExecutor): string[] {
  const reg = ex.matcher.registry;
  const bytes = new Uint8Array(reg.size * 20);
  for (let id = 1; id < reg.size; id++) bytes.set(reg.addressBytes(id), id * 20);
  return addressesHex(bytes);
}

describe('leavesFromCanonical', () => {
  it(`gives the incremental builder's root, and a builder restored from it follows (${SEEDS} random flows)`, () => {
    let checks = 0;
    let orders_seen = 0;
    let referrals_seen = 0;
    let inbox_seen = 0;
    let dead_man_seen = 0;
    // Leaves removed, and removed leaves set again later (same kind and key), across the flows.
    let removals = 0;
    let reinserts = 0;
    for (let seed = 1; seed <= SEEDS; seed++) {
      const removed = new Set<string>();
      const generated = generateSequence(seed, 300);
      const config = generated.config;
      // The front refuses client ids longer than a record holds; the engine never sees them.
      const requests = generated.requests.filter(recordable);
      const rm = new ReadModel(config.assets, { fills_per_account_kept: 10, trades_per_market_kept: 10, closed_orders_kept: 10 });
      let restored: StateRootBuilder | null = null;
      let restored_root = '';
      const ex = new ReplayExecutor(config, {
        onEvent: (e) => {
          rm.apply(e);
          if (restored === null) return;
          restored.apply(e);
          if (e.type() === EventType.BATCH_COMMITTED) restored_root = restored.endBatch().state_root;
        },
      });
      ex.genesis();
      const random = mulberry32(seed * 7919);
      const check_at = new Set([Math.floor(random() * 40), 40 + Math.floor(random() * 40), 100]);
      let at = 0;
      let batch_id = 0;
      while (at < requests.length) {
        const n = Math.min(requests.length - at, 1 + Math.floor(random() * 6));
        const live = ex.apply(++batch_id, 1_000 * batch_id, recordsOf(requests.slice(at, at + n)), n);
        at += n;
        for (const c of live.state_diff) {
          const id = `${c.kind}:${c.key}`;
          if (c.value === null) {
            removals++;
            removed.add(id);
          } else if (removed.delete(id)) reinserts++;
        }
        if (restored !== null) expect(restored_root, `seed ${seed} batch ${batch_id}: restored builder`).toBe(live.state_root);
        if (!check_at.has(batch_id) && at < requests.length) continue;
        const canonical = ex.engine.canonicalState();
        orders_seen += canonical.markets.reduce((s, m) => s + m.bids.length + m.asks.length, 0);
        referrals_seen += canonical.referrals.length;
        inbox_seen += canonical.inbox.length;
        dead_man_seen += canonical.dead_man.length;
        const leaves = leavesFromCanonical({
          canonical, addresses: registryAddresses(ex), zero_balance_leaves: rm.zeroBalanceLeaves(), assets: config.assets,
        });
        const fresh = new StateRootBuilder(config.assets);
        expect(fresh.restore(leaves, batch_id), `seed ${seed} batch ${batch_id}: canonical leaves root`).toBe(live.state_root);
        expect(leaves.entries.length, `seed ${seed}: leaf count`).toBe(ex.builder.leafCount());
        checks++;
        if (restored === null) {
          // Once per flow, also from scratch (stateRootOfLeaves: the trie built from the sorted leaf list).
          const from_scratch = stateRootOfLeaves(leaves.entries.map(([, l]) => ({ kind: l.kind, key: l.key, value: l.value as Uint8Array })));
          expect(from_scratch).toBe(live.state_root);
          restored = fresh;
        }
      }
    }
    expect(checks).toBeGreaterThan(SEEDS * 2);
    expect(orders_seen).toBeGreaterThan(0);
    // The programmes' leaves were in the compared states too.
    expect(referrals_seen).toBeGreaterThan(0);
    expect(inbox_seen).toBeGreaterThan(0);
    expect(dead_man_seen).toBeGreaterThan(0);
    // The compared states came after removals and reinserts (history must not matter).
    expect(removals).toBeGreaterThan(0);
    expect(reinserts, 'leaves removed then set again').toBeGreaterThan(0);
  });
});
