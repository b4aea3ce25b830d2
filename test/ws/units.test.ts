// The WebSocket pieces that need no server: channel names, client message parsing, the auth
// state machine on a fake clock, the hot-path serializers (valid JSON, exact strings), and the
// post answers held per connection (one write each, bytes and order unchanged).
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bookChecksum, bookChecksumText } from '../../src/util/book_checksum.js';
import { BookDeltaViews } from '../../src/gateway/ws/book_delta.js';
import { AuthState } from '../../src/gateway/ws/auth.js';
import { HeldAnswers } from '../../src/gateway/ws/held_answers.js';
import {
  balanceUpdateMessage, bookSnapshotMessage, fillMessage, orderUpdateMessage, parseChannel, parseClientMessage,
  tradeMessage,
} from '../../src/gateway/ws/messages.js';

const markets = (id: string): number => ['ETH-USDC', 'BTC-USDC'].indexOf(id);
const A = '0x' + 'ab'.repeat(20);

function frame(o: unknown): ArrayBuffer {
  const b = Buffer.from(typeof o === 'string' ? o : JSON.stringify(o));
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
}

describe('parseChannel', () => {
  it('canonicalizes market ids and addresses', () => {
    expect(parseChannel('book:ETH-USDC', markets)).toMatchObject({ kind: 'book', private: false, market: 0, name: 'book:ETH-USDC' });
    expect(parseChannel('trades:btc-usdc', markets)).toMatchObject({ kind: 'trades', market: 1, name: 'trades:BTC-USDC' });
    expect(parseChannel('fills:0x' + 'AB'.repeat(20), markets)).toMatchObject({ kind: 'fills', private: true, address: A, name: `fills:${A}` });
    for (const bad of ['book', 'book:', 'book:XRP-USDC', 'candles:ETH-USDC', 'orders:0x12', ':x', 'x'.repeat(100), 7, null]) {
      expect(typeof parseChannel(bad, markets)).toBe('string');
    }
  });
});

describe('parseClientMessage', () => {
  it('accepts the five types and refuses the rest with a sentence', () => {
    expect(parseClientMessage(frame({ type: 'ping' }))).toEqual({ ok: true, message: { type: 'ping', request_id: null } });
    expect(parseClientMessage(frame({ type: 'subscribe', channels: ['a'], request_id: 'x-1' }))).toEqual({
      ok: true, message: { type: 'subscribe', channels: ['a'], request_id: 'x-1' },
    });
    const bad = parseClientMessage(frame('{"type":'));
    expect(bad).toEqual({ ok: false, message: 'message is not valid JSON', request_id: null });
    expect(parseClientMessage(frame({ type: 'nope', request_id: 'r' }))).toMatchObject({ ok: false, request_id: 'r' });
    expect(parseClientMessage(frame({ type: 'ping', request_id: 'has space' }))).toMatchObject({ ok: false });
    expect(parseClientMessage(frame({ type: 'unsubscribe', channels: [] }))).toMatchObject({ ok: false });
  });
});

describe('AuthState', () => {
  const limits = { challenge_ttl_ms: 60_000, auth_grace_ms: 30_000, auth_failures_max: 3 };
  const sig = '0x' + '11'.repeat(65);

  it('issues single-use challenges that expire, with a grace deadline from the first one', () => {
    const a = new AuthState(limits);
    const c1 = a.requestChallenge(A, 1000);
    expect(c1).toMatchObject({ kind: 'challenge', expires_ms: 61_000 });
    expect(a.deadline_ms).toBe(31_000);
    a.requestChallenge(A, 5000);
    expect(a.deadline_ms).toBe(31_000); // not moved
    const v = a.auth(A.toUpperCase().replace('0X', '0x'), sig, 6000);
    expect(v).toMatchObject({ kind: 'verify', address: A });
    if (v.kind !== 'verify' || c1.kind !== 'challenge') throw new Error('unreachable');
    expect(v.message).toMatch(/^Ringbook Exchange\nNonce: [0-9a-f]{32}$/);
    expect(v.message).not.toContain(c1.nonce); // the second challenge replaced the first
    expect(a.auth(A, sig, 6001)).toMatchObject({ kind: 'error', code: 'INVALID_REQUEST' }); // verifying
    expect(a.verified(A, true, 6002)).toBeNull();
    expect(a.address).toBe(A);
    expect(a.deadline_ms).toBe(0);
    expect(a.expired(100_000)).toBe(false);
  });

  it('counts failures and turns the third into a fatal step', () => {
    const a = new AuthState(limits);
    a.requestChallenge(A, 0);
    expect(a.auth(A, sig, 60_001)).toMatchObject({ kind: 'error', code: 'UNAUTHORIZED', message: expect.stringContaining('expired') });
    expect(a.auth(A, sig, 60_002)).toMatchObject({ kind: 'error', code: 'UNAUTHORIZED', message: expect.stringContaining('single-use') });
    a.requestChallenge(A, 70_000);
    expect(a.auth(A, 'bad', 70_001)).toMatchObject({ kind: 'fatal' });
  });

  it('expires after the grace period unless authenticated, but waits for a verdict in flight', () => {
    const a = new AuthState(limits);
    expect(a.expired(1e12)).toBe(false); // never asked: no deadline
    a.requestChallenge(A, 0);
    a.auth(A, sig, 29_000);
    expect(a.expired(31_000)).toBe(false); // verifying
    expect(a.verified(A, false, 31_000)).toMatchObject({ kind: 'fatal' });
  });
});

