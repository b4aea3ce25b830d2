// The matcher's account registry under "every address is an account" (docs/engine.md,
// "Accounts"): an unknown signer (and a referrer it names) is registered tentatively and kept only
// when the engine accepts the request; its ACCOUNT event comes right after the ACCEPTED, before
// any event that uses the id. Refused requests from any number of fresh addresses store nothing.
import { describe, expect, it } from 'vitest';
import { ReplayExecutor } from '../../src/da/replay.js';
import type { EngineConfig } from '../../src/engine/api.js';
import { emptyRequest, RequestKind, Side, type Request } from '../../src/engine/types.js';
import { Code, REJECT_CODES, Reject } from '../../src/engine/codes.js';
import { AccountField, EventType, ReferralField, RejectedField } from '../../src/ring/event_records.js';
import { recordsOf } from '../da/records.js';
import { AccountRegistry } from '../../src/matcher/registry.js';

const ACCOUNTS_MAX = 8;

function config(): EngineConfig {
  return {
    assets: ['ETH', 'USDC'],
    markets: [{ id: 'ETH-USDC', base: 0, quote: 1, tick_size_units: 10_000, lot_size_units: 100 }],
    maker_fee_bps: -1,
    taker_fee_bps: 5,
    limits: { accounts_max: ACCOUNTS_MAX, markets_max: 4, orders_open_max: 100, orders_open_per_account_max: 10, price_levels_per_book_max: 10 },
  };
}

/** `account` here names an address (test/da/records.ts addressOf), not a registry id. */
function req(kind: number, address_no: number, fields: Partial<Request> = {}): Request {
  return Object.assign(emptyRequest(), { kind, account: address_no }, fields);
}

/** An event's type and the ids the test reads: a = ACCOUNT's account, or a REFERRAL's referred; b = REJECTED's account, or a REFERRAL's referrer. */
interface Seen { type: number; a: number; b: number }

function seen(type: number, field: (k: number) => number): Seen {
  switch (type) {
    case EventType.ACCOUNT: return { type, a: field(AccountField.ACCOUNT), b: -1 };
    case EventType.REJECTED: return { type, a: -1, b: field(RejectedField.ACCOUNT) };
    case EventType.REFERRAL: return { type, a: field(ReferralField.REFERRED), b: field(ReferralField.REFERRER) };
    default: return { type, a: -1, b: -1 };
  }
}

function run(batches: Request[][]): { ex: ReplayExecutor; events: Seen[] } {
  const events: Seen[] = [];
  const ex = new ReplayExecutor(config(), {
    onEvent: (e) => events.push(seen(e.type(), (k) => e.field(k))),
  });
  ex.genesis();
  batches.forEach((b, i) => ex.apply(i + 1, 1000 * (i + 1), recordsOf(b), b.length));
  return { ex, events };
}

const unfundedBid = (n: number): Request => req(RequestKind.PLACE, n, {
  nonce: 1, market: 0, side: Side.BID, price_units: 1_000_000, quantity_units: 100,
});

