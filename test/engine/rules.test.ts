// The rules of docs/engine.md (and DECISIONS), one by one, with exact expected events and
// balances, run against both engines. The harness checks every state and event invariant
// (conservation first) after every step.
import { describe, expect, it } from 'vitest';
import {
  NO_MARKET,
  OrderStatus as S,
  OrderType,
  RequestKind as K,
  Side,
  Tif,
  emptyRequest,
} from '../../src/engine/types.js';
import { BalanceReason as BR, UpdateReason as UR } from '../../src/engine/events.js';
import { Code, Reject as RJ } from '../../src/engine/codes.js';
import { BTC, BTC_USDC, ETH, ETH_USDC, USDC, standardConfig } from './generator.js';
import { ENGINES, Harness, ONE, P2000, acc, bal, fil, rej, upd, usdc } from './rules_harness.js';

const BID = Side.BID;
const ASK = Side.ASK;
const MAX = Number.MAX_SAFE_INTEGER;

describe.each(ENGINES)('%s engine', (_name, factory) => {
  const make = (fees = { maker: 2, taker: 5 }, limits = {}): Harness => new Harness(factory, standardConfig(limits, fees));

  describe('deposits and withdrawals', () => {
    it('an on-chain deposit (nonce = contract deposit id) is credited once; ids only go up', () => {
      const h = make();
      const chain = (account: number, id: number, amount: number) => h.apply(h.request(K.DEPOSIT, account, { asset: USDC, amount_units: amount, nonce: id }));
      expect(chain(1, 1, usdc(10))).toEqual([acc(K.DEPOSIT, 1, 0), bal(1, USDC, usdc(10), 0, BR.DEPOSIT)]);
      // The watcher replays id 1 after a restart: refused, nothing credited.
      expect(chain(1, 1, usdc(10))).toEqual([rej(K.DEPOSIT, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      // A gap is allowed (a deposit the engine refused stays refused); older ids are not.
      expect(chain(2, 3, usdc(5))).toEqual([acc(K.DEPOSIT, 2, 0), bal(2, USDC, usdc(5), 0, BR.DEPOSIT)]);
      expect(chain(2, 2, usdc(5))).toEqual([rej(K.DEPOSIT, 2, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      // Admin deposits (nonce 0) do not touch the chain mark; a negative id is malformed.
      expect(h.deposit(1, USDC, usdc(1))).toEqual([acc(K.DEPOSIT, 1, 0), bal(1, USDC, usdc(11), 0, BR.DEPOSIT)]);
      expect(chain(1, -1, usdc(1))).toEqual([rej(K.DEPOSIT, 1, RJ.REQUEST_MALFORMED)]);
      expect(h.state().chain_deposit_high_water).toBe(3);
      expect(h.state().deposits_units[USDC]).toBe(usdc(16));
    });

    it('deposit credits available; withdraw debits it and records a pending withdrawal', () => {
      const h = make();
      expect(h.deposit(1, USDC, usdc(1000))).toEqual([acc(K.DEPOSIT, 1, 0), bal(1, USDC, usdc(1000), 0, BR.DEPOSIT)]);
      expect(h.withdraw(1, USDC, usdc(400), 1)).toEqual([acc(K.WITHDRAW, 1, 0), bal(1, USDC, usdc(600), 0, BR.WITHDRAWAL)]);
      // Too much: rejected, nonce 2 not consumed.
      expect(h.withdraw(1, USDC, usdc(600) + 1, 2)).toEqual([rej(K.WITHDRAW, 1, RJ.INSUFFICIENT_BALANCE)]);
      expect(h.withdraw(1, USDC, usdc(600), 2)).toEqual([acc(K.WITHDRAW, 1, 0), bal(1, USDC, 0, 0, BR.WITHDRAWAL)]);
      const s = h.state();
      expect(s.deposits_units).toEqual([0, 0, usdc(1000)]);
      expect(s.withdrawals_units).toEqual([0, 0, usdc(1000)]);
      expect(s.pending_withdrawals).toEqual([
        { account: 1, nonce: 1, asset: USDC, amount_units: usdc(400) },
        { account: 1, nonce: 2, asset: USDC, amount_units: usdc(600) },
      ]);
      // Balance zero but nonce 2: still listed.
      expect(s.accounts).toEqual([
        { account: 0, nonce_high_water: 0, balances: [[0, 0], [0, 0], [0, 0]] },
        { account: 1, nonce_high_water: 2, balances: [[0, 0], [0, 0], [0, 0]] },
      ]);
    });

    it('deposit validation order: asset, amount, lifetime deposits, then account', () => {
      const h = make();
      expect(h.deposit(1, 3, 5)).toEqual([rej(K.DEPOSIT, 1, RJ.ASSET_UNKNOWN)]);
      expect(h.deposit(1, -1, 5)).toEqual([rej(K.DEPOSIT, 1, RJ.ASSET_UNKNOWN)]);
      expect(h.deposit(1, USDC, 0)).toEqual([rej(K.DEPOSIT, 1, RJ.AMOUNT_NOT_POSITIVE)]);
      expect(h.deposit(1, USDC, -5)).toEqual([rej(K.DEPOSIT, 1, RJ.AMOUNT_NOT_POSITIVE)]);
      expect(h.deposit(0, USDC, 5)).toEqual([rej(K.DEPOSIT, 0, RJ.ACCOUNT_UNKNOWN)]);
      expect(h.deposit(16, USDC, 5)).toEqual([rej(K.DEPOSIT, 16, RJ.ACCOUNT_UNKNOWN)]);
      // The account is checked last.
      expect(h.deposit(0, 7, 5)).toEqual([rej(K.DEPOSIT, 0, RJ.ASSET_UNKNOWN)]);
      expect(h.deposit(16, USDC, 0)).toEqual([rej(K.DEPOSIT, 16, RJ.AMOUNT_NOT_POSITIVE)]);
      expect(h.deposit(16, USDC, MAX)).toEqual([rej(K.DEPOSIT, 16, RJ.ACCOUNT_UNKNOWN)]);
      expect(h.state().accounts.map((a) => a.account)).toEqual([0]);
      expect(h.deposit(15, ETH, MAX - 10)).toEqual([acc(K.DEPOSIT, 15, 0), bal(15, ETH, MAX - 10, 0, BR.DEPOSIT)]);
      expect(h.deposit(2, ETH, 11)).toEqual([rej(K.DEPOSIT, 2, RJ.AMOUNT_TOO_LARGE)]);
      expect(h.deposit(16, ETH, 11)).toEqual([rej(K.DEPOSIT, 16, RJ.AMOUNT_TOO_LARGE)]);
      expect(h.deposit(2, ETH, 10)).toEqual([acc(K.DEPOSIT, 2, 0), bal(2, ETH, 10, 0, BR.DEPOSIT)]);
      expect(h.state().deposits_units).toEqual([MAX, 0, 0]);
      // Lifetime deposits are capped, not just the supply: after 1,000 in and 400 out (supply 600),
      // MAX - 999 more would bring lifetime deposits past MAX; MAX - 1000 is the most accepted.
      h.deposit(1, BTC, 1_000);
      h.withdraw(1, BTC, 400);
      expect(h.deposit(2, BTC, MAX - 999)).toEqual([rej(K.DEPOSIT, 2, RJ.AMOUNT_TOO_LARGE)]);
      expect(h.deposit(2, BTC, MAX - 1000)).toEqual([acc(K.DEPOSIT, 2, 0), bal(2, BTC, MAX - 1000, 0, BR.DEPOSIT)]);
      expect(h.state().deposits_units[BTC]).toBe(MAX);
    });

    it('withdraw validation order: account, nonce, asset, amount, balance', () => {
      const h = make();
      h.deposit(1, USDC, 100);
      expect(h.withdraw(0, USDC, 1, 1)).toEqual([rej(K.WITHDRAW, 0, RJ.ACCOUNT_UNKNOWN)]);
      expect(h.withdraw(1, USDC, 1, 0)).toEqual([rej(K.WITHDRAW, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      expect(h.withdraw(1, 7, 1, 1)).toEqual([rej(K.WITHDRAW, 1, RJ.ASSET_UNKNOWN)]);
      expect(h.withdraw(1, USDC, 0, 1)).toEqual([rej(K.WITHDRAW, 1, RJ.AMOUNT_NOT_POSITIVE)]);
      expect(h.withdraw(1, ETH, 1, 1)).toEqual([rej(K.WITHDRAW, 1, RJ.INSUFFICIENT_BALANCE)]);
      expect(h.state().accounts.find((a) => a.account === 1)?.nonce_high_water).toBe(0);
    });
  });

  describe('order updates carry the lock and the time priority (the state root commits to them)', () => {
    it('stamped on resting, kept by an amend in place, renewed by one that re-enters, 0 once closed', () => {
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, USDC, usdc(10_000));
      h.deposit(2, ETH, ONE);
      const updates = (events: ReturnType<Harness['apply']>) => events.filter((e) => e.type === 'orderUpdate');
      // Without fees a bid locks its notional: 2000 x 0.5 = 1000 USDC.
      expect(updates(h.limit(1, BID, P2000, 500_000))).toEqual([
        upd(1, 1, ETH_USDC, BID, S.OPEN, P2000, 500_000, 0, 500_000, 0, UR.PLACED, usdc(1000), 1)]);
      expect(updates(h.limit(1, BID, P2000, 250_000))).toEqual([
        upd(2, 1, ETH_USDC, BID, S.OPEN, P2000, 250_000, 0, 250_000, 0, UR.PLACED, usdc(500), 2)]);
      expect(updates(h.amend(1, 1, P2000, 400_000))).toEqual([
        upd(1, 1, ETH_USDC, BID, S.OPEN, P2000, 400_000, 0, 400_000, 0, UR.AMENDED, usdc(800), 1)]);
      // The taker never rests: its closing update has neither lock nor priority.
      expect(updates(h.limit(2, ASK, P2000, 100_000))).toEqual([
        upd(1, 1, ETH_USDC, BID, S.PARTIALLY_FILLED, P2000, 400_000, 100_000, 300_000, P2000, UR.FILL, usdc(600), 1),
        upd(3, 2, ETH_USDC, ASK, S.FILLED, P2000, 100_000, 100_000, 0, P2000, UR.FILL, 0, 0),
      ]);
      expect(updates(h.amend(1, 1, P2000, 350_000))).toEqual([
        upd(1, 1, ETH_USDC, BID, S.PARTIALLY_FILLED, P2000, 450_000, 100_000, 350_000, P2000, UR.AMENDED, usdc(700), 3)]);
      expect(h.state().next_priority_seq).toBe(4);
      expect(updates(h.cancel(1, 1))).toEqual([
        upd(1, 1, ETH_USDC, BID, S.CANCELLED, P2000, 450_000, 100_000, 0, P2000, UR.USER_CANCEL, 0, 0)]);
      expect(h.state().markets[ETH_USDC].bids.map((o) => [o.order_id, o.priority_seq, o.locked_units])).toEqual([[2, 2, usdc(500)]]);
    });
  });

  describe('placing limit orders', () => {
    it('a limit bid locks notionalCeil + feeCeil(taker); one unit less is INSUFFICIENT_BALANCE', () => {
      // notional = 2000.01 x 0.5 = 1000.005 USDC; fee = ceil(1_000_005_000 x 5 / 1e4) = 500_003.
      const lock = 1_000_005_000 + 500_003;
      const h = make();
      h.deposit(1, USDC, lock - 1);
      expect(h.limit(1, BID, 2_000_010_000, 500_000)).toEqual([rej(K.PLACE, 1, RJ.INSUFFICIENT_BALANCE)]);
      h.deposit(1, USDC, 1);
      expect(h.limit(1, BID, 2_000_010_000, 500_000)).toEqual([
        acc(K.PLACE, 1, 1),
        upd(1, 1, ETH_USDC, BID, S.OPEN, 2_000_010_000, 500_000, 0, 500_000, 0, UR.PLACED),
        bal(1, USDC, 0, lock, BR.ORDER_PLACED),
      ]);
      expect(h.state().markets[0].bids).toEqual([{
        order_id: 1, account: 1, side: BID, tif: Tif.GTC, price_units: 2_000_010_000, quantity_units: 500_000,
        filled_units: 0, remaining_units: 500_000, locked_units: lock, priority_seq: 1, client_order_id: '',
        last_fill_price_units: 0,
      }]);
    });

    it('an ask locks its quantity of base', () => {
      const h = make();
      h.deposit(2, ETH, 300_000);
      expect(h.limit(2, ASK, P2000, 300_100)).toEqual([rej(K.PLACE, 2, RJ.INSUFFICIENT_BALANCE)]);
      expect(h.limit(2, ASK, P2000, 300_000, { client_order_id: 'a-1' })).toEqual([
        acc(K.PLACE, 2, 1),
        upd(1, 2, ETH_USDC, ASK, S.OPEN, P2000, 300_000, 0, 300_000, 0, UR.PLACED),
        bal(2, ETH, 0, 300_000, BR.ORDER_PLACED),
      ]);
      expect(h.state().markets[0].asks[0]).toMatchObject({ locked_units: 300_000, client_order_id: 'a-1' });
    });

    it('a full fill happens at the maker price; the taker leftover lock is released', () => {
      const h = make();
      h.deposit(2, ETH, ONE);
      h.deposit(1, USDC, usdc(3000));
      expect(h.limit(2, ASK, P2000, ONE)).toEqual([
        acc(K.PLACE, 2, 1),
        upd(1, 2, ETH_USDC, ASK, S.OPEN, P2000, ONE, 0, ONE, 0, UR.PLACED),
        bal(2, ETH, 0, ONE, BR.ORDER_PLACED),
      ]);
      // Bid at 2010: fills at 2000. n = 2000 USDC, taker fee 5 bps = 1.0, maker fee 2 bps = 0.4.
      expect(h.limit(1, BID, 2_010_000_000, ONE)).toEqual([
        acc(K.PLACE, 1, 2),
        fil(1, ETH_USDC, 2, 1, 1, 2, BID, P2000, ONE, 1_000_000, 400_000),
        upd(1, 2, ETH_USDC, ASK, S.FILLED, P2000, ONE, ONE, 0, P2000, UR.FILL),
        upd(2, 1, ETH_USDC, BID, S.FILLED, 2_010_000_000, ONE, ONE, 0, P2000, UR.FILL),
        bal(0, USDC, 1_400_000, 0, BR.FILL),
        bal(1, ETH, ONE, 0, BR.FILL),
        bal(1, USDC, usdc(3000) - 2_001_000_000, 0, BR.FILL),
        bal(2, ETH, 0, 0, BR.FILL),
        bal(2, USDC, 1_999_600_000, 0, BR.FILL),
      ]);
      const s = h.state();
      expect(s.markets[0].mark_price_units).toBe(P2000);
      expect(s.markets[0].bids).toEqual([]);
      expect(s.markets[0].asks).toEqual([]);
      expect([s.next_order_id, s.next_fill_id, s.next_priority_seq]).toEqual([3, 2, 2]);
    });

    it('partial fills: maker stays partially filled; a taker remainder rests with what it keeps locked', () => {
      const h = make();
      h.deposit(2, ETH, ONE);
      h.deposit(1, USDC, usdc(3000));
      h.deposit(3, USDC, usdc(3000));
      h.limit(2, ASK, P2000, ONE);
      expect(h.limit(1, BID, P2000, 400_000)).toEqual([
        acc(K.PLACE, 1, 2),
        fil(1, ETH_USDC, 2, 1, 1, 2, BID, P2000, 400_000, 400_000, 160_000),
        upd(1, 2, ETH_USDC, ASK, S.PARTIALLY_FILLED, P2000, ONE, 400_000, 600_000, P2000, UR.FILL),
        upd(2, 1, ETH_USDC, BID, S.FILLED, P2000, 400_000, 400_000, 0, P2000, UR.FILL),
        bal(0, USDC, 560_000, 0, BR.FILL),
        bal(1, ETH, 400_000, 0, BR.FILL),
        bal(1, USDC, usdc(3000) - 800_400_000, 0, BR.FILL),
        bal(2, ETH, 0, 600_000, BR.FILL),
        bal(2, USDC, 799_840_000, 0, BR.FILL),
      ]);
      // Lock 2000 + 1 = 2001 USDC; pays 1200 + 0.6; keeps 800.4 for the 0.4 that rests.
      expect(h.limit(3, BID, P2000, ONE)).toEqual([
        acc(K.PLACE, 3, 3),
        fil(2, ETH_USDC, 3, 1, 3, 2, BID, P2000, 600_000, 600_000, 240_000),
        upd(1, 2, ETH_USDC, ASK, S.FILLED, P2000, ONE, ONE, 0, P2000, UR.FILL),
        upd(3, 3, ETH_USDC, BID, S.PARTIALLY_FILLED, P2000, ONE, 600_000, 400_000, P2000, UR.PLACED),
        bal(0, USDC, 1_400_000, 0, BR.FILL),
        bal(2, ETH, 0, 0, BR.FILL),
        bal(2, USDC, 1_999_600_000, 0, BR.FILL),
        bal(3, ETH, 600_000, 0, BR.FILL),
        bal(3, USDC, usdc(3000) - 2_001_000_000, 800_400_000, BR.FILL),
      ]);
      expect(h.state().markets[0].bids).toEqual([{
        order_id: 3, account: 3, side: BID, tif: Tif.GTC, price_units: P2000, quantity_units: ONE,
        filled_units: 600_000, remaining_units: 400_000, locked_units: 800_400_000, priority_seq: 2, client_order_id: '',
        last_fill_price_units: P2000,
      }]);
    });

    it('price-time priority: best price first, FIFO within a price', () => {
      const h = make({ maker: 0, taker: 0 });
      for (const a of [2, 3, 4]) h.deposit(a, ETH, ONE);
      h.deposit(1, USDC, usdc(5000));
      h.limit(2, ASK, 2_001_000_000, 300_000); // id 1
      h.limit(3, ASK, P2000, 300_000); // id 2
      h.limit(4, ASK, P2000, 300_000); // id 3
      expect(h.state().markets[0].asks.map((o) => [o.order_id, o.priority_seq])).toEqual([[2, 2], [3, 3], [1, 1]]);
      const events = h.limit(1, BID, 2_001_000_000, 750_000, { tif: Tif.IOC });
      expect(events.filter((e) => e.type === 'fill')).toEqual([
        fil(1, ETH_USDC, 4, 2, 1, 3, BID, P2000, 300_000, 0, 0),
        fil(2, ETH_USDC, 4, 3, 1, 4, BID, P2000, 300_000, 0, 0),
        fil(3, ETH_USDC, 4, 1, 1, 2, BID, 2_001_000_000, 150_000, 0, 0),
      ]);
      expect(h.balance(1, USDC)).toEqual([usdc(5000) - usdc(1200) - 300_150_000, 0]);
      expect(h.state().markets[0].asks.map((o) => [o.order_id, o.remaining_units])).toEqual([[1, 150_000]]);
      expect(h.state().markets[0].mark_price_units).toBe(2_001_000_000);
    });

    it('bids: highest first; a taker ask sweeps bids down to its limit', () => {
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, ETH, ONE);
      h.limit(1, BID, 1_999_000_000, 100_000); // id 1
      h.limit(1, BID, 2_001_000_000, 100_000); // id 2
      h.limit(1, BID, P2000, 100_000); // id 3
      const events = h.limit(2, ASK, P2000, ONE, { tif: Tif.IOC });
      expect(events.filter((e) => e.type === 'fill').map((e) => e.type === 'fill' && [e.maker_order_id, e.price_units]))
        .toEqual([[2, 2_001_000_000], [3, P2000]]);
      expect(events.at(-5)).toEqual(upd(4, 2, ETH_USDC, ASK, S.CANCELLED, P2000, ONE, 200_000, 0, P2000, UR.UNFILLED_REMAINDER));
    });
  });

  describe('fees', () => {
    it('negative maker fee: the maker gets a rebate out of the taker fee; fee account keeps the rest', () => {
      const h = make({ maker: -2, taker: 5 });
      h.deposit(2, ETH, ONE);
      h.deposit(1, USDC, usdc(3000));
      h.limit(2, ASK, P2000, ONE);
      expect(h.limit(1, BID, P2000, ONE)).toEqual([
        acc(K.PLACE, 1, 2),
        fil(1, ETH_USDC, 2, 1, 1, 2, BID, P2000, ONE, 1_000_000, -400_000),
        upd(1, 2, ETH_USDC, ASK, S.FILLED, P2000, ONE, ONE, 0, P2000, UR.FILL),
        upd(2, 1, ETH_USDC, BID, S.FILLED, P2000, ONE, ONE, 0, P2000, UR.FILL),
        bal(0, USDC, 600_000, 0, BR.FILL),
        bal(1, ETH, ONE, 0, BR.FILL),
        bal(1, USDC, usdc(3000) - 2_001_000_000, 0, BR.FILL),
        bal(2, ETH, 0, 0, BR.FILL),
        bal(2, USDC, 2_000_400_000, 0, BR.FILL),
      ]);
    });

    it('negative maker fee on a maker bid: rebate credited, its fee reserve released', () => {
      const h = make({ maker: -2, taker: 5 });
      h.deposit(3, USDC, usdc(3000));
      h.deposit(4, ETH, ONE);
      h.limit(3, BID, P2000, ONE); // locks 2001
      expect(h.limit(4, ASK, P2000, ONE)).toEqual([
        acc(K.PLACE, 4, 2),
        fil(1, ETH_USDC, 2, 1, 4, 3, ASK, P2000, ONE, 1_000_000, -400_000),
        upd(1, 3, ETH_USDC, BID, S.FILLED, P2000, ONE, ONE, 0, P2000, UR.FILL),
        upd(2, 4, ETH_USDC, ASK, S.FILLED, P2000, ONE, ONE, 0, P2000, UR.FILL),
        bal(0, USDC, 600_000, 0, BR.FILL),
        bal(3, ETH, ONE, 0, BR.FILL),
        bal(3, USDC, usdc(1000) + 400_000, 0, BR.FILL),
        bal(4, ETH, 0, 0, BR.FILL),
        bal(4, USDC, 1_999_000_000, 0, BR.FILL),
      ]);
    });

    it('a rebate that rounds to zero is reported as maker fee 0 (not -0)', () => {
      const h = make({ maker: -1, taker: 5 });
      h.deposit(2, ETH, ONE);
      h.deposit(1, USDC, usdc(10));
      // 0.0001 ETH at 20.00: n = 2000 units; rebate floor(2000 x 1 / 1e4) = 0; taker fee ceil(1) = 1.
      h.limit(2, ASK, 20_000_000, 100);
      const f = h.limit(1, BID, 20_000_000, 100).find((e) => e.type === 'fill');
      expect(f).toEqual(fil(1, ETH_USDC, 2, 1, 1, 2, BID, 20_000_000, 100, 1, 0));
      expect(Object.is(f?.type === 'fill' ? f.maker_fee_units : NaN, 0)).toBe(true);
    });

    it('taker and maker fees round up (buyer taker)', () => {
      // n = 2000.01 x 0.0001 = 200_001 units; taker ceil(100.0005) = 101; maker ceil(40.0002) = 41.
      const h = make({ maker: 2, taker: 5 });
      h.deposit(2, ETH, 100);
      h.deposit(1, USDC, 200_102);
      h.limit(2, ASK, 2_000_010_000, 100);
      expect(h.limit(1, BID, 2_000_010_000, 100)).toEqual([
        acc(K.PLACE, 1, 2),
        fil(1, ETH_USDC, 2, 1, 1, 2, BID, 2_000_010_000, 100, 101, 41),
        upd(1, 2, ETH_USDC, ASK, S.FILLED, 2_000_010_000, 100, 100, 0, 2_000_010_000, UR.FILL),
        upd(2, 1, ETH_USDC, BID, S.FILLED, 2_000_010_000, 100, 100, 0, 2_000_010_000, UR.FILL),
        bal(0, USDC, 142, 0, BR.FILL),
        bal(1, ETH, 100, 0, BR.FILL),
        bal(1, USDC, 0, 0, BR.FILL),
        bal(2, ETH, 0, 0, BR.FILL),
        bal(2, USDC, 199_960, 0, BR.FILL),
      ]);
    });

    it('taker and maker fees round up (seller taker); the maker bid pays its fee from its lock', () => {
      const h = make({ maker: 2, taker: 5 });
      h.deposit(1, USDC, 200_102);
      h.deposit(2, ETH, 100);
      h.limit(1, BID, 2_000_010_000, 100); // locks 200_001 + 101
      expect(h.limit(2, ASK, 2_000_010_000, 100)).toEqual([
        acc(K.PLACE, 2, 2),
        fil(1, ETH_USDC, 2, 1, 2, 1, ASK, 2_000_010_000, 100, 101, 41),
        upd(1, 1, ETH_USDC, BID, S.FILLED, 2_000_010_000, 100, 100, 0, 2_000_010_000, UR.FILL),
        upd(2, 2, ETH_USDC, ASK, S.FILLED, 2_000_010_000, 100, 100, 0, 2_000_010_000, UR.FILL),
        bal(0, USDC, 142, 0, BR.FILL),
        bal(1, ETH, 100, 0, BR.FILL),
        bal(1, USDC, 60, 0, BR.FILL),
        bal(2, ETH, 0, 0, BR.FILL),
        bal(2, USDC, 199_900, 0, BR.FILL),
      ]);
    });

    it('a buyer paying from a lock never pays more fee than the lock keeps beyond its notional', () => {
      // Lock: n = 400_002, fee ceil(200.001) = 201. Two fills of n = 200_001 each: ceil(100.0005)
      // = 101 each would be 202; the second is capped at 400_203 - 200_102 - 200_001 = 100.
      const h = make({ maker: 0, taker: 5 });
      h.deposit(2, ETH, 100);
      h.deposit(3, ETH, 100);
      h.deposit(1, USDC, 400_203);
      h.limit(2, ASK, 2_000_010_000, 100);
      h.limit(3, ASK, 2_000_010_000, 100);
      const events = h.limit(1, BID, 2_000_010_000, 200);
      expect(events.filter((e) => e.type === 'fill')).toEqual([
        fil(1, ETH_USDC, 3, 1, 1, 2, BID, 2_000_010_000, 100, 101, 0),
        fil(2, ETH_USDC, 3, 2, 1, 3, BID, 2_000_010_000, 100, 100, 0),
      ]);
      expect(h.balance(1, USDC)).toEqual([0, 0]);
      expect(h.balance(0, USDC)).toEqual([201, 0]);
    });

    it('a rebate never exceeds the taker fee actually charged (after the lock cap)', () => {
      // Lock: n = 600_003, fee ceil(300.0015) = 301. Three fills of n = 200_001: ft 101, 101, then
      // capped at 600_304 - 2 x 200_102 - 200_001 = 99. Rebates floor(100.0005) = 100, 100, and
      // min(100, 99) = 99 on the third, so that fill's taker fee pays for its rebate exactly.
      const h = make({ maker: -5, taker: 5 });
      for (const a of [2, 3, 4]) h.deposit(a, ETH, 100);
      h.deposit(1, USDC, 600_304);
      for (const a of [2, 3, 4]) h.limit(a, ASK, 2_000_010_000, 100);
      const events = h.limit(1, BID, 2_000_010_000, 300);
      expect(events.filter((e) => e.type === 'fill')).toEqual([
        fil(1, ETH_USDC, 4, 1, 1, 2, BID, 2_000_010_000, 100, 101, -100),
        fil(2, ETH_USDC, 4, 2, 1, 3, BID, 2_000_010_000, 100, 101, -100),
        fil(3, ETH_USDC, 4, 3, 1, 4, BID, 2_000_010_000, 100, 99, -99),
      ]);
      expect(h.balance(1, USDC)).toEqual([0, 0]);
      expect(h.balance(0, USDC)).toEqual([2, 0]);
      expect([h.balance(2, USDC), h.balance(3, USDC), h.balance(4, USDC)]).toEqual([[200_101, 0], [200_101, 0], [200_100, 0]]);
    });

    it('a maker bid placed at zero fees pays no maker fee after fees rise (capped by its lock)', () => {
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, USDC, usdc(2000));
      h.deposit(2, ETH, ONE);
      h.limit(1, BID, P2000, ONE); // locks exactly 2000
      expect(h.setFees(NO_MARKET, 2, 5)).toEqual([acc(K.SET_FEES, 0, 0)]);
      const events = h.limit(2, ASK, P2000, ONE);
      expect(events[1]).toEqual(fil(1, ETH_USDC, 2, 1, 2, 1, ASK, P2000, ONE, 1_000_000, 0));
      expect(h.balance(1, USDC)).toEqual([0, 0]);
      expect(h.balance(2, USDC)).toEqual([1_999_000_000, 0]);
      expect(h.balance(0, USDC)).toEqual([1_000_000, 0]);
    });

    it('per-market fee overrides apply to that market only; validation', () => {
      const h = make({ maker: 0, taker: 0 });
      expect(h.setFees(BTC_USDC, -3, 3)).toEqual([acc(K.SET_FEES, 0, 0)]);
      expect(h.setFees(NO_MARKET, 1, 0)).toEqual([rej(K.SET_FEES, 0, RJ.FEES_INVALID)]);
      expect(h.setFees(NO_MARKET, -4, 3)).toEqual([rej(K.SET_FEES, 0, RJ.FEES_INVALID)]);
      expect(h.setFees(NO_MARKET, 0, 10_001)).toEqual([rej(K.SET_FEES, 0, RJ.FEES_INVALID)]);
      expect(h.setFees(NO_MARKET, -10_001, 10_001)).toEqual([rej(K.SET_FEES, 0, RJ.FEES_INVALID)]);
      expect(h.setFees(5, 1, 2)).toEqual([rej(K.SET_FEES, 0, RJ.MARKET_UNKNOWN)]);
      expect(h.setFees(NO_MARKET, -10_000, 10_000)).toEqual([acc(K.SET_FEES, 0, 0)]);
      const s = h.state();
      expect(s.fees).toEqual({ maker_fee_bps: -10_000, taker_fee_bps: 10_000 });
      expect(s.markets.map((m) => m.fees)).toEqual([null, { maker_fee_bps: -3, taker_fee_bps: 3 }]);
      // BTC-USDC uses its override: 0.001 BTC at 60000 = 60 USDC; taker 3 bps = 0.018; rebate 0.018.
      h.deposit(1, BTC, 1_000);
      h.deposit(2, USDC, usdc(100));
      h.limit(1, ASK, 60_000_000_000, 1_000, { market: BTC_USDC });
      const events = h.limit(2, BID, 60_000_000_000, 1_000, { market: BTC_USDC });
      expect(events[1]).toEqual(fil(1, BTC_USDC, 2, 1, 2, 1, BID, 60_000_000_000, 1_000, 18_000, -18_000));
      expect(h.balance(0, USDC)).toEqual([0, 0]);
    });
  });

  describe('market orders', () => {
    it('a market bid takes the largest affordable lot multiple, then stops: insufficient_balance', () => {
      const h = make({ maker: 0, taker: 5 });
      h.deposit(2, ETH, ONE);
      h.deposit(1, USDC, 1_000_500_000);
      h.limit(2, ASK, P2000, ONE);
      // 0.5 ETH costs 1000 + 0.5 fee = exactly the available 1000.5.
      expect(h.market(1, BID, ONE)).toEqual([
        acc(K.PLACE, 1, 2),
        fil(1, ETH_USDC, 2, 1, 1, 2, BID, P2000, 500_000, 500_000, 0),
        upd(1, 2, ETH_USDC, ASK, S.PARTIALLY_FILLED, P2000, ONE, 500_000, 500_000, P2000, UR.FILL),
        upd(2, 1, ETH_USDC, BID, S.CANCELLED, 0, ONE, 500_000, 0, P2000, UR.INSUFFICIENT_BALANCE),
        bal(0, USDC, 500_000, 0, BR.FILL),
        bal(1, ETH, 500_000, 0, BR.FILL),
        bal(1, USDC, 0, 0, BR.FILL),
        bal(2, ETH, 0, 500_000, BR.FILL),
        bal(2, USDC, usdc(1000), 0, BR.FILL),
      ]);
      // Nothing left to pay with: stops before the first fill.
      expect(h.market(1, BID, 100)).toEqual([
        acc(K.PLACE, 1, 3),
        upd(3, 1, ETH_USDC, BID, S.CANCELLED, 0, 100, 0, 0, 0, UR.INSUFFICIENT_BALANCE),
      ]);
      // No asks at all: unfilled_remainder, no balance change.
      expect(h.market(1, BID, 10, { market: BTC_USDC })).toEqual([
        acc(K.PLACE, 1, 4),
        upd(4, 1, BTC_USDC, BID, S.CANCELLED, 0, 10, 0, 0, 0, UR.UNFILLED_REMAINDER),
      ]);
    });

    it('a market bid meeting its own ask cancels it (self-trade prevention) and takes the next one', () => {
      // 3 USDC buys 50 units at 60000. The account's own ask comes first in price-time priority:
      // expire_maker (the default) cancels it, then the bid takes what it can pay of the second.
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, BTC, 100);
      h.deposit(2, BTC, 100);
      h.deposit(1, USDC, 3_000_000);
      h.limit(1, ASK, 60_000_000_000, 100, { market: BTC_USDC }); // id 1
      h.limit(2, ASK, 60_000_000_000, 100, { market: BTC_USDC }); // id 2
      expect(h.market(1, BID, 100, { market: BTC_USDC })).toEqual([
        acc(K.PLACE, 1, 3),
        upd(1, 1, BTC_USDC, ASK, S.CANCELLED, 60_000_000_000, 100, 0, 0, 0, UR.SELF_TRADE_PREVENTED),
        fil(1, BTC_USDC, 3, 2, 1, 2, BID, 60_000_000_000, 50, 0, 0),
        upd(2, 2, BTC_USDC, ASK, S.PARTIALLY_FILLED, 60_000_000_000, 100, 50, 50, 60_000_000_000, UR.FILL),
        upd(3, 1, BTC_USDC, BID, S.CANCELLED, 0, 100, 50, 0, 60_000_000_000, UR.INSUFFICIENT_BALANCE),
        bal(1, BTC, 150, 0, BR.FILL),
        bal(1, USDC, 0, 0, BR.FILL),
        bal(2, BTC, 0, 50, BR.FILL),
        bal(2, USDC, 3_000_000, 0, BR.FILL),
      ]);
      expect(h.state().markets[BTC_USDC].asks.map((o) => [o.order_id, o.remaining_units])).toEqual([[2, 50]]);
    });

    it('a market ask sells into bids at any price and cancels what is left', () => {
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, USDC, usdc(1000));
      h.deposit(2, ETH, ONE);
      h.limit(1, BID, 100_000_000, 200_000); // 100 USDC
      expect(h.market(2, ASK, 300_000)).toEqual([
        acc(K.PLACE, 2, 2),
        fil(1, ETH_USDC, 2, 1, 2, 1, ASK, 100_000_000, 200_000, 0, 0),
        upd(1, 1, ETH_USDC, BID, S.FILLED, 100_000_000, 200_000, 200_000, 0, 100_000_000, UR.FILL),
        upd(2, 2, ETH_USDC, ASK, S.CANCELLED, 0, 300_000, 200_000, 0, 100_000_000, UR.UNFILLED_REMAINDER),
        bal(1, ETH, 200_000, 0, BR.FILL),
        bal(1, USDC, usdc(980), 0, BR.FILL),
        bal(2, ETH, 800_000, 0, BR.FILL),
        bal(2, USDC, usdc(20), 0, BR.FILL),
      ]);
    });

    it('market FOK bid: INSUFFICIENT_BALANCE when the whole fill is unaffordable (nonce kept)', () => {
      const h = make({ maker: 0, taker: 5 });
      h.deposit(2, ETH, ONE);
      h.deposit(1, USDC, 1_000_500_000);
      h.limit(2, ASK, P2000, ONE);
      expect(h.market(1, BID, 500_100, { tif: Tif.FOK, nonce: 1 })).toEqual([rej(K.PLACE, 1, RJ.INSUFFICIENT_BALANCE)]);
      // Deeper than the book: accepted and cancelled (the depth check comes first).
      expect(h.market(1, BID, 2 * ONE, { tif: Tif.FOK, nonce: 1 })).toEqual([
        acc(K.PLACE, 1, 2),
        upd(2, 1, ETH_USDC, BID, S.CANCELLED, 0, 2 * ONE, 0, 0, 0, UR.UNFILLED_REMAINDER),
      ]);
      const events = h.market(1, BID, 500_000, { tif: Tif.FOK, nonce: 2 });
      expect(events.slice(0, 2)).toEqual([acc(K.PLACE, 1, 3), fil(1, ETH_USDC, 3, 1, 1, 2, BID, P2000, 500_000, 500_000, 0)]);
      expect(events[3]).toEqual(upd(3, 1, ETH_USDC, BID, S.FILLED, 0, 500_000, 500_000, 0, P2000, UR.FILL));
      expect(h.balance(1, USDC)).toEqual([0, 0]);
    });

    it('market orders must be ioc/fok and carry no price', () => {
      const h = make();
      h.deposit(1, USDC, usdc(100));
      expect(h.market(1, BID, 100, { tif: Tif.GTC })).toEqual([rej(K.PLACE, 1, RJ.MARKET_ORDER_TIF)]);
      expect(h.market(1, BID, 100, { tif: Tif.POST_ONLY })).toEqual([rej(K.PLACE, 1, RJ.MARKET_ORDER_TIF)]);
      expect(h.apply(h.placeRequest(1, BID, OrderType.MARKET, P2000, 100))).toEqual([rej(K.PLACE, 1, RJ.MARKET_ORDER_WITH_PRICE)]);
      expect(h.apply(h.placeRequest(1, BID, OrderType.MARKET, -10_000, 100))).toEqual([rej(K.PLACE, 1, RJ.MARKET_ORDER_WITH_PRICE)]);
      // tif is checked before price.
      expect(h.apply(h.placeRequest(1, BID, OrderType.MARKET, P2000, 100, { tif: Tif.GTC }))).toEqual([rej(K.PLACE, 1, RJ.MARKET_ORDER_TIF)]);
    });
  });

  describe('time in force', () => {
    it('FOK that cannot fill completely: accepted and cancelled, no state change but the nonce and id', () => {
      const h = make();
      h.deposit(2, ETH, ONE);
      h.deposit(1, USDC, usdc(5000));
      h.limit(2, ASK, P2000, 500_000);
      const before = h.state();
      expect(h.limit(1, BID, P2000, ONE, { tif: Tif.FOK })).toEqual([
        acc(K.PLACE, 1, 2),
        upd(2, 1, ETH_USDC, BID, S.CANCELLED, P2000, ONE, 0, 0, 0, UR.UNFILLED_REMAINDER),
      ]);
      const after = h.state();
      expect(after.next_order_id).toBe(before.next_order_id + 1);
      expect(after.accounts.find((a) => a.account === 1)?.nonce_high_water).toBe(1);
      expect({ ...after, next_order_id: 0, accounts: after.accounts.map((a) => a.balances) })
        .toEqual({ ...before, next_order_id: 0, accounts: before.accounts.map((a) => a.balances) });
      // Limit FOK counts only crossing depth.
      expect(h.limit(1, BID, 1_999_990_000, 100, { tif: Tif.FOK })[1]).toMatchObject({ status: S.CANCELLED, reason: UR.UNFILLED_REMAINDER });
      // A FOK that can fill does.
      const events = h.limit(1, BID, P2000, 500_000, { tif: Tif.FOK });
      expect(events.at(-6)).toEqual(upd(4, 1, ETH_USDC, BID, S.FILLED, P2000, 500_000, 500_000, 0, P2000, UR.FILL));
      // Market FOK ask with no bids.
      h.deposit(3, ETH, ONE);
      expect(h.market(3, ASK, 100, { tif: Tif.FOK })).toEqual([
        acc(K.PLACE, 3, 5),
        upd(5, 3, ETH_USDC, ASK, S.CANCELLED, 0, 100, 0, 0, 0, UR.UNFILLED_REMAINDER),
      ]);
    });

    it('IOC: the remainder is cancelled and its lock released', () => {
      const h = make();
      h.deposit(2, ETH, 500_000);
      h.deposit(1, USDC, usdc(5000));
      h.limit(2, ASK, P2000, 500_000);
      expect(h.limit(1, BID, 2_000_010_000, ONE, { tif: Tif.IOC })).toEqual([
        acc(K.PLACE, 1, 2),
        fil(1, ETH_USDC, 2, 1, 1, 2, BID, P2000, 500_000, 500_000, 200_000),
        upd(1, 2, ETH_USDC, ASK, S.FILLED, P2000, 500_000, 500_000, 0, P2000, UR.FILL),
        upd(2, 1, ETH_USDC, BID, S.CANCELLED, 2_000_010_000, ONE, 500_000, 0, P2000, UR.UNFILLED_REMAINDER),
        bal(0, USDC, 700_000, 0, BR.FILL),
        bal(1, ETH, 500_000, 0, BR.FILL),
        bal(1, USDC, usdc(5000) - 1_000_500_000, 0, BR.FILL),
        bal(2, ETH, 0, 0, BR.FILL),
        bal(2, USDC, 999_800_000, 0, BR.FILL),
      ]);
      // IOC with nothing to take: no balance events at all.
      expect(h.limit(1, BID, P2000, 100, { tif: Tif.IOC })).toEqual([
        acc(K.PLACE, 1, 3),
        upd(3, 1, ETH_USDC, BID, S.CANCELLED, P2000, 100, 0, 0, 0, UR.UNFILLED_REMAINDER),
      ]);
    });

    it('post_only that would cross is rejected; otherwise it rests', () => {
      const h = make();
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, ETH, 2 * ONE);
      h.limit(2, ASK, P2000, ONE); // id 1
      expect(h.limit(1, BID, P2000, 100, { tif: Tif.POST_ONLY })).toEqual([rej(K.PLACE, 1, RJ.POST_ONLY_WOULD_TAKE)]);
      expect(h.limit(1, BID, 2_010_000_000, 100, { tif: Tif.POST_ONLY })).toEqual([rej(K.PLACE, 1, RJ.POST_ONLY_WOULD_TAKE)]);
      expect(h.limit(1, BID, 1_999_990_000, 100, { tif: Tif.POST_ONLY }).slice(0, 2)).toEqual([
        acc(K.PLACE, 1, 2),
        upd(2, 1, ETH_USDC, BID, S.OPEN, 1_999_990_000, 100, 0, 100, 0, UR.PLACED),
      ]);
      expect(h.limit(2, ASK, 1_999_990_000, 100, { tif: Tif.POST_ONLY })).toEqual([rej(K.PLACE, 2, RJ.POST_ONLY_WOULD_TAKE)]);
      expect(h.limit(2, ASK, P2000, 100, { tif: Tif.POST_ONLY })[1]).toEqual(
        upd(3, 2, ETH_USDC, ASK, S.OPEN, P2000, 100, 0, 100, 0, UR.PLACED));
      expect(h.state().markets[0].asks.map((o) => o.order_id)).toEqual([1, 3]);
    });
  });

  describe('validation', () => {
    const base = (h: Harness): ReturnType<Harness['placeRequest']> => h.placeRequest(1, BID, OrderType.LIMIT, P2000, 100_000);
    const cases: [string, (r: ReturnType<Harness['placeRequest']>) => void, number][] = [
      ['side 2', (r) => { r.side = 2; }, RJ.SIDE_INVALID],
      ['side -1', (r) => { r.side = -1; }, RJ.SIDE_INVALID],
      ['order_type 2', (r) => { r.order_type = 2; }, RJ.ORDER_TYPE_INVALID],
      ['tif 4', (r) => { r.tif = 4; }, RJ.TIF_INVALID],
      ['tif -1', (r) => { r.tif = -1; }, RJ.TIF_INVALID],
      ['quantity 0', (r) => { r.quantity_units = 0; }, RJ.QUANTITY_NOT_POSITIVE],
      ['quantity -100', (r) => { r.quantity_units = -100; }, RJ.QUANTITY_NOT_POSITIVE],
      ['quantity off lot', (r) => { r.quantity_units = 150; }, RJ.QUANTITY_NOT_LOT_MULTIPLE],
      ['price 0', (r) => { r.price_units = 0; }, RJ.PRICE_NOT_POSITIVE],
      ['price negative', (r) => { r.price_units = -10_000; }, RJ.PRICE_NOT_POSITIVE],
      ['price off tick', (r) => { r.price_units = 2_000_005_000; }, RJ.PRICE_NOT_TICK_MULTIPLE],
      ['notional too large', (r) => { r.price_units = 900_000_000_000_000; r.quantity_units = 100_000_000; }, RJ.NOTIONAL_TOO_LARGE],
      // n = 9.003e15 fits, n + taker fee (5 bps) does not.
      ['notional + fee too large', (r) => { r.price_units = 9_003_000_000_000_000; r.quantity_units = ONE; }, RJ.NOTIONAL_TOO_LARGE],
      ['client id too long', (r) => { r.client_order_id = 'x'.repeat(37); }, RJ.CLIENT_ORDER_ID_INVALID],
      ['client id with a space', (r) => { r.client_order_id = 'a b'; }, RJ.CLIENT_ORDER_ID_INVALID],
      ['client id non-ASCII', (r) => { r.client_order_id = 'é'; }, RJ.CLIENT_ORDER_ID_INVALID],
      ['unknown market', (r) => { r.market = 2; }, RJ.MARKET_UNKNOWN],
      ['market -1', (r) => { r.market = NO_MARKET; }, RJ.MARKET_UNKNOWN],
      ['unknown account', (r) => { r.account = 16; }, RJ.ACCOUNT_UNKNOWN],
      ['account 0', (r) => { r.account = 0; }, RJ.ACCOUNT_UNKNOWN],
      ['nonce 0', (r) => { r.nonce = 0; }, RJ.NONCE_NOT_ABOVE_HIGH_WATER],
      // Order of checks.
      ['bad side before bad quantity', (r) => { r.side = 3; r.quantity_units = 0; }, RJ.SIDE_INVALID],
      ['bad lot before bad tick', (r) => { r.quantity_units = 150; r.price_units = 1; }, RJ.QUANTITY_NOT_LOT_MULTIPLE],
      ['nonce before market', (r) => { r.nonce = 0; r.market = 9; }, RJ.NONCE_NOT_ABOVE_HIGH_WATER],
      ['market before side', (r) => { r.market = 9; r.side = 9; }, RJ.MARKET_UNKNOWN],
      ['client id after price', (r) => { r.client_order_id = '!'; r.price_units = 3; }, RJ.PRICE_NOT_TICK_MULTIPLE],
      ['balance after client id', (r) => { r.client_order_id = '!'; r.quantity_units = 100 * ONE; }, RJ.CLIENT_ORDER_ID_INVALID],
    ];
    it.each(cases)('%s', (_label, mutate, reason) => {
      const h = make();
      h.deposit(1, USDC, usdc(1000));
      const r = base(h);
      mutate(r);
      expect(h.apply(r)).toEqual([rej(K.PLACE, r.account, reason)]);
      expect(h.state().next_order_id).toBe(1);
    });

    it('a 36-character client id of every allowed class is fine', () => {
      const h = make();
      h.deposit(1, USDC, usdc(1000));
      const id = 'Az09_-'.repeat(6);
      expect(h.limit(1, BID, P2000, 100, { client_order_id: id })[0]).toEqual(acc(K.PLACE, 1, 1));
      expect(h.state().markets[0].bids[0].client_order_id).toBe(id);
    });

    it('client ids are unique among the account open orders only', () => {
      const h = make();
      h.deposit(1, USDC, usdc(1000));
      h.deposit(2, USDC, usdc(1000));
      h.deposit(3, ETH, ONE);
      h.limit(1, BID, P2000, 100, { client_order_id: 'dup' });
      expect(h.limit(1, BID, 1_990_000_000, 100, { client_order_id: 'dup', market: ETH_USDC })).toEqual([rej(K.PLACE, 1, RJ.CLIENT_ORDER_ID_DUPLICATE)]);
      expect(h.limit(1, BID, 60_000_000_000, 10, { client_order_id: 'dup', market: BTC_USDC })).toEqual([rej(K.PLACE, 1, RJ.CLIENT_ORDER_ID_DUPLICATE)]);
      // Another account may use it.
      expect(h.limit(2, BID, P2000, 100, { client_order_id: 'dup' })[0]).toEqual(acc(K.PLACE, 2, 2));
      // Once filled, the id is free again.
      h.limit(3, ASK, P2000, 200);
      expect(h.limit(1, BID, P2000, 100, { client_order_id: 'dup' })[0]).toEqual(acc(K.PLACE, 1, 4));
    });

    it('open-order and level limits apply to orders that may rest', () => {
      const h = make({ maker: 0, taker: 0 }, { orders_open_per_account_max: 2, orders_open_max: 3 });
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, USDC, usdc(10000));
      h.deposit(3, USDC, usdc(10000));
      h.limit(1, BID, P2000, 100);
      h.limit(1, BID, P2000, 100);
      expect(h.limit(1, BID, P2000, 100)).toEqual([rej(K.PLACE, 1, RJ.ACCOUNT_OPEN_ORDERS_MAX)]);
      expect(h.limit(1, BID, P2000, 100, { tif: Tif.POST_ONLY })).toEqual([rej(K.PLACE, 1, RJ.ACCOUNT_OPEN_ORDERS_MAX)]);
      expect(h.limit(1, BID, P2000, 100, { tif: Tif.IOC })[0]).toEqual(acc(K.PLACE, 1, 3));
      h.limit(2, BID, P2000, 100);
      expect(h.limit(3, BID, P2000, 100)).toEqual([rej(K.PLACE, 3, RJ.ENGINE_OPEN_ORDERS_MAX)]);
      expect(h.market(3, BID, 100)[0]).toEqual(acc(K.PLACE, 3, 5));

      const g = make({ maker: 0, taker: 0 }, { price_levels_per_book_max: 2 });
      g.deposit(1, USDC, usdc(10000));
      g.deposit(2, ETH, ONE);
      g.limit(1, BID, P2000, 100);
      g.limit(1, BID, 1_990_000_000, 100);
      expect(g.limit(1, BID, 1_980_000_000, 100)).toEqual([rej(K.PLACE, 1, RJ.BOOK_LEVELS_MAX)]);
      expect(g.limit(1, BID, 1_990_000_000, 100)[0]).toEqual(acc(K.PLACE, 1, 3));
      // The other side has its own count.
      g.limit(2, ASK, 2_010_000_000, 100);
      g.limit(2, ASK, 2_020_000_000, 100);
      expect(g.limit(2, ASK, 2_030_000_000, 100)).toEqual([rej(K.PLACE, 2, RJ.BOOK_LEVELS_MAX)]);
    });

    it('DUPLICATE_NONCE: at or below the high-water mark; rejected requests do not advance it', () => {
      const h = make();
      h.deposit(1, USDC, usdc(1000));
      expect(h.limit(1, BID, P2000, 100, { nonce: 5 })[0]).toEqual(acc(K.PLACE, 1, 1));
      expect(h.limit(1, BID, P2000, 100, { nonce: 5 })).toEqual([rej(K.PLACE, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      expect(h.limit(1, BID, P2000, 100, { nonce: 4 })).toEqual([rej(K.PLACE, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      expect(h.cancel(1, 1, '', 3)).toEqual([rej(K.CANCEL, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      expect(h.withdraw(1, USDC, 1, 5)).toEqual([rej(K.WITHDRAW, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      expect(h.limit(1, BID, 3, 100, { nonce: 7 })).toEqual([rej(K.PLACE, 1, RJ.PRICE_NOT_TICK_MULTIPLE)]);
      expect(h.state().accounts[1].nonce_high_water).toBe(5);
      expect(h.cancel(1, 1, '', 7)[0]).toEqual(acc(K.CANCEL, 1, 1));
      expect(h.state().accounts[1].nonce_high_water).toBe(7);
      expect(h.cancelAll(1, NO_MARKET, 7)).toEqual([rej(K.CANCEL_ALL, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
      expect(h.amend(1, 1, P2000, 100, 6)).toEqual([rej(K.AMEND, 1, RJ.NONCE_NOT_ABOVE_HIGH_WATER)]);
    });

    it('MARKET_NOT_FOUND for unknown market indexes everywhere', () => {
      const h = make();
      h.deposit(1, USDC, usdc(1000));
      expect(h.limit(1, BID, P2000, 100, { market: 2 })).toEqual([rej(K.PLACE, 1, RJ.MARKET_UNKNOWN)]);
      expect(h.cancelAll(1, 2)).toEqual([rej(K.CANCEL_ALL, 1, RJ.MARKET_UNKNOWN)]);
      expect(h.pause(2)).toEqual([rej(K.PAUSE_MARKET, 0, RJ.MARKET_UNKNOWN)]);
      expect(h.resume(-1)).toEqual([rej(K.RESUME_MARKET, 0, RJ.MARKET_UNKNOWN)]);
      expect(h.setFees(2, 0, 0)).toEqual([rej(K.SET_FEES, 0, RJ.MARKET_UNKNOWN)]);
      expect(rej(K.PLACE, 1, RJ.MARKET_UNKNOWN).code).toBe(Code.MARKET_NOT_FOUND);
    });
  });

  describe('pause and resume', () => {
    it('pause cancels every resting order of the market in id order; new orders get MARKET_PAUSED', () => {
      const h = make();
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, ETH, ONE);
      h.limit(1, BID, 1_990_000_000, 100_000); // id 1: locks 199 + 0.0995
      h.limit(2, ASK, 2_010_000_000, 100_000); // id 2
      h.limit(1, BID, 60_000_000_000, 10, { market: BTC_USDC }); // id 3: 0.6 + 0.0003
      h.limit(1, BID, 1_980_000_000, 100_000); // id 4: 198 + 0.099
      expect(h.pause(ETH_USDC)).toEqual([
        acc(K.PAUSE_MARKET, 0, 0),
        upd(1, 1, ETH_USDC, BID, S.CANCELLED, 1_990_000_000, 100_000, 0, 0, 0, UR.MARKET_PAUSED),
        upd(2, 2, ETH_USDC, ASK, S.CANCELLED, 2_010_000_000, 100_000, 0, 0, 0, UR.MARKET_PAUSED),
        upd(4, 1, ETH_USDC, BID, S.CANCELLED, 1_980_000_000, 100_000, 0, 0, 0, UR.MARKET_PAUSED),
        bal(1, USDC, usdc(10000) - 600_300, 600_300, BR.ORDER_CANCELLED),
        bal(2, ETH, ONE, 0, BR.ORDER_CANCELLED),
      ]);
      expect(h.state().markets[0].status).toBe('paused');
      expect(h.limit(1, BID, P2000, 100)).toEqual([rej(K.PLACE, 1, RJ.MARKET_PAUSED)]);
      expect(h.pause(ETH_USDC)).toEqual([acc(K.PAUSE_MARKET, 0, 0)]);
      // The other market trades on.
      expect(h.limit(1, BID, 60_000_000_000, 10, { market: BTC_USDC })[0]).toEqual(acc(K.PLACE, 1, 5));
      expect(h.resume(ETH_USDC)).toEqual([acc(K.RESUME_MARKET, 0, 0)]);
      expect(h.resume(ETH_USDC)).toEqual([acc(K.RESUME_MARKET, 0, 0)]);
      expect(h.state().markets[0].status).toBe('active');
      expect(h.limit(1, BID, P2000, 100)[0]).toEqual(acc(K.PLACE, 1, 6));
    });
  });

  describe('cancel', () => {
    it('by id, by client id, by both; only the account own open orders', () => {
      const h = make();
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, USDC, usdc(10000));
      h.limit(1, BID, P2000, 100_000, { client_order_id: 'c1' }); // id 1, lock 200.1
      h.limit(1, BID, P2000, 100_000, { client_order_id: 'c2' }); // id 2
      h.limit(2, BID, P2000, 100_000, { client_order_id: 'c1' }); // id 3
      expect(h.cancel(1, 3)).toEqual([rej(K.CANCEL, 1, RJ.ORDER_NOT_FOUND)]);
      expect(h.cancel(1, 99)).toEqual([rej(K.CANCEL, 1, RJ.ORDER_NOT_FOUND)]);
      expect(h.cancel(1, 0, '')).toEqual([rej(K.CANCEL, 1, RJ.ORDER_NOT_FOUND)]);
      expect(h.cancel(1, 0, 'nope')).toEqual([rej(K.CANCEL, 1, RJ.ORDER_NOT_FOUND)]);
      expect(h.cancel(1, 1, 'c2')).toEqual([rej(K.CANCEL, 1, RJ.ORDER_NOT_FOUND)]);
      expect(rej(K.CANCEL, 1, RJ.ORDER_NOT_FOUND).code).toBe(Code.NOT_FOUND);
      expect(h.cancel(1, 0, 'c1')).toEqual([
        acc(K.CANCEL, 1, 1),
        upd(1, 1, ETH_USDC, BID, S.CANCELLED, P2000, 100_000, 0, 0, 0, UR.USER_CANCEL),
        bal(1, USDC, usdc(10000) - 200_100_000, 200_100_000, BR.ORDER_CANCELLED),
      ]);
      expect(h.cancel(1, 2, 'c2')[0]).toEqual(acc(K.CANCEL, 1, 2));
      expect(h.cancel(1, 2)).toEqual([rej(K.CANCEL, 1, RJ.ORDER_NOT_FOUND)]);
      expect(h.balance(1, USDC)).toEqual([usdc(10000), 0]);
      expect(h.state().markets[0].bids.map((o) => o.order_id)).toEqual([3]);
    });

    it('order updates carry the order latest fill price, also when cancelled', () => {
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, ETH, ONE);
      h.limit(1, BID, P2000, 200_000); // id 1
      h.limit(2, ASK, P2000, 100_000); // id 2 fills half of id 1
      expect(h.cancel(1, 1)).toEqual([
        acc(K.CANCEL, 1, 1),
        upd(1, 1, ETH_USDC, BID, S.CANCELLED, P2000, 200_000, 100_000, 0, P2000, UR.USER_CANCEL),
        bal(1, USDC, usdc(9800), 0, BR.ORDER_CANCELLED),
      ]);
    });
  });

  describe('amend', () => {
    it('same price, smaller quantity keeps the queue place and re-sets the lock; larger loses it', () => {
      const h = make();
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, USDC, usdc(10000));
      h.limit(1, BID, P2000, 300_000); // id 1, seq 1, lock 600.3
      h.limit(2, BID, P2000, 300_000); // id 2, seq 2
      expect(h.amend(1, 1, P2000, 200_000)).toEqual([
        acc(K.AMEND, 1, 1),
        upd(1, 1, ETH_USDC, BID, S.OPEN, P2000, 200_000, 0, 200_000, 0, UR.AMENDED),
        bal(1, USDC, usdc(10000) - 400_200_000, 400_200_000, BR.ORDER_PLACED),
      ]);
      const seq = (): number[][] => h.state().markets[0].bids.map((o) => [o.order_id, o.priority_seq, o.locked_units]);
      expect(seq()).toEqual([[1, 1, 400_200_000], [2, 2, 600_300_000]]);
      // Same quantity: still keeps its place.
      expect(h.amend(1, 1, P2000, 200_000)).toEqual([
        acc(K.AMEND, 1, 1),
        upd(1, 1, ETH_USDC, BID, S.OPEN, P2000, 200_000, 0, 200_000, 0, UR.AMENDED),
      ]);
      expect(seq()).toEqual([[1, 1, 400_200_000], [2, 2, 600_300_000]]);
      // Larger: back of the queue.
      expect(h.amend(1, 1, P2000, 400_000)).toEqual([
        acc(K.AMEND, 1, 1),
        upd(1, 1, ETH_USDC, BID, S.OPEN, P2000, 400_000, 0, 400_000, 0, UR.AMENDED),
        bal(1, USDC, usdc(10000) - 800_400_000, 800_400_000, BR.ORDER_PLACED),
      ]);
      expect(seq()).toEqual([[2, 2, 600_300_000], [1, 3, 800_400_000]]);
      // New price (even smaller quantity): re-enters with a new sequence number.
      h.amend(2, 2, 1_990_000_000, 100_000);
      h.amend(2, 2, P2000, 100_000);
      expect(seq()).toEqual([[1, 3, 800_400_000], [2, 5, 200_100_000]]);
      expect(h.state().next_priority_seq).toBe(6);
    });

    it('an amend that crosses fills at the maker price, then rests the rest with reason amended', () => {
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, ETH, 300_000);
      h.deposit(3, ETH, 100_000);
      h.limit(2, ASK, 2_001_000_000, 300_000); // id 1
      h.limit(1, BID, P2000, 500_000); // id 2, lock 1000
      expect(h.amend(1, 2, 2_001_000_000, 500_000)).toEqual([
        acc(K.AMEND, 1, 2),
        fil(1, ETH_USDC, 2, 1, 1, 2, BID, 2_001_000_000, 300_000, 0, 0),
        upd(1, 2, ETH_USDC, ASK, S.FILLED, 2_001_000_000, 300_000, 300_000, 0, 2_001_000_000, UR.FILL),
        upd(2, 1, ETH_USDC, BID, S.PARTIALLY_FILLED, 2_001_000_000, 500_000, 300_000, 200_000, 2_001_000_000, UR.AMENDED),
        bal(1, ETH, 300_000, 0, BR.FILL),
        bal(1, USDC, usdc(10000) - 1_000_500_000, 400_200_000, BR.FILL),
        bal(2, ETH, 0, 0, BR.FILL),
        bal(2, USDC, 600_300_000, 0, BR.FILL),
      ]);
      expect(h.state().markets[0].bids[0]).toMatchObject({ order_id: 2, priority_seq: 3, quantity_units: 500_000, remaining_units: 200_000 });
      // The original quantity becomes filled + new quantity; filling it completely reports fill.
      h.limit(3, ASK, 2_002_000_000, 100_000); // id 3
      expect(h.amend(1, 2, 2_002_000_000, 100_000)).toEqual([
        acc(K.AMEND, 1, 2),
        fil(2, ETH_USDC, 2, 3, 1, 3, BID, 2_002_000_000, 100_000, 0, 0),
        upd(3, 3, ETH_USDC, ASK, S.FILLED, 2_002_000_000, 100_000, 100_000, 0, 2_002_000_000, UR.FILL),
        upd(2, 1, ETH_USDC, BID, S.FILLED, 2_002_000_000, 400_000, 400_000, 0, 2_002_000_000, UR.FILL),
        bal(1, ETH, 400_000, 0, BR.FILL),
        bal(1, USDC, usdc(10000) - 600_300_000 - 200_200_000, 0, BR.FILL),
        bal(3, ETH, 0, 0, BR.FILL),
        bal(3, USDC, 200_200_000, 0, BR.FILL),
      ]);
    });

    it('amend to a new level on a full side is BOOK_LEVELS_MAX, unless the order is alone at its level', () => {
      const h = make({ maker: 0, taker: 0 }, { price_levels_per_book_max: 2 });
      h.deposit(1, USDC, usdc(10000));
      h.deposit(2, ETH, ONE);
      h.limit(1, BID, P2000, 100); // id 1
      h.limit(1, BID, 1_990_000_000, 100); // id 2
      h.limit(1, BID, 1_990_000_000, 100); // id 3
      // id 3 shares its level: a third level would appear.
      expect(h.amend(1, 3, 1_980_000_000, 100)).toEqual([rej(K.AMEND, 1, RJ.BOOK_LEVELS_MAX)]);
      // Checked before post_only / balance: a level limit failure wins over a balance failure.
      expect(h.amend(1, 3, 1_980_000_000, 100 * ONE)).toEqual([rej(K.AMEND, 1, RJ.BOOK_LEVELS_MAX)]);
      // Moving within existing levels is fine.
      expect(h.amend(1, 3, P2000, 100)[0]).toEqual(acc(K.AMEND, 1, 3));
      // id 2 is now alone at 1990: it may move to a new level.
      expect(h.amend(1, 2, 1_980_000_000, 100)).toEqual([
        acc(K.AMEND, 1, 2),
        upd(2, 1, ETH_USDC, BID, S.OPEN, 1_980_000_000, 100, 0, 100, 0, UR.AMENDED),
        bal(1, USDC, usdc(10000) - 200_000 - 200_000 - 198_000, 200_000 + 200_000 + 198_000, BR.ORDER_PLACED),
      ]);
      expect(h.state().markets[0].bids.map((o) => [o.order_id, o.price_units])).toEqual([[1, P2000], [3, P2000], [2, 1_980_000_000]]);
      // Asks count separately.
      h.limit(2, ASK, 2_010_000_000, 100);
      h.limit(2, ASK, 2_020_000_000, 100);
      expect(h.amend(2, 5, 2_030_000_000, 100)[0]).toEqual(acc(K.AMEND, 2, 5));
    });

    it('amend validation', () => {
      const h = make();
      h.deposit(1, USDC, usdc(1000));
      h.deposit(2, ETH, ONE);
      h.deposit(3, USDC, usdc(1000));
      h.limit(1, BID, P2000, 100_000, { tif: Tif.POST_ONLY }); // id 1, lock 200.1
      h.limit(2, ASK, 2_010_000_000, 100_000); // id 2
      expect(h.amend(3, 1, P2000, 100)).toEqual([rej(K.AMEND, 3, RJ.ORDER_NOT_FOUND)]);
      expect(h.amend(1, 0, P2000, 100)).toEqual([rej(K.AMEND, 1, RJ.ORDER_NOT_FOUND)]);
      expect(h.amend(1, 1, P2000, 0)).toEqual([rej(K.AMEND, 1, RJ.QUANTITY_NOT_POSITIVE)]);
      expect(h.amend(1, 1, P2000, 150)).toEqual([rej(K.AMEND, 1, RJ.QUANTITY_NOT_LOT_MULTIPLE)]);
      expect(h.amend(1, 1, 0, 100)).toEqual([rej(K.AMEND, 1, RJ.PRICE_NOT_POSITIVE)]);
      expect(h.amend(1, 1, 2_000_001_000, 100)).toEqual([rej(K.AMEND, 1, RJ.PRICE_NOT_TICK_MULTIPLE)]);
      expect(h.amend(1, 1, 900_000_000_000_000, 100_000_000)).toEqual([rej(K.AMEND, 1, RJ.NOTIONAL_TOO_LARGE)]);
      expect(h.amend(1, 1, 2_010_000_000, 100)).toEqual([rej(K.AMEND, 1, RJ.POST_ONLY_WOULD_TAKE)]);
      // Covered by available + current lock: 999.9 + 200.1 = 1200 (+ fee) is not enough for 0.6 ETH.
      expect(h.amend(1, 1, P2000, 600_000)).toEqual([rej(K.AMEND, 1, RJ.INSUFFICIENT_BALANCE)]);
      // 0.4997 ETH: 999.4 + 0.4997 = 999.8997 <= 1000.
      expect(h.amend(1, 1, P2000, 499_700)[0]).toEqual(acc(K.AMEND, 1, 1));
      expect(h.balance(1, USDC)).toEqual([usdc(1000) - 999_899_700, 999_899_700]);
      expect(h.amend(2, 2, 2_010_000_000, 2 * ONE)).toEqual([rej(K.AMEND, 2, RJ.INSUFFICIENT_BALANCE)]);
      expect(h.amend(2, 2, 2_010_000_000, ONE)[0]).toEqual(acc(K.AMEND, 2, 2));
      expect(h.balance(2, ETH)).toEqual([0, ONE]);
    });
  });

  describe('cancel-all', () => {
    it('cancels the account open orders, in one market or all, in id order', () => {
      const h = make();
      h.deposit(1, USDC, usdc(10000));
      h.deposit(1, ETH, ONE);
      h.deposit(2, USDC, usdc(10000));
      h.limit(1, BID, 1_990_000_000, 100_000); // id 1: 199 + 0.0995
      h.limit(1, BID, 60_000_000_000, 10, { market: BTC_USDC }); // id 2: 0.6 + 0.0003
      h.limit(1, ASK, 2_010_000_000, 100_000); // id 3
      h.limit(2, BID, 1_990_000_000, 100_000); // id 4
      expect(h.cancelAll(1, ETH_USDC)).toEqual([
        acc(K.CANCEL_ALL, 1, 0),
        upd(1, 1, ETH_USDC, BID, S.CANCELLED, 1_990_000_000, 100_000, 0, 0, 0, UR.CANCEL_ALL),
        upd(3, 1, ETH_USDC, ASK, S.CANCELLED, 2_010_000_000, 100_000, 0, 0, 0, UR.CANCEL_ALL),
        bal(1, ETH, ONE, 0, BR.ORDER_CANCELLED),
        bal(1, USDC, usdc(10000) - 600_300, 600_300, BR.ORDER_CANCELLED),
      ]);
      expect(h.cancelAll(1)).toEqual([
        acc(K.CANCEL_ALL, 1, 0),
        upd(2, 1, BTC_USDC, BID, S.CANCELLED, 60_000_000_000, 10, 0, 0, 0, UR.CANCEL_ALL),
        bal(1, USDC, usdc(10000), 0, BR.ORDER_CANCELLED),
      ]);
      expect(h.cancelAll(1)).toEqual([acc(K.CANCEL_ALL, 1, 0)]);
      expect(h.state().markets[0].bids.map((o) => o.order_id)).toEqual([4]);
    });
  });

  describe('credit', () => {
    it('CREDIT_BREACH when quoted value + the new order reaches the limit; limit 0 stops tracking', () => {
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, USDC, usdc(10000));
      h.deposit(1, ETH, ONE);
      expect(h.setCredit(1, usdc(1000), 900_000)).toEqual([acc(K.SET_CREDIT, 1, 0)]);
      expect(h.state().credit).toEqual([{ account: 1, credit_limit_units: usdc(1000), auto_cancel_ratio_ppm: 900_000 }]);
      expect(h.limit(1, BID, P2000, 400_000)[0]).toEqual(acc(K.PLACE, 1, 1)); // 800
      expect(h.limit(1, BID, P2000, 100_000)).toEqual([rej(K.PLACE, 1, RJ.CREDIT_BREACH)]); // 800 + 200
      expect(rej(K.PLACE, 1, RJ.CREDIT_BREACH).code).toBe(Code.CREDIT_BREACH);
      expect(h.limit(1, ASK, 2_100_000_000, 100_000)).toEqual([rej(K.PLACE, 1, RJ.CREDIT_BREACH)]); // 800 + 210
      expect(h.limit(1, BID, P2000, 50_000)[0]).toEqual(acc(K.PLACE, 1, 2)); // 900
      // IOC and market orders cannot rest: not checked.
      expect(h.limit(1, BID, P2000, ONE, { tif: Tif.IOC })[0]).toEqual(acc(K.PLACE, 1, 3));
      // Amend: current value out, new value in.
      expect(h.amend(1, 2, P2000, 100_000)).toEqual([rej(K.AMEND, 1, RJ.CREDIT_BREACH)]); // 800 + 200
      expect(h.amend(1, 2, P2000, 90_000)[0]).toEqual(acc(K.AMEND, 1, 2)); // 800 + 180
      expect(h.setCredit(1, 0, 900_000)).toEqual([acc(K.SET_CREDIT, 1, 0)]);
      expect(h.state().credit).toEqual([]);
      expect(h.limit(1, BID, P2000, 1_000_000)[0]).toEqual(acc(K.PLACE, 1, 4));
    });

    it('SET_CREDIT validation: limit and ratio, then account', () => {
      const h = make();
      expect(h.setCredit(0, 5, 1)).toEqual([rej(K.SET_CREDIT, 0, RJ.ACCOUNT_UNKNOWN)]);
      expect(h.setCredit(16, 5, 1)).toEqual([rej(K.SET_CREDIT, 16, RJ.ACCOUNT_UNKNOWN)]);
      expect(h.setCredit(16, 5, 0)).toEqual([rej(K.SET_CREDIT, 16, RJ.CREDIT_INVALID)]);
      expect(h.setCredit(1, -1, 1)).toEqual([rej(K.SET_CREDIT, 1, RJ.CREDIT_INVALID)]);
      expect(h.setCredit(1, 5, 0)).toEqual([rej(K.SET_CREDIT, 1, RJ.CREDIT_INVALID)]);
      expect(h.setCredit(1, 5, 1_000_001)).toEqual([rej(K.SET_CREDIT, 1, RJ.CREDIT_INVALID)]);
      expect(h.setCredit(1, 5, 1_000_000)).toEqual([acc(K.SET_CREDIT, 1, 0)]);
    });

    it('after a fill moves the mark, accounts over their ratio are cancelled (credit_auto_cancel)', () => {
      const h = make({ maker: 0, taker: 0 });
      h.deposit(1, ETH, ONE);
      h.deposit(2, ETH, ONE);
      h.deposit(3, USDC, usdc(10000));
      h.setCredit(1, usdc(1000), 500_000); // cancel above 500
      // No mark yet: valued at its own price, 620 < 1000.
      expect(h.limit(1, ASK, 3_100_000_000, 200_000)[0]).toEqual(acc(K.PLACE, 1, 1));
      // A trade at 2000: Q = 400 <= 500, nothing happens.
      h.limit(2, ASK, P2000, 100_000); // id 2
      const first = h.limit(3, BID, P2000, 100_000, { tif: Tif.IOC }); // id 3
      expect(first.filter((e) => e.type === 'orderUpdate' && e.reason === UR.CREDIT_AUTO_CANCEL)).toEqual([]);
      // A trade at 3000: Q = 600 > 500.
      h.limit(2, ASK, 3_000_000_000, 100_000); // id 4
      expect(h.limit(3, BID, 3_000_000_000, 100_000, { tif: Tif.IOC })).toEqual([
        acc(K.PLACE, 3, 5),
        fil(2, ETH_USDC, 5, 4, 3, 2, BID, 3_000_000_000, 100_000, 0, 0),
        upd(4, 2, ETH_USDC, ASK, S.FILLED, 3_000_000_000, 100_000, 100_000, 0, 3_000_000_000, UR.FILL),
        upd(5, 3, ETH_USDC, BID, S.FILLED, 3_000_000_000, 100_000, 100_000, 0, 3_000_000_000, UR.FILL),
        upd(1, 1, ETH_USDC, ASK, S.CANCELLED, 3_100_000_000, 200_000, 0, 0, 0, UR.CREDIT_AUTO_CANCEL),
        bal(1, ETH, ONE, 0, BR.ORDER_CANCELLED),
        bal(2, ETH, 800_000, 0, BR.FILL),
        bal(2, USDC, usdc(500), 0, BR.FILL),
        bal(3, ETH, 200_000, 0, BR.FILL),
        bal(3, USDC, usdc(9500), 0, BR.FILL),
      ]);
      expect(h.state().markets[0].asks).toEqual([]);
    });
  });

  describe('markets', () => {
    it('ADD_MARKET: valid pairs only, once, within markets_max', () => {
      const h = make({ maker: 0, taker: 0 }, { markets_max: 3 });
      expect(h.addMarket(ETH, ETH, 100, 10_000)).toEqual([rej(K.ADD_MARKET, 0, RJ.ASSET_UNKNOWN)]);
      expect(h.addMarket(ETH, 3, 100, 10_000)).toEqual([rej(K.ADD_MARKET, 0, RJ.ASSET_UNKNOWN)]);
      expect(h.addMarket(ETH, BTC, 0, 10_000)).toEqual([rej(K.ADD_MARKET, 0, RJ.MARKET_INVALID)]);
      expect(h.addMarket(ETH, BTC, 100, -1)).toEqual([rej(K.ADD_MARKET, 0, RJ.MARKET_INVALID)]);
      expect(h.addMarket(ETH, BTC, 100, 1_000)).toEqual([rej(K.ADD_MARKET, 0, RJ.MARKET_INVALID)]);
      expect(h.addMarket(ETH, USDC, 100, 10_000)).toEqual([rej(K.ADD_MARKET, 0, RJ.MARKET_EXISTS)]);
      expect(h.addMarket(ETH, BTC, 100, 10_000)).toEqual([acc(K.ADD_MARKET, 0, 0)]);
      expect(h.addMarket(BTC, ETH, 100, 10_000)).toEqual([rej(K.ADD_MARKET, 0, RJ.MARKETS_MAX)]);
      const m = h.state().markets[2];
      expect(m).toEqual({
        id: 'ETH-BTC', base: ETH, quote: BTC, tick_size_units: 100, lot_size_units: 10_000, status: 'active',
        fees: null, mark_price_units: 0, bids: [], asks: [],
      });
      // It trades: 0.01 ETH at 0.05 BTC.
      h.deposit(1, BTC, 1_000);
      h.deposit(2, ETH, 10_000);
      h.limit(1, BID, 50_000, 10_000, { market: 2 });
      expect(h.limit(2, ASK, 50_000, 10_000, { market: 2 })[1]).toEqual(fil(1, 2, 2, 1, 2, 1, ASK, 50_000, 10_000, 0, 0));
      expect(h.balance(1, ETH)).toEqual([10_000, 0]);
      expect(h.balance(2, BTC)).toEqual([500, 0]);
    });
  });

  describe('canonical state', () => {
    it('starts with counters at 1, the fee account listed, nothing else', () => {
      const h = make();
      expect(h.state()).toEqual({
        batch_time_ms: 0,
        next_order_id: 1, next_fill_id: 1, next_priority_seq: 1,
        fees: { maker_fee_bps: 2, taker_fee_bps: 5 },
        markets: [
          { id: 'ETH-USDC', base: ETH, quote: USDC, tick_size_units: 10_000, lot_size_units: 100, status: 'active', fees: null, mark_price_units: 0, bids: [], asks: [] },
          { id: 'BTC-USDC', base: BTC, quote: USDC, tick_size_units: 100_000, lot_size_units: 10, status: 'active', fees: null, mark_price_units: 0, bids: [], asks: [] },
        ],
        accounts: [{ account: 0, nonce_high_water: 0, balances: [[0, 0], [0, 0], [0, 0]] }],
        deposits_units: [0, 0, 0],
        withdrawals_units: [0, 0, 0],
        credit: [],
        pending_withdrawals: [],
        referrals: [],
        inbox: [],
        next_inbox_entry_id: 1,
        envelope_nonces: [],
        dead_man: [],
        agents: [],
        chain_deposit_high_water: 0,
      });
    });

    it('never throws on an unknown request kind', () => {
      const h = make();
      const r = emptyRequest();
      r.kind = 99;
      expect(h.apply(r)).toEqual([rej(99, 0, RJ.KIND_UNKNOWN)]);
    });

    it('refuses numeric fields that are not safe integers before any other check, changing nothing', () => {
      for (const [field, value] of [['amount_units', 1.5], ['price_units', Number.NaN], ['quantity_units', 1e300], ['nonce', -0.5], ['market', Infinity]] as const) {
        const h = make();
        const before = JSON.stringify(h.engine.canonicalState());
        const r = emptyRequest();
        r.kind = 3;
        r.account = 1;
        r.nonce = 1;
        r.market = 0;
        r.price_units = 10_000;
        r.quantity_units = 100;
        (r as unknown as Record<string, number>)[field] = value;
        expect(h.apply(r)).toEqual([rej(3, 1, RJ.REQUEST_MALFORMED)]);
        expect(JSON.stringify(h.engine.canonicalState())).toBe(before);
      }
    });
  });
});
