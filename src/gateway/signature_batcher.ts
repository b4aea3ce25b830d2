// The front thread's side of the verify pool (the signed path, signed_route.ts): the signature
// checks of one event-loop turn go to the pool as one batch.
import { InlineCheckPolicy } from '../auth/verify_inline.js';
import type { VerifyPool } from '../auth/verify_pool.js';
import type { SignedMessage } from '../auth/verify.js';
import type { StageStamps } from './stage_timings.js';
import type { MessageForms } from './signed_body.js';
import { componentLog, type ComponentLog } from '../util/log.js';

const log = componentLog('http');

/**
 * A check's answer: VALID (the expected address signed), 1 + i (the check's other_addresses[i - 1]
 * signed), INVALID, FAILED when the check threw on the front (a server bug: 500), or UNCHECKED
 * when the pool could not check it: a worker died holding its task, or the pool is broken (503
 * OVERLOADED: nothing was applied, the request may be sent again).
 */
export const VALID = 1;
export const INVALID = 0;
export const FAILED = -1;
export const UNCHECKED = -2;
/** Why a check has no verdict: 0 (it has one), FAILED or UNCHECKED. */
export type CheckFailure = 0 | typeof FAILED | typeof UNCHECKED;
type Verdict = (verdict: number) => void;
/** The signed form found (null: none verified); `failed`: why no verdict (0: there is one). */
export type Found = (message: string | null, failed: CheckFailure) => void;
/**
 * The signed form found and who signed it: `signer` null for the expected address, else the one of
 * the other candidates that signed (null too when `message` is null); `failed`: why no verdict (0:
 * there is one). A `Found` is a `FoundSigner` that ignores the signer.
 */
export type FoundSigner = (message: string | null, failed: CheckFailure, signer: string | null) => void;

/** The rejection of the promise forms (verify, verifyAny, agent_signer.ts verifySigner): why no verdict. */
export class SignatureCheckError extends Error {
  readonly failure: typeof FAILED | typeof UNCHECKED;
  constructor(failure: typeof FAILED | typeof UNCHECKED) {
    super(failure === UNCHECKED ? 'the verify pool could not check the signature' : 'the signature check failed');
    this.failure = failure;
  }
}

/**
 * Logs `e`, the rejection of a promise form of the checks (verify, verifyAny, verifySigner), on
 * `to` unless the batcher logged it already: a SignatureCheckError is either the pool's failure,
 * logged once per change of the pool's state (`send`: when it starts failing and when it checks
 * again), or an inline check that threw, logged by checkHere. A broken pool fails every check, so
 * a line per rejection was a line per signed request and per WebSocket auth attempt. Anything
 * else (a bug in the caller's own chain) is logged here. The one rule for every promise caller:
 * POST /force-include, POST /orders/batch and the WebSocket auth.
 */
export function logCheckRejection(to: ComponentLog, msg: string, e: unknown, fields?: Record<string, unknown>): void {
  if (!(e instanceof SignatureCheckError)) to.error(msg, e, fields);
}

/**
 * Collects signatures from one turn of the event loop and checks them in one pool call (the pool
 * splits it into tasks of ~100 and writes them into its rings): one hand-off per turn, not per
 * request. At light load a check may instead run on the front at once, in the request's own turn
 * (`inline`, src/auth/verify_inline.ts): no hand-off at all. Callbacks, not promises, on the
 * per-request path: a signed request costs one queued item and one closure here (issue 11: the
 * front's allocations).
 */
