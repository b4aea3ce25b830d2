// The signed body readers (signed_body.ts) and the order parser over them (signed_requests.ts):
// the order's member set is a Set and its members are read by name (branch h17f), so the refusals
// of hostile bodies must stay exactly those of the array and field-name forms.
import { describe, expect, it } from 'vitest';
import { orderJsonMessage } from '../../src/auth/messages.js';
import { FORBIDDEN_JSON_KEYS, JSON_MAX_DEPTH, parseJsonObject } from '../../src/gateway/json_object.js';
import { unknownField } from '../../src/gateway/signed_body.js';
import { parseOrder } from '../../src/gateway/signed_requests.js';

const LOOKUP = { marketIndex: (id: string): number => (id === 'ETH-USDC' ? 0 : -1) };
const SIG = `0x${'ab'.repeat(64)}1b`;

function order(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    user: '0x00000000000000000000000000000000A11CE000', market_id: 'ETH-USDC', side: 'bid', price: 2_000_000_000,
    quantity: 100_000, order_type: 'limit', time_in_force: 'gtc', nonce: 7, client_order_id: 'c1', signature: SIG, ...over,
  };
}

describe('signed body readers', () => {
  it('a Set of members refuses exactly what the array refuses, with the same message', () => {
    const names = ['user', 'nonce', 'signature'];
    for (const body of [{ user: 1 }, { user: 1, extra: 2 }, { ['x'.repeat(60)]: 1 }, { nonce: 1, 'quo"te': 1 }, {}]) {
      expect(unknownField(body, new Set(names))).toEqual(unknownField(body, names));
    }
    expect(unknownField({ user: 1, extra: 2 }, new Set(names))).toEqual({ code: 'INVALID_REQUEST', message: 'unknown field "extra"' });
    // Inherited members are not the body's: neither form sees them.
    const child = Object.create({ inherited: 1 }) as Record<string, unknown>;
    child.user = 1;
    expect(unknownField(child, new Set(names))).toBeNull();
  });

  it('parseOrder keeps every refusal and its code', () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [order({ extra: 1 }), 'INVALID_REQUEST', 'unknown field "extra"'],
      [order({ user: undefined }), 'INVALID_ORDER', 'user is required'],
      [order({ user: '0x12' }), 'INVALID_REQUEST', 'user must be a 0x-prefixed 20-byte hex address'],
      [order({ market_id: 5 }), 'INVALID_REQUEST', 'market_id must be a string'],
      [order({ side: 'buy' }), 'INVALID_ORDER', 'side must be bid or ask'],
      [order({ price: '1' }), 'INVALID_REQUEST', 'price must be an integer (a JSON number, fixed-point x 1,000,000)'],
      [order({ quantity: 2 ** 53 }), 'INVALID_ORDER', 'quantity must be at most 2^53 - 1 (never rounded)'],
      [order({ nonce: -1 }), 'INVALID_REQUEST', 'nonce must be a non-negative integer'],
      [order({ signature: SIG.slice(0, -1) }), 'INVALID_SIGNATURE', 'signature must be 0x followed by 65 bytes of hex'],
      [order({ signature: `${SIG.slice(0, -1)}\u0131` }), 'INVALID_SIGNATURE', 'signature must be 0x followed by 65 bytes of hex'],
      [order({ market_id: 'BTC-USDC' }), 'MARKET_NOT_FOUND', 'market "BTC-USDC" not found'],
      [order({ order_type: 'market' }), 'INVALID_ORDER', 'a market order must not carry a price'],
    ];
    for (const [body, code, message] of cases) expect(parseOrder(body, LOOKUP)).toEqual({ code, message });
    const ok = parseOrder(order(), LOOKUP);
    if (!('request' in ok)) throw new Error(ok.message);
    expect(ok.address).toBe('0x00000000000000000000000000000000a11ce000');
    expect(ok.signature_hex).toBe(SIG);
  });

  it('the JSON message form is the same text as a template of its members, optional members and non-ASCII included', () => {
    const parsed = parseOrder(order({ stp: 'expire_both', expires_after_ms: 1_800_000_000_000 }), LOOKUP);
    if (!('request' in parsed)) throw new Error(parsed.message);
    expect(parsed.messages.at(0)).toBe('{"market_id":"ETH-USDC","side":"bid","price":2000000000,"quantity":100000,"order_type":"limit","time_in_force":"gtc","nonce":7,"stp":"expire_both","expires_after_ms":1800000000000}');
    const f = { market_id: 'ÉTH-"USDC"', side: 'ask', price: 0, quantity: 1, order_type: 'market', time_in_force: 'ioc', nonce: 2 ** 53 - 1 };
    expect(orderJsonMessage(f)).toBe(`{"market_id":${JSON.stringify(f.market_id)},"side":"ask","price":0,"quantity":1,"order_type":"market","time_in_force":"ioc","nonce":${2 ** 53 - 1}}`);
  });
});

