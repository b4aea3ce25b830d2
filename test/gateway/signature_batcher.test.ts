// The front's side of the verify pool (src/gateway/signature_batcher.ts) against the real pool:
// message forms tried in order, one pool batch per event-loop turn, and a pool that cannot check
// answering "failed" (INTERNAL_ERROR upstream), never "invalid signature".
import { afterAll, describe, expect, it } from 'vitest';
import { addressFromPrivateKey, signPersonalMessage } from '../../src/auth/recover.js';
import { createVerifyPool } from '../../src/auth/verify_pool.js';
import { ArrivalOrder } from '../../src/gateway/arrival_order.js';
import { SignatureBatcher, VALID } from '../../src/gateway/signature_batcher.js';

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

  it('sends a large turn in pieces of the task size, each answered on its own', async () => {
    const p = createVerifyPool({ threads: 1, taskSize: 4 });
    try {
      const b = new SignatureBatcher(p, 128);
      const sig = signPersonalMessage(KEY, 'piece');
      const checks = Array.from({ length: 10 }, () => b.verify('piece', sig, ADDRESS));
      // 10 checks in one turn: three pieces (4 + 3 + 3), three tasks.
      await new Promise((r) => setImmediate(r));
      expect(p.pendingTasks).toBe(3);
      expect(await Promise.all(checks)).toEqual(new Array(10).fill(true));
    } finally {
      await p.close();
    }
  });

  it('keeps a wallet\'s order when the front checks a later task itself and answers it first', async () => {
    // The worker claims the first task and holds it until the front has taken the later one, which
    // waits past the 250 ms limit and is checked by the front (VerifyPool.stealLate): its verdicts
    // arrive first.
    const p = createVerifyPool({
      threads: 1, taskSize: 2, stealAfterUs: 250_000, workerFile: new URL('../auth/fixtures/verify_worker_holds_first.mjs', import.meta.url),
    });
    try {
      for (let i = 0; i < 400 && !p.workersReady; i++) await new Promise((r) => setTimeout(r, 25));
      expect(p.workersReady).toBe(true);
      const b = new SignatureBatcher(p, 128);
      const arrival = new ArrivalOrder();
      const verdicts: number[] = [];
      const ran: [number, number][] = [];
      const done: Promise<void>[] = [];
      const send = (k: number): void => {
        const message = `ringbook:cancel::order-${k}:${k}`;
        const ticket = arrival.take(ADDRESS);
        done.push(new Promise((resolve) => b.check(message, signPersonalMessage(KEY, message), ADDRESS, null, (v) => {
          verdicts.push(k);
          arrival.release(ADDRESS, ticket, () => {
            ran.push([k, v]);
            resolve();
          });
        })));
      };
      send(1); // this turn: the first task
      await new Promise((r) => setTimeout(r, 20));
      send(2); // a later turn: the second task
      send(3);
      await Promise.all(done);
      expect(verdicts).toEqual([2, 3, 1]);
      expect(ran).toEqual([[1, VALID], [2, VALID], [3, VALID]]);
      expect(p.stolenChecked).toBe(2);
    } finally {
      await p.close();
    }
  });
});