export class SignatureBatcher {
  private declare readonly pool: VerifyPool;
  private declare readonly batch_max: number;
  private declare readonly inline: InlineCheckPolicy;
  /** checkOneHere's start and end of an inline check (epoch ms): read at once, so one for all. */
  private readonly inline_times = new Float64Array(2);
  private items: SignedMessage[] = [];
  /** Parallel to items: where to put the worker's start/end of the task (stage timings), or null. */
  private stamps: (StageStamps | null)[] = [];
  private any_stamps = false;
  private verdicts: Verdict[] = [];
  private scheduled = false;
  private readonly flush_now = (): void => {
    this.scheduled = false;
    this.flush();
    this.inline.endTurn();
  };
  /** Signatures queued or being checked. */
  pending = 0;
  verified = 0;
  /**
   * The last pool task failed (a worker died holding it, or the pool is broken): logged once when
   * it starts and once when a task is checked again, not per task. A broken pool fails every call,
   * and a caller that retries on a timer (the chain link's forced-inclusion checks, each polling
   * round) or every signed request would otherwise write an error line each time.
   */
  private pool_failing = false;

  /**
   * `inline_items_max`: checks per turn the front may run itself (0: none); `inline_busy_max_pct`:
   * the front's busy share under which it runs them even with verify tasks in flight (0: at light
   * load only). src/auth/verify_inline.ts.
   */
  constructor(pool: VerifyPool, batch_max: number, inline_items_max = 0, inline_busy_max_pct = 0) {
    this.pool = pool;
    this.batch_max = batch_max;
    this.inline = new InlineCheckPolicy(inline_items_max, inline_busy_max_pct);
  }

  /** Why the verify pool refuses every check (VerifyPool.broken), null while it works. */
  get broken(): Error | null {
    return this.pool.broken;
  }

  /** Whether the inline policy's medium-load rule holds now (the front was quiet: verify_inline.ts). */
  get frontQuiet(): boolean {
    return this.inline.frontQuiet;
  }

