// Candle builder with synthetic trades and book mids: alignment, boundaries, LIVE vs SIMULATED,
// gap filling, query windows and limits, bounded memory.
import { describe, expect, it } from 'vitest';
import { CandleBuilder, INTERVALS, midpoint, volumeOf } from '../../src/marketdata/candles.js';

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0); // 08:00:00Z, aligned to every interval up to 4h
const MIN = 60_000;

describe('candles from trades (LIVE)', () => {
  it('builds o/h/l/c/v per UTC-aligned minute, boundary trades go to the next interval', () => {
    const cb = new CandleBuilder();
    cb.onTrade(0, T0 + 1_000, 100, 5);
    cb.onTrade(0, T0 + 2_000, 120, 1);
    cb.onTrade(0, T0 + 3_000, 90, 2);
    cb.onTrade(0, T0 + MIN - 1, 110, 3);
    cb.onTrade(0, T0 + MIN, 111, 7); // exactly on the boundary: next minute
    const c = cb.query(0, '1m', T0, 100, T0 + 2 * MIN);
    expect(c).toEqual([
      { t: '2026-11-22T08:00:00.000Z', o: '100', h: '120', l: '90', c: '110', v: '11', source: 'LIVE' },
      { t: '2026-11-22T08:01:00.000Z', o: '111', h: '111', l: '111', c: '111', v: '7', source: 'LIVE' },
    ]);
    const h = cb.query(0, '1h', T0, 100, T0 + 2 * MIN);
    expect(h).toEqual([{ t: '2026-11-22T08:00:00.000Z', o: '100', h: '120', l: '90', c: '111', v: '18', source: 'LIVE' }]);
    const d = cb.query(0, '1d', T0, 100, T0);
    expect(d[0].t).toBe('2026-11-22T00:00:00.000Z');
  });

  it('keeps volumes exact beyond 2^53 (bigint sums)', () => {
    const cb = new CandleBuilder();
    cb.onTrade(0, T0, 1, Number.MAX_SAFE_INTEGER);
    cb.onTrade(0, T0, 1, Number.MAX_SAFE_INTEGER);
    expect(cb.query(0, '1m', T0, 1, T0)[0].v).toBe((2n * BigInt(Number.MAX_SAFE_INTEGER)).toString());
  });

  it('a volume of exactly MAX_SAFE_INTEGER stays a number; one unit more moves to bigint, exact through more fills and a snapshot', () => {
    const MAX = Number.MAX_SAFE_INTEGER;
    const cb = new CandleBuilder();
    cb.onTrade(0, T0, 1, MAX - 1);
    cb.onTrade(0, T0, 1, 1);
    expect(cb.stored(0, '1m')[0]).toMatchObject({ v: MAX, v_over: 0n });
    cb.onTrade(0, T0, 1, 1);
    expect(cb.stored(0, '1m')[0].v_over).toBe(BigInt(MAX) + 1n);
    cb.onTrade(0, T0, 1, 5);
    cb.onTrade(0, T0, 1, MAX);
    const want = (2n * BigInt(MAX) + 6n).toString();
    expect(volumeOf(cb.stored(0, '1m')[0]).toString()).toBe(want);
    expect(cb.query(0, '1d', T0, 1, T0)[0].v).toBe(want);
    // The snapshot's decimal string, loaded back, splits the same way and keeps adding exactly.
    const again = new CandleBuilder();
    again.importState(cb.exportState());
    expect(again.query(0, '1m', T0, 1, T0)[0].v).toBe(want);
    again.onTrade(0, T0, 1, 4);
    expect(again.query(0, '1m', T0, 1, T0)[0].v).toBe((2n * BigInt(MAX) + 10n).toString());
    // A small volume loaded from a snapshot is a number again.
    const small = new CandleBuilder();
    small.onTrade(0, T0, 1, 7);
    const back = new CandleBuilder();
    back.importState(small.exportState());
    expect(back.stored(0, '1m')[0]).toMatchObject({ v: 7, v_over: 0n });
  });

  it('every interval length aligns to UTC', () => {
    const cb = new CandleBuilder();
    const t = Date.UTC(2026, 10, 22, 13, 47, 31, 5);
    cb.onTrade(0, t, 50, 1);
    const starts = Object.keys(INTERVALS).map((i) => cb.query(0, i as keyof typeof INTERVALS, 0, 1, t)[0].t);
    expect(starts).toEqual([
      '2026-11-22T13:47:00.000Z', '2026-11-22T13:45:00.000Z', '2026-11-22T13:45:00.000Z',
      '2026-11-22T13:00:00.000Z', '2026-11-22T12:00:00.000Z', '2026-11-22T00:00:00.000Z',
    ]);
  });
});

