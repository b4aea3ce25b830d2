// The signature batcher's lists (src/gateway/signature_batcher.ts) against a scripted pool: a list
// handed to the pool is never written into while the pool holds it nor after it rejected it (its
// other tasks of the batch may still be encoded from it later: verify_pool.ts's backlog), and every
// request gets its own verdict under interleaved turns, answers in any order, rejections, pieces and
// full batches. A guard for any reuse of the lists (h25f measured one, commit bc8ccc8: it cut bytes
// but not instructions, docs/benchmarks.md); it fails on such a reuse that recycles a rejected
// list or a list the pool still holds.
import { describe, expect, it } from 'vitest';
import type { SignedMessage } from '../../src/auth/verify.js';
import type { VerifyPool } from '../../src/auth/verify_pool.js';
import { INVALID, SignatureBatcher, UNCHECKED, VALID, type CheckFailure } from '../../src/gateway/signature_batcher.js';

/** One verifyBatch call: the list as given, what it held then, and the batcher's callbacks. */
interface Call {
  items: readonly SignedMessage[];
  sent: string[];
  ok: (v: Uint8Array) => void;
  err: (e: unknown) => void;
}

const key = (item: SignedMessage): string => `${item.message}#${item.signature_hex}#${item.expected_address}#${(item.other_addresses ?? []).join(',')}`;

/**
 * A pool whose answers the test gives: verifyBatch records the call and returns a thenable whose
 * callbacks the test calls. A signature `signer|message` verifies for that signer: VALID for the
 * expected address, 2 + i for other_addresses[i], else INVALID.
 */
class ScriptedPool {
  readonly calls: Call[] = [];
  readonly taskSize: number;
  readonly idle = false;
  readonly broken = null;
  constructor(task_size: number) {
    this.taskSize = task_size;
  }
  verifyBatch(items: readonly SignedMessage[]): PromiseLike<Uint8Array> {
    const call = { items, sent: items.map(key) } as Call;
    this.calls.push(call);
    return {
      then: (ok: (v: Uint8Array) => void, err: (e: unknown) => void) => {
        call.ok = ok;
        call.err = err;
        return undefined as never;
      },
    } as PromiseLike<Uint8Array>;
  }
  stealLate(): number {
    return 0;
  }
  checkOneHere(): number {
    throw new Error('no inline checks here');
  }
  /** Answers `call` from the list as it is now (as a backlog task would be encoded from it). */
  answer(call: Call): void {
    // The list must still hold what it held when it was sent.
    expect(call.items.map(key)).toEqual(call.sent);
    call.ok(Uint8Array.from(call.items, (item) => {
      const [signer, message] = item.signature_hex.split('|');
      if (message !== item.message) return INVALID;
      if (signer === item.expected_address) return VALID;
      const i = (item.other_addresses ?? []).indexOf(signer);
      return i < 0 ? INVALID : VALID + 1 + i;
    }));
  }
}

const endOfTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

function batcher(pool: ScriptedPool, batch_max: number): SignatureBatcher {
  return new SignatureBatcher(pool as unknown as VerifyPool, batch_max);
}

describe('SignatureBatcher lists', () => {
  it('never reuses a list the pool rejected: later turns do not write into it', async () => {
    const pool = new ScriptedPool(100);
    const b = batcher(pool, 100);
    const verdicts: number[] = [];
    const check = (m: string): void => b.check(m, `0xa|${m}`, '0xa', null, (v) => verdicts.push(v));
    check('r1');
    check('r2');
    await endOfTurn();
    const rejected = pool.calls[0];
    rejected.err(new Error('a worker died holding a task of this batch'));
    expect(verdicts).toEqual([UNCHECKED, UNCHECKED]);
    for (let turn = 0; turn < 4; turn++) {
      check(`n${turn}a`);
      check(`n${turn}b`);
      check(`n${turn}c`);
      await endOfTurn();
      const call = pool.calls[pool.calls.length - 1];
      expect(call.items).not.toBe(rejected.items);
      pool.answer(call);
    }
    // The rejected batch's other tasks may still be encoded from it: it holds what it was sent with.
    expect(rejected.items.map(key)).toEqual(rejected.sent);
    expect(verdicts.length).toBe(2 + 4 * 3);
    expect(b.pending).toBe(0);
  });

  it('answers each request once with its own verdict under interleaved turns, answers, rejections and pieces', async () => {
    // A small deterministic PRNG (mulberry32): the same interleaving every run.
    let seed = 0x2f6e1d;
    const rand = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return (((t ^ (t >>> 14)) >>> 0) % n);
    };
    const pool = new ScriptedPool(3); // pieces of 3
    const b = batcher(pool, 5); // a turn of 5 goes out at once
    const others = ['0xb', '0xc'];
    interface Req { forms: string[]; expected: [string | null, CheckFailure, string | null]; got: [string | null, CheckFailure, string | null][] }
    const reqs: Req[] = [];
    const rejected = new Set<Call>();
    const answered = new Set<Call>();
    const TURNS = 80;
    for (let turn = 0; turn < TURNS + 200 && (turn < TURNS || answered.size + rejected.size < pool.calls.length || b.pending > 0); turn++) {
      if (turn < TURNS) {
        for (let n = rand(8); n > 0; n--) {
          const id = reqs.length;
          const forms = Array.from({ length: 1 + rand(3) }, (_, k) => `r${id}f${k}`);
          const signed = rand(forms.length + 1) - 1; // -1: none of the forms
          const signer = ['0xa', '0xb', '0xc', '0xd'][rand(4)];
          const sig = `${signer}|${signed < 0 ? 'nothing' : forms[signed]}`;
          const candidates = rand(2) === 0 ? undefined : others;
          const hit = signed >= 0 && (signer === '0xa' || (candidates !== undefined && candidates.includes(signer)));
          const req: Req = { forms, expected: hit ? [forms[signed], 0, signer === '0xa' ? null : signer] : [null, 0, null], got: [] };
          reqs.push(req);
          b.checkSigners(forms, sig, '0xa', candidates, null, (m, failed, who) => req.got.push([m, failed, who]));
        }
      }
      await endOfTurn();
      // Answer or reject some of the calls the pool holds, in any order.
      const open = pool.calls.filter((c) => !answered.has(c) && !rejected.has(c));
      for (const call of open) {
        const roll = rand(10);
        if (roll < 1) {
          rejected.add(call);
          call.err(new Error('worker died'));
        } else if (roll < 7) {
          answered.add(call);
          pool.answer(call);
        }
      }
    }
    expect(b.pending).toBe(0);
    expect(rejected.size).toBeGreaterThan(0);
    expect(reqs.length).toBeGreaterThan(100);
    // A request whose check was in a rejected call ends there: unchecked.
    const unchecked = new Set<number>();
    for (const call of rejected) for (const m of call.sent) unchecked.add(Number(m.slice(1, m.indexOf('f'))));
    reqs.forEach((req, id) => {
      expect(req.got).toEqual([unchecked.has(id) ? [null, UNCHECKED, null] : req.expected]);
    });
    // No rejected list was written into afterwards.
    for (const call of rejected) expect(call.items.map(key)).toEqual(call.sent);
  });
});
