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
  /** This turn's checks for the pool (`turn.count` of them). */
  private turn: TurnLists;
  /** Lists the pool answered, kept for a later turn (at most SPARE_LISTS_MAX): no arrays per turn. */
  private readonly spare_lists: TurnLists[] = [];
  /** checkSigners' walks between two checks' verdicts, kept for the next (at most SPARE_WALKS_MAX). */
  private readonly spare_walks: SignerWalk[] = [];
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
    this.turn = this.takeLists();
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
    const turn = this.turn;
    if (this.inline.takeHere(this.pool.idle, turn.count)) return this.checkHere(item, stamps, verdict);
    const n = turn.count++;
    // By index: a reused list keeps its length (and so its backing store) until flush sets it.
    turn.items[n] = item;
    turn.stamps[n] = stamps;
    if (stamps !== null) turn.any_stamps = true;
    turn.verdicts[n] = verdict;
    this.pending++;
    if (turn.count >= this.batch_max) this.flush();
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
    const message = messages.at(0);
    if (message === undefined) return found(null, 0, null);
    // A walk kept from an earlier call (no closure and context per call): it is back in
    // spare_walks before `found` runs, so `found` may start the next walk with it.
    const walk = this.spare_walks.pop() ?? new SignerWalk(this);
    walk.start(messages, message, signature_hex, address, others, stamps, found);
    this.check(message, signature_hex, address, stamps, walk.next, others);
  }

  /** A walk that ended (its `found` not yet called): kept for a later checkSigners. */
  releaseWalk(walk: SignerWalk): void {
    if (this.spare_walks.length < SPARE_WALKS_MAX) this.spare_walks.push(walk);
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
    const turn = this.turn;
    const count = turn.count;
    if (count === 0) return;
    this.turn = this.takeLists();
    this.verified += count;
    this.inline.passed(count);
    if (count <= this.pool.taskSize) this.send(turn);
    else {
      // Even pieces (33 checks: 17 + 16, not 32 + 1), each in lists of its own.
      const piece = Math.ceil(count / Math.ceil(count / this.pool.taskSize));
      for (let at = 0; at < count; at += piece) {
        const part = this.takeLists();
        const end = Math.min(count, at + piece);
        for (let i = at; i < end; i++) {
          part.items[part.count] = turn.items[i];
          part.stamps[part.count] = turn.stamps[i];
          part.verdicts[part.count++] = turn.verdicts[i];
        }
        part.any_stamps = turn.any_stamps;
        this.send(part);
      }
      this.recycle(turn); // never given to the pool: its pieces were copied out
    }
    this.pool.stealLate();
  }

  private send(lists: TurnLists): void {
    const count = lists.count;
    // The pool reads the items' length: trimmed to the turn's (no-op when it is the last turn's).
    if (lists.items.length !== count) {
      lists.items.length = count;
      lists.stamps.length = count;
      lists.verdicts.length = count;
    }
    let times_ms: Float64Array | undefined;
    if (lists.any_stamps) {
      if (lists.times_ms === null || lists.times_ms.length < 2 * count) lists.times_ms = new Float64Array(2 * count);
      times_ms = lists.times_ms;
    }
    this.pool.verifyBatch(lists.items, times_ms).then(lists.answered, lists.failed);
  }

  /** The pool answered `lists`' checks: it holds none of them any more, so they are kept for reuse. */
  private answered(lists: TurnLists, ok: Uint8Array): void {
    const count = lists.count;
    const times_ms = lists.times_ms;
    if (lists.any_stamps && times_ms !== null) {
      for (let i = 0; i < count; i++) {
        const s = lists.stamps[i];
        if (s === null) continue;
        s.verify_start = times_ms[2 * i];
        s.verify_end = times_ms[2 * i + 1];
      }
    }
    this.pending -= count;
    if (this.pool_failing) {
      this.pool_failing = false;
      log.info('ringbook: the verify pool checks signatures again');
    }
    // 0 INVALID, 1 VALID, 1 + i another candidate. A verdict may queue the next check (another
    // message form): into this.turn, never `lists`, which is recycled only after the last verdict
    // (if one throws, `lists` is dropped, not recycled).
    const verdicts = lists.verdicts;
    for (let i = 0; i < count; i++) verdicts[i](ok[i]);
    this.recycle(lists);
  }

  /**
   * The pool could not check `lists`' checks. Its other tasks of the batch may still hold the
   * lists (a task in the backlog is encoded from them later, verify_pool.ts #drainBacklog), so
   * they are dropped, never reused: a later turn must not write into them.
   */
  private failed(lists: TurnLists, err: unknown): void {
    if (!this.pool_failing) {
      this.pool_failing = true;
      log.error('ringbook: verify pool failed: its signature checks are answered 503 OVERLOADED until it checks again (logged once)', err);
    }
    const count = lists.count;
    this.pending -= count;
    const verdicts = lists.verdicts;
    for (let i = 0; i < count; i++) verdicts[i](UNCHECKED);
  }

  /** Lists for a turn or a piece: a spare one, or new ones with their pool callbacks bound once. */
  private takeLists(): TurnLists {
    const spare = this.spare_lists.pop();
    if (spare !== undefined) return spare;
    const lists: TurnLists = {
      items: [], stamps: [], verdicts: [], count: 0, any_stamps: false, times_ms: null,
      answered: (ok: Uint8Array) => this.answered(lists, ok),
      failed: (err: unknown) => this.failed(lists, err),
    };
    return lists;
  }

  /**
   * Keeps `lists` for a later turn: their length (so their backing stores) stays. Not cleared (a
   * store per entry cost ~750 instructions a 16-check turn): the next turn overwrites [0, count)
   * and send trims the rest, so a spare holds at most its last turn's items, SPARE_LISTS_MAX lists.
   */
  private recycle(lists: TurnLists): void {
    if (this.spare_lists.length >= SPARE_LISTS_MAX) return;
    lists.count = 0;
    lists.any_stamps = false;
    this.spare_lists.push(lists);
  }
}

