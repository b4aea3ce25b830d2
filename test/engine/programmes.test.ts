// Referrals and forced inclusion (docs/engine.md, "Referrals" and "Forced inclusion"), rule by
// rule on both engines. The harness checks every state and event invariant (conservation first)
// after every request and every batch start.
import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../src/engine/event_log.js';
import { OrderType, RequestKind as K, Side } from '../../src/engine/types.js';
import { Code, Reject as RJ } from '../../src/engine/codes.js';
import { FORCE_INCLUSION_DEADLINE_MS, REFERRAL_ACTIVE_MS } from '../../src/engine/rules.js';
import { ETH, USDC, standardConfig } from './generator.js';
import { ENGINES, Harness, ONE, P2000, acc, rej, usdc } from './rules_harness.js';

const BID = Side.BID;
const ASK = Side.ASK;
const T0 = Date.UTC(2026, 10, 22);

function shares(events: EngineEvent[]): EngineEvent[] {
  return events.filter((e) => e.type === 'referralShare');
}

describe.each(ENGINES)('%s engine', (_name, factory) => {
  const make = (fees = { maker: 0, taker: 10 }, limits = {}, hold_ms = 0): Harness =>
    new Harness(factory, { ...standardConfig(limits, fees), force_inclusion_hold_ms: hold_ms });

  describe('referrals', () => {
    it('binds a user to one referrer, once; refuses self-referral and unknown referrers', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10));
      expect(h.refer(1, 1, 1)).toEqual([rej(K.REFER, 1, RJ.SELF_REFERRAL)]);
      expect(rej(K.REFER, 1, RJ.SELF_REFERRAL).code).toBe(Code.INVALID_REFERRAL);
      expect(h.refer(1, 16, 1)).toEqual([rej(K.REFER, 1, RJ.REFERRER_UNKNOWN)]);
      expect(h.refer(1, 0, 1)).toEqual([rej(K.REFER, 1, RJ.REFERRER_UNKNOWN)]);
      expect(h.refer(1, 2, 1)).toEqual([
        acc(K.REFER, 1, 0), { type: 'referral', referred: 1, referrer: 2, active_until_ms: T0 + REFERRAL_ACTIVE_MS },
      ]);
      expect(h.refer(1, 3, 2)).toEqual([rej(K.REFER, 1, RJ.REFERRAL_EXISTS)]);
      expect(rej(K.REFER, 1, RJ.REFERRAL_EXISTS).code).toBe(Code.REFERRAL_EXISTS);
      // A replayed registration is a duplicate nonce, checked first.
      expect(h.refer(1, 2, 1)).toEqual([rej(K.REFER, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      const s = h.state();
      expect(s.referrals).toEqual([{ account: 1, referrer: 2, active_until_ms: T0 + REFERRAL_ACTIVE_MS, earned_units: [0, 0, 0] }]);
      expect(s.accounts.find((a) => a.account === 1)?.nonce_high_water).toBe(1);
    });

    it('pays the referrer 20% of the referred taker fee from the fee account; maker fills never count', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10_000));
      h.deposit(2, ETH, 5 * ONE);
      h.deposit(2, USDC, usdc(100));
      h.refer(1, 3);
      h.limit(2, ASK, P2000, ONE);
      const taken = h.limit(1, BID, P2000, ONE);
      // Taker fee: 10 bps of 2000 USDC = 2 USDC; the referrer's share 0.4 USDC.
      expect(taken.find((e) => e.type === 'fill')).toMatchObject({ fill_id: 1, taker_account: 1, taker_fee_units: 2_000_000 });
      expect(shares(taken)).toEqual([{ type: 'referralShare', fill_id: 1, referred: 1, referrer: 3, asset: USDC, amount_units: 400_000 }]);
      expect(h.balance(3, USDC)).toEqual([400_000, 0]);
      expect(h.balance(0, USDC)).toEqual([1_600_000, 0]);
      // The referred user as maker: its fees are never shared.
      h.limit(1, ASK, P2000, ONE);
      expect(shares(h.limit(2, BID, P2000, ONE))).toEqual([]);
      expect(h.balance(3, USDC)).toEqual([400_000, 0]);
      expect(h.state().referrals[0].earned_units).toEqual([0, 0, 400_000]);
    });

    it('floors the share: a taker fee of 141 units pays 28', () => {
      const h = make({ maker: 0, taker: 7 });
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10));
      h.deposit(2, ETH, ONE);
      h.refer(1, 3);
      h.limit(2, ASK, P2000 + 10_000, 100);
      // Notional 2000.01 x 0.0001 = 200,001 units; fee ceil(200,001 x 7 / 10,000) = 141.
      const events = h.limit(1, BID, P2000 + 10_000, 100);
      expect(events.find((e) => e.type === 'fill')).toMatchObject({ taker_fee_units: 141 });
      expect(shares(events)).toMatchObject([{ amount_units: 28 }]);
      expect(h.balance(0, USDC)).toEqual([113, 0]);
    });

    it('never pays more than the fee account earned on the fill (a large maker rebate)', () => {
      const h = make({ maker: -9, taker: 10 });
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10_000));
      h.deposit(2, ETH, ONE);
      h.refer(1, 3);
      h.limit(2, ASK, P2000, ONE);
      // Taker fee 2 USDC, rebate 1.8 USDC: the fee account earns 0.2, so the share is 0.2, not 0.4.
      expect(shares(h.limit(1, BID, P2000, ONE))).toMatchObject([{ amount_units: 200_000 }]);
      expect(h.balance(0, USDC)).toEqual([0, 0]);
      expect(h.balance(3, USDC)).toEqual([200_000, 0]);
    });

    it('shares fees of fills in batches before active_until only (90 days)', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10_000));
      h.deposit(2, ETH, 5 * ONE);
      h.refer(1, 3);
      h.beginBatch(T0 + REFERRAL_ACTIVE_MS - 1);
      h.limit(2, ASK, P2000, ONE);
      expect(shares(h.limit(1, BID, P2000, ONE))).toHaveLength(1);
      h.beginBatch(T0 + REFERRAL_ACTIVE_MS);
      h.limit(2, ASK, P2000, ONE);
      expect(shares(h.limit(1, BID, P2000, ONE))).toEqual([]);
      // The relationship stays: a new registration is still refused.
      expect(h.refer(1, 4)[0]).toMatchObject({ type: 'rejected', reason: RJ.REFERRAL_EXISTS });
    });
  });

  describe('forced inclusion', () => {
    it('queues an entry with a 24-hour deadline and includes it at the next batch start', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10_000));
      const place = h.placeRequest(1, BID, OrderType.LIMIT, P2000, ONE, { client_order_id: 'forced-1' });
      expect(h.force(place)).toEqual([
        acc(K.FORCE_INCLUDE, 1, 1),
        { type: 'inboxQueued', entry_id: 1, account: 1, kind: K.PLACE, nonce: 1, deadline_ms: T0 + FORCE_INCLUSION_DEADLINE_MS, referrer_account: 0, reject: RJ.NONE },
      ]);
      const s = h.state();
      expect(s.inbox).toEqual([{
        entry_id: 1, account: 1, envelope_nonce: 1, queued_ms: T0, deadline_ms: T0 + FORCE_INCLUSION_DEADLINE_MS,
        request: {
          kind: K.PLACE, nonce: 1, market: 0, side: BID, order_type: OrderType.LIMIT, tif: 0, price_units: P2000,
          quantity_units: ONE, order_id: 0, client_order_id: 'forced-1', asset: 0, amount_units: 0, referrer_account: 0, reject: RJ.NONE,
        },
      }]);
      // The envelope used its own sequence: the trading mark is untouched until inclusion.
      expect(s.accounts.find((a) => a.account === 1)?.nonce_high_water ?? 0).toBe(0);
      expect(s.envelope_nonces).toEqual([{ account: 1, envelope_nonce: 1 }]);
      expect(s.markets[0].bids).toEqual([]);
      const included = h.beginBatch(T0 + 1);
      expect(included.slice(0, 2)).toEqual([
        { type: 'inboxIncluded', entry_id: 1, account: 1, kind: K.PLACE, nonce: 1, client_order_id: 'forced-1' },
        acc(K.PLACE, 1, 1),
      ]);
      const after = h.state();
      expect(after.inbox).toEqual([]);
      expect(after.markets[0].bids.map((o) => o.client_order_id)).toEqual(['forced-1']);
      expect(after.accounts.find((a) => a.account === 1)?.nonce_high_water).toBe(1);
      expect(after.envelope_nonces).toEqual([{ account: 1, envelope_nonce: 1 }]);
      expect(h.beginBatch(T0 + 2)).toEqual([]);
    });

    it('refuses at inclusion, with its reason, a payload the front found bad or of a kind users cannot sign', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10_000));
      h.limit(1, BID, P2000, ONE);
      h.force(h.request(K.CANCEL, 1, { order_id: 1 }), RJ.FORCED_SIGNATURE_INVALID);
      h.force(h.request(K.CANCEL, 1, { order_id: 1 }), RJ.FORCED_PAYLOAD_MALFORMED);
      h.force(h.request(K.DEPOSIT, 1, { asset: USDC, amount_units: usdc(1_000_000) }));
      const events = h.beginBatch(T0 + 1);
      expect(events.filter((e) => e.type === 'rejected')).toEqual([
        rej(K.CANCEL, 1, RJ.FORCED_SIGNATURE_INVALID),
        rej(K.CANCEL, 1, RJ.FORCED_PAYLOAD_MALFORMED),
        rej(K.DEPOSIT, 1, RJ.FORCED_KIND_INVALID),
      ]);
      expect(rej(K.CANCEL, 1, RJ.FORCED_SIGNATURE_INVALID).code).toBe(Code.INVALID_SIGNATURE);
      expect(events.filter((e) => e.type === 'inboxIncluded').map((e) => (e as { entry_id: number }).entry_id)).toEqual([1, 2, 3]);
      // Nothing happened: the order rests, no deposit was made.
      expect(h.state().markets[0].bids).toHaveLength(1);
      expect(h.state().deposits_units[USDC]).toBe(usdc(10_000));
    });

    it('checks the payload nonce at inclusion against the trading mark only', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10_000));
      // A payload whose nonce the account already used directly: a duplicate at inclusion.
      const place = h.placeRequest(1, BID, OrderType.LIMIT, P2000, ONE);
      expect(h.apply({ ...place })[0]).toMatchObject({ type: 'accepted' });
      h.force(place, RJ.NONE, 1);
      expect(h.beginBatch(T0 + 1)[1]).toEqual(rej(K.PLACE, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER));
    });

    it('both signing orders work: payload n in envelope n + 1, and envelope n around payload n + 1', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10_000));
      const rest = h.limit(1, BID, P2000, ONE);
      expect(rest[0]).toMatchObject({ type: 'accepted', order_id: 1 });
      // The user signed a cancel at n = 2 that the sequencer ignored, and wraps it at n + 1 = 3.
      const cancel = h.request(K.CANCEL, 1, { order_id: 1 });
      expect(cancel.nonce).toBe(2);
      expect(h.force(cancel, RJ.NONE, 3)[0]).toMatchObject({ type: 'accepted' });
      const first = h.beginBatch(T0 + 1);
      expect(first[1]).toEqual(acc(K.CANCEL, 1, 1));
      expect(h.state().markets[0].bids).toEqual([]);
      // Envelope 4 around a cancel-all signed at 5: the other order.
      const all = h.request(K.CANCEL_ALL, 1, { market: -1, nonce: 5 });
      expect(h.force(all, RJ.NONE, 4)[0]).toMatchObject({ type: 'accepted' });
      expect(h.beginBatch(T0 + 2)[1]).toEqual(acc(K.CANCEL_ALL, 1, 0));
      const s = h.state();
      expect(s.accounts.find((a) => a.account === 1)?.nonce_high_water).toBe(5);
      expect(s.envelope_nonces).toEqual([{ account: 1, envelope_nonce: 4 }]);
      // An envelope at or below the last envelope nonce is a duplicate, whatever the trading mark.
      expect(h.force(h.request(K.CANCEL_ALL, 1, { market: -1 }), RJ.NONE, 4)).toEqual([rej(K.FORCE_INCLUDE, 1, RJ.ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER)]);
      expect(rej(K.FORCE_INCLUDE, 1, RJ.ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER).code).toBe(Code.DUPLICATE_NONCE);
    });

    it('holds entries for force_inclusion_hold_ms, then includes them in order', () => {
      const h = make(undefined, {}, 3_600_000);
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10_000));
      h.force(h.placeRequest(1, BID, OrderType.LIMIT, P2000, ONE));
      h.beginBatch(T0 + 1_000);
      h.force(h.request(K.CANCEL_ALL, 1, { market: -1 }));
      expect(h.beginBatch(T0 + 3_599_999)).toEqual([]);
      const first = h.beginBatch(T0 + 3_600_000);
      expect(first.filter((e) => e.type === 'inboxIncluded')).toHaveLength(1);
      expect(h.state().inbox.map((e) => e.entry_id)).toEqual([2]);
      const second = h.beginBatch(T0 + 3_601_000);
      expect(second.slice(0, 2)).toMatchObject([{ type: 'inboxIncluded', entry_id: 2 }, acc(K.CANCEL_ALL, 1, 0)]);
      expect(h.state().markets[0].bids).toEqual([]);
    });

    it('limits the inbox in all and per account; a refused envelope keeps its nonce', () => {
      const h = make(undefined, { inbox_entries_max: 3, inbox_entries_per_account_max: 2 }, 3_600_000);
      h.beginBatch(T0);
      for (const a of [1, 2, 3]) h.deposit(a, USDC, usdc(10));
      h.force(h.request(K.CANCEL_ALL, 1, { market: -1 }));
      h.force(h.request(K.CANCEL_ALL, 1, { market: -1 }));
      expect(h.force(h.request(K.CANCEL_ALL, 1, { market: -1 }), RJ.NONE, 5)).toEqual([rej(K.FORCE_INCLUDE, 1, RJ.INBOX_ACCOUNT_FULL)]);
      expect(h.force(h.request(K.CANCEL_ALL, 2, { market: -1 }))[0]).toMatchObject({ type: 'accepted' });
      expect(h.force(h.request(K.CANCEL_ALL, 3, { market: -1 }))).toEqual([rej(K.FORCE_INCLUDE, 3, RJ.INBOX_FULL)]);
      expect(h.state().accounts.find((a) => a.account === 3)?.nonce_high_water).toBe(0);
      h.beginBatch(T0 + 3_600_000);
      expect(h.state().inbox).toEqual([]);
    });

    it('refuses an envelope from an unknown account, a replayed nonce, or an out-of-table verdict', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10));
      const cancelAll = (account: number): ReturnType<Harness['request']> => h.request(K.CANCEL_ALL, account, { market: -1 });
      expect(h.force(cancelAll(16))).toEqual([rej(K.FORCE_INCLUDE, 16, RJ.ACCOUNT_UNKNOWN)]);
      expect(h.force(cancelAll(0))).toEqual([rej(K.FORCE_INCLUDE, 0, RJ.ACCOUNT_UNKNOWN)]);
      expect(h.force(cancelAll(1), 9_999)).toEqual([rej(K.FORCE_INCLUDE, 1, RJ.REQUEST_MALFORMED)]);
      expect(h.force(cancelAll(1), -1)).toEqual([rej(K.FORCE_INCLUDE, 1, RJ.REQUEST_MALFORMED)]);
      expect(h.force(cancelAll(1))[0]).toMatchObject({ type: 'accepted' });
      expect(h.force(cancelAll(1), RJ.NONE, 1)).toEqual([rej(K.FORCE_INCLUDE, 1, RJ.ENVELOPE_NONCE_NOT_ABOVE_HIGH_WATER)]);
      expect(h.state().inbox).toHaveLength(1);
    });

    it('refuses a referral from an unknown account and fields that are not safe integers', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10));
      expect(h.refer(16, 1, 1)).toEqual([rej(K.REFER, 16, RJ.ACCOUNT_UNKNOWN)]);
      const r = h.request(K.REFER, 1, { referrer_account: 2.5 });
      expect(h.apply(r)).toEqual([rej(K.REFER, 1, RJ.REQUEST_MALFORMED)]);
      const f = h.request(K.FORCE_INCLUDE, 1, { inner_kind: K.PLACE, inner_nonce: Number.MAX_SAFE_INTEGER + 2 });
      expect(h.apply(f)).toEqual([rej(K.FORCE_INCLUDE, 1, RJ.REQUEST_MALFORMED)]);
      expect(h.state().referrals).toEqual([]);
    });

    it('a forced referral registers like a direct one', () => {
      const h = make();
      h.beginBatch(T0);
      h.deposit(1, USDC, usdc(10));
      const r = h.request(K.REFER, 1, { referrer_account: 2 });
      h.force(r);
      const events = h.beginBatch(T0 + 5);
      expect(events.slice(1)).toEqual([
        acc(K.REFER, 1, 0), { type: 'referral', referred: 1, referrer: 2, active_until_ms: T0 + 5 + REFERRAL_ACTIVE_MS },
      ]);
    });
  });
});
