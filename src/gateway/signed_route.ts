// The path of a signed request on the front thread, one implementation for every way one arrives
// (issue 19): the HTTP routes (routes_trading.ts, routes_programmes.ts), POST /orders/batch and
// the WebSocket `post` message (order_entry.ts, ws/post.ts). Whatever the transport:
//
//   parsed body (signed_requests.ts, signed_account_requests.ts; answered here when malformed)
//   -> a ticket in the wallet's arrival order (arrival_order.ts), taken on arrival
//   -> the signature checks, batched per event-loop turn into the verify pool's rings
//      (signature_batcher.ts -> auth/verify_pool.ts)
//   -> in arrival order: admission (the verdict, the JSON-form rule, the wallet's rate limit)
//   -> the request ring with its consent slots (context.ts `submit` -> request_submit.ts)
//   -> the answer, after the batch holding it is committed.
//
// A group (POST /orders/batch) takes the same steps, with one ticket per wallet held until the
// whole group is on the ring, so the group reaches the engine contiguously and in every wallet's
// order.
import { encodeConsent, signatureBytes, UserConsentEncoder, type Consent } from '../ring/consent.js';
import { allowWallet, replyRejected, submitWithDone, writeRefusal, type GatewayContext, type LimiterName } from './context.js';
import type { Answer } from './envelope.js';
import { failInternal } from './http_route.js';
import type { Outcome } from './outcomes.js';
import { checkSigner, verifySigner } from './agent_signer.js';
import { FAILED, logCheckRejection, SignatureCheckError, UNCHECKED, type CheckFailure } from './signature_batcher.js';
import { isBodyError, type BodyError, type SignedRequest } from './signed_body.js';
import { releaseRequest } from './request_pool.js';
import { chargeFailedSignature, refuseFailedSignatureIp } from './failed_signatures.js';
import { stampMs } from './stage_timings.js';
import { componentLog } from '../util/log.js';

const log = componentLog('http');

export const LIMITER_OF: Record<SignedRequest['limit'], LimiterName> = {
  orders: 'orders_per_wallet',
  cancels: 'cancels_per_wallet',
  withdrawals: 'withdrawals_per_wallet',
};

const BAD_SIGNATURE = 'the signature does not recover to the request\'s address over any accepted message form (EIP-191 personal_sign, low-s)';
const COLON_FORM_REFUSED = 'an order with stp or expires_after_ms must be signed in the JSON form (the colon form cannot carry them)';
const CHECK_FAILED = 'signature verification failed unexpectedly';
const WORKER_DIED = 'a signature verify worker died while checking this request (a new one took its place): nothing was applied; retry';
const POOL_BROKEN = 'signatures cannot be checked: the server\'s verify pool is broken (GET /health answers 503): nothing was applied; retry against another server';

/**
 * A signed request whose signature got no verdict: 503 OVERLOADED when the pool could not check
 * it (a worker died holding its task, or the pool is broken: the request never reached the
 * engine, so it may be sent again with the same nonce), 500 INTERNAL_ERROR when the check threw
 * on the front (a bug).
 */
export function replyUnchecked(ctx: GatewayContext, answer: Answer, failure: CheckFailure): void {
  if (failure !== UNCHECKED) answer.error('INTERNAL_ERROR', CHECK_FAILED);
  else answer.error('OVERLOADED', ctx.signatures.broken === null ? WORKER_DIED : POOL_BROKEN, 503);
}

/** Why a promise form of the checks rejected (SignatureCheckError), FAILED for anything else. */
function failureOf(e: unknown): CheckFailure {
  return e instanceof SignatureCheckError ? e.failure : FAILED;
}

/**
 * The frame of every signed request: its place in the wallet's arrival order is taken now, the
 * signature checks run (in the verify pool), and `then` runs with their result in arrival order
 * (unless the client has gone). A check that could not run is answered by replyUnchecked.
 */
export function afterVerification<T>(
  ctx: GatewayContext, reply: Answer, address: string, checks: Promise<T>, then: (result: T) => void,
): void {
  const ticket = ctx.arrival.take(address);
  checks.then((result) => ctx.arrival.release(address, ticket, () => {
    if (!reply.done) then(result);
  }), (e: unknown) => ctx.arrival.release(address, ticket, () => {
    logCheckRejection(log, 'ringbook: signature check failed', e, { request_id: reply.request_id });
    replyUnchecked(ctx, reply, failureOf(e));
  }));
}

/**
 * After the verify pool: the signature verdict (`message`: the message form that verified, or
 * null), the JSON-form rule for the optional order members, then the wallet's rate limit.
 * Answers and returns false on the first failure.
 */
