// MarketData over a real ReadModel fed synthetic committed events (the path MatcherLink uses):
// book mids sampled at batch commit, trades by batch time, USDC-quoted markets only, clock.
import { describe, expect, it } from 'vitest';
import { ReadModel } from '../../src/read_model/read_model.js';
import type { EventFields } from '../../src/ring/event_records.js';
import { EventType } from '../../src/ring/event_records.js';
import { MarketData } from '../../src/marketdata/market_data.js';

class Ev implements EventFields {
  constructor(private readonly t: number, private readonly f: number[], private readonly addr = '') {}
  type(): number { return this.t; }
  field(k: number): number { return this.f[k] ?? 0; }
  clientOrderId(): string { return ''; }
  addressHex(): string { return this.addr; }
}

const T0 = Date.UTC(2026, 10, 22, 8, 0, 0);
const MIN = 60_000;

function setup(): { rm: ReadModel; md: MarketData; feed: (e: Ev) => void; batch: (id: number, t: number, body: Ev[]) => void } {
  const rm = new ReadModel(['ETH', 'BTC', 'USDC'], { fills_per_account_kept: 100, trades_per_market_kept: 100, closed_orders_kept: 100 });
  const md = new MarketData(rm, { now: () => T0 + 10 * MIN });
  rm.observe([md]);
  const feed = (e: Ev): void => rm.apply(e);
  const batch = (id: number, t: number, body: Ev[]): void => {
    feed(new Ev(EventType.BATCH_BEGIN, [id, t]));
    for (const e of body) feed(e);
    feed(new Ev(EventType.BATCH_COMMITTED, [id, t]));
  };
  batch(0, 0, [
    new Ev(EventType.MARKET, [0, 0, 0, 2, 10_000, 100, 0, 0, 0]), // ETH-USDC
    new Ev(EventType.MARKET, [1, 0, 0, 1, 10_000, 100, 0, 0, 0]), // ETH-BTC
    new Ev(EventType.ACCOUNT, [1], '0x' + '1'.repeat(40)),
    new Ev(EventType.ACCOUNT, [2], '0x' + '2'.repeat(40)),
  ]);
  return { rm, md, feed, batch };
}

// ORDER_UPDATE fields: order_id, account, market, side, status, price, quantity, filled, remaining, last_fill_price.
const rest = (id: number, account: number, m: number, side: number, price: number, q: number): Ev =>
  new Ev(EventType.ORDER_UPDATE, [id, account, m, side, 0, price, q, 0, q, 0]);

describe('MarketData over the event stream', () => {
  it('samples the mid when a batch changes the book, and trades by batch time', () => {
    const { md, batch } = setup();
    batch(1, T0 + 1_000, [rest(1, 1, 0, 0, 1_000_000_000, 100)]); // bid only: no candle
    batch(2, T0 + 2_000, [rest(2, 2, 0, 1, 1_000_030_000, 100)]); // ask: mid floor(2000030000 / 2)
    expect(md.candles.mid(0)).toBe(1_000_015_000);
    batch(3, T0 + MIN + 5_000, [
      new Ev(EventType.FILL, [1, 0, 3, 2, 1, 2, 0, 1_000_030_000, 100, 5, -1]),
      new Ev(EventType.ORDER_UPDATE, [2, 2, 0, 1, 2, 1_000_030_000, 100, 100, 0, 1_000_030_000]),
    ]);
    expect(md.candles.mid(0)).toBe(0); // ask side gone
    const c = md.candles.query(0, '1m', T0, 100, md.now());
    expect(c).toEqual([
      { t: '2026-11-22T08:00:00.000Z', o: '1000015000', h: '1000015000', l: '1000015000', c: '1000015000', v: '0', source: 'SIMULATED' },
      { t: '2026-11-22T08:01:00.000Z', o: '1000030000', h: '1000030000', l: '1000030000', c: '1000030000', v: '100', source: 'LIVE' },
    ]);
    const top = md.leaderboard.top(10, (a) => '0x' + String(a).repeat(40));
    expect(top.map((e) => [e.address.slice(0, 4), e.volume_usdc, e.trades])).toEqual([['0x11', '100003', 1], ['0x22', '100003', 1]]);
  });

  it('tracks the best levels through adds, cancels and amends without sorting', () => {
    const { md, batch } = setup();
    batch(1, T0, [rest(1, 1, 0, 0, 100, 10), rest(2, 1, 0, 0, 300, 10), rest(3, 1, 0, 0, 200, 10), rest(4, 2, 0, 1, 500, 10), rest(5, 2, 0, 1, 400, 10)]);
    expect(md.candles.mid(0)).toBe(350);
    // Cancel the best bid (300): next is 200.
    batch(2, T0 + 1, [new Ev(EventType.ORDER_UPDATE, [2, 1, 0, 0, 3, 300, 10, 0, 10, 0])]);
    expect(md.candles.mid(0)).toBe(300);
    // Amend the best ask 400 -> 450, and a new best ask appears and disappears in the same batch.
    batch(3, T0 + 2, [
      rest(5, 2, 0, 1, 450, 10),
      rest(6, 2, 0, 1, 210, 10),
      new Ev(EventType.ORDER_UPDATE, [6, 2, 0, 1, 3, 210, 10, 0, 10, 0]),
    ]);
    expect(md.candles.mid(0)).toBe(325);
    // The whole bid side goes: no mid.
    batch(4, T0 + 3, [
      new Ev(EventType.ORDER_UPDATE, [1, 1, 0, 0, 3, 100, 10, 0, 10, 0]),
      new Ev(EventType.ORDER_UPDATE, [3, 1, 0, 0, 3, 200, 10, 0, 10, 0]),
    ]);
    expect(md.candles.mid(0)).toBe(0);
  });

  it('fills in a market not quoted in USDC make candles but no leaderboard volume', () => {
    const { md, batch } = setup();
    batch(1, T0, [new Ev(EventType.FILL, [1, 1, 3, 2, 1, 2, 0, 50_000, 100, 0, 0])]);
    expect(md.candles.query(1, '1h', T0, 10, md.now())[0]).toMatchObject({ o: '50000', v: '100', source: 'LIVE' });
    expect(md.leaderboard.top(10, String)).toEqual([]);
  });
});
