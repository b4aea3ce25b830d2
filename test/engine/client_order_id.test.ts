// The fast engine's client order id check (a loop over char codes) against the RegExp the
// reference engine and the front state the rule with.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clientOrderIdValid } from '../../src/engine/engine_orders.js';
import { CLIENT_ORDER_ID_RE } from '../../src/engine/reference/reference_values.js';

describe('clientOrderIdValid', () => {
  it('agrees with the RegExp on every single UTF-16 unit, alone and inside a valid id', () => {
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      for (const id of [ch, `a${ch}`, `${ch}9`, `x${ch}y`]) expect(clientOrderIdValid(id)).toBe(CLIENT_ORDER_ID_RE.test(id));
    }
  });

  it('agrees with the RegExp at the length bounds', () => {
    for (let n = 0; n <= 40; n++) {
      for (const unit of ['a', 'Z', '0', '_', '-', '.']) {
        const id = unit.repeat(n);
        expect(clientOrderIdValid(id)).toBe(CLIENT_ORDER_ID_RE.test(id));
      }
    }
    expect(clientOrderIdValid('a'.repeat(36))).toBe(true);
    expect(clientOrderIdValid('a'.repeat(37))).toBe(false);
    expect(clientOrderIdValid('')).toBe(false);
    expect(clientOrderIdValid('abc\n')).toBe(false);
  });

  it('agrees with the RegExp on random strings', () => {
    const units = fc.constantFrom(...'aAzZ09_-.\n /@[`{é💥'.split(''), ...'abcXYZ789_-'.split(''));
    fc.assert(fc.property(fc.array(units, { maxLength: 40 }), (parts) => {
      const id = parts.join('');
      expect(clientOrderIdValid(id)).toBe(CLIENT_ORDER_ID_RE.test(id));
    }), { numRuns: 3000 });
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (id) => {
      expect(clientOrderIdValid(id)).toBe(CLIENT_ORDER_ID_RE.test(id));
    }), { numRuns: 3000 });
  });
});