export function admitSigned(ctx: GatewayContext, answer: Answer, parsed: SignedRequest, message: string | null): boolean {
  if (message === null) {
    answer.error('INVALID_SIGNATURE', BAD_SIGNATURE);
    return false;
  }
  if (parsed.json_form_only === true && message !== parsed.messages.at(0)) {
    answer.error('INVALID_ORDER', COLON_FORM_REFUSED);
    return false;
  }
  return allowWallet(ctx, answer, LIMITER_OF[parsed.limit], parsed.address);
}

/** The lone signed request's consent blob, encoded in place (submit copies it into the ring at once). */
const consent_encoder = new UserConsentEncoder();

/** Who asked for a signed request (journaled and published with it: src/ring/consent.ts). */
function userConsent(parsed: SignedRequest, message: string): Consent {
  return { origin: 'user', request: { signature: signatureBytes(parsed.signature_hex), message }, payload: null };
}

/**
 * Answers an accepted, committed outcome: a callback, or an object answering for a kind of request
 * (order_entry.ts's kinds, which take the parsed request: no closure per request for them). It
 * reads the outcome during its call only and keeps nothing of it (its object goes to a later
 * request afterwards: outcomes.ts PendingAnswers.add).
 */
export type OnAccepted = ((o: Outcome) => void) | {
  answer(ctx: GatewayContext, answer: Answer, o: Outcome, parsed: SignedRequest): void;
};

/**
 * One signed request: signature, then the wallet's rate limit, then the matcher; `onAccepted`
 * answers an accepted, committed outcome (a rejection is answered here). The per-request path
 * uses callbacks, not promises, and as few closures as it can: `onOutcome` is the matcher link's
 * callback itself (it catches what answering throws), `found` the batcher's, `admit` the arrival
 * order's; each request makes these three and their one context (issue 11, branch h11z: five
 * closures and three contexts before, ~0.3 KB more per request).
 */
export function runSigned(ctx: GatewayContext, answer: Answer, parsed: SignedRequest | BodyError, onAccepted: OnAccepted): void {
  if (isBodyError(parsed)) {
    answer.error(parsed.code, parsed.message);
    return;
  }
  // The stage stamps (stage_timings.ts), if the answer holds any. Who owns them, and so gives
  // them back to the pool, moves with the request: the answer (until the check is asked, and again
  // from the verdict until the ring write; envelope.ts gives them back when it ends), the verify
  // stage (it writes verify_start/verify_end before the verdict), the matcher link (from the ring
  // write: published, the batch's stamps, then onOutcome's answered and the rows; it gives them
  // back once onOutcome returned).
  // The per-IP budget of failed signatures (failed_signatures.ts): refused before the check costs
  // anything; the IP is read now, while the request is live, for the charge on a failed verdict.
  const budget = ctx.failed_signatures;
  const ip = budget === null ? null : answer.clientIp();
  if (budget !== null && refuseFailedSignatureIp(budget, ctx.cfg.limits, answer, ip)) return;
  const stamps = answer.stamps;
  if (stamps !== null) stamps.parsed = stampMs();
  const address = parsed.address;
  const ticket = ctx.arrival.take(address);
  const onOutcome = (o: Outcome): void => {
    try {
      if (!o.accepted) replyRejected(answer, o);
      else if (typeof onAccepted === 'function') onAccepted(o);
      else onAccepted.answer(ctx, answer, o, parsed);
    } catch (e) {
      failInternal(answer, e);
    }
    // Answered: nothing reads the request any more (the ring has its copy; the answer is written).
    releaseRequest(parsed.request);
    if (stamps !== null) {
      // The last stamp and its readers: the verify verdict, the ring flush and the batch commit
      // stamped it before; the link gives the stamps back when this returns.
      stamps.answered = stampMs();
      ctx.stages?.record(stamps);
      ctx.metrics?.observeStages(stamps);
    }
  };
  // What the signature check found, for `admit` (set once, before admit runs).
  let found_message: string | null = null;
  let found_failed: CheckFailure = 0;
  let found_signer: string | null = null;
  const admit = (): void => {
    if (answer.done) return;
    if (found_failed !== 0) {
      replyUnchecked(ctx, answer, found_failed);
      return;
    }
    // A throw here (an encoder error in the ring write, a limiter bug) would reach ArrivalOrder,
    // which only logs it: the client would wait for ever and its stamps stay out. Answered 500.
    try {
      if (!admitSigned(ctx, answer, parsed, found_message)) return;
      // onOutcome reads the outcome during its call only (every onAccepted answers at once), so
      // the link may reuse it (outcomes.ts PendingAnswers.add).
      submitWithDone(ctx, answer, parsed.request, address, onOutcome, parsed.referrer ?? null,
        consent_encoder.encode(parsed.signature_hex, found_message as string), found_signer, true);
    } catch (e) {
      failInternal(answer, e);
    }
  };
  // `found` is itself the batcher's callback (checkSigners: `signer` null for the user).
  const found = (message: string | null, failed: CheckFailure, signer: string | null = null): void => {
    // The verify stage has written its stamps: the answer owns them again (given back at once if
    // it ended meanwhile: the client went away, or the route threw after handing the request on).
    if (stamps !== null) answer.holdStamps(stamps);
    // Charged whether or not the client is still there: the recovery was spent either way.
    if (message === null && failed === 0 && budget !== null) chargeFailedSignature(budget, ip);
    found_message = message;
    found_failed = failed;
    found_signer = signer;
    ctx.arrival.release(address, ticket, admit);
  };
  checkSigner(ctx, parsed, answer.detachStamps(), found);
}