describe('serializers', () => {
  it('write valid JSON with string amounts', () => {
    const iso = '2026-01-02T03:04:05.678Z';
    const msgs = [
      bookSnapshotMessage('ETH-USDC', 7, [[2000_000000, 5], [1999_990000, 9_007_199_254_740_991]], [], 4_294_967_295, iso),
      tradeMessage('ETH-USDC', 12, 2000_000000, 400000, 1, iso),
      fillMessage(12, 3, 'ETH-USDC', 0, 2000_000000, 400000, 500000, true, -80000, 9, iso),
      orderUpdateMessage(3, 'c-1', 'ETH-USDC', 1, 1, 2000_000000, 1_000000, 400000, 600000, 0, 1, iso),
      balanceUpdateMessage('USDC', 5, 7, 0, iso),
    ].map((m) => JSON.parse(m));
    expect(msgs[0]).toEqual({
      type: 'book_snapshot', market_id: 'ETH-USDC', sequence: 7,
      bids: [['2000000000', '5'], ['1999990000', '9007199254740991']], asks: [], checksum: 4_294_967_295, timestamp: iso,
    });
    expect(msgs[1]).toEqual({ type: 'trade', market_id: 'ETH-USDC', trade_id: '12', price: '2000000000', quantity: '400000', side: 'ask', timestamp: iso });
    expect(msgs[2]).toMatchObject({ fill_id: '12', order_id: '3', side: 'bid', is_maker: true, fee: '0', rebate: '80000', filled_quantity_cumulative: '500000', batch_id: '9' });
    expect(msgs[3]).toMatchObject({ order_id: '3', client_order_id: 'c-1', side: 'ask', status: 'partially_filled', reason: 'fill', last_fill_price: '0' });
    expect(msgs[4]).toEqual({ type: 'balance_update', asset: 'USDC', total: '12', available: '5', reserved: '7', reason: 'fill', timestamp: iso });
  });
});

describe('book checksum and deltas', () => {
  it('is zlib CRC-32 of the best 25 levels per side as price:quantity, joined by , and |', () => {
    expect(bookChecksumText([[2, 5], [1, 7]], [[3, 1]])).toBe('2:5,1:7|3:1');
    expect(bookChecksum([], [])).toBe(crc32('|'));
    // CRC-32 check value of "123456789" (IEEE): 0xCBF43926, unsigned.
    expect(crc32('123456789')).toBe(0xcbf43926);
    const deep = Array.from({ length: 30 }, (_, i): [number, number] => [100 - i, i + 1]);
    const text = bookChecksumText(deep, deep);
    expect(text.split('|')[0].split(',')).toHaveLength(25);
    expect(bookChecksum(deep, [])).toBe(crc32(bookChecksumText(deep.slice(0, 25), [])));
    expect(bookChecksum([[2_000_000_000, 4_000_000_000_000]], [])).toBeGreaterThan(0);
  });

  it('sends changed levels, 0 for a level that left, and chains prev_sequence', () => {
    const v = new BookDeltaViews();
    expect(v.advance(0, 2, [], [])).toBeNull(); // nobody holds market 0
    v.hold(0, 5, [[10, 1], [9, 2]], [[11, 3]]);
    const d = v.advance(0, 6, [[10, 4], [8, 1]], [[11, 3]]);
    expect(d).toEqual({ prev_sequence: 5, bids: [[10, 4], [9, 0], [8, 1]], asks: [], checksum: bookChecksum([[10, 4], [8, 1]], [[11, 3]]) });
    expect(v.advance(0, 7, [[10, 4], [8, 1]], [[11, 3]])).toMatchObject({ prev_sequence: 6, bids: [], asks: [] });
    v.release(0);
    expect(v.advance(0, 8, [], [])).toBeNull();
  });
});

describe('HeldAnswers', () => {
  type C = { name: string; held: string[] };
  const setUp = (): { held: HeldAnswers<C>; writes: [string, string[]][]; a: C; b: C } => {
    const writes: [string, string[]][] = [];
    // A copy: the array handed over is the connection's old one, not kept by the hub.
    const held = new HeldAnswers<C>((c, messages) => writes.push([c.name, [...messages]]));
    return { held, writes, a: { name: 'a', held: [] }, b: { name: 'b', held: [] } };
  };

  it('writes each connection\'s answers of a batch in ONE write, the same strings in the order held', () => {
    const { held, writes, a, b } = setUp();
    const answers = ['{"type":"response","id":"0:0","status":200,"body":{"ok":true}}', '{"type":"response","id":"1:0","status":400,"body":{"ok":false}}', '{"type":"response","id":"2:0","status":200,"body":{}}'];
    held.hold(a, answers[0]);
    held.hold(b, 'b-1');
    held.hold(a, answers[1]);
    // A message that is not an answer waits behind a's held answers; b's next one too.
    expect(held.behind(a, 'pong-a')).toBe(true);
    held.hold(a, answers[2]);
    expect(writes).toEqual([]);
    held.flush();
    expect(writes).toEqual([['a', [answers[0], answers[1], 'pong-a', answers[2]]], ['b', ['b-1']]]);
    expect([a.held, b.held]).toEqual([[], []]);
    // Nothing held: a message is written at once (behind() says so), and a flush writes nothing.
    expect(held.behind(a, 'pong-a2')).toBe(false);
    held.flush();
    expect(writes).toHaveLength(2);
  });

  it('an answer held outside a batch goes out at the end of the turn (a microtask), not a later turn', async () => {
    const { held, writes, a } = setUp();
    held.hold(a, 'x');
    held.hold(a, 'y');
    expect(writes).toEqual([]);
    await Promise.resolve();
    expect(writes).toEqual([['a', ['x', 'y']]]);
    // Flushed by a batch first: the turn's end finds nothing left.
    held.hold(a, 'z');
    held.flush();
    await Promise.resolve();
    expect(writes).toEqual([['a', ['x', 'y']], ['a', ['z']]]);
  });
});