  /**
   * One check: run on the front now when the inline policy allows it (`verdict` runs before this
   * returns), else queued for this turn's batch (`verdict` runs when the pool answers).
   */
  check(
    message: string, signature_hex: string, expected_address: string, stamps: StageStamps | null, verdict: Verdict,
    other_addresses?: readonly string[],
  ): void {
    const item: SignedMessage = other_addresses === undefined
      ? { message, signature_hex, expected_address }
      : { message, signature_hex, expected_address, other_addresses };
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush_now); // the end of this turn, inline checks or not
    }
    if (this.inline.takeHere(this.pool.idle, this.items.length)) return this.checkHere(item, stamps, verdict);
    this.items.push(item);
    this.stamps.push(stamps);
    if (stamps !== null) this.any_stamps = true;
    this.verdicts.push(verdict);
    this.pending++;
    if (this.items.length >= this.batch_max) this.flush();
  }

  /** An inline check: the pool's own codec and recovery on this thread (one implementation). */
  private checkHere(item: SignedMessage, stamps: StageStamps | null, verdict: Verdict): void {
    let v: number;
    try {
      v = this.pool.checkOneHere(item, stamps === null ? undefined : this.inline_times);
    } catch (err: unknown) {
      log.error('ringbook: inline signature check failed', err);
      return verdict(FAILED);
    }
    // Counted with the pool's inlineChecked (on success only): the metrics take the worker's
    // share as verified - inline - stolen, so a failed inline check counted here would be the worker's.
    this.verified++;
    if (stamps !== null) {
      stamps.verify_start = this.inline_times[0];
      stamps.verify_end = this.inline_times[1];
    }
    verdict(v);
  }

  /**
   * Calls `found` with the message of `messages` that `address` signed (tried in order: the next
   * form is asked for and checked only when the one before failed), or null. The journal keeps it with the
   * signature (consent on the record).
   */
  checkAny(messages: MessageForms, signature_hex: string, address: string, stamps: StageStamps | null, found: Found): void {
    this.checkSigners(messages, signature_hex, address, undefined, stamps, found);
  }

  /**
   * checkAny for several candidate signers: `address` or one of `others` (a user's live agents).
   * Each message form costs one recovery whatever the number of candidates: the worker compares the
   * recovered address with each (verify_codec.ts), so a hostile signature costs no more for a user
   * with ten agents than for one with none.
   */
  checkSigners(
    messages: MessageForms, signature_hex: string, address: string, others: readonly string[] | undefined,
    stamps: StageStamps | null, found: FoundSigner,
  ): void {
    let k = 0;
    let message = messages.at(0);
    const next = (verdict: number): void => {
      if (verdict === VALID) return found(message as string, 0, null);
      if (verdict > VALID) return found(message as string, 0, (others as readonly string[])[verdict - VALID - 1]);
      if (verdict === FAILED || verdict === UNCHECKED) return found(null, verdict, null);
      message = messages.at(++k);
      if (message === undefined) return found(null, 0, null);
      this.check(message, signature_hex, address, stamps, next, others);
    };
    if (message === undefined) return found(null, 0, null);
    this.check(message, signature_hex, address, stamps, next, others);
  }

  /** One check as a promise (the WebSocket auth); rejects (SignatureCheckError) when it could not be checked. */
  verify(message: string, signature_hex: string, expected_address: string): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => this.check(message, signature_hex, expected_address, null, (v) => {
      if (v === FAILED || v === UNCHECKED) reject(new SignatureCheckError(v));
      else resolve(v === VALID);
    }));
  }

  /** checkAny as a promise (the forced-inclusion checks); rejects (SignatureCheckError) when it could not be checked. */
  verifyAny(messages: MessageForms, signature_hex: string, address: string): Promise<string | null> {
    return new Promise<string | null>((resolve, reject) => this.checkAny(messages, signature_hex, address, null, (m, failed) => {
      if (failed !== 0) reject(new SignatureCheckError(failed));
      else resolve(m);
    }));
  }

  /**
   * Sends the turn's checks to the pool in pieces of the pool's task size, each answered on its
   * own as soon as its task is checked (a 100-check turn used to wait for its last recovery,
   * ~6.5 ms, before any of its requests went on), then lets the front check a task that has
   * waited too long (VerifyPool.stealLate). Per-wallet order does not depend on which piece is
   * answered first: the signed path releases each wallet's requests in arrival order.
   */
  private flush(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    const verdicts = this.verdicts;
    const stamps = this.stamps;
    const any_stamps = this.any_stamps;
    this.items = [];
    this.verdicts = [];
    this.stamps = [];
    this.any_stamps = false;
    this.verified += items.length;
    this.inline.passed(items.length);
    if (items.length <= this.pool.taskSize) this.send(items, verdicts, stamps, any_stamps);
    else {
      // Even pieces (33 checks: 17 + 16, not 32 + 1).
      const piece = Math.ceil(items.length / Math.ceil(items.length / this.pool.taskSize));
      for (let at = 0; at < items.length; at += piece) {
        const end = Math.min(items.length, at + piece);
        this.send(items.slice(at, end), verdicts.slice(at, end), stamps.slice(at, end), any_stamps);
      }
    }
    this.pool.stealLate();
  }

  private send(items: SignedMessage[], verdicts: Verdict[], stamps: (StageStamps | null)[], any_stamps: boolean): void {
    const times_ms = any_stamps ? new Float64Array(2 * items.length) : undefined;
    this.pool.verifyBatch(items, times_ms).then(
      (ok) => {
        if (times_ms !== undefined) {
          for (let i = 0; i < stamps.length; i++) {
            const s = stamps[i];
            if (s === null) continue;
            s.verify_start = times_ms[2 * i];
            s.verify_end = times_ms[2 * i + 1];
          }
        }
        this.pending -= verdicts.length;
        if (this.pool_failing) {
          this.pool_failing = false;
          log.info('ringbook: the verify pool checks signatures again');
        }
        for (let i = 0; i < verdicts.length; i++) verdicts[i](ok[i]); // 0 INVALID, 1 VALID, 1 + i another candidate
      },
      (err: unknown) => {
        if (!this.pool_failing) {
          this.pool_failing = true;
          log.error('ringbook: verify pool failed: its signature checks are answered 503 OVERLOADED until it checks again (logged once)', err);
        }
        this.pending -= verdicts.length;
        for (const v of verdicts) v(UNCHECKED);
      },
    );
  }
}
