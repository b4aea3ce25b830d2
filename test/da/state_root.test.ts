// StateRootBuilder: the leaves of docs/verifiability.md from events, the bucketed root, and the
// incremental path checked against an independent from-scratch model written from the doc.
import { describe, expect, it } from 'vitest';
import { mulberry32 as rng } from '../../src/util/prng.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { EMPTY_FILLS_ROOT, FILL_LEAF_TYPES, FillsTree, fillLeafValues } from '../../src/da/fills_tree.js';
import { LeafKind, StateRootBuilder, stateRootOfLeaves, ZERO_ADDRESS, firstDifferingChange } from '../../src/da/state_root.js';
import type { EventFields } from '../../src/gateway/read_model.js';
import { EventType } from '../../src/ring/records.js';
import { ArrayEvent, ev } from './events.js';

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
    ev.begin(1),
    ev.account(1, (o.addr as string | undefined) ?? A1),
    ev.accepted(1, 1, 0, 0),
    ev.balance(1, 2, n('bal', 1_000_000), n('locked', 0)),
    ev.account(2, A2),
    ev.balance(2, 0, 5_000, 0),
    ev.accepted(3, 1, 7, n('nonce', 3)),
    ev.order(7, 1, 0, 0, 0, n('price', 2_000_000_000), 100, 0, n('remaining', 100)),
    ev.accepted(2, 2, 0, 9, { asset: 0, amount: n('wd', 1_000) }),
    ev.credit(2, n('credit', 50_000_000), 900_000),
    ev.market(0, 0, 2, { status: n('mstatus', 0) }),
    ev.fees(n('fmaker', -1), 5),
    ev.committed(1),
  ];
}

// ---------------------------------------------------------------------------------------------
// An independent model: leaves straight from the doc's table with DataView, root from scratch.

function be(...parts: [string, number | string][]): Uint8Array {
  const size = parts.reduce((s, [t]) => s + ({ u8: 1, u16: 2, u32: 4, i32: 4, u64: 8, addr: 20 } as Record<string, number>)[t], 0);
  const out = new Uint8Array(size);
  const dv = new DataView(out.buffer);
  let o = 0;
  for (const [t, v] of parts) {
    if (t === 'u8') dv.setUint8(o, v as number), (o += 1);
    else if (t === 'u16') dv.setUint16(o, v as number), (o += 2);
    else if (t === 'u32') dv.setUint32(o, v as number), (o += 4);
    else if (t === 'i32') dv.setInt32(o, v as number), (o += 4);
    else if (t === 'u64') dv.setBigUint64(o, BigInt(v)), (o += 8);
    else {
      out.set(Buffer.from((v as string).slice(2), 'hex'), o);
      o += 20;
    }
  }
  return out;
}

