// StateRootBuilder: the leaves of docs/verifiability.md from events, the trie's root, and the
// incremental path checked against an independent from-scratch model written from the doc.
import { describe, expect, it } from 'vitest';
import { mulberry32 as rng } from '../../src/util/prng.js';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { EMPTY_FILLS_ROOT, FILL_LEAF_TYPES, FillsTree, fillLeafValues } from '../../src/da/fills_tree.js';
import { LeafKind, StateRootBuilder, stateRootOfLeaves, ZERO_ADDRESS, firstDifferingChange } from '../../src/da/state_root.js';
import { inboxFieldsOfCanonical, inboxLeaf } from '../../src/da/programme_leaves.js';
import type { EventFields } from '../../src/ring/event_records.js';
import { EventType } from '../../src/ring/event_records.js';
import { ArrayEvent, ev } from './events.js';
import { Model } from './leaf_model.js';

const ASSETS = ['ETH', 'BTC', 'USDC'];
const A1 = '0x1111111111111111111111111111111111111111';
const A2 = '0x2222222222222222222222222222222222222222';

function run(batches: EventFields[][], b = new StateRootBuilder(ASSETS)): { builder: StateRootBuilder; roots: string[] } {
  const roots: string[] = [];
  for (const events of batches) {
    for (const e of events) b.apply(e);
    roots.push(b.endBatch().state_root);
  }
  return { builder: b, roots };
}

function genesis(): EventFields[] {
  return [ev.begin(0), ev.market(0, 0, 2), ev.market(1, 1, 2, { tick: 100_000, lot: 10 }), ev.fees(-1, 5), ev.committed(0)];
}

/** A batch touching every leaf kind. */
function everything(o: Partial<Record<string, number | string>> = {}): EventFields[] {
  const n = (k: string, d: number): number => (o[k] as number | undefined) ?? d;
  return [
    ev.begin(1, n('time', 1_001)),
    ev.account(1, (o.addr as string | undefined) ?? A1),
    ev.accepted(1, 1, 0, 0),
    ev.balance(1, 2, n('bal', 1_000_000), n('locked', 0)),
    ev.account(2, A2),
    ev.balance(2, 0, 5_000, 0),
    ev.accepted(3, 1, 7, n('nonce', 3)),
    ev.order(7, 1, 0, 0, 0, n('price', 2_000_000_000), 100, 0, n('remaining', 100),
      { locked: n('olocked', 200_100), priority: n('opriority', 3), last_fill: n('olast', 1_990_000_000) }),
    ev.accepted(2, 2, 0, 9, { asset: 0, amount: n('wd', 1_000) }),
    ev.credit(2, n('credit', 50_000_000), 900_000),
    ev.market(0, 0, 2, { status: n('mstatus', 0) }),
    ev.fees(n('fmaker', -1), 5),
    ev.referral(2, n('referrer', 1), n('until', 1_001 + 90 * 86_400_000)),
    ev.share(5, 2, 1, 2, n('earned', 40)),
    ...forced(o),
    ev.committed(1),
  ];
}

/** A queued forced inclusion (its ACCEPTED and INBOX_QUEUED: always adjacent). */
function forced(o: Partial<Record<string, number | string>> = {}): EventFields[] {
  const n = (k: string, d: number): number => (o[k] as number | undefined) ?? d;
  return [
    // Account 3: no other ACCEPTED of the batch touches its nonce leaf (last write wins).
    ev.forceAccepted(3, 1, n('envelope_nonce', 4), {
      market: n('imarket', -1), side: 1, price: n('iprice', 2_000_000_000), quantity: 300, order_id: n('iorder', 0),
      coid: (o.icoid as string | undefined) ?? 'forced-1',
    }),
    ev.queued(1, 3, n('ikind', 3), n('inonce', 5), n('deadline', 1_001 + 86_400_000), n('ireferrer', 0), n('ireject', 0)),
  ];
}

