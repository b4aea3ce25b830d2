// The signed path's admit step (signed_route.ts runSigned): what throws once the signature
// verified (an encoder error in the ring write, a limiter bug) is answered 500 INTERNAL_ERROR and
// reported, not left to the arrival order, which only logs it (the client hung and its stage
// stamps stayed out). The wallet's later requests still run.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { GatewayContext } from '../../src/gateway/context.js';
import { ArrivalOrder } from '../../src/gateway/arrival_order.js';
import { setRouteErrorReporter } from '../../src/gateway/http_route.js';
import { RateLimiter } from '../../src/gateway/rate_limit.js';
import { runSigned } from '../../src/gateway/signed_route.js';
import { parseCancel } from '../../src/gateway/signed_requests.js';
import type { SignedRequest } from '../../src/gateway/signed_body.js';
import { stampsOutstanding, takeStamps } from '../../src/gateway/stage_timings.js';
import { FAILED, UNCHECKED, type CheckFailure } from '../../src/gateway/signature_batcher.js';
import { RecordingAnswer } from './recording_answer.js';

const USER = '0x' + 'ab'.repeat(20);

type FoundSigner = (message: string | null, failed: CheckFailure, signer: string | null) => void;

/**
 * The context runSigned reads, stubbed: the verify stage answers each check through `check`
 * (the messages, and the batcher's callback), the pool is broken while `broken()` says so, and
 * the request ring's write is `submitWith`.
 */
function stubContext(check: (messages: readonly string[], found: FoundSigner) => void, submitWith: () => boolean,
  broken: () => Error | null = () => null): GatewayContext {
  return {
    cfg: loadConfig({}), arrival: new ArrivalOrder(), stages: null, metrics: null, da_backlog_batches: null,
    rm: { agents: { any: false }, account_by_address: new Map() },
    limiters: { cancels_per_wallet: new RateLimiter({ limit_per_window: 100, window_ms: 60_000, keys_max: 10 }) },
    failed_signatures: null,
    signatures: {
      get broken() {
        return broken();
      },
      checkSigners: (messages: readonly string[], _sig: string, _address: string, _others: unknown, _stamps: unknown, found: FoundSigner) =>
        check(messages, found),
    },
    link: { journal_fault: null, requests: { submitWith } },
  } as unknown as GatewayContext;
}

/** A signed cancel of order 7 by USER with `nonce`. */
const parsed = (nonce: number) => parseCancel({ user: USER, order_id: '7', nonce, signature: '0x' + '11'.repeat(65) }) as SignedRequest;

describe('runSigned admit', () => {
  it('answers 500 INTERNAL_ERROR when the ring write throws, and gives the stamps back', () => {
    const reported: unknown[] = [];
    setRouteErrorReporter((err) => reported.push(err));
    let writes = 0;
    // The verify stage: every signature verifies over its first message form, at once.
    const ctx = stubContext((messages, found) => found(messages[0], 0, null), () => {
      writes++;
      if (writes === 1) throw new Error('request ring: encoder bug (test)');
      return true;
    });
    const outstanding = stampsOutstanding();
    const first = new RecordingAnswer('first');
    first.holdStamps(takeStamps());
    runSigned(ctx, first, parsed(1), () => undefined);
    expect(first.sent_replies.map((r) => r.status)).toEqual([500]);
    expect(JSON.parse(first.sent_replies[0].body)).toMatchObject({ ok: false, error: 'INTERNAL_ERROR', request_id: 'first' });
    expect(reported.map((e) => (e as Error).message)).toEqual(['request ring: encoder bug (test)']);
    expect(stampsOutstanding(), 'the answer gave its stamps back').toBe(outstanding);
    // The wallet's next request is not held behind the failed one.
    const second = new RecordingAnswer('second');
    runSigned(ctx, second, parsed(2), () => undefined);
    expect(writes).toBe(2);
    expect(second.sent_replies).toEqual([]);
    expect(ctx.arrival.size).toBe(0);
  });

  it('a signature the pool could not check is 503 OVERLOADED (worker died, or pool broken), one the front failed 500; nothing submitted', () => {
    let broken: Error | null = null;
    let failure: CheckFailure = UNCHECKED;
    let writes = 0;
    const ctx = stubContext((_messages, found) => found(null, failure, null), () => (writes++, true), () => broken);
    const answers: { status: number; body: { error: string; message: string } }[] = [];
    for (const [b, f] of [[null, UNCHECKED], [new Error('a verify worker could not start (x)'), UNCHECKED], [null, FAILED]] as const) {
      broken = b;
      failure = f;
      const a = new RecordingAnswer(`a${answers.length}`);
      runSigned(ctx, a, parsed(answers.length + 1), () => undefined);
      expect(a.sent_replies).toHaveLength(1);
      answers.push({ status: a.sent_replies[0].status, body: JSON.parse(a.sent_replies[0].body) });
    }
    expect(answers.map((x) => [x.status, x.body.error])).toEqual([[503, 'OVERLOADED'], [503, 'OVERLOADED'], [500, 'INTERNAL_ERROR']]);
    expect(answers[0].body.message).toMatch(/verify worker died .*nothing was applied; retry$/);
    expect(answers[1].body.message).toMatch(/verify pool is broken .*nothing was applied/);
    // The operator's reason is not told to clients.
    expect(answers[1].body.message).not.toContain('could not start');
    expect(writes).toBe(0);
    expect(ctx.arrival.size).toBe(0);
  });
});
