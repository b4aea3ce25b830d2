// The StateRootBuilder reuses one PendingSet (its tables, maps and pooled entries) from
// batch to batch. A batch must never see a leftover of the one before: `clear()` must empty every
// field (a field added later and forgotten there fails the first test), and an entry reused
// from the pool must encode exactly what the new batch wrote into it (all of its bytes compared).
import { describe, expect, it } from 'vitest';
import { LeafBatch } from '../../src/da/leaf_batch.js';
import { PendingSet, encodePending, type PendingOrder } from '../../src/da/pending_leaves.js';
import { PendingTable } from '../../src/da/pending_table.js';
import { ORDER_VALUE_BYTES } from '../../src/da/state_leaves.js';

/** Every field of a fresh set, filled with something (as a batch's events would). */
function fillEverything(p: PendingSet): void {
  p.balanceEntry(7 * 65536 + 1).available = 5;
  p.nonce.entry(7).nonce = 3;
  p.envelope_nonce.set(7, 2);
  p.account.set(7, '0x' + '11'.repeat(20));
  p.orderEntry(42).open = true;
  p.market.touch(0);
  p.fees = { maker: 1, taker: 2 };
  p.credit.set(7, { limit: 10, ratio_ppm: 5 });
  p.withdrawal.set('7:3', { account: 7, nonce: 3, asset: 1, amount: 9 });
  p.referral.set(7, { referrer: 8, active_until_ms: 100 });
  p.earned.set(7 * 65536 + 1, 4);
  p.inbox.set(1, null);
  p.counters = { next_order_id: 1, next_fill_id: 1, next_priority_seq: 1, next_inbox_entry_id: 1 };
  p.chain_deposit = 3;
  p.supply.set(1, [1, 0]);
  p.terms.entry(42).open = false;
  p.dead_man.set(7, null);
  p.agent.set('7:8', { user: 7, agent: 8, entry: null });
  p.agent_floor.set(7, 2);
}

describe('PendingSet reuse', () => {
  it('clear() leaves every field as a fresh set has it', () => {
    const p = new PendingSet();
    fillEverything(p);
    const fresh = new PendingSet() as unknown as Record<string, unknown>;
    const filled = p as unknown as Record<string, unknown>;
    // Every public field was filled (so a new field must be added to fillEverything too).
    for (const [name, v] of Object.entries(fresh)) {
      const f = filled[name];
      const empty = v instanceof Map ? v.size === 0 : v instanceof PendingTable ? v.count === 0 : v === null;
      expect(empty, `fresh ${name}`).toBe(true);
      const touched = f instanceof Map ? f.size > 0 : f instanceof PendingTable ? f.count > 0 : f !== null;
      expect(touched, `fillEverything fills ${name}`).toBe(true);
    }
    p.clear();
    for (const [name, v] of Object.entries(fresh)) {
      const f = filled[name];
      if (v instanceof Map) expect((f as Map<unknown, unknown>).size, name).toBe(0);
      else if (v instanceof PendingTable) expect((f as PendingTable<unknown>).count, name).toBe(0);
      else expect(f, name).toEqual(v);
    }
  });

  it('a pooled entry encodes what the new batch wrote, not what the last one left', () => {
    const p = new PendingSet();
    const first = p.balanceEntry(3 * 65536 + 2);
    first.available = 111;
    first.locked = 222;
    const o = p.orderEntry(9);
    Object.assign(o, { open: true, account: 3, market: 0, side: 1, status: 0, price: 5, quantity: 6, filled: 1, remaining: 5, locked: 30, priority_seq: 77, last_fill_price: 5 });
    Object.assign(p.terms.entry(9), { open: true, order_type: 1, tif: 2, client_order_id: 'x'.repeat(36) });
    p.nonce.entry(3).nonce = 99;
    p.clear();
    // Next batch: another balance and another order take the same pooled objects.
    const second = p.balanceEntry(4 * 65536 + 1);
    expect(second).toBe(first);
    second.available = 1;
    second.locked = 0;
    const o2 = p.orderEntry(10);
    expect(o2).toBe(o);
    // The new batch's order is open with other values, some of them 0 where the last one's were
    // not: its whole encoded value must be what a fresh set encodes for the same fields.
    const next: PendingOrder = { open: true, account: 4, market: 1, side: 0, status: 1, price: 8, quantity: 9, filled: 0, remaining: 9, locked: 0, priority_seq: 78, last_fill_price: 0 };
    Object.assign(o2, next);
    // Its terms take the pooled terms entry, with a shorter client id (the rest must be zeros).
    const terms = { open: true, order_type: 0, tif: 1, client_order_id: 'ab' };
    Object.assign(p.terms.entry(10), terms);
    p.nonce.entry(4).nonce = 5;
    const reused = new LeafBatch();
    reused.clear(true);
    encodePending(p, [], reused);

    const q = new PendingSet();
    const b = q.balanceEntry(4 * 65536 + 1);
    b.available = 1;
    b.locked = 0;
    Object.assign(q.orderEntry(10), next);
    Object.assign(q.terms.entry(10), terms);
    q.nonce.entry(4).nonce = 5;
    const fresh = new LeafBatch();
    fresh.clear(true);
    encodePending(q, [], fresh);

    expect(reused.count).toBe(4);
    expect(reused.count).toBe(fresh.count);
    expect(fresh.value_len[2]).toBe(ORDER_VALUE_BYTES); // the order leaf carries its value
    const n = fresh.count;
    for (const f of ['kinds', 'at', 'key_len', 'value_len'] as const) expect([...reused[f].subarray(0, n)], f).toEqual([...fresh[f].subarray(0, n)]);
    // Every byte of every leaf (keys and values), not a prefix.
    const end = fresh.at[n - 1] + fresh.key_len[n - 1] + Math.max(fresh.value_len[n - 1], 0);
    expect(Buffer.from(reused.bytes.subarray(0, end)).toString('hex')).toBe(Buffer.from(fresh.bytes.subarray(0, end)).toString('hex'));
    expect(reused.ids).toEqual(fresh.ids);
  });
});
