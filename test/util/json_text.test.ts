// JsonText must write what JSON.stringify writes, for numbers at the edges of its digit steps and
// for strings that need escapes or are not ASCII, and grow past its first buffer.
import { describe, expect, it } from 'vitest';
import { asciiRun, JsonText } from '../../src/util/json_text.js';
import { Rng } from '../../src/util/prng.js';

const EDGE_NUMBERS = [
  0, -0, 1, 9, 10, 99, 100, 999_999_999, 1e9, 1e9 + 1, 1_000_000_010, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 10 ** 15,
  Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, -1, -1e9, 2 ** 53, 1.5, -0.25, 1e21, 1e-7, NaN, Infinity, -Infinity,
];

describe('JsonText', () => {
  it('append copies ASCII runs, short and long, as raw writes them, also after growing', () => {
    const t = new JsonText();
    const runs = ['', '{', ',"a":', ',"client_order_id":', 'x'.repeat(200), ',"is_maker":false}'];
    const enc = new TextEncoder();
    let expected = '';
    t.begin();
    for (let round = 0; round < 30; round++) {
      for (const r of runs) {
        t.append(enc.encode(r)).num(round);
        expected += r + String(round);
      }
    }
    expect(expected.length).toBeGreaterThan(2048); // past the first buffer
    expect(t.text()).toBe(expected);
    expect(new TextDecoder().decode(t.view())).toBe(expected);
    expect(t.begin().raw('{"k":').append(enc.encode('"v"}')).text()).toBe('{"k":"v"}');
    expect(t.isAscii).toBe(true);
    expect(t.begin().str('é').isAscii).toBe(false);
  });

  it('writes numbers as JSON.stringify does', () => {
    const t = new JsonText();
    for (const x of EDGE_NUMBERS) expect(t.begin().num(x).text()).toBe(JSON.stringify(x));
    const rng = new Rng(3);
    for (let i = 0; i < 5000; i++) {
      const x = rng.int(-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
      expect(t.begin().num(x).text()).toBe(JSON.stringify(x));
    }
  });

  it('writes strings as JSON.stringify does, escapes and non-ASCII included, and mixes them in one text', () => {
    const t = new JsonText();
    const strings = ['', 'ETH-USDC', 'a"b', 'back\\slash', 'line\nbreak', '\u0000\u001f', 'é', 'ünïcödé 😀', '\ud800', '~\u007f'];
    for (const s of strings) expect(t.begin().str(s).text()).toBe(JSON.stringify(s));
    const text = t.begin().raw('{"a":').str('é"').raw(',"b":').num(-12).raw(',"c":').str('plain').raw('}').text();
    expect(text).toBe(JSON.stringify({ a: 'é"', b: -12, c: 'plain' }));
    expect(t.begin().raw('{"x":').str('ok').raw('}').text()).toBe('{"x":"ok"}'); // ASCII again after a UTF-8 text
  });

  it('grows past its first buffer without losing what it wrote', () => {
    const t = new JsonText().begin();
    const parts: number[] = [];
    t.raw('[');
    for (let i = 0; i < 2000; i++) {
      t.raw(i === 0 ? '' : ',').num(i * 1_000_003);
      parts.push(i * 1_000_003);
    }
    expect(t.raw(']').text()).toBe(JSON.stringify(parts));
  });
});

describe('asciiRun (the fixed runs JsonText.append copies)', () => {
  it('gives the ASCII bytes of a run and refuses any other text at once', () => {
    expect(Array.from(asciiRun(',"side":'))).toEqual(Array.from(Buffer.from(',"side":', 'latin1')));
    const t = new JsonText().begin();
    expect(t.append(asciiRun('{"a":')).raw('1').append(asciiRun('}')).text()).toBe('{"a":1}');
    expect(() => asciiRun(',"prïce":')).toThrow(RangeError);
    expect(() => asciiRun('\u20ac')).toThrow('is not ASCII');
  });
});
