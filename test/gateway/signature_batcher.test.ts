// The front's side of the verify pool (src/gateway/signature_batcher.ts) against the real pool:
// message forms tried in order, one pool batch per event-loop turn, and a pool that cannot check
// answering "failed" (INTERNAL_ERROR upstream), never "invalid signature".
import { afterAll, describe, expect, it } from 'vitest';
import { addressFromPrivateKey, signPersonalMessage } from '../../src/auth/recover.js';
import { createVerifyPool } from '../../src/auth/verify_pool.js';
import { SignatureBatcher } from '../../src/gateway/signature_batcher.js';

const KEY = '0x' + '7b'.repeat(32);
const ADDRESS = addressFromPrivateKey(KEY);

function found(b: SignatureBatcher, messages: string[], signature: string): Promise<[string | null, boolean]> {
  return new Promise((resolve) => b.checkAny(messages, signature, ADDRESS, null, (m, failed) => resolve([m, failed])));
}

describe('SignatureBatcher', () => {
  const pool = createVerifyPool({ threads: 1 });
  afterAll(() => pool.close());

  it('finds the signed form among the accepted ones, trying the next only after a miss', async () => {
    const b = new SignatureBatcher(pool, 128);
    const signed = 'ringbook:cancel::q1:5';
    const sig = signPersonalMessage(KEY, signed);
    const runs = await Promise.all([
      found(b, [signed, 'other form'], sig),
      found(b, ['{"json":"form"}', signed], sig),
      found(b, ['a', 'b'], sig),
      found(b, [], sig),
    ]);
    expect(runs).toEqual([[signed, false], [signed, false], [null, false], [null, false]]);
    // One check each for the first (hit at once) and one for the empty list (none); two for the others.
    expect(b.verified).toBe(1 + 2 + 2);
    expect(b.pending).toBe(0);
  });

  it('checks one turn in one pool batch, and a full batch at once', async () => {
    const b = new SignatureBatcher(pool, 3);
    const signed = 'ringbook:cancel::q2:6';
    const sig = signPersonalMessage(KEY, signed);
    const all = Promise.all([0, 1, 2, 3, 4].map(() => b.verify(signed, sig, ADDRESS)));
    // Three went out as soon as the batch was full; two wait for the end of the turn.
    expect(b.pending).toBe(5);
    expect(b.verified).toBe(3);
    expect(await all).toEqual([true, true, true, true, true]);
    expect(b.verified).toBe(5);
  });

  it('a pool that cannot check answers failed, not invalid', async () => {
    const dying = createVerifyPool({ threads: 1, workerFile: new URL('../auth/fixtures/verify_worker_exits.mjs', import.meta.url) });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const b = new SignatureBatcher(dying, 128);
      const sig = signPersonalMessage(KEY, 'x');
      expect(await found(b, ['x', 'y'], sig)).toEqual([null, true]);
      await expect(b.verify('x', sig, ADDRESS)).rejects.toThrow(/could not check/);
    } finally {
      await dying.close();
    }
  });
});