describe('tentative registration', () => {
  it('refused requests from 200 fresh addresses register nothing and write no ACCOUNT event', () => {
    const batch = Array.from({ length: 200 }, (_, i) => unfundedBid(100 + i));
    const { ex, events } = run([batch]);
    expect(ex.matcher.registry.size).toBe(1);
    expect(events.filter((e) => e.type === EventType.ACCOUNT)).toEqual([]);
    const rejected = events.filter((e) => e.type === EventType.REJECTED);
    expect(rejected.length).toBe(200);
    // The fresh id was handed out again each time: every refusal names id 1.
    expect(new Set(rejected.map((e) => e.b))).toEqual(new Set([1]));
  });

  it('an accepted request keeps the id; its ACCOUNT event follows the ACCEPTED; the nonce mark stays', () => {
    const { ex, events } = run([[
      unfundedBid(7),
      req(RequestKind.CANCEL_ALL, 7, { nonce: 5, market: -1 }),
      req(RequestKind.CANCEL_ALL, 7, { nonce: 5, market: -1 }),
      unfundedBid(8),
    ]]);
    expect(ex.matcher.registry.size).toBe(2);
    const types = events.map((e) => e.type);
    const accepted = types.indexOf(EventType.ACCEPTED);
    expect(types[accepted + 1]).toBe(EventType.ACCOUNT);
    expect(events[accepted + 1].a).toBe(1);
    const rejected = events.filter((e) => e.type === EventType.REJECTED);
    expect(rejected.map((e) => e.b)).toEqual([1, 1, 2]);
    const state = ex.engine.canonicalState();
    expect(state.accounts.find((x) => x.account === 1)?.nonce_high_water).toBe(5);
  });

  it('a referral between two fresh addresses registers both; a refused one (self-referral) neither', () => {
    const { ex, events } = run([[
      req(RequestKind.REFER, 3, { nonce: 1, referrer_account: 3 }),
      req(RequestKind.REFER, 3, { nonce: 1, referrer_account: 4 }),
    ]]);
    expect(ex.matcher.registry.size).toBe(3);
    const types = events.map((e) => e.type);
    const accepted = types.indexOf(EventType.ACCEPTED);
    // Referrer registered first (id 1), then the signer (id 2); both announced before REFERRAL.
    expect(types.slice(accepted, accepted + 4)).toEqual([EventType.ACCEPTED, EventType.ACCOUNT, EventType.ACCOUNT, EventType.REFERRAL]);
    expect(events[accepted + 3]).toMatchObject({ a: 2, b: 1 });
    expect(ex.engine.canonicalState().referrals).toMatchObject([{ account: 2, referrer: 1 }]);
  });

  it('with the registry full, a new address is refused with a clear reason, not NOT_FOUND', () => {
    const fill = Array.from({ length: ACCOUNTS_MAX - 1 }, (_, i) => req(RequestKind.DEPOSIT, 10 + i, { asset: 1, amount_units: 1 }));
    const { ex, events } = run([[...fill, req(RequestKind.DEPOSIT, 99, { asset: 1, amount_units: 1 })]]);
    expect(ex.matcher.registry.size).toBe(ACCOUNTS_MAX);
    const last = events.filter((e) => e.type === EventType.REJECTED).pop();
    expect(last?.b).toBe(ACCOUNTS_MAX);
    expect(REJECT_CODES[Reject.ACCOUNT_UNKNOWN]).toBe(Code.INVALID_REQUEST);
  });
});

describe('AccountRegistry.findInRecord (the matcher\'s hint check by words)', () => {
  /** A record-like buffer: the k-th address (20 bytes derived from addresses[k]) at byte 4 * (1 + 7k). */
  function recordWith(addresses: number[]): { i32: Int32Array; u8: Uint8Array; at: (k: number) => number } {
    const i32 = new Int32Array(8 * addresses.length + 8);
    const u8 = new Uint8Array(i32.buffer);
    const at = (k: number): number => 4 * (1 + 7 * k);
    addresses.forEach((n, k) => {
      // Distinct addresses: n in the last four bytes, a pattern of n before them.
      for (let b = 0; b < 16; b++) u8[at(k) + b] = (n * 31 + b * 7) & 0xff;
      new DataView(i32.buffer).setUint32(at(k) + 16, n);
    });
    return { i32, u8, at };
  }

  it('agrees with find for right, wrong and out-of-range hints, across growth and take-backs', () => {
    const registry = new AccountRegistry(5000);
    const n = 2500; // past the first table's 1,024 ids: the words are copied when it grows
    const rec = recordWith(Array.from({ length: n }, (_, i) => i + 1));
    for (let k = 0; k < n; k++) expect(registry.register(rec.u8, rec.at(k))).toBe(k + 1);
    for (const k of [0, 1, 1023, 1024, 2048, n - 1]) {
      const id = k + 1;
      for (const hint of [id, id === 1 ? 2 : id - 1, 0, -1, n + 1, 99_999]) {
        expect(registry.findInRecord(rec.i32, rec.u8, rec.at(k), hint)).toBe(id);
        expect(registry.find(rec.u8, rec.at(k), hint)).toBe(id);
      }
    }
    // An address one byte off is unknown, even with the hint of its near twin.
    const other = recordWith([n + 7]);
    other.u8.set(rec.u8.subarray(rec.at(5), rec.at(5) + 20), other.at(0));
    other.u8[other.at(0) + 19] ^= 1;
    expect(registry.findInRecord(other.i32, other.u8, other.at(0), 6)).toBe(-1);
    // Taken back, the last id is no longer found by its hint; a new address gets it.
    registry.unregisterLast(n);
    expect(registry.findInRecord(rec.i32, rec.u8, rec.at(n - 1), n)).toBe(-1);
    expect(registry.register(other.u8, other.at(0))).toBe(n);
    expect(registry.findInRecord(other.i32, other.u8, other.at(0), n)).toBe(n);
    expect(registry.findInRecord(rec.i32, rec.u8, rec.at(n - 1), n)).toBe(-1);
    expect(registry.addressHex(n)).toBe('0x' + Buffer.from(other.u8.subarray(other.at(0), other.at(0) + 20)).toString('hex'));
  });
});
