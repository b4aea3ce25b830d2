// Validators of path, query and body values, on fixed cases and on generated hostile input.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseAddress,
  parseMarketId,
  parseQuery,
  parseSafeUint,
  parseSignatureHex,
  parseUintString,
  type Parsed,
} from '../../src/gateway/params.js';

function value<T>(p: Parsed<T>): T {
  if (!p.ok) throw new Error(`expected ok, got: ${p.message}`);
  return p.value;
}

function message<T>(p: Parsed<T>): string {
  if (p.ok) throw new Error(`expected an error, got ${String(p.value)}`);
  return p.message;
}

/** Strings an attacker would try: unicode, controls, near-misses of the valid shapes. */
const hostileString = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 60 }),
  fc.constantFrom(
    '', ' ', '0x', '0X' + 'a'.repeat(40), '0x' + 'g'.repeat(40), ' 0x' + 'a'.repeat(40), '0x' + 'a'.repeat(40) + '\n',
    '0x' + 'a'.repeat(39), '0x' + 'a'.repeat(41), '０x' + 'a'.repeat(40), 'eth-usdc', 'ETH_USDC', 'ETH-USDC-X',
    'ETH--USDC', '-USDC', 'ETH-', 'ABCDEFGHIJKLM-USDC', 'ETH-USDC\u0000', 'ETH-ＵSDC', '%45TH-USDC', '+1', '-1', '01',
    '1e3', '0x10', '1.0', ' 1', '1 ', '９', '99999999999999999', '__proto__', 'constructor', 'NaN', 'Infinity',
  ),
);

const anyJsonish = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.double(),
  fc.integer(),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
  fc.bigInt(),
);

describe('parseAddress', () => {
  it('accepts 0x + 40 hex in any case and returns lowercase', () => {
    const mixed = '0xAbCdEf0123456789aBcDeF0123456789ABCDEF01';
    expect(value(parseAddress(mixed))).toBe(mixed.toLowerCase());
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-fA-F]{40}$/), (hex) => {
        expect(value(parseAddress('0x' + hex))).toBe(('0x' + hex).toLowerCase());
      }),
    );
  });

  it('refuses everything else with a message naming the field', () => {
    expect(message(parseAddress('0X' + 'a'.repeat(40)))).toMatch(/^address must be 0x followed by 40 hexadecimal digits/);
    expect(message(parseAddress(42, 'user'))).toBe('user must be a string, got 42');
    expect(message(parseAddress(null, 'user'))).toBe('user must be a string, got null');
    fc.assert(
      fc.property(hostileString, (s) => {
        const p = parseAddress(s, 'user');
        expect(p.ok).toBe(/^0x[0-9a-fA-F]{40}$/.test(s));
        if (!p.ok) {
          expect(p.message.startsWith('user ')).toBe(true);
          expect(p.message.length).toBeLessThan(200);
        }
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(anyJsonish, (v) => {
        expect(parseAddress(v).ok).toBe(false);
      }),
    );
  });
});