/**
 * One turn's checks (or a piece of them) on their way to the pool, parallel lists of `count`
 * entries (beyond `count`: an earlier turn's, trimmed at send). Owned by the batcher until sent, by
 * the pool until it answers (then back to the batcher's spares) or rejects (then dropped).
 */
interface TurnLists {
  readonly items: SignedMessage[];
  /** Where to put the worker's start/end of the task (stage timings), or null. */
  readonly stamps: (StageStamps | null)[];
  readonly verdicts: Verdict[];
  count: number;
  any_stamps: boolean;
  /** The workers' start/end per item (2 each), grown when a turn with stamps needs more. */
  times_ms: Float64Array | null;
  /** The pool's answer and rejection, bound once per lists (no closures per turn). */
  readonly answered: (ok: Uint8Array) => void;
  readonly failed: (err: unknown) => void;
}

/**
 * Spare lists kept: turns in flight at once are few (a turn's lists come back when its task is
 * answered, ~0.1-7 ms), and a burst's extra lists are left to the GC rather than kept for good.
 */
const SPARE_LISTS_MAX = 8;
/** Spare walks kept: one per signed request in flight, so a busy front's few thousand (~100 B each). */
const SPARE_WALKS_MAX = 4096;

/**
 * checkSigners' state between two checks: the message forms tried in order until one verifies.
 * `next` is bound once per walk, and the walk goes back to the batcher's spares when it ends.
 */
class SignerWalk {
  private messages: MessageForms | null = null;
  private message = '';
  private k = 0;
  private signature_hex = '';
  private address = '';
  private others: readonly string[] | undefined = undefined;
  private stamps: StageStamps | null = null;
  private found: FoundSigner | null = null;
  readonly next = (verdict: number): void => this.step(verdict);

  constructor(private readonly batcher: SignatureBatcher) {}

  start(
    messages: MessageForms, message: string, signature_hex: string, address: string,
    others: readonly string[] | undefined, stamps: StageStamps | null, found: FoundSigner,
  ): void {
    this.messages = messages;
    this.message = message;
    this.k = 0;
    this.signature_hex = signature_hex;
    this.address = address;
    this.others = others;
    this.stamps = stamps;
    this.found = found;
  }

  private step(verdict: number): void {
    if (verdict < VALID && verdict !== FAILED && verdict !== UNCHECKED) {
      // Not this form: the next one is asked for only now, and checked.
      const message = (this.messages as MessageForms).at(++this.k);
      if (message !== undefined) {
        this.message = message;
        return this.batcher.check(message, this.signature_hex, this.address, this.stamps, this.next, this.others);
      }
      verdict = INVALID; // no form verified
    }
    const found = this.found as FoundSigner;
    const message = this.message;
    const signer = verdict > VALID ? (this.others as readonly string[])[verdict - VALID - 1] : null;
    this.end(); // before `found`, which may start the next walk with this one
    if (verdict >= VALID) found(message, 0, signer);
    else found(null, verdict === INVALID ? 0 : verdict as CheckFailure, null);
  }

  /** Lets go of the call's objects (a spare walk holds no request) and goes back to the spares. */
  private end(): void {
    this.messages = null;
    this.others = undefined;
    this.stamps = null;
    this.found = null;
    this.message = '';
    this.signature_hex = '';
    this.address = '';
    this.batcher.releaseWalk(this);
  }
}