describe('parseJsonObject skips its text scan only when the scan could refuse nothing (h17f)', () => {
  const parse = (text: string): ReturnType<typeof parseJsonObject> => parseJsonObject(Buffer.from(text));
  const ROUNDS = /^number .* is not an integer but rounds to one; integers must be sent as plain digits$/;

  it('refuses inexact literals with and without a dot, in either exponent case', () => {
    for (const literal of ['1e-400', '1E-400', '1.0000000000000001', '-1e-400', '1.0e-400']) {
      const r = parse(`{"quantity":${literal}}`);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.message).toMatch(ROUNDS);
    }
    // Exact integers written with an exponent stay numbers; "e-" inside a string is no literal.
    expect(parse('{"quantity":10e-1,"id":"abe-1"}')).toEqual({ ok: true, value: { quantity: 1, id: 'abe-1' } });
    expect(parse('{"quantity":5e-324}')).toEqual({ ok: true, value: { quantity: 5e-324 } }); // not an integer: the readers refuse it
    expect(parse('{"quantity":1e6,"side":"bid"}')).toEqual({ ok: true, value: { quantity: 1_000_000, side: 'bid' } });
  });

  it('finds "e-" and "E-" through the text\'s dashes wherever they sit (h21f)', () => {
    // Dashes before, after and between the literal, at the text's start and in strings; the
    // literal's "e-" first, last and alone.
    for (const text of [
      '{"m":"ETH-USDC","quantity":1e-400}', '{"quantity":1e-400,"m":"ETH-USDC"}', '{"a":"-","b":"--","quantity":1E-400}',
      '{"quantity":-1e-400}', '{"quantity":1e-400,"c":"x-y-z","d":-5}', '{"quantity":[1,2,3e-400]}',
    ]) {
      const r = parse(text);
      expect(r.ok, text).toBe(false);
      if (!r.ok) expect(r.message).toMatch(ROUNDS);
    }
    // Dashes with no e or E before them: no scan needed, parsed as before; one at the text's very
    // start (no char before it) is JSON.parse's to refuse.
    expect(parse('{"m":"ETH-USDC","d":-5,"x":"-e","y":"E -"}')).toEqual({ ok: true, value: { m: 'ETH-USDC', d: -5, x: '-e', y: 'E -' } });
    expect(parse('-{"a":1}')).toEqual({ ok: false, message: 'body is not valid JSON' });
    expect(parse('{"abe-":"e-","q":2e-0}')).toEqual({ ok: true, value: { 'abe-': 'e-', q: 2 } });
  });

  it('parses uWS\'s ArrayBuffer chunk as it parses a Buffer of the same bytes (h21f)', () => {
    for (const text of [
      '{"a":1}', '', '[1]', '{"a":1e-400}', '{"__proto__":1}', '{"a":"\u00e9"}', '{"a":', `{"a":${'['.repeat(40)}${']'.repeat(40)}}`, 'null',
    ]) {
      const bytes = Buffer.from(text);
      const chunk = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
      expect(parseJsonObject(chunk), text).toEqual(parseJsonObject(bytes));
    }
    const invalid = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]); // {"a":"\xff"}
    expect(parseJsonObject(invalid.buffer)).toEqual({ ok: false, message: 'body is not valid UTF-8' });
    expect(parseJsonObject(new ArrayBuffer(0))).toEqual({ ok: false, message: 'body is empty; a JSON object is required' });
  });

  it('refuses nesting past the limit however the brackets mix, and counts none inside strings', () => {
    const deep = (n: number, open: string, close: string): string => `{"a":${open.repeat(n - 1)}1${close.repeat(n - 1)}}`;
    expect(parse(deep(JSON_MAX_DEPTH, '[', ']')).ok).toBe(true);
    expect(parse(deep(JSON_MAX_DEPTH + 1, '[', ']'))).toEqual({ ok: false, message: `body nests deeper than ${JSON_MAX_DEPTH} levels` });
    const mixed = `${'{"a":['.repeat(17)}1${']}'.repeat(17)}`;
    expect(parse(mixed)).toEqual({ ok: false, message: `body nests deeper than ${JSON_MAX_DEPTH} levels` });
    // Brackets in a string are text: many of them send the body through the scan, which accepts it.
    expect(parse(`{"a":"${'{['.repeat(40)}"}`)).toEqual({ ok: true, value: { a: '{['.repeat(40) } });
  });
});

describe('parseJsonObject refuses every forbidden key behind its length and first-char filter (h17f)', () => {
  it('refuses each at any depth, accepts keys that share only its length and first char', () => {
    for (const k of FORBIDDEN_JSON_KEYS) {
      for (const text of [`{"${k}":1}`, `{"a":{"b":[{"${k}":{}}]}}`, `{"x":1,"${k}":null}`]) {
        expect(parseJsonObject(Buffer.from(text))).toEqual({ ok: false, message: `body contains the forbidden key "${k}"` });
      }
      const near = `${k.slice(0, -1)}${k.endsWith('x') ? 'y' : 'x'}`;
      expect(parseJsonObject(Buffer.from(`{"${near}":1}`))).toEqual({ ok: true, value: { [near]: 1 } });
    }
  });

  // A text search for the keys (tried by h21f, more instructions than the walk) would miss these.
  it('refuses a forbidden key spelled with escapes (h21f)', () => {
    const escape = (k: string, i: number): string => `${k.slice(0, i)}\\u${k.charCodeAt(i).toString(16).padStart(4, '0')}${k.slice(i + 1)}`;
    for (const k of FORBIDDEN_JSON_KEYS) {
      for (let i = 0; i < k.length; i++) {
        for (const text of [`{"${escape(k, i)}":1}`, `{"a":{"b":[{"${escape(k, i)}":{}}]}}`]) {
          expect(parseJsonObject(Buffer.from(text)), text).toEqual({ ok: false, message: `body contains the forbidden key "${k}"` });
        }
      }
      // An escape elsewhere in the body, the key written plainly or not at all.
      expect(parseJsonObject(Buffer.from(`{"a":"\\n","b":{"${k}":2}}`))).toEqual({ ok: false, message: `body contains the forbidden key "${k}"` });
      expect(parseJsonObject(Buffer.from(`{"a":"\\n${k}"}`))).toEqual({ ok: true, value: { a: `\n${k}` } });
      // The word as a value, or inside a longer key: accepted, as before.
      expect(parseJsonObject(Buffer.from(`{"a":"${k}","x${k}":1,"${k}y":2}`))).toEqual({ ok: true, value: { a: k, [`x${k}`]: 1, [`${k}y`]: 2 } });
    }
  });
});
