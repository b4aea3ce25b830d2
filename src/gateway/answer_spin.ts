// The front's answer spin (config front.answer_spin_us; docs/operations.md "The front's answer
// spin"): the event pump's keepAwake (src/ring/ring_wake.ts). While it answers true the front does
// not sleep on the event ring's loop bell but looks at the ring again at the loop's next turn, so a
// commit marker published meanwhile is read without the matcher ringing the bell and the front's
// CPU being woken. Why: at 1,000 requests/s the front's loop is asleep when the commit comes, and
// that ring plus the wake-up were most of the answer stage (~50-75 µs of its ~85, issue 11).
// Turning the loop costs the front CPU for as long as the commit takes (~0.3 ms per batch), so
// the spin is off by default and bounded twice:
//   - per request: only while the OLDEST request still waiting was written to the matcher less
//     than answer_spin_us ago. Nothing else restarts it: commits of batches holding none of our
//     requests (the cluster's other gateways', empty ones) used to, so a request never answered
//     while other batches committed kept the front turning without end. A request left waiting
//     turns the loop at most answer_spin_us after its write, and stops the spin for every later
//     request until it is answered (it is the oldest until then).
//   - a hard cap: a run of consecutive spin turns lasts at most ANSWER_SPIN_RUN_MS_MAX; a run
//     that reaches it ends the spin until a moment when no request waits (a load that never lets the wait empty is no light load: the front has work anyway).
// And only at a light load: 1..ANSWER_SPIN_INFLIGHT_MAX requests waiting.
// `performance` is perf_hooks' (a module binding): the global one is an accessor that runs Node's
// lazy-property getter on every read, and keepAwake reads the clock each spin turn (the same reason
// as stage_timings.ts TIME_ORIGIN_MS).
import { performance } from 'node:perf_hooks';

/**
 * The answer spin runs only while at most this many written requests wait: a light load. At max
 * rate hundreds wait and the front's loop has work every turn anyway.
 */
export const ANSWER_SPIN_INFLIGHT_MAX = 64;

/**
 * Longest run of consecutive spin turns (ms): 10 ms, the longest answer_spin_us allowed
 * (config ANSWER_SPIN_US_MAX) and ~30 journal commits here (~0.3 ms each). A belt over the
 * per-request bound: whatever the waits, the front never turns its loop idle longer than this.
 */
export const ANSWER_SPIN_RUN_MS_MAX = 10;

/** The spin's decision and its count; the caller gives it the time and the wait (testable without a clock). */
export class AnswerSpin {
  /** Loop turns the spin kept (keepAwake answered true): /admin/state `answer_spin_turns`. */
  turns = 0;
  private declare readonly spin_ms: number;
  /** performance.now() at the first turn of the current run; -1: no run. */
  private run_since_ms = -1;
  /** A run reached ANSWER_SPIN_RUN_MS_MAX: no spin until no request waits. */
  private capped = false;

  constructor(answer_spin_us: number) {
    if (!(answer_spin_us > 0)) throw new RangeError(`answer_spin_us must be > 0, got ${answer_spin_us}`);
    this.spin_ms = answer_spin_us / 1000;
  }

  /**
   * Whether the front keeps its loop turning now (asked each time it finds the event ring empty):
   * `waiting` requests are written and unanswered, the oldest of them written at
   * `oldest_written_ms` (performance.now(), like `now_ms`).
   */
  keepAwake(now_ms: number, waiting: number, oldest_written_ms: number): boolean {
    if (waiting === 0) this.capped = false;
    if (this.capped || waiting === 0 || waiting > ANSWER_SPIN_INFLIGHT_MAX || now_ms - oldest_written_ms >= this.spin_ms) {
      this.run_since_ms = -1;
      return false;
    }
    if (this.run_since_ms < 0) this.run_since_ms = now_ms;
    else if (now_ms - this.run_since_ms >= ANSWER_SPIN_RUN_MS_MAX) {
      this.run_since_ms = -1;
      this.capped = true;
      return false;
    }
    this.turns++;
    return true;
  }
}

/** What the spin's bookkeeping reads of the waiting requests (outcomes.ts PendingAnswers, the link's numbering). */
export interface WaitingRequests {
  readonly size: number;
  /** When the waiting request `seq` was written (performance.now()), undefined when it does not wait. */
  writtenMsOf(seq: number): number | undefined;
}

/**
 * The event pump's keepAwake (ring_wake.ts; `spin` decides). The oldest waiting request is the
 * lowest waiting seq (seqs rise with each write, from `first_seq`; `next_seq()` is the next one to
 * be written): the scan passes each seq once in the link's life, so it costs O(1) per request.
 */
export function answerSpinKeepAwake(spin: AnswerSpin, waiting: WaitingRequests, first_seq: number, next_seq: () => number): () => boolean {
  /** No request below this seq waits (answered, or never written): where the oldest waiting one is looked for. */
  let oldest_seq = first_seq;
  return () => {
    const n = waiting.size;
    let oldest_written_ms = 0;
    if (n > 0 && n <= ANSWER_SPIN_INFLIGHT_MAX) {
      let w = waiting.writtenMsOf(oldest_seq);
      const next = next_seq();
      while (w === undefined && oldest_seq < next) w = waiting.writtenMsOf(++oldest_seq);
      if (w !== undefined) oldest_written_ms = w;
    }
    return spin.keepAwake(performance.now(), n, oldest_written_ms);
  };
}