describe('parseMarketId', () => {
  it('accepts BASE-QUOTE of 1 to 12 uppercase letters and digits', () => {
    for (const id of ['ETH-USDC', 'BTC-USDC', 'A-B', '1INCH-USDC', 'ABCDEFGHIJKL-ABCDEFGHIJKL']) {
      expect(value(parseMarketId(id))).toBe(id);
    }
  });

  it('refuses hostile strings and non-strings', () => {
    expect(message(parseMarketId('eth-usdc'))).toMatch(/^market_id must look like BASE-QUOTE/);
    expect(message(parseMarketId(['ETH-USDC'], 'market'))).toBe('market must be a string, got an array');
    fc.assert(
      fc.property(hostileString, (s) => {
        const p = parseMarketId(s);
        expect(p.ok).toBe(/^[A-Z0-9]{1,12}-[A-Z0-9]{1,12}$/.test(s));
        if (!p.ok) expect(p.message.startsWith('market_id ')).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseSignatureHex', () => {
  it('accepts 0x + 130 hex and returns lowercase; refuses other lengths and shapes', () => {
    const sig = '0x' + 'AB'.repeat(65);
    expect(value(parseSignatureHex(sig))).toBe(sig.toLowerCase());
    expect(message(parseSignatureHex('0x' + 'ab'.repeat(64)))).toMatch(/^signature must be 0x followed by 130 hexadecimal digits/);
    expect(message(parseSignatureHex('0x' + 'a'.repeat(100_000)))).toMatch(/a string of 100002 characters$/);
    expect(message(parseSignatureHex(undefined))).toBe('signature must be a string, got nothing');
    fc.assert(
      fc.property(hostileString, (s) => {
        expect(parseSignatureHex(s).ok).toBe(/^0x[0-9a-fA-F]{130}$/.test(s));
      }),
    );
  });
});

describe('parseSafeUint', () => {
  it('accepts non-negative safe integers', () => {
    for (const n of [0, 1, 20, 2 ** 32, Number.MAX_SAFE_INTEGER]) expect(value(parseSafeUint(n, 'price'))).toBe(n);
    expect(Object.is(value(parseSafeUint(-0, 'price')), 0)).toBe(true);
    fc.assert(
      fc.property(fc.maxSafeNat(), (n) => {
        expect(value(parseSafeUint(n, 'quantity'))).toBe(n);
      }),
    );
  });

  it('refuses strings, floats, NaN, infinities, negatives, > 2^53 - 1, booleans, null', () => {
    const cases: Array<[unknown, string]> = [
      ['5', 'price must be a JSON number (an integer), got "5"'],
      [1.5, 'price must be an integer, got 1.5'],
      [NaN, 'price must be a finite integer, got NaN'],
      [Infinity, 'price must be a finite integer, got Infinity'],
      [-1, 'price must not be negative, got -1'],
      [Number.MAX_SAFE_INTEGER + 1, `price must be at most ${Number.MAX_SAFE_INTEGER}, got 9007199254740992`],
      [true, 'price must be a JSON number (an integer), got a boolean (true)'],
      [null, 'price must be a JSON number (an integer), got null'],
      [undefined, 'price must be a JSON number (an integer), got nothing'],
      [10n, 'price must be a JSON number (an integer), got a bigint'],
      [{}, 'price must be a JSON number (an integer), got an object'],
    ];
    for (const [v, m] of cases) expect(message(parseSafeUint(v, 'price'))).toBe(m);
    fc.assert(
      fc.property(anyJsonish, (v) => {
        const p = parseSafeUint(v, 'nonce');
        const valid = typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
        expect(p.ok).toBe(valid);
        if (!p.ok) expect(p.message.startsWith('nonce ')).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('applies min and max', () => {
    expect(message(parseSafeUint(0, 'quantity', { min: 1 }))).toBe('quantity must be at least 1, got 0');
    expect(message(parseSafeUint(501, 'limit', { max: 500 }))).toBe('limit must be at most 500, got 501');
    expect(value(parseSafeUint(500, 'limit', { min: 1, max: 500 }))).toBe(500);
  });
});

describe('parseUintString', () => {
  it('accepts canonical decimal integers', () => {
    for (const [s, n] of [['0', 0], ['7', 7], ['500', 500], ['9007199254740991', Number.MAX_SAFE_INTEGER]] as const) {
      expect(value(parseUintString(s, 'limit'))).toBe(n);
    }
    fc.assert(
      fc.property(fc.maxSafeNat(), (n) => {
        expect(value(parseUintString(String(n), 'limit'))).toBe(n);
      }),
    );
  });

  it('refuses signs, spaces, leading zeros, fractions, exponents, hex, too many digits', () => {
    for (const s of ['', '+1', '-1', ' 1', '1 ', '01', '1.0', '1e3', '0x10', '９', '9007199254740992', '12345678901234567']) {
      expect(message(parseUintString(s, 'limit'))).toMatch(/^limit must /);
    }
    expect(message(parseUintString(5, 'limit'))).toBe('limit must be a string of digits, got 5');
    expect(message(parseUintString('600', 'limit', { max: 500 }))).toBe('limit must be at most 500, got 600');
    fc.assert(
      fc.property(hostileString, (s) => {
        const p = parseUintString(s, 'from');
        const valid = /^(0|[1-9][0-9]*)$/.test(s) && Number.isSafeInteger(Number(s));
        expect(p.ok).toBe(valid);
        if (p.ok) expect(String(p.value)).toBe(s);
        else expect(p.message.startsWith('from ')).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('parseQuery', () => {
  it('decodes names and values like a form, strictly', () => {
    expect(value(parseQuery(''))).toEqual(new Map());
    expect(value(parseQuery('limit=10&from=0x%41b&note=a+b%20c&flag&&x='))).toEqual(
      new Map([['limit', '10'], ['from', '0xAb'], ['note', 'a b c'], ['flag', ''], ['x', '']]),
    );
    expect(value(parseQuery('%C3%A9=%E2%82%AC'))).toEqual(new Map([['é', '€']]));
    expect(value(parseQuery('a=1=2'))).toEqual(new Map([['a', '1=2']]));
  });

  it('refuses malformed escapes, invalid UTF-8, empty names, repeats, too many or too long', () => {
    expect(message(parseQuery('a=%zz'))).toBe('query parameter "a" has a malformed percent escape');
    expect(message(parseQuery('a=%'))).toMatch(/malformed percent escape/);
    expect(message(parseQuery('a=%ff'))).toMatch(/malformed percent escape/);
    expect(message(parseQuery('%e2%82=1'))).toMatch(/^query parameter name "%e2%82" has a malformed/);
    expect(message(parseQuery('=1'))).toBe('query parameter names must not be empty');
    expect(message(parseQuery('a=1&b=2&a=3'))).toBe('query parameter "a" must not be repeated');
    const many = Array.from({ length: 33 }, (_, i) => `p${i}=1`).join('&');
    expect(message(parseQuery(many))).toBe('query string must have at most 32 parameters');
    expect(value(parseQuery(many, { max_params: 33 })).size).toBe(33);
    expect(message(parseQuery('a=' + 'x'.repeat(2047)))).toBe('query string must be at most 2048 characters, got 2049');
  });

  it('never throws and stays within bounds on hostile input; round-trips encoded pairs', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (q) => {
        const p = parseQuery(q, { max_params: 8, max_length: 256 });
        if (p.ok) {
          expect(p.value.size).toBeLessThanOrEqual(8);
          expect(q.length).toBeLessThanOrEqual(256);
        } else {
          expect(p.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }), fc.string({ unit: 'grapheme', maxLength: 20 })), {
          selector: ([k]) => k,
          maxLength: 10,
        }),
        (pairs) => {
          const q = new URLSearchParams(pairs).toString();
          expect(value(parseQuery(q))).toEqual(new Map(pairs));
        },
      ),
    );
  });
});
