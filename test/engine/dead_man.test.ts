// The dead-man switch (docs/engine.md, "CANCEL_AFTER" and "Batch start"), rule by rule on both
// engines: armed at batch time + timeout, fired by the first batch stamped at or past the
// deadline (cancels of every resting order, reason dead_man_switch), then disarmed.
import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../src/engine/event_log.js';
import { OrderStatus, RequestKind as K, Side } from '../../src/engine/types.js';
import { Code, Reject as RJ } from '../../src/engine/codes.js';
import { UpdateReason } from '../../src/engine/events.js';
import { ETH, USDC, standardConfig } from './generator.js';
import { ENGINES, Harness, ONE, P2000, acc, rej } from './rules_harness.js';

const T0 = Date.UTC(2026, 10, 25);

function cancels(events: EngineEvent[]): number[] {
  return events.filter((e) => e.type === 'orderUpdate' && e.status === OrderStatus.CANCELLED && e.reason === UpdateReason.DEAD_MAN_SWITCH)
    .map((e) => (e.type === 'orderUpdate' ? e.order_id : 0));
}

describe.each(ENGINES)('%s engine: dead-man switch', (_name, factory) => {
  const make = (): Harness => {
    const h = new Harness(factory, standardConfig({}, { maker: 0, taker: 10 }));
    h.beginBatch(T0);
    h.deposit(1, USDC, 100_000 * ONE);
    h.deposit(1, ETH, 100 * ONE);
    h.deposit(2, USDC, 100_000 * ONE);
    return h;
  };

  it('fires at the first batch stamped at or past the deadline, cancels every resting order, disarms', () => {
    const h = make();
    h.limit(1, Side.BID, P2000, ONE);
    h.limit(1, Side.ASK, P2000 + 100_000_000, ONE);
    h.limit(2, Side.BID, P2000, ONE);
    expect(h.cancelAfter(1, 1_000)).toEqual([acc(K.CANCEL_AFTER, 1, 0)]);
    expect(h.state().dead_man).toEqual([{ account: 1, deadline_ms: T0 + 1_000 }]);
    expect(h.beginBatch(T0 + 999)).toEqual([]);
    const fired = h.beginBatch(T0 + 1_000);
    expect(fired[0]).toEqual(acc(K.DEAD_MAN_CANCEL, 1, 0));
    expect(cancels(fired)).toEqual([1, 2]);
    expect(h.state().dead_man).toEqual([]);
    // Account 2's order is untouched; account 1's funds are all available again.
    expect(h.state().markets[0].bids.map((o) => o.account)).toEqual([2]);
    expect(h.balance(1, USDC)[1]).toBe(0);
    expect(h.beginBatch(T0 + 5_000)).toEqual([]);
  });

  it('re-sending moves the deadline; 0 disarms; a fire with no orders still disarms', () => {
    const h = make();
    h.limit(1, Side.BID, P2000, ONE);
    h.cancelAfter(1, 2_000);
    h.beginBatch(T0 + 1_500);
    h.cancelAfter(1, 2_000);
    expect(h.state().dead_man).toEqual([{ account: 1, deadline_ms: T0 + 3_500 }]);
    expect(h.beginBatch(T0 + 2_000)).toEqual([]);
    h.cancelAfter(1, 0);
    expect(h.state().dead_man).toEqual([]);
    expect(h.beginBatch(T0 + 10_000)).toEqual([]);
    h.cancelAfter(2, 1_000);
    expect(h.beginBatch(T0 + 11_000)).toEqual([acc(K.DEAD_MAN_CANCEL, 2, 0)]);
    expect(h.state().dead_man).toEqual([]);
  });

  it('fires several switches in (deadline, account) order, before the batch inbox', () => {
    const h = make();
    h.limit(2, Side.BID, P2000, ONE);
    h.limit(1, Side.BID, P2000, ONE);
    h.cancelAfter(2, 1_000);
    h.cancelAfter(1, 1_000);
    h.beginBatch(T0 + 500);
    h.cancelAfter(1, 1_000);
    const fired = h.beginBatch(T0 + 10_000);
    expect(fired.filter((e) => e.type === 'accepted').map((e) => e.account)).toEqual([2, 1]);
  });

  it('refuses timeouts outside 0 and 1 s to 24 h, a reused nonce, an unknown account', () => {
    const h = make();
    for (const t of [1, 999, 86_400_001, -1_000]) {
      expect(h.cancelAfter(1, t)).toEqual([rej(K.CANCEL_AFTER, 1, RJ.TIMEOUT_INVALID)]);
    }
    expect(rej(K.CANCEL_AFTER, 1, RJ.TIMEOUT_INVALID).code).toBe(Code.INVALID_REQUEST);
    expect(h.cancelAfter(1, 86_400_000)).toEqual([acc(K.CANCEL_AFTER, 1, 0)]);
    const last = h.state().accounts.find((a) => a.account === 1)!.nonce_high_water;
    expect(h.cancelAfter(1, 1_000, last)).toEqual([rej(K.CANCEL_AFTER, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
    expect(h.cancelAfter(16, 1_000, 1)).toEqual([rej(K.CANCEL_AFTER, 16, RJ.ACCOUNT_UNKNOWN)]);
    expect(h.state().dead_man).toEqual([{ account: 1, deadline_ms: T0 + 86_400_000 }]);
  });

  it('is never accepted as a request: DEAD_MAN_CANCEL is engine-issued', () => {
    const h = make();
    expect(h.apply(h.request(K.DEAD_MAN_CANCEL, 1))).toEqual([rej(K.DEAD_MAN_CANCEL, 1, RJ.KIND_UNKNOWN)]);
  });
});

describe.each(ENGINES)('%s engine: cancel on disconnect (operator request)', (_name, factory) => {
  it('cancels every resting order of the account (reason disconnect); refused when none rests or the account is unknown', () => {
    const h = new Harness(factory, standardConfig({}, { maker: 0, taker: 10 }));
    h.beginBatch(T0);
    h.deposit(1, USDC, 100_000 * ONE);
    h.deposit(1, ETH, 100 * ONE);
    h.deposit(2, USDC, 100_000 * ONE);
    h.limit(1, Side.BID, P2000, ONE);
    h.limit(1, Side.ASK, P2000 + 100_000_000, ONE);
    h.limit(2, Side.BID, P2000, ONE);
    const nonce_before = h.state().accounts.find((a) => a.account === 1)!.nonce_high_water;
    const r = h.request(K.DISCONNECT_CANCEL, 1, { nonce: 0 });
    const events = h.apply(r);
    expect(events[0]).toEqual(acc(K.DISCONNECT_CANCEL, 1, 0));
    expect(events.filter((e) => e.type === 'orderUpdate' && e.reason === UpdateReason.DISCONNECT && e.status === OrderStatus.CANCELLED)).toHaveLength(2);
    // No nonce: an operator request never moves the user's mark.
    expect(h.state().accounts.find((a) => a.account === 1)!.nonce_high_water).toBe(nonce_before);
    expect(h.apply(h.request(K.DISCONNECT_CANCEL, 1, { nonce: 0 }))).toEqual([rej(K.DISCONNECT_CANCEL, 1, RJ.NOTHING_TO_CANCEL)]);
    expect(h.apply(h.request(K.DISCONNECT_CANCEL, 16, { nonce: 0 }))).toEqual([rej(K.DISCONNECT_CANCEL, 16, RJ.ACCOUNT_UNKNOWN)]);
    expect(h.state().markets[0].bids.map((o) => o.account)).toEqual([2]);
  });
});