/** One request of a group (POST /orders/batch) and where its own answer goes. */
export interface SignedGroupItem {
  parsed: SignedRequest;
  answer: Answer;
}

/**
 * A group of signed requests: each verified on its own (all in this turn's pool batch), admitted
 * against its own wallet, then the admitted ones written to the request ring as one group, which
 * the matcher applies contiguously in one batch. `onOutcome(k, o)` gets each admitted item's
 * committed outcome; `finish` runs once every item is answered (or `whole` was, on a failure).
 * Every wallet of the group keeps its arrival order: the group goes to the engine once each of
 * them has reached this group's turn, and each wallet's later requests wait until it is sent.
 */
export function runSignedGroup(
  ctx: GatewayContext, whole: Answer, items: readonly SignedGroupItem[],
  onOutcome: (k: number, o: Outcome) => void, finish: () => void,
): void {
  // The whole group is refused while its IP's failed-signature budget is empty; each item whose
  // signature failed charges one (failed_signatures.ts).
  const budget = ctx.failed_signatures;
  const ip = budget === null ? null : whole.clientIp();
  if (budget !== null && refuseFailedSignatureIp(budget, ctx.cfg.limits, whole, ip)) return; // `whole` answered: no finish
  const wallets = [...new Set(items.map((x) => x.parsed.address))];
  const tickets = wallets.map((w) => ctx.arrival.take(w));
  const checks = Promise.all(items.map((x) => verifySigner(ctx, x.parsed))).then((forms) => {
    if (budget !== null) for (const f of forms) if (f.message === null) chargeFailedSignature(budget, ip);
    return forms;
  });
  const afterTurns = (then: () => void): void => {
    const dones: (() => void)[] = [];
    wallets.forEach((w, k) => ctx.arrival.releaseHeld(w, tickets[k], (done) => {
      dones.push(done);
      if (dones.length < wallets.length) return;
      try {
        then();
      } finally {
        for (const d of dones) d();
      }
    }));
  };
  checks.then((forms) => afterTurns(() => {
    if (whole.done) return;
    const admitted: number[] = [];
    items.forEach((x, k) => {
      if (admitSigned(ctx, x.answer, x.parsed, forms[k].message)) admitted.push(k);
    });
    if (admitted.length === 0) return finish();
    // The whole group or none of it: journal fault or DA backlog (context.ts writeRefusal), decided
    // once for the group and given to each admitted item.
    const refusal = writeRefusal(ctx);
    if (refusal !== null) {
      for (const k of admitted) items[k].answer.error('OVERLOADED', refusal, 503);
      return finish();
    }
    const outcomes = ctx.link.requests.submitGroup(admitted.map((k) => {
      const p = items[k].parsed;
      return {
        request: p.request, address: Buffer.from(p.address.slice(2), 'hex'), address_hex: p.address,
        consent: encodeConsent(userConsent(p, forms[k].message as string)),
        signer: forms[k].signer === null ? null : Buffer.from((forms[k].signer as string).slice(2), 'hex'),
      };
    }));
    if (outcomes === null) {
      for (const k of admitted) items[k].answer.error('OVERLOADED', 'the engine is at capacity (request ring full); retry shortly', 503);
      return finish();
    }
    Promise.all(outcomes).then((os) => {
      admitted.forEach((k, j) => {
        if (!os[j].accepted) replyRejected(items[k].answer, os[j]);
        else onOutcome(k, os[j]);
      });
      finish();
    }, (e: unknown) => {
      log.error('ringbook: batch request failed', e, { request_id: whole.request_id });
      whole.error('INTERNAL_ERROR', 'unexpected engine failure');
    });
  }), (e: unknown) => afterTurns(() => {
    logCheckRejection(log, 'ringbook: signature check failed', e, { request_id: whole.request_id });
    replyUnchecked(ctx, whole, failureOf(e));
  }));
}