class Model {
  leaves = new Map<string, { kind: number; key: Uint8Array; value: Uint8Array }>();
  markets = new Map<number, number[]>();
  mark = new Map<number, number>();
  put(kind: number, key: Uint8Array, value: Uint8Array | null): void {
    const id = kind + ':' + Buffer.from(key).toString('hex');
    if (value === null) this.leaves.delete(id);
    else this.leaves.set(id, { kind, key, value });
  }
  marketLeaf(m: number): void {
    const f = this.markets.get(m)!;
    this.put(5, be(['u16', m]), be(['u8', f[1]], ['u16', f[2]], ['u16', f[3]], ['u64', f[4]], ['u64', f[5]], ['u8', f[6]], ['i32', f[7]], ['i32', f[8]], ['u64', this.mark.get(m) ?? 0]));
  }
  apply(e: EventFields): void {
    const f = (k: number): number => e.field(k);
    switch (e.type()) {
      case EventType.BALANCE: return this.put(1, be(['u32', f(0)], ['u16', f(1)]), be(['u64', f(2)], ['u64', f(3)]));
      case EventType.ACCEPTED:
        if (![2, 3, 4, 5, 6].includes(f(0))) return;
        this.put(2, be(['u32', f(1)]), be(['u64', f(3)]));
        if (f(0) === 2) this.put(8, be(['u32', f(1)], ['u64', f(3)]), be(['u16', f(10)], ['u64', f(11)]));
        return;
      case EventType.ACCOUNT: return this.put(3, be(['u32', f(0)]), be(['addr', e.addressHex()]));
      case EventType.ORDER_UPDATE:
        if (f(4) >= 2) return this.put(4, be(['u64', f(0)]), null);
        return this.put(4, be(['u64', f(0)]), be(['u32', f(1)], ['u16', f(2)], ['u8', f(3)], ['u64', f(5)], ['u64', f(6)], ['u64', f(7)], ['u64', f(8)], ['u8', f(4)]));
      case EventType.MARKET:
        this.markets.set(f(0), [0, 1, 2, 3, 4, 5, 6, 7, 8].map(f));
        return this.marketLeaf(f(0));
      case EventType.FILL:
        this.mark.set(f(1), f(7));
        return this.marketLeaf(f(1));
      case EventType.FEES: return this.put(6, new Uint8Array(0), be(['i32', f(0)], ['i32', f(1)]));
      case EventType.CREDIT: return this.put(7, be(['u32', f(0)]), f(1) === 0 ? null : be(['u64', f(1)], ['u32', f(2)]));
      default:
    }
  }
  root(): string {
    const cat = (...a: Uint8Array[]): Uint8Array => {
      const out = new Uint8Array(a.reduce((s, x) => s + x.length, 0));
      let o = 0;
      for (const x of a) out.set(x, o), (o += x.length);
      return out;
    };
    const buckets: { sk: string; h: Uint8Array }[][] = Array.from({ length: 4096 }, () => []);
    for (const l of this.leaves.values()) {
      const sk = keccak_256(cat(new Uint8Array([l.kind]), l.key));
      const bucket = parseInt(Buffer.from(sk).toString('hex').slice(0, 3), 16);
      buckets[bucket].push({ sk: Buffer.from(sk).toString('hex'), h: keccak_256(cat(new Uint8Array([l.kind]), l.key, l.value)) });
    }
    let level: Uint8Array[] = buckets.map((b) => (b.length === 0 ? new Uint8Array(32) : keccak_256(cat(...b.sort((x, y) => (x.sk < y.sk ? -1 : 1)).map((x) => x.h)))));
    while (level.length > 1) {
      const next: Uint8Array[] = [];
      for (let i = 0; i < level.length; i += 2) next.push(keccak_256(cat(level[i], level[i + 1])));
      level = next;
    }
    return '0x' + Buffer.from(level[0]).toString('hex');
  }
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
function randomBatches(seed: number, batches: number, per_batch: number): EventFields[][] {
  const r = rng(seed);
  const int = (n: number): number => Math.floor(r() * n);
  const out: EventFields[][] = [genesis()];
  let accounts = 0;
  let fill_id = 1;
  for (let b = 1; b <= batches; b++) {
    const events: EventFields[] = [ev.begin(b)];
    for (let i = 0; i < per_batch; i++) {
      const x = int(10);
      if (accounts === 0 || x === 0) {
        accounts++;
        events.push(ev.account(accounts, '0x' + (accounts.toString(16).padStart(2, '0')).repeat(20)));
        continue;
      }
      const acct = 1 + int(accounts);
      if (x === 1) events.push(ev.balance(acct, int(3), int(1e12), int(1e9)));
      else if (x === 2) events.push(ev.accepted(3 + int(4), acct, int(50), 1 + int(1e6)));
      else if (x === 3) events.push(ev.order(1 + int(200), acct, int(2), int(2), int(4), int(1e9), int(1e6), int(1e6), int(1e6)));
      else if (x === 4) events.push(ev.credit(acct, int(3) === 0 ? 0 : int(1e12), int(1_000_000)));
      else if (x === 5) events.push(ev.accepted(2, acct, 0, 1 + int(1e6), { asset: int(3), amount: int(1e9) }));
      else if (x === 6) events.push(ev.fill(fill_id++, int(2), int(100), int(100), acct, 1 + int(accounts), int(2), int(1e9), int(1e6), int(1e3), -int(1e3)));
      else if (x === 7) events.push(ev.market(int(2), 0, 2, { status: int(2), maker: -int(3), taker: int(10) }));
      else if (x === 8) events.push(ev.fees(-int(3), int(10)));
      else events.push(ev.rejected(3, acct));
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
      market_status: { mstatus: 1 },
      global_fees: { fmaker: 0 },
      credit: { credit: 50_000_001 },
      pending_withdrawal: { wd: 1_001 },
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

  it('the order of touches within a batch does not matter', () => {
    const body = everything().slice(1, -1);
    const base = run([genesis(), everything()]).roots[1];
    const r = rng(7);
    for (let i = 0; i < 20; i++) {
      const root = run([genesis(), [ev.begin(1), ...shuffle(body, r), ev.committed(1)]]).roots[1];
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
    }
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
