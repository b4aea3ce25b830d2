// The order answer written straight to text (orderAnswerJson) must be byte for byte what the
// generic path wrote: JSON.stringify of orderRecord plus fills and batch_id.
import { describe, expect, it } from 'vitest';
import { immediateFill, orderAnswerBody, orderAnswerJson, orderRecord } from '../../src/gateway/views.js';
import type { ReadModel } from '../../src/read_model/read_model.js';
import type { FillView, OrderView } from '../../src/read_model/views.js';
import { Rng } from '../../src/util/prng.js';

function generic(rm: ReadModel, o: OrderView, fills: FillView[] | null, batch_id: number): string {
  const record = orderRecord(rm, o);
  if (fills !== null) record.fills = fills.map(immediateFill);
  record.batch_id = String(batch_id);
  return JSON.stringify(record);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

// Only `markets[i].id` is read by both paths.
const rm = { markets: [{ id: 'ETH-USDC' }, { id: 'BTC-"quoted"\\x' }] } as unknown as ReadModel;

// Odd values the read model never produces, where a hand-written number would go wrong first.
const ODD_NUMBERS = [-0, 1.5, -2.25, 2 ** 60, 1e21, 1e-7, Infinity, -Infinity];

function number(rng: Rng): number {
  const pick = rng.int(0, 10);
  if (pick === 10) return ODD_NUMBERS[rng.int(0, ODD_NUMBERS.length - 1)];
  if (pick === 0) return 0;
  if (pick === 1) return Number.MAX_SAFE_INTEGER;
  if (pick === 2) return -rng.int(1, 1_000_000);
  if (pick === 3) return NaN; // never produced by the read model; both paths must still agree
  return rng.int(1, 2_000_000_000);
}

function order(rng: Rng): OrderView {
  const coids = ['', 'c17', 'a_b-C', 'é"\\\n'];
  return {
    order_id: rng.int(1, 10_000_000), account: rng.int(1, 100), market: rng.int(0, 2), side: rng.int(0, 2),
    order_type: rng.int(0, 2), tif: rng.int(0, 4), price: number(rng), quantity: number(rng), filled: number(rng),
    remaining: number(rng), status: rng.int(0, 5), client_order_id: coids[rng.int(0, 3)], last_fill_price: number(rng),
    created_ms: 1_764_000_000_000 + rng.int(0, 1_000_000), updated_ms: 1_764_000_000_000 + rng.int(0, 1_000_000),
    resting_price: 0, resting_quantity: 0,
  } as OrderView;
}

function fill(rng: Rng): FillView {
  return {
    fill_id: rng.int(1, 1_000_000), order_id: 1, market: 0, side: 0, price: number(rng), quantity: number(rng),
    fee: number(rng), is_maker: rng.chance(0.5), batch_id: 1, time_ms: 0,
  };
}

describe('orderAnswerJson', () => {
  it('writes the same bytes as JSON.stringify of the order record, with and without fills', () => {
    const rng = new Rng(11);
    let fast_path = 0;
    for (let i = 0; i < 3000; i++) {
      const o = order(rng);
      // Now and then more fills than the answer buffer's first 2 KiB hold (it grows).
      const fills = rng.chance(0.3) ? null : Array.from({ length: rng.chance(0.05) ? rng.int(20, 60) : rng.int(0, 3) }, () => fill(rng));
      const batch_id = rng.chance(0.01) ? NaN : rng.int(0, 1_000_000);
      const text = orderAnswerJson(rm, o, fills, batch_id);
      expect(text).toBe(generic(rm, o, fills, batch_id));
      expect(() => JSON.parse(text)).not.toThrow();
      // The HTTP body as bytes (no string): the envelope around the same text, as UTF-8.
      expect(utf8.decode(orderAnswerBody(rm, o, fills, batch_id))).toBe(`{"ok":true,"data":${text}}`);
      if (o.status <= 4 && o.side <= 1 && o.order_type <= 1 && o.tif <= 3) fast_path++;
    }
    // The generator reaches both the direct path and the fallback often.
    expect(fast_path).toBeGreaterThan(500);
    expect(fast_path).toBeLessThan(3000);
  });

  it('a cached run of status, market, side, type and time in force follows the market id of its index', () => {
    const o = order(new Rng(5));
    Object.assign(o, { market: 0, status: 0, side: 0, order_type: 0, tif: 0, client_order_id: 'c' });
    const markets = [{ id: 'AAA-USDC' }];
    const view = { markets } as unknown as ReadModel;
    expect(orderAnswerJson(view, o, null, 1)).toBe(generic(view, o, null, 1));
    markets[0] = { id: 'BBB-USDC' };
    expect(orderAnswerJson(view, o, null, 2)).toContain('"market_id":"BBB-USDC"');
    expect(orderAnswerJson(view, o, null, 2)).toBe(generic(view, o, null, 2));
  });

  it('writes created_at and updated_at as Date#toISOString does, from 1970 to past year 9999', () => {
    // Edges of the civil-from-days arithmetic (views.ts isoJsonInto), then random times over its
    // whole range, and times it leaves to Date (fractions of a ms, years past 9999).
    const DAY = 86_400_000;
    const edges = [
      0, 1, 999, 1000, DAY - 1, DAY, Date.UTC(1972, 1, 29), Date.UTC(1972, 2, 1) - 1, Date.UTC(2000, 1, 29, 23, 59, 59, 999),
      Date.UTC(2000, 2, 1), Date.UTC(2100, 1, 28), Date.UTC(2100, 2, 1), Date.UTC(2400, 1, 29), Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), 8.64e15, 1_764_000_000_000.5, 12.75,
    ];
    const rng = new Rng(17);
    const times = [...edges];
    for (let i = 0; i < 4000; i++) times.push(rng.int(0, 253_402_300_799_999));
    for (let i = 0; i < 1000; i++) times.push(1_764_000_000_000 + rng.int(0, 40 * DAY));
    // A status, side, type and time in force the tables name: the direct path (not the generic one).
    const o = Object.assign(order(new Rng(3)), { status: 1, side: 1, order_type: 0, tif: 2, market: 0 });
    let k = 0;
    for (const created of times) {
      // Updated now and then equal to created, to the previous time or to a new one (the cache of two).
      const pick = k++ % 3;
      const updated = pick === 0 ? created : pick === 1 ? times[Math.max(0, k - 2)] : times[(k * 7919) % times.length];
      Object.assign(o, { created_ms: created, updated_ms: updated });
      const text = orderAnswerJson(rm, o, null, 1);
      expect(text).toBe(generic(rm, o, null, 1));
      expect(text).toContain(`"created_at":${JSON.stringify(new Date(created).toISOString())}`);
    }
  });
});
