// Message builders beyond the vectors (amend, cancel-all, force-include) and their bad inputs.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eip191Hash } from '../../src/auth/eip191.js';
import {
  amendMessage,
  cancelAllMessage,
  cancelMessage,
  challengeMessage,
  forceIncludeMessage,
  forceIncludePayloadHash,
  intText,
  orderJsonMessage,
  orderMessage,
  referralMessage,
  withdrawalMessage,
} from '../../src/auth/messages.js';
import { hex } from './vectors.js';

const USER = '0x19e7e376e7c213b7e7e7e46cc70a5dd086daff2a';
const KECCAK_EMPTY = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';

describe('message builders', () => {
  it('amend', () => {
    expect(amendMessage({ order_id: 42, price: 2_001_000_000, quantity: 250_000, nonce: 13 })).toBe(
      'ringbook:amend:42:2001000000:250000:13',
    );
  });

  it('cancel-all, one market and every market', () => {
    expect(cancelAllMessage({ market_id: 'BTC-USDC', nonce: 14 })).toBe('ringbook:cancel-all:BTC-USDC:14');
    expect(cancelAllMessage({ nonce: 15 })).toBe('ringbook:cancel-all:*:15');
    expect(cancelAllMessage({ market_id: null, nonce: 15 })).toBe('ringbook:cancel-all:*:15');
  });

  it('force-include hashes the decoded payload bytes', () => {
    expect(forceIncludePayloadHash('0x')).toBe(KECCAK_EMPTY);
    expect(forceIncludePayloadHash('')).toBe(KECCAK_EMPTY);
    expect(forceIncludePayloadHash(new Uint8Array(0))).toBe(KECCAK_EMPTY);
    // keccak256("abc") = 0x4e03657a...; "abc" = 0x616263, either case, with or without 0x.
    const abc = '0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45';
    expect(forceIncludePayloadHash('0x616263')).toBe(abc);
    expect(forceIncludePayloadHash('616263')).toBe(abc);
    expect(forceIncludeMessage({ user: USER, payload: '0x616263', nonce: 16 })).toBe(
      `ringbook:force-include:${USER}:${abc}:16`,
    );
  });

  it('force-include refuses a payload that is not hex', () => {
    expect(() => forceIncludePayloadHash('0x6162z3')).toThrow(TypeError);
    expect(() => forceIncludePayloadHash('0x616')).toThrow(TypeError);
    expect(() => forceIncludePayloadHash('0X616263')).toThrow(TypeError);
    expect(() => forceIncludeMessage({ user: USER, payload: 'hello', nonce: 1 })).toThrow(TypeError);
  });

  it('challenge text', () => {
    expect(challengeMessage('abc')).toBe('Ringbook Exchange\nNonce: abc');
  });

  it('withdrawal keeps a wei amount above 2^53 exact (bigint or digit string)', () => {
    const m = 'ringbook:withdraw:' + USER + ':ETH:1500000000000000000:12';
    expect(withdrawalMessage({ address: USER, asset: 'ETH', amount: 1_500_000_000_000_000_000n, nonce: 12 })).toBe(m);
    expect(withdrawalMessage({ address: USER, asset: 'ETH', amount: '1500000000000000000', nonce: 12 })).toBe(m);
    expect(() => withdrawalMessage({ address: USER, asset: 'ETH', amount: 1.5e18, nonce: 12 })).toThrow(RangeError);
  });

  it('fields are written as sent (no case folding)', () => {
    const upper = '0x19E7E376E7C213B7E7E7E46CC70A5DD086DAFF2A';
    expect(referralMessage({ referred: upper, referrer: USER, nonce: 1 })).toBe(
      `ringbook:referral:${upper}:${USER}:1`,
    );
  });

  it('cancel with neither id absent writes empty segments', () => {
    expect(cancelMessage({ nonce: 3 })).toBe('ringbook:cancel:::3');
    expect(cancelMessage({ order_id: '17', client_order_id: null, nonce: 3 })).toBe('ringbook:cancel:17::3');
    expect(cancelMessage({ order_id: 17n, client_order_id: 'x', nonce: 3 })).toBe('ringbook:cancel:17:x:3');
  });

  it('JSON form: market order price 0 and the exact key order', () => {
    expect(
      orderJsonMessage({
        market_id: 'ETH-USDC',
        side: 'ask',
        quantity: 1,
        order_type: 'market',
        time_in_force: 'ioc',
        nonce: 2,
      }),
    ).toBe(
      '{"market_id":"ETH-USDC","side":"ask","price":0,"quantity":1,"order_type":"market","time_in_force":"ioc","nonce":2}',
    );
  });

  it('order JSON form: stp and expires_after_ms appended after nonce, in that order, only when present', () => {
    const base = { market_id: 'ETH-USDC', side: 'bid', price: 5, quantity: 1, order_type: 'limit', time_in_force: 'gtc', nonce: 3 };
    const head = '{"market_id":"ETH-USDC","side":"bid","price":5,"quantity":1,"order_type":"limit","time_in_force":"gtc","nonce":3';
    expect(orderJsonMessage({ ...base, stp: 'expire_both', expires_after_ms: 1_764_000_000_000 }))
      .toBe(`${head},"stp":"expire_both","expires_after_ms":1764000000000}`);
    expect(orderJsonMessage({ ...base, stp: 'expire_taker' })).toBe(`${head},"stp":"expire_taker"}`);
    expect(orderJsonMessage({ ...base, expires_after_ms: 7 })).toBe(`${head},"expires_after_ms":7}`);
    expect(orderJsonMessage({ ...base, stp: null, expires_after_ms: null })).toBe(`${head}}`);
  });

  it('JSON form equals JSON.stringify of the fields in key order, for any strings and integers', () => {
    const safe = fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
    fc.assert(
      fc.property(
        fc.record({
          market_id: fc.string({ unit: 'binary' }),
          side: fc.string(),
          price: safe,
          quantity: safe,
          order_type: fc.string(),
          time_in_force: fc.string(),
          nonce: safe,
        }),
        (f) => {
          const expected = JSON.stringify({
            market_id: f.market_id,
            side: f.side,
            price: f.price,
            quantity: f.quantity,
            order_type: f.order_type,
            time_in_force: f.time_in_force,
            nonce: f.nonce,
          });
          expect(orderJsonMessage(f)).toBe(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('JSON form with its string pairs kept (h22v): repeated, more pairs than kept, escaped and non-ASCII ones, mixed, all as JSON.stringify', () => {
    // The (market_id, side) and (order_type, time_in_force) runs are kept for the last 8 pairs of
    // each: hits, misses, evictions, a pair that needs escapes (kept: still ASCII) and a non-ASCII
    // one (never kept), in an order that reuses every slot, with strings equal but built apart.
    const markets = ['ETH-USDC', 'BTC-USDC', 'a"b', 'x\\y', 'é-USDC', '', 'M\u0001', ...Array.from({ length: 12 }, (_, i) => `MK${i}`)];
    const sides = ['bid', 'ask', 'ünï'];
    const types = ['limit', 'market', 'lim"it'];
    const tifs = ['gtc', 'ioc', 'fok', 'post_only', 'gtç'];
    let x = 7;
    const next = (n: number): number => (x = (x * 1103515245 + 12345) & 0x7fffffff) % n;
    for (let i = 0; i < 3000; i++) {
      // Mostly the first two of each (hits), sometimes any (misses and evictions).
      const pick = <T,>(a: readonly T[]): T => a[next(8) < 6 ? next(2) : next(a.length)];
      const f = {
        market_id: next(5) === 0 ? [...pick(markets)].join('') : pick(markets), side: pick(sides), price: next(1_000_000) * 1000,
        quantity: next(999) + 1, order_type: pick(types), time_in_force: pick(tifs), nonce: 1_795_000_000_000 + i,
      };
      const stp = next(4) === 0 ? 'expire_maker' : undefined;
      const expected = JSON.stringify({ ...f, ...(stp === undefined ? {} : { stp }) });
      expect(orderJsonMessage({ ...f, stp }), `${i}`).toBe(expected);
    }
  });

  it('non-ASCII text hashes by UTF-8 byte length', () => {
    // "é" is 2 bytes, "😀" is 4: the EIP-191 length prefix counts bytes, not UTF-16 units.
    const m = challengeMessage('é😀');
    const bytes = new TextEncoder().encode(m);
    expect(bytes.length).toBe(m.length + 3);
    expect(hex(eip191Hash(m))).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('integer fields refuse values with no exact integer text', () => {
    for (const bad of [1.5, Number.NaN, Infinity, 2 ** 53, -(2 ** 53)]) {
      expect(() => intText(bad, 'x')).toThrow(RangeError);
    }
    for (const bad of ['1e3', '', ' 1', '0x10', '1.0', '+1']) {
      expect(() => intText(bad, 'x')).toThrow(TypeError);
    }
    expect(() => intText(null as unknown as number, 'x')).toThrow(TypeError);
    expect(() => orderMessage({ market_id: 'ETH-USDC', side: 'bid', price: 0.1, quantity: 1, nonce: 1 })).toThrow();
    expect(() =>
      orderMessage({ market_id: 1 as unknown as string, side: 'bid', price: 1, quantity: 1, nonce: 1 }),
    ).toThrow(TypeError);
    expect(() => challengeMessage(undefined as unknown as string)).toThrow(TypeError);
  });

  it('JSON form refuses non-canonical integer strings that JSON could not carry', () => {
    const f = { market_id: 'ETH-USDC', side: 'bid', quantity: 1, order_type: 'limit', time_in_force: 'gtc' };
    expect(() => orderJsonMessage({ ...f, price: '007', nonce: 1 })).toThrow(TypeError);
    expect(() => orderJsonMessage({ ...f, price: '-0', nonce: 1 })).toThrow(TypeError);
    expect(orderJsonMessage({ ...f, price: '12345678901234567890', nonce: 1n })).toContain(
      '"price":12345678901234567890,',
    );
  });
});