describe('candles from book midpoints (SIMULATED)', () => {
  it('midpoint is floor((bid + ask) / 2)', () => {
    expect(midpoint(100, 103)).toBe(101);
    expect(midpoint(100, 102)).toBe(101);
  });

  it('an interval without trades but with a two-sided book gets mid samples, zero volume', () => {
    const cb = new CandleBuilder();
    cb.onBatchBegin(T0 + 1_000);
    cb.onBookMid(0, T0 + 1_000, 100); // book became two-sided
    cb.onBatchBegin(T0 + 10_000);
    cb.onBookMid(0, T0 + 10_000, 130);
    cb.onBatchBegin(T0 + 20_000);
    cb.onBookMid(0, T0 + 20_000, 80);
    cb.onBatchBegin(T0 + 30_000);
    cb.onBookMid(0, T0 + 30_000, 95);
    expect(cb.query(0, '1m', T0, 10, T0 + 40_000)).toEqual([
      { t: '2026-11-22T08:00:00.000Z', o: '100', h: '130', l: '80', c: '95', v: '0', source: 'SIMULATED' },
    ]);
  });

  it('a trade makes the interval LIVE and its mid samples are ignored', () => {
    const cb = new CandleBuilder();
    cb.onBatchBegin(T0);
    cb.onBookMid(0, T0, 100);
    cb.onBatchBegin(T0 + 5_000);
    cb.onTrade(0, T0 + 5_000, 105, 2);
    cb.onBookMid(0, T0 + 5_000, 1000);
    cb.onBatchBegin(T0 + 6_000);
    cb.onBookMid(0, T0 + 6_000, 1);
    expect(cb.query(0, '1m', T0, 10, T0 + 6_000)).toEqual([
      { t: '2026-11-22T08:00:00.000Z', o: '105', h: '105', l: '105', c: '105', v: '2', source: 'LIVE' },
    ]);
  });

  it('samples the standing mid at each batch boundary and fills intervals with no batch', () => {
    const cb = new CandleBuilder();
    cb.onBatchBegin(T0 + 10_000);
    cb.onTrade(0, T0 + 10_000, 200, 1);
    cb.onBookMid(0, T0 + 10_000, 210); // after the trade the book is two-sided at mid 210
    // Next batch 3 minutes later, changes nothing in market 0: minute 1 and 2 are flat at 210,
    // minute 3 is sampled at the batch boundary.
    cb.onBatchBegin(T0 + 3 * MIN + 5_000);
    // Then the book moves within minute 3.
    cb.onBookMid(0, T0 + 3 * MIN + 5_000, 220);
    const c = cb.query(0, '1m', T0, 100, T0 + 3 * MIN + 10_000);
    expect(c.map((x) => [x.t.slice(11, 16), x.o, x.h, x.l, x.c, x.v, x.source])).toEqual([
      ['08:00', '200', '200', '200', '200', '1', 'LIVE'],
      ['08:01', '210', '210', '210', '210', '0', 'SIMULATED'],
      ['08:02', '210', '210', '210', '210', '0', 'SIMULATED'],
      ['08:03', '210', '220', '210', '220', '0', 'SIMULATED'],
    ]);
    // The query extends flat candles to the request time while the book stays two-sided.
    const later = cb.query(0, '1m', T0 + 3 * MIN, 100, T0 + 5 * MIN + 1);
    expect(later.map((x) => [x.t.slice(11, 16), x.c, x.source])).toEqual([
      ['08:03', '220', 'SIMULATED'], ['08:04', '220', 'SIMULATED'], ['08:05', '220', 'SIMULATED'],
    ]);
  });

  it('a one-sided book makes no candle', () => {
    const cb = new CandleBuilder();
    cb.onBatchBegin(T0);
    cb.onBookMid(0, T0, 0);
    cb.onBatchBegin(T0 + 5 * MIN);
    expect(cb.query(0, '1m', T0, 100, T0 + 10 * MIN)).toEqual([]);
    // Two-sided, then one-sided again: only the minutes where it was two-sided.
    cb.onBookMid(0, T0 + 5 * MIN, 50);
    cb.onBatchBegin(T0 + 7 * MIN);
    cb.onBookMid(0, T0 + 7 * MIN, 0);
    const c = cb.query(0, '1m', T0, 100, T0 + 10 * MIN);
    expect(c.map((x) => x.t.slice(11, 16))).toEqual(['08:05', '08:06', '08:07']);
  });
});

describe('queries and memory', () => {
  it('since selects intervals that end after it; limit keeps the oldest first', () => {
    const cb = new CandleBuilder();
    for (let i = 0; i < 10; i++) cb.onTrade(0, T0 + i * MIN, 100 + i, 1);
    const c = cb.query(0, '1m', T0 + 3 * MIN + 30_000, 4, T0 + 10 * MIN);
    expect(c.map((x) => x.o)).toEqual(['103', '104', '105', '106']);
    expect(cb.query(0, '1m', T0 + 20 * MIN, 4, T0 + 20 * MIN)).toEqual([]);
    expect(cb.query(1, '1m', T0, 4, T0)).toEqual([]);
  });

  it('keeps a bounded number of candles per interval', () => {
    const cb = new CandleBuilder(20);
    for (let i = 0; i < 1000; i++) cb.onTrade(0, T0 + i * MIN, 100, 1);
    expect(cb.stored(0, '1m').length).toBeLessThanOrEqual(40);
    const c = cb.query(0, '1m', 0, 500, T0 + 1000 * MIN);
    expect(c.length).toBeGreaterThanOrEqual(20);
    expect(c[c.length - 1].t).toBe(new Date(T0 + 999 * MIN).toISOString());
    // A long quiet gap with a two-sided book fills at most the kept number of candles.
    const g = new CandleBuilder(20);
    g.onBatchBegin(T0);
    g.onBookMid(0, T0, 10);
    g.onBatchBegin(T0 + 100_000 * MIN);
    expect(g.stored(0, '1m').length).toBeLessThanOrEqual(40);
    expect(g.stored(0, '1m').at(-1)!.start_ms).toBe(T0 + 100_000 * MIN);
  });
});
