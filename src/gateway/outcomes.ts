// The requests the front wrote to the matcher and waits to answer: each one's outcome collected
// from what the read model decoded (its ReadModelObserver), and released, once the batch that
// holds it is committed, to the callback that writes its answer (never before: an answer promises
// durability). The matcher link (matcher_link_events.ts) owns one and numbers the requests.
import { HEARS_ACCEPTED, HEARS_FILL, HEARS_ORDER_UPDATE, HEARS_REJECTED, type BatchStages, type FillView, type OrderView, type ReadModelObserver, type TradeView } from '../read_model/views.js';
import { RequestKind } from '../engine/types.js';
import { releaseStamps, type StageStamps } from './stage_timings.js';
import { SEQ_TABLE_SLOTS, SeqTable } from './seq_table.js';

/** What the answers act on (ReadModelObserver.hears): every call but balances. */
const ANSWER_HEARS = HEARS_ACCEPTED | HEARS_REJECTED | HEARS_FILL | HEARS_ORDER_UPDATE;

export interface Outcome {
  accepted: boolean;
  code: number;
  reason: number;
  order_id: number;
  /** Fills the request's own order made as taker, in order. */
  fills: FillView[];
  /**
   * Orders a cancel-all changed, in event order (its answer lists them: order_entry.ts). Left
   * empty for every other kind (orderUpdatesListed).
   */
  order_updates: number[];
  batch_id: number;
  time_ms: number;
}

/**
 * An outcome's lists before anything was added to them: shared by every pending request, frozen so
 * that a push anywhere but in the pump (which replaces them first) throws instead of leaking into
 * other requests' outcomes.
 */
const NO_FILLS = Object.freeze([]) as unknown as FillView[];
const NO_ORDER_UPDATES = Object.freeze([]) as unknown as number[];

/** Receives a request's committed outcome (called once, from the event pump). */
export type OutcomeCallback = (o: Outcome) => void;

interface Pending {
  resolve: OutcomeCallback;
  outcome: Outcome;
  /** Stage stamps (config diagnostics.stage_timings), else null. */
  stamps: StageStamps | null;
  /** performance.now() when it was written to the ring, for the answer spin (0 when it is off). */
  written_ms: number;
  /** Its kind once its ACCEPTED event was read, else -1. */
  kind: number;
  /** Its callback reads the outcome during the call only: entry and outcome go back to the pool after it (add()). */
  reused: boolean;
}

/**
 * Entries (with their outcomes) given back after a `reused` request's callback returned: a signed
 * request made a Pending and an Outcome per request (~130 bytes, ~3% of the front's bytes at max
 * rate in a heap profile of 2026-11-27; issue 11). Bounded like the Request pool (request_pool.ts).
 */
const PENDING_POOL_MAX = 4096;

function resetOutcome(o: Outcome): void {
  o.accepted = false;
  o.code = 0;
  o.reason = 0;
  o.order_id = 0;
  o.fills = NO_FILLS;
  o.order_updates = NO_ORDER_UPDATES;
  o.batch_id = 0;
  o.time_ms = 0;
}

/**
 * Whether an accepted request of `kind` (-1: not known yet) gets its changed orders listed in
 * `order_updates`: only a cancel-all, the one answer that reads the list (POST /orders/cancel-all,
 * alone or in /orders/batch: order_entry.ts). A place, cancel or amend answer reads the order
 * itself (an array per place was ~3% of the front's bytes at max rate; issue 11); a pause,
 * force-include, dead-man's switch or disconnect-cancel answer reads no order at all, so their
 * arrays (one entry per order they closed) were built and never read.
 */
function orderUpdatesListed(kind: number): boolean {
  return kind === RequestKind.CANCEL_ALL;
}

export class PendingAnswers {
  /** By seq: a Map's operations without its hashing and rehashing per request (seq_table.ts). */
  private declare readonly pending: SeqTable<Pending>;
  private batch_seqs: number[] = [];
  /** The other of the two batch_seqs arrays, swapped at each release (no array per batch). */
  private spare_seqs: number[] = [];
  /** Entries of `reused` requests, answered and free for the next (PENDING_POOL_MAX at most). */
  private readonly free: Pending[] = [];
  /** Requests of the batch being read (each has one ACCEPTED or REJECTED event). */
  private batch_requests = 0;
  /** The answer path as the read model's observer. */
  declare readonly observer: ReadModelObserver;
  private declare readonly failed: (e: unknown) => void;
  private declare readonly committed: (batch_id: number, time_ms: number, stages: BatchStages) => void;

  /**
   * `failed` receives what an answer callback threw (the batch's other answers still go out);
   * `committed` runs at each commit marker the read model passes on (it calls release());
   * `seq_slots`: the seq table's array (seq_table.ts; tests make it small).
   */
  constructor(failed: (e: unknown) => void,
    committed: (batch_id: number, time_ms: number, stages: BatchStages) => void, seq_slots = SEQ_TABLE_SLOTS) {
    this.failed = failed;
    this.committed = committed;
    this.pending = new SeqTable<Pending>(seq_slots);
    this.observer = this.answerObserver();
  }

  /** Requests written and not answered yet. */
  get size(): number {
    return this.pending.size;
  }

  /** When the waiting request `seq` was written (performance.now()), undefined when it does not wait. */
  writtenMsOf(seq: number): number | undefined {
    return this.pending.get(seq)?.written_ms;
  }

