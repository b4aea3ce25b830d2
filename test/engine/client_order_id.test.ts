// The fast engine's client order id as words (src/engine/client_id.ts): its validity check against
// the RegExp the reference engine and the front state the rule with, and the words against the
// string they stand for (round trip, equality, hash, the stale bytes after an id in its last word).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_ID_UNREPRESENTABLE, CLIENT_ID_WORDS, clientIdCopy, clientIdEquals, clientIdFromString, clientIdHash, clientIdString,
  clientIdValid, clientIdWordsOf, WordsRequest,
} from '../../src/engine/client_id.js';
import { emptyRequest } from '../../src/engine/types.js';
import { CLIENT_ORDER_ID_RE } from '../../src/engine/reference/reference_values.js';

function words(s: string): Int32Array {
  const w = new Int32Array(CLIENT_ID_WORDS);
  clientIdFromString(s, w, 0);
  return w;
}

function valid(s: string): boolean {
  return clientIdValid(words(s), 0);
}

/** Whether a string is what a record can carry: at most 36 units, each below 0x100. */
function representable(s: string): boolean {
  return s.length <= 36 && [...s].every((_, i) => s.charCodeAt(i) <= 0xff);
}

describe('clientIdValid (the id made words from its string)', () => {
  it('agrees with the RegExp on every single UTF-16 unit, alone and inside a valid id', () => {
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      for (const id of [ch, `a${ch}`, `${ch}9`, `x${ch}y`]) expect(valid(id)).toBe(CLIENT_ORDER_ID_RE.test(id));
    }
  });

  it('agrees with the RegExp at the length bounds', () => {
    for (let n = 0; n <= 40; n++) {
      for (const unit of ['a', 'Z', '0', '_', '-', '.']) {
        const id = unit.repeat(n);
        expect(valid(id)).toBe(CLIENT_ORDER_ID_RE.test(id));
      }
    }
    expect(valid('a'.repeat(36))).toBe(true);
    expect(valid('a'.repeat(37))).toBe(false);
    expect(valid('')).toBe(false);
    expect(valid('abc\n')).toBe(false);
  });

  it('agrees with the RegExp on random strings', () => {
    const units = fc.constantFrom(...'aAzZ09_-.\n /@[`{é💥'.split(''), ...'abcXYZ789_-'.split(''));
    fc.assert(fc.property(fc.array(units, { maxLength: 40 }), (parts) => {
      const id = parts.join('');
      expect(valid(id)).toBe(CLIENT_ORDER_ID_RE.test(id));
    }), { numRuns: 3000 });
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (id) => {
      expect(valid(id)).toBe(CLIENT_ORDER_ID_RE.test(id));
    }), { numRuns: 3000 });
  });
});

describe('client id words', () => {
  const ids = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.array(fc.integer({ min: 0, max: 0x1ff }), { maxLength: 40 }).map((cs) => String.fromCharCode(...cs)),
    fc.stringMatching(/^[A-Za-z0-9_-]{0,36}$/),
  );

  it('stand for their string exactly: round trip, equality, hash; an unrepresentable string equals nothing', () => {
    fc.assert(fc.property(ids, ids, fc.integer({ min: 0, max: 1000 }), (a, b, account) => {
      const wa = words(a);
      const wb = words(b);
      if (!representable(a)) {
        expect(wa[0]).toBe(CLIENT_ID_UNREPRESENTABLE);
      } else {
        expect(wa[0]).toBe(a.length);
        expect(clientIdString(wa, 0)).toBe(a);
      }
      const both = representable(a) && representable(b);
      // Stored ids are representable; equality is asked of a stored id and any request's.
      if (representable(a)) expect(clientIdEquals(wa, 0, wb, 0)).toBe(both && a === b);
      if (both && a === b) expect(clientIdHash(account, wa, 0)).toBe(clientIdHash(account, wb, 0));
    }), { numRuns: 5000 });
  });

  it('ignore the bytes after the id in its last word (a record slot\'s stale bytes), when compared, hashed, copied and read', () => {
    fc.assert(fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{1,36}$/), fc.integer(), (id, junk) => {
      const clean = words(id);
      const dirty = words(id);
      const tail = id.length & 3;
      for (let k = 1 + ((id.length + 3) >> 2); k < CLIENT_ID_WORDS; k++) dirty[k] = junk;
      if (tail !== 0) {
        const last = 1 + (id.length >> 2);
        dirty[last] = (dirty[last] & ((1 << (tail * 8)) - 1)) | (junk & ~((1 << (tail * 8)) - 1));
      }
      expect(clientIdEquals(clean, 0, dirty, 0)).toBe(true);
      expect(clientIdEquals(dirty, 0, clean, 0)).toBe(true);
      expect(clientIdHash(7, dirty, 0)).toBe(clientIdHash(7, clean, 0));
      expect(clientIdValid(dirty, 0)).toBe(true);
      expect(clientIdString(dirty, 0)).toBe(id);
      const copy = new Int32Array(CLIENT_ID_WORDS + 5).fill(-1);
      clientIdCopy(dirty, 0, copy, 5);
      expect(clientIdString(copy, 5)).toBe(id);
      expect(clientIdEquals(copy, 5, clean, 0)).toBe(true);
    }), { numRuns: 2000 });
  });

  it('differ between accounts in the hash\'s seed and between ids of one shared prefix', () => {
    expect(clientIdHash(1, words('abcd'), 0)).not.toBe(clientIdHash(2, words('abcd'), 0));
    expect(clientIdEquals(words('abcd'), 0, words('abcde'), 0)).toBe(false);
    expect(clientIdEquals(words('a\u0000'), 0, words('a'), 0)).toBe(false);
  });
});

describe('WordsRequest', () => {
  it('makes its string from the words only when read, once, and keeps words and string together when assigned', () => {
    const r = new WordsRequest();
    expect(r.client_order_id).toBe('');
    expect(r.client_id[0]).toBe(0);
    r.client_id.set(words('q-17'));
    r.clientIdWritten();
    expect(r.client_order_id).toBe('q-17');
    expect(r.client_order_id).toBe(r.client_order_id);
    r.client_order_id = 'zz';
    expect(r.client_id[0]).toBe(2);
    expect(clientIdString(r.client_id, 0)).toBe('zz');
    r.client_order_id = 'x'.repeat(37);
    expect(r.client_id[0]).toBe(CLIENT_ID_UNREPRESENTABLE);
    expect(r.client_order_id).toBe('x'.repeat(37));
  });

  it('has every field of a plain Request, with its starting values', () => {
    const r = new WordsRequest();
    const plain = emptyRequest();
    for (const k of Object.keys(plain) as (keyof typeof plain)[]) expect(r[k]).toBe(plain[k]);
  });

  it('hands the fast engine its own words; a plain Request\'s are made from its string', () => {
    const r = new WordsRequest();
    r.client_order_id = 'abc';
    const scratch = new Int32Array(CLIENT_ID_WORDS);
    expect(clientIdWordsOf(r, scratch)).toBe(r.client_id);
    const plain = emptyRequest();
    plain.client_order_id = 'abc';
    expect(clientIdWordsOf(plain, scratch)).toBe(scratch);
    expect(clientIdEquals(scratch, 0, r.client_id, 0)).toBe(true);
  });
});