function shuffle<T>(xs: T[], r: () => number): T[] {
  const a = xs.slice();
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

/** Random batches of events over a small universe, so leaves are rewritten and removed. */
/** Inbox entries the random batches included after queueing them (the last run's). */
let removed_inbox = 0;

function randomBatches(seed: number, batches: number, per_batch: number): EventFields[][] {
  removed_inbox = 0;
  const r = rng(seed);
  const int = (n: number): number => Math.floor(r() * n);
  const out: EventFields[][] = [genesis()];
  let accounts = 0;
  let fill_id = 1;
  let entry_id = 0;
  const included = new Set<number>();
  for (let b = 1; b <= batches; b++) {
    const events: EventFields[] = [ev.begin(b, 1_000 + b * 1_000 + int(500))];
    for (let i = 0; i < per_batch; i++) {
      const x = int(16);
      if (accounts === 0 || x === 0) {
        accounts++;
        events.push(ev.account(accounts, '0x' + (accounts.toString(16).padStart(2, '0')).repeat(20)));
        continue;
      }
      const acct = 1 + int(accounts);
      if (x === 1) events.push(ev.balance(acct, int(3), int(1e12), int(1e9)));
      else if (x === 2) events.push(ev.accepted([3, 4, 5, 6, 12][int(5)], acct, int(50), 1 + int(1e6)));
      else if (x === 3) {
        events.push(ev.order(1 + int(200), acct, int(2), int(2), int(4), int(1e9), int(1e6), int(1e6), int(1e6),
          { last_fill: int(1e9), locked: int(1e9), priority: 1 + int(1e4) }));
      }
      else if (x === 4) events.push(ev.credit(acct, int(3) === 0 ? 0 : int(1e12), int(1_000_000)));
      else if (x === 5) events.push(ev.accepted(2, acct, 0, 1 + int(1e6), { asset: int(3), amount: int(1e9) }));
      else if (x === 6) events.push(ev.fill(fill_id++, int(2), int(100), int(100), acct, 1 + int(accounts), int(2), int(1e9), int(1e6), int(1e3), -int(1e3)));
      else if (x === 7) events.push(ev.market(int(2), 0, 2, { status: int(2), maker: -int(3), taker: int(10) }));
      else if (x === 8) events.push(ev.fees(-int(3), int(10)));
      else if (x === 9) events.push(ev.rejected(3, acct));
      else if (x === 10) events.push(ev.referral(acct, 1 + int(accounts), int(1e12)));
      else if (x === 11) events.push(ev.share(fill_id, acct, 1 + int(accounts), int(3), 1 + int(1e6)));
      else if (x === 14) events.push(ev.accepted([3, 4, 17, 18][int(4)], acct, int(50), int(2) === 0 ? 0 : 1 + int(1e6)));
      else if (x === 15) {
        // An agent entry set (or removed at valid_until 0), with the user's floor.
        events.push(ev.agent(acct, 1 + int(accounts), int(3) === 0 ? 0 : int(1e12), int(1e6), int(2) === 0 ? 0 : int(1e6), 'mm-'.repeat(1 + int(4)).slice(0, 16)));
      }
      else if (x === 12) {
        // Payload fields may be anything a signed payload carries, NO_MARKET (-1) included.
        entry_id++;
        events.push(
          ev.forceAccepted(acct, entry_id, 1 + int(1e6), {
            market: int(3) - 1, side: int(2), order_type: int(2), tif: int(4), price: int(1e9), quantity: int(1e6),
            asset: int(3), amount: int(1e9), order_id: int(100), coid: int(2) === 0 ? '' : 'c'.repeat(1 + int(36)),
          }),
          ev.queued(entry_id, acct, 2 + int(11), 1 + int(1e6), int(1e12), int(accounts), int(44)),
        );
      } else {
        const id = 1 + int(entry_id + 2);
        if (id <= entry_id && !included.has(id)) removed_inbox++;
        included.add(id);
        events.push(ev.included(id, acct, 3, 1));
      }
    }
    events.push(ev.committed(b));
    out.push(events);
  }
  return out;
}

describe('StateRootBuilder', () => {
  it('same events give the same root; every batch changes it', () => {
    const a = run([genesis(), everything()]);
    const b = run([genesis(), everything()]);
    expect(a.roots).toEqual(b.roots);
    expect(a.roots[0]).toMatch(/^0x[0-9a-f]{64}$/);
    expect(a.roots[0]).not.toBe(a.roots[1]);
  });

  it('the root changes when any leaf kind changes', () => {
    const base = run([genesis(), everything()]).roots[1];
    const variants: Record<string, Partial<Record<string, number | string>>> = {
      balance_available: { bal: 1_000_001 },
      balance_locked: { locked: 1 },
      nonce: { nonce: 4 },
      account_address: { addr: '0x1111111111111111111111111111111111111112' },
      open_order_price: { price: 2_000_010_000 },
      open_order_remaining: { remaining: 99 },
      open_order_locked: { olocked: 200_101 },
      open_order_priority: { opriority: 4 },
      open_order_last_fill_price: { olast: 1_990_010_000 },
      market_status: { mstatus: 1 },
      global_fees: { fmaker: 0 },
      credit: { credit: 50_000_001 },
      pending_withdrawal: { wd: 1_001 },
      referral_referrer: { referrer: 3 },
      referral_until: { until: 1_002 + 90 * 86_400_000 },
      referral_earned: { earned: 41 },
      inbox_envelope_nonce: { envelope_nonce: 6 },
      inbox_kind: { ikind: 4 },
      inbox_nonce: { inonce: 6 },
      inbox_market: { imarket: 0 },
      inbox_price: { iprice: 2_000_010_000 },
      inbox_order_id: { iorder: 7 },
      inbox_client_id: { icoid: 'forced-2' },
      inbox_no_client_id: { icoid: '' },
      inbox_deadline: { deadline: 1_002 + 86_400_000 },
      inbox_referrer: { ireferrer: 2 },
      inbox_verdict: { ireject: 41 },
      inbox_queued_ms: { time: 1_002 },
    };
    const seen = new Set([base]);
    for (const [name, v] of Object.entries(variants)) {
      const root = run([genesis(), everything(v)]).roots[1];
      expect(root, name).not.toBe(base);
      expect(seen.has(root), name).toBe(false);
      seen.add(root);
    }
    // The mark price (from fills) is part of the market leaf.
    const withFill = run([genesis(), [...everything().slice(0, -1), ev.fill(1, 0, 8, 7, 2, 1, 1, 2_000_000_000, 100, 1, 0), ev.committed(1)]]);
    expect(withFill.roots[1]).not.toBe(base);
  });

  it('an open order commits to its lock, time priority and last fill price; the counters to the next priority', () => {
    const b = new StateRootBuilder(ASSETS);
    run([genesis(), everything(), [
      ev.begin(2),
      // Order 7 partly filled as a maker keeps its priority; order 8 rests behind it; order 9 never rests.
      ev.order(7, 1, 0, 0, 1, 2_000_000_000, 100, 40, 60, { last_fill: 2_000_000_000, locked: 120_060, priority: 3 }),
      ev.order(8, 1, 0, 0, 0, 1_990_000_000, 100, 0, 100, { locked: 199_100, priority: 5 }),
      ev.order(9, 1, 0, 1, 3, 1_990_000_000, 100, 100, 0, { last_fill: 1_990_000_000 }),
      ev.committed(2),
    ]], b);
    const leaves = b.leaves();
    expect(leaves.find((l) => l.id === 'open_order/order_id=7')?.fields).toMatchObject({ status: 1, filled: 40, remaining: 60, locked: 120_060, priority_seq: 3, last_fill_price: 2_000_000_000 });
    expect(leaves.find((l) => l.id === 'open_order/order_id=8')?.fields).toMatchObject({ locked: 199_100, priority_seq: 5, last_fill_price: 0 });
    expect(leaves.some((l) => l.id === 'open_order/order_id=9')).toBe(false);
    expect(leaves.find((l) => l.id === 'counters')?.fields).toMatchObject({ next_priority_seq: 6 });
  });

  it('the order of touches within a batch does not matter', () => {
    // The forced inclusion's ACCEPTED and INBOX_QUEUED move as one unit (they are always adjacent).
    const pair = forced();
    const body = everything().slice(1, -1 - pair.length);
    const base = run([genesis(), everything()]).roots[1];
    const r = rng(7);
    for (let i = 0; i < 20; i++) {
      const units = shuffle([...body.map((e) => [e]), pair], r);
      const root = run([genesis(), [ev.begin(1), ...units.flat(), ev.committed(1)]]).roots[1];
      expect(root).toBe(base);
    }
  });

  it('the last value of a leaf within a batch wins, and removed leaves leave no trace', () => {
    const before = run([genesis()]);
    const after = run([[ev.begin(1), ev.credit(5, 10, 1), ev.credit(5, 0, 0), ev.order(9, 1, 0, 0, 0, 1, 1, 0, 1), ev.order(9, 1, 0, 0, 3, 1, 1, 0, 0), ev.committed(1)]], before.builder);
    expect(after.roots[0]).toBe(before.roots[0]);
    const b = run([[ev.begin(2), ev.credit(5, 10, 1), ev.committed(2)], [ev.begin(3), ev.credit(5, 0, 0), ev.committed(3)]], after.builder);
    expect(b.roots[0]).not.toBe(before.roots[0]);
    expect(b.roots[1]).toBe(before.roots[0]);
  });

  it('incremental roots equal a from-scratch recomputation over all leaves (independent model)', () => {
    // A from-scratch root is ~8,200 keccaks: checked at a few batches of each run, not every one.
    for (const seed of [1, 2]) {
      const batches = randomBatches(seed, 40, 40);
      const builder = new StateRootBuilder(ASSETS);
      const model = new Model();
      batches.forEach((events, i) => {
        for (const e of events) {
          builder.apply(e);
          model.apply(e);
        }
        const { state_root } = builder.endBatch();
        if (i % 13 !== 1 && i !== batches.length - 1) return;
        expect(state_root).toBe(model.root());
        expect(stateRootOfLeaves(builder.rawLeaves())).toBe(state_root);
        expect(builder.leafCount()).toBe(model.leaves.size);
      });
      // The runs did exercise the programme leaves (and removed inbox entries).
      const kinds = new Set(builder.rawLeaves().map((l) => l.kind));
      for (const k of [LeafKind.REFERRAL, LeafKind.REFERRAL_EARNED, LeafKind.INBOX_ENTRY, LeafKind.AGENT, LeafKind.AGENT_NONCE_FLOOR]) expect(kinds.has(k), `kind ${k}`).toBe(true);
      expect(removed_inbox, 'inbox entries removed').toBeGreaterThan(0);
    }
  });

  it('roots change when a referral is registered, a share paid, an entry queued and included', () => {
    const setup = [ev.begin(1, 5_000), ev.account(1, A1), ev.account(2, A2), ev.balance(1, 2, 1_000_000, 0), ev.committed(1)];
    const b = new StateRootBuilder(ASSETS);
    const { roots } = run([genesis(), setup,
      [ev.begin(2, 6_000), ev.accepted(12, 2, 0, 1), ev.referral(2, 1, 6_000 + 90 * 86_400_000), ev.committed(2)],
      [ev.begin(3, 7_000), ev.share(1, 2, 1, 2, 40), ev.committed(3)],
      [ev.begin(4, 8_000), ev.share(2, 2, 1, 2, 2), ev.committed(4)],
      [ev.begin(5, 9_000), ev.forceAccepted(2, 1, 2, { coid: 'x' }), ev.queued(1, 2, 3, 3, 9_000 + 86_400_000), ev.committed(5)],
      [ev.begin(6, 9_500), ev.included(1, 2, 3, 3), ev.committed(6)],
    ], b);
    expect(new Set(roots).size).toBe(roots.length);
    const leaves = b.leaves();
    expect(leaves.find((l) => l.id === 'referral/account=2')?.fields).toEqual({ referrer: 1, active_until_ms: 6_000 + 90 * 86_400_000 });
    // Earnings are the running total (40 + 2), per asset.
    expect(leaves.find((l) => l.id === 'referral_earned/account=2/asset=2')?.fields).toEqual({ earned: 42 });
    expect(leaves.some((l) => l.kind === 'inbox_entry')).toBe(false);
    // The envelope's nonce is its own sequence: the trading mark stays the referral's.
    expect(leaves.find((l) => l.id === 'nonce/account=2')?.fields).toEqual({ nonce: 1 });
    expect(leaves.find((l) => l.id === 'envelope_nonce/account=2')?.fields).toEqual({ envelope_nonce: 2 });
    // Inclusion leaves no trace: the same history with the entry queued and included at once.
    const without = run([genesis(), setup,
      [ev.begin(2, 6_000), ev.accepted(12, 2, 0, 1), ev.referral(2, 1, 6_000 + 90 * 86_400_000), ev.committed(2)],
      [ev.begin(3, 7_000), ev.share(1, 2, 1, 2, 40), ev.committed(3)],
      [ev.begin(4, 8_000), ev.share(2, 2, 1, 2, 2), ev.committed(4)],
      [ev.begin(5, 9_000), ev.forceAccepted(2, 1, 2, { coid: 'x' }), ev.queued(1, 2, 3, 3, 9_000 + 86_400_000), ev.included(1, 2, 3, 3), ev.committed(5)],
    ]).roots;
    expect(roots[6]).toBe(without[5]);
  });

  it('the queued entry commits to the batch time, the ACCEPTED payload fields and the INBOX_QUEUED ones', () => {
    const b = new StateRootBuilder(ASSETS);
    run([genesis(), [ev.begin(1, 123_456), ev.forceAccepted(4, 9, 17, {
      market: -1, side: 1, order_type: 1, tif: 2, price: 5, quantity: 6, asset: 2, amount: 8, order_id: 77, coid: 'id-ü',
    }), ev.queued(9, 4, 12, 18, 123_456 + 86_400_000, 3, 41), ev.committed(1)]], b);
    const leaf = b.leaves().find((l) => l.id === 'inbox_entry/entry_id=9');
    expect(leaf?.fields).toEqual({
      account: 4, envelope_nonce: 17, queued_ms: 123_456, deadline_ms: 123_456 + 86_400_000, kind: 12, nonce: 18,
      market: -1, side: 1, order_type: 1, tif: 2, price_units: 5, quantity_units: 6, order_id: 77, asset: 2,
      amount_units: 8, referrer_account: 3, reject: 41, client_order_id: 'id-ü',
    });
    expect(leaf?.value.length).toBe(2 + 2 * 169);
    // The canonical-side encoder gives the same bytes from the engine's plain fields.
    const [id, canonical] = inboxLeaf(inboxFieldsOfCanonical({
      entry_id: 9, account: 4, envelope_nonce: 17, queued_ms: 123_456, deadline_ms: 123_456 + 86_400_000,
      request: {
        kind: 12, nonce: 18, market: -1, side: 1, order_type: 1, tif: 2, price_units: 5, quantity_units: 6, order_id: 77,
        client_order_id: 'id-ü', asset: 2, amount_units: 8, referrer_account: 3, reject: 41,
      },
    }));
    expect(id).toBe('11:9');
    expect('0x' + Buffer.from(canonical.value!).toString('hex')).toBe(leaf?.value);
  });

  it('an INBOX_QUEUED without its FORCE_INCLUDE acceptance just before it stops the builder', () => {
    const b = new StateRootBuilder(ASSETS);
    run([genesis()], b);
    b.apply(ev.begin(1));
    expect(() => b.apply(ev.queued(1, 2, 3, 3, 1))).toThrow(/queued without its FORCE_INCLUDE/);
    const c = new StateRootBuilder(ASSETS);
    c.apply(ev.forceAccepted(2, 1, 2));
    expect(() => c.apply(ev.queued(2, 2, 3, 3, 1))).toThrow(/queued without/);
  });

  it('earnings add up across skipped batches and after a rehash', () => {
    const shares = [[ev.begin(1), ev.share(1, 5, 6, 0, 10), ev.committed(1)], [ev.begin(2), ev.share(2, 5, 6, 0, 7), ev.share(3, 5, 6, 1, 1), ev.committed(2)],
      [ev.begin(3), ev.share(4, 5, 6, 0, 3), ev.committed(3)]];
    const live = run([genesis(), ...shares]);
    const skipping = new StateRootBuilder(ASSETS);
    run([genesis()], skipping);
    for (const batch of shares.slice(0, 2)) {
      for (const e of batch) skipping.apply(e);
      skipping.skipBatch();
    }
    expect(run([shares[2]], skipping).roots[0]).toBe(live.roots[3]);
    expect(live.builder.leaves().find((l) => l.id === 'referral_earned/account=5/asset=0')?.fields).toEqual({ earned: 20 });
  });

  it('builds fill leaves (addresses, fee account, market id, side, fees) and the fills root', () => {
    const b = new StateRootBuilder(ASSETS);
    run([genesis()], b);
    for (const e of [ev.begin(4), ev.account(1, A1), ev.account(2, A2),
      ev.fill(11, 0, 20, 19, 2, 1, 0, 2_000_000_000, 500_000, 500_000, -100_000),
      ev.fill(12, 1, 21, 18, 1, 0, 1, 30_000_000_000, 10, 3, 0)]) b.apply(e);
    const r = b.endBatch();
    expect(r.batch_id).toBe(4);
    expect(r.fills).toEqual([
      { batch_id: 4, fill_id: 11, taker_order_id: 20, maker_order_id: 19, taker: A2, maker: A1, market_id: 'ETH-USDC', taker_side: 'bid', price: 2_000_000_000, quantity: 500_000, taker_fee: 500_000, maker_fee: -100_000 },
      { batch_id: 4, fill_id: 12, taker_order_id: 21, maker_order_id: 18, taker: A1, maker: ZERO_ADDRESS, market_id: 'BTC-USDC', taker_side: 'ask', price: 30_000_000_000, quantity: 10, taker_fee: 3, maker_fee: 0 },
    ]);
    expect(r.fills_root).toBe(FillsTree.build(r.fills).root());
    const oz = StandardMerkleTree.of(r.fills.map(fillLeafValues), [...FILL_LEAF_TYPES]);
    expect(r.fills_root).toBe(oz.root);
    const empty = b.endBatch();
    expect(empty.fills).toEqual([]);
    expect(empty.fills_root).toBe(EMPTY_FILLS_ROOT);
  });

  it('publishes a state diff that reproduces the root, and names the first differing leaf', () => {
    const b = new StateRootBuilder(ASSETS);
    run([genesis()], b);
    for (const e of everything()) b.apply(e);
    const r = b.endBatch();
    expect(r.state_diff.length).toBeGreaterThan(5);
    expect(b.rootIfLastBatchMade(r.state_diff)).toBe(r.state_root);
    const bal = r.state_diff.find((c) => c.kind === LeafKind.BALANCE)!;
    const forged = r.state_diff.map((c) => (c === bal ? { ...c, value: c.value!.slice(0, -1) + (c.value!.endsWith('0') ? '1' : '0') } : c));
    expect(b.rootIfLastBatchMade(forged)).not.toBe(r.state_root);
    const d = firstDifferingChange(r.state_diff, forged);
    expect(d?.id).toMatch(/^balance\/account=\d+\/asset=\d+$/);
    expect(firstDifferingChange(r.state_diff, r.state_diff)).toBeNull();
    const dump = b.leaves();
    expect(dump.length).toBe(b.leafCount());
    expect(dump.map((l) => l.id)).toContain('nonce/account=1');
    expect(dump.find((l) => l.id === 'pending_withdrawal/account=2/nonce=9')?.fields).toEqual({ asset: 0, amount: 1_000 });
  });

  it('ignores markers and rejections', () => {
    const a = run([genesis()]);
    const b = run([[...genesis().slice(0, -1), ev.rejected(3, 1), new ArrayEvent(EventType.REJECTED, [4, 2, 11, 22]), ev.committed(0)]]);
    expect(b.roots).toEqual(a.roots);
  });
});
