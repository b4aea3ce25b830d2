// The builder's leaf ids: numeric for the hot kinds, distinct across kinds, strings beyond 2^48.
import { describe, expect, it } from 'vitest';
import { accountLeafId, balanceLeafId, balanceLeafIdOf, nonceLeafId, orderLeafId, orderTermsLeafId, BALANCE_KEY_SPAN } from '../../src/da/leaf_ids.js';

describe('leaf ids', () => {
  it('are numbers for the hot kinds and never equal across kinds or keys', () => {
    const ids = [
      balanceLeafId(7, 1), balanceLeafId(1, 7), balanceLeafId(0xffffffff, 0xffff), nonceLeafId(7), accountLeafId(7),
      orderLeafId(7), orderTermsLeafId(7), orderLeafId(2 ** 48 - 1), nonceLeafId(0xffffffff),
    ];
    for (const id of ids) expect(typeof id).toBe('number');
    expect(new Set(ids).size).toBe(ids.length);
    expect(balanceLeafId(7, 1)).toBe(balanceLeafIdOf(7 * BALANCE_KEY_SPAN + 1));
  });

  it('fall back to distinct strings where the key does not fit 48 bits', () => {
    expect(orderLeafId(2 ** 48)).toBe(`4:${2 ** 48}`);
    expect(orderTermsLeafId(2 ** 50)).toBe(`15:${2 ** 50}`);
    expect(balanceLeafId(1, BALANCE_KEY_SPAN)).toBe(`1:1:${BALANCE_KEY_SPAN}`);
    expect(orderLeafId(2 ** 48)).not.toBe(orderTermsLeafId(2 ** 48));
  });
});
