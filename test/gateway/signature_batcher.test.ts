// The front's side of the verify pool (src/gateway/signature_batcher.ts) against the real pool:
// message forms tried in order, one pool batch per event-loop turn, and a pool that cannot check
// answering "unchecked" (503 OVERLOADED upstream), a front check that throws "failed"
// (INTERNAL_ERROR upstream), never "invalid signature".
import { afterAll, describe, expect, it } from 'vitest';
import { addressFromPrivateKey, signPersonalMessage } from '../../src/auth/sign.js';
import { createVerifyPool } from '../../src/auth/verify_pool.js';
import { ArrivalOrder } from '../../src/gateway/arrival_order.js';
import { FAILED, INVALID, SignatureBatcher, SignatureCheckError, UNCHECKED, VALID, type CheckFailure } from '../../src/gateway/signature_batcher.js';
import { StageStamps } from '../../src/gateway/stage_timings.js';
import { INLINE_AFTER_LOAD_MS, INLINE_BUSY_WINDOW_MS } from '../../src/auth/verify_limits.js';

const KEY = '0x' + '7b'.repeat(32);
const ADDRESS = addressFromPrivateKey(KEY);

function found(b: SignatureBatcher, messages: string[], signature: string): Promise<[string | null, CheckFailure]> {
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
    expect(runs).toEqual([[signed, 0], [signed, 0], [null, 0], [null, 0]]);
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

  it('a pool that cannot check answers unchecked, not invalid', async () => {
    const dying = createVerifyPool({ threads: 1, workerFile: new URL('../auth/fixtures/verify_worker_exits.mjs', import.meta.url) });
    try {
      await dying.ready(); // its worker serves (READY) and takes the batch it dies on: the event the 300 ms sleep stood for
      expect(dying.workersReady).toBe(true);
      const b = new SignatureBatcher(dying, 128);
      const sig = signPersonalMessage(KEY, 'x');
      expect(await found(b, ['x', 'y'], sig)).toEqual([null, UNCHECKED]);
      const e = await b.verify('x', sig, ADDRESS).then(() => null, (err: unknown) => err);
      expect(e).toBeInstanceOf(SignatureCheckError);
      expect((e as SignatureCheckError).failure).toBe(UNCHECKED);
      expect((e as Error).message).toMatch(/could not check/);
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
      await p.ready(); // READY: the worker serves its ring (no 10 s poll)
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
      // A later turn, not a 20 ms sleep: this immediate runs after the flush send(1) scheduled.
      await new Promise((r) => setImmediate(r));
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

  it('at light load checks on the front at arrival (verdict before check returns); a busier turn and the next go to the pool', async () => {
    const p = createVerifyPool({ threads: 1 });
    try {
      await p.ready(); // READY: the worker serves its ring (no 10 s poll)
      const b = new SignatureBatcher(p, 128, 2);
      const message = 'ringbook:cancel::inline:1';
      const sig = signPersonalMessage(KEY, message);
      const got: number[] = [];
      const stamps = new StageStamps();
      const before = performance.timeOrigin + performance.now();
      b.check(message, sig, ADDRESS, stamps, (v) => got.push(v));
      // Checked already, in this turn, with the inline check's times as the verify stage.
      expect(got).toEqual([VALID]);
      expect(p.inlineChecked).toBe(1);
      expect(stamps.verify_start).toBeGreaterThanOrEqual(before);
      expect(stamps.verify_end).toBeGreaterThanOrEqual(stamps.verify_start);
      b.check(message + 'x', sig, ADDRESS, null, (v) => got.push(v)); // the budget's second: a bad signature
      expect(got).toEqual([VALID, INVALID]);
      // The third of the turn goes to the pool: answered in a later turn.
      const third = new Promise<number>((resolve) => b.check(message, sig, ADDRESS, null, resolve));
      expect(got).toHaveLength(2);
      expect(b.pending).toBe(1);
      expect(await third).toBe(VALID);
      expect(p.inlineChecked).toBe(2);
      // Light again once INLINE_AFTER_LOAD_MS has passed since that turn of 3 (> 2) ended (the
      // turns right after it are the pool's: test/auth/verify_inline.test.ts, on a test clock).
      await new Promise((r) => setTimeout(r, 5 * INLINE_AFTER_LOAD_MS));
      b.check(message, sig, ADDRESS, null, (v) => got.push(v));
      expect(got).toEqual([VALID, INVALID, VALID]);
      expect(p.inlineChecked).toBe(3);
      await new Promise((r) => setImmediate(r));
      // A task in flight (another caller's): a lone check of a light turn waits for the pool, not the front.
      const busy = p.verifyBatch(Array.from({ length: 10 }, () => ({ message, signature_hex: sig, expected_address: ADDRESS })));
      expect(p.idle).toBe(false);
      const lone = new Promise<number>((resolve) => b.check(message, sig, ADDRESS, null, resolve));
      expect(p.inlineChecked).toBe(3);
      expect(await lone).toBe(VALID);
      expect(Array.from(await busy)).toEqual(new Array(10).fill(VALID));
      expect(p.inlineChecked).toBe(3);
      expect(b.verified).toBe(5);
      expect(b.pending).toBe(0);
    } finally {
      await p.close();
    }
  });

  it('at medium load (inline_busy_max_pct) checks a turn\'s first ones on the front with a task in flight, while the front was quiet', async () => {
    const p = createVerifyPool({ threads: 1 });
    try {
      await p.ready(); // READY: the worker serves its ring (no 10 s poll)
      const message = 'ringbook:cancel::medium:1';
      const sig = signPersonalMessage(KEY, message);
      const item = { message, signature_hex: sig, expected_address: ADDRESS };
      const medium = new SignatureBatcher(p, 128, 2, 90);
      const light_only = new SignatureBatcher(p, 128, 2, 0);
      // Turns of a lone check a few ms apart on a mostly idle front, until a busy window closes
      // (at the first turn end INLINE_BUSY_WINDOW_MS after it opened; one longer than twice that
      // spanned an idle spell and is not believed, so the turns keep coming). Bounded.
      let rounds = 0;
      for (; rounds < 200 && !medium.frontQuiet; rounds++) {
        for (const b of [medium, light_only]) b.check(message, sig, ADDRESS, null, () => undefined);
        await new Promise((r) => setTimeout(r, INLINE_BUSY_WINDOW_MS / 4));
      }
      expect(medium.frontQuiet, `quiet after ${rounds} rounds`).toBe(true);
      expect(light_only.frontQuiet).toBe(false);
      expect(p.inlineChecked).toBe(2 * rounds); // the light-load rule, both
      // A task in flight: a turn of three checks on each batcher.
      const busy = p.verifyBatch(Array.from({ length: 20 }, () => item));
      expect(p.idle).toBe(false);
      const answers: Promise<number>[] = [];
      const here: number[] = [];
      for (const b of [medium, light_only]) {
        const before = p.inlineChecked;
        for (let i = 0; i < 3; i++) answers.push(new Promise<number>((resolve) => b.check(message, sig, ADDRESS, null, resolve)));
        here.push(p.inlineChecked - before);
      }
      // The quiet front takes its budget (2) of the turn itself; the light-load rule takes none.
      expect(here).toEqual([2, 0]);
      expect(await Promise.all(answers)).toEqual(new Array(6).fill(VALID));
      expect(Array.from(await busy)).toEqual(new Array(20).fill(VALID));
      expect(medium.pending + light_only.pending).toBe(0);
    } finally {
      await p.close();
    }
  });

  it('0 inline: every check goes to the pool; a pool closed under it answers unchecked', async () => {
    const p = createVerifyPool({ threads: 1 });
    const b = new SignatureBatcher(p, 128, 0);
    const sig = signPersonalMessage(KEY, 'z');
    expect(await b.verify('z', sig, ADDRESS)).toBe(true);
    expect(p.inlineChecked).toBe(0);
    await p.close();
    const inline = new SignatureBatcher(p, 128, 2);
    expect(await new Promise<number>((resolve) => inline.check('z', sig, ADDRESS, null, resolve))).toBe(UNCHECKED);
    expect(p.inlineChecked).toBe(0);
  });

  it('an inline check that throws answers failed and is counted nowhere (not as the worker\'s)', async () => {
    const p = createVerifyPool({ threads: 1 });
    try {
      await p.ready(); // READY: the worker serves its ring (no 10 s poll)
      const b = new SignatureBatcher(p, 128, 2);
      const sig = signPersonalMessage(KEY, 'w');
      // The front's own check failing (the codec or recovery throwing on this thread).
      p.checkOneHere = () => {
        throw new Error('inline check broke');
      };
      const got: number[] = [];
      b.check('w', sig, ADDRESS, null, (v) => got.push(v));
      expect(got).toEqual([FAILED]);
      // The metrics take the worker's share as verified - inline - stolen: a failed inline check
      // counted in `verified` alone would show as a check no worker made.
      expect(p.inlineChecked).toBe(0);
      expect(b.verified).toBe(0);
    } finally {
      await p.close();
    }
  });
});