  /**
   * Request `seq` was written to the ring: `done` gets its outcome once its batch commits.
   * `reused`: `done` reads the outcome during its call only and keeps nothing of it (the signed
   * path's answer writer, signed_route.ts), so the outcome object is handed to a later request
   * once `done` returned; a promise's outcome (submit()) is kept by whoever awaits it, never reused.
   */
  add(seq: number, done: OutcomeCallback, stamps: StageStamps | null, written_ms: number, reused = false): void {
    const p = reused ? this.free.pop() : undefined;
    if (p !== undefined) {
      p.resolve = done;
      p.stamps = stamps;
      p.written_ms = written_ms;
      this.pending.set(seq, p);
      return;
    }
    this.pending.set(seq, {
      resolve: done,
      // The shared empty lists until the request's first fill or order update: most requests have
      // neither (two arrays per request otherwise; issue 11, branch h11z).
      outcome: { accepted: false, code: 0, reason: 0, order_id: 0, fills: NO_FILLS, order_updates: NO_ORDER_UPDATES, batch_id: 0, time_ms: 0 },
      stamps,
      written_ms,
      kind: -1,
      reused,
    });
  }

  /**
   * The answer path: each waiting request's outcome collected from what the read model decoded,
   * released when its batch commits (release()).
   */
  private answerObserver(): ReadModelObserver {
    const pendingOf = (seq: number): Pending | undefined => (seq === 0 ? undefined : this.pending.get(seq));
    return {
      // Balances change no answer: the read model need not call this for them (~1.7 calls a
      // signed request at the load bench's flow; read_model/views.ts hears, branch h21m).
      hears: () => ANSWER_HEARS,
      batchBegin: () => {},
      accepted: (seq: number, kind: number, _account: number, order_id: number) => {
        this.batch_requests++;
        const p = pendingOf(seq);
        if (p === undefined) return;
        p.kind = kind;
        p.outcome.accepted = true;
        p.outcome.order_id = order_id;
        this.batch_seqs.push(seq);
      },
      rejected: (seq: number, code: number, reason: number) => {
        this.batch_requests++;
        const p = pendingOf(seq);
        if (p === undefined) return;
        p.outcome.accepted = false;
        p.outcome.code = code;
        p.outcome.reason = reason;
        this.batch_seqs.push(seq);
      },
      orderUpdate: (seq: number, o: OrderView) => {
        const p = pendingOf(seq);
        if (p === undefined || !orderUpdatesListed(p.kind)) return;
        if (p.outcome.order_updates === NO_ORDER_UPDATES) p.outcome.order_updates = [];
        p.outcome.order_updates.push(o.order_id);
      },
      fill: (seq: number, t: TradeView) => {
        const p = pendingOf(seq);
        if (p === undefined || t.taker_order_id !== p.outcome.order_id) return;
        if (p.outcome.fills === NO_FILLS) p.outcome.fills = [];
        p.outcome.fills.push({
          fill_id: t.fill_id, order_id: t.taker_order_id, market: t.market, side: t.taker_side, price: t.price,
          quantity: t.quantity, fee: t.taker_fee, is_maker: false, batch_id: t.batch_id, time_ms: t.time_ms,
        });
      },
      balance: () => {}, // not heard (ANSWER_HEARS)
      batchCommitted: (batch_id: number, time_ms: number, _changed: ReadonlySet<number>, stages: BatchStages) =>
        this.committed(batch_id, time_ms, stages),
    };
  }

  /**
   * The batch is durable: its answers go out. Returns the batch's request count (each request
   * the matcher accepted or rejected, ours or not).
   */
  release(batch_id: number, time_ms: number, stages: BatchStages): number {
    const seqs = this.batch_seqs;
    this.batch_seqs = this.spare_seqs;
    for (let i = 0; i < seqs.length; i++) {
      const s = seqs[i];
      const p = this.pending.get(s);
      if (p === undefined) continue;
      this.pending.delete(s);
      p.outcome.batch_id = batch_id;
      p.outcome.time_ms = time_ms;
      if (p.stamps !== null) {
        // The matcher's batch stamps (0 unless it stamps batches: MatcherWorkerData.stamp_batches).
        p.stamps.batch_start = stages.started_ms;
        p.stamps.applied = stages.applied_ms;
        p.stamps.durable = stages.durable_ms;
      }
      try {
        p.resolve(p.outcome);
      } catch (e) {
        this.failed(e);
      }
      // The link owns the stamps it was given (submitWith): `resolve` read them (signed_route.ts).
      if (p.stamps !== null) releaseStamps(p.stamps);
      if (p.reused && this.free.length < PENDING_POOL_MAX) {
        // Nothing holds it now (`resolve` kept nothing: add()); its callback and stamps are let go.
        p.resolve = NO_CALLBACK;
        p.stamps = null;
        p.written_ms = 0;
        p.kind = -1;
        resetOutcome(p.outcome);
        this.free.push(p);
      }
    }
    seqs.length = 0;
    this.spare_seqs = seqs;
    const requests = this.batch_requests;
    this.batch_requests = 0;
    return requests;
  }
}

/** A pooled entry's callback while it waits for its next request (never called). */
const NO_CALLBACK: OutcomeCallback = () => {
  throw new Error('pending answers: a pooled entry was resolved');
};
