// A gateway's request for a batch (docs/scale-out.md, "A gateway asks for a batch"): the cluster's
// form of the single process's `batch` message to its matcher thread (MatcherLink.requestBatch).
// The settlement chain link asks for one when a forced entry it refused outright must be counted
// with new roots and no batch would otherwise come (docs/settlement.md): the leader then cuts an
// empty batch, through the same path as a due inbox entry's, published and re-executed like any.
//
// A plain NATS message on `rb.matcher.batch`, headers only, as the leader's status message
// (matcher_status.ts): version 1 carries the gateway's name and the last batch it has
// (`Rb-After-Batch`, -1: none). Every matcher hears it; a standby ignores it (counted), and so does
// a leader whose own last batch is past that one (the batch that answers it is on its way to the
// gateway: a request repeated to a new leader after a failover, or a late duplicate, costs nothing).
// Nothing is acknowledged: a request lost with no leader, or sent to an old one, is sent again on
// the next round for as long as the count waits, by whoever posts the roots (src/settlement/
// roots_poster.ts: the single process's chain link; in a cluster the DA role that posts them,
// settlement_poster.ts, which sends this message with its own node id in Rb-Gateway). A cluster
// gateway's chain link asks once per entry it refuses.
//
// The leader coalesces: every request waiting is answered by the next batch it cuts, whatever it
// holds; and it cuts an *empty* batch for requests at most once per `spacing_ms`, so a buggy or
// hostile gateway that floods requests (with an `Rb-After-Batch` far ahead) costs at most one
// empty batch per spacing, never an unbounded run of them.
import { headers, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { batchIdOf } from './matcher_status.js';
import { componentLog } from '../util/log.js';

export const BATCH_REQUEST_SUBJECT = 'rb.matcher.batch';
export const BATCH_REQUEST_VERSION = 1;
/**
 * 1 s between empty batches cut for requests: a refused forced entry has 24 h before a challenge,
 * so a second costs nothing, while a flood is held to 86,400 empty batches a day (~0.5 KB each in
 * the event stream) at worst.
 */
export const BATCH_REQUEST_SPACING_MS = 1_000;

const H_VERSION = 'Rb-Batch-Request-Version';
const H_GATEWAY = 'Rb-Gateway';
const H_AFTER = 'Rb-After-Batch';
/** The node id rule of RINGBOOK_NODE_ID (roles.ts): a name that is safe to log. */
const GATEWAY_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const log = componentLog('cluster');

export interface BatchRequest {
  gateway: string;
  /** The last batch the gateway has (-1: none): a batch after it answers the request. */
  after_batch_id: number;
}

export function batchRequestHeaders(r: BatchRequest): MsgHdrs {
  const hd = headers();
  hd.set(H_VERSION, String(BATCH_REQUEST_VERSION));
  hd.set(H_GATEWAY, r.gateway);
  hd.set(H_AFTER, String(r.after_batch_id));
  return hd;
}

/**
 * Sends a request to the matchers (not acknowledged: the asker repeats it while it still needs the
 * batch). Returns null, or the error of a connection that refused it (closed or draining: stopping).
 */
export function sendBatchRequest(nc: NatsConnection, r: BatchRequest): Error | null {
  try {
    nc.publish(BATCH_REQUEST_SUBJECT, new Uint8Array(0), { headers: batchRequestHeaders(r) });
    return null;
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** The request in a message's headers; null for another version; throws on a malformed version 1. */
export function readBatchRequest(hd: MsgHdrs | undefined): BatchRequest | null {
  if (hd === undefined || hd.get(H_VERSION) !== String(BATCH_REQUEST_VERSION)) return null;
  const gateway = hd.get(H_GATEWAY);
  if (!GATEWAY_NAME.test(gateway)) throw new Error(`batch request: ${H_GATEWAY} is ${JSON.stringify(gateway.slice(0, 70))}`);
  return { gateway, after_batch_id: batchIdOf(H_AFTER, hd.get(H_AFTER), -1) };
}

/** What a matcher did with the requests it heard (its GET /status `batch_requests`). */
export interface BatchRequestCounts {
  received: number;
  /** Malformed, or of another version (the first of each kind logged). */
  refused: number;
  /** Heard while a standby. */
  ignored_standby: number;
  /** Already answered: this leader's last batch is past the gateway's. */
  ignored_answered: number;
  /** Empty batches this matcher cut while requests waited (for them, or a due entry's: at most one per spacing). */
  empty_batches: number;
}

/** How a matcher's state looks to its BatchRequests. */
export interface BatchRequestTarget {
  leading(): boolean;
  /** The last batch applied. */
  batchId(): number;
  /** A request now waits: end the leader's idle wait. */
  wake(): void;
}

/** The matcher's side: hears the requests, holds whether one waits, spaces the empty batches. */
export class BatchRequests {
  readonly counts: BatchRequestCounts = { received: 0, refused: 0, ignored_standby: 0, ignored_answered: 0, empty_batches: 0 };
  private waiting = false;
  /** When the last empty batch for requests was cut (epoch ms; 0 never). */
  private last_empty_ms = 0;
  private sub: Subscription | null = null;

  constructor(private readonly spacing_ms: number = BATCH_REQUEST_SPACING_MS) {}

  listen(nc: NatsConnection, target: BatchRequestTarget): void {
    this.sub = nc.subscribe(BATCH_REQUEST_SUBJECT, {
      callback: (err, msg) => {
        if (err === null) this.heard(msg.headers, target);
      },
    });
  }

  /** One message on the subject (its headers as received: anything a NATS client can send). */
  heard(hd: MsgHdrs | undefined, target: BatchRequestTarget): void {
    const c = this.counts;
    c.received++;
    let r: BatchRequest | null;
    try {
      r = readBatchRequest(hd);
    } catch (e) {
      if (c.refused++ === 0) log.warn(`ringbook matcher: a malformed batch request ignored (${String(e)})`);
      return;
    }
    if (r === null) {
      if (c.refused++ === 0) log.warn('ringbook matcher: a batch request of another version ignored (a newer gateway?)');
      return;
    }
    if (!target.leading()) {
      c.ignored_standby++;
      return;
    }
    if (target.batchId() > r.after_batch_id) {
      c.ignored_answered++;
      return;
    }
    if (this.waiting) return;
    this.waiting = true;
    target.wake();
  }

  /** Milliseconds until the leader may cut an empty batch for the waiting requests (0: now; Infinity: none waits). */
  dueInMs(now_ms: number): number {
    if (!this.waiting) return Infinity;
    return Math.max(0, this.last_empty_ms + this.spacing_ms - now_ms);
  }

  /** The leader cut a batch (`empty`: with no request in it): it answers every request heard so far. */
  batchCut(empty: boolean, now_ms: number): void {
    if (empty && this.waiting) {
      this.counts.empty_batches++;
      this.last_empty_ms = now_ms;
    }
    this.waiting = false;
  }

  /** Leadership begins: requests heard under an earlier one are not this one's to answer. */
  reset(): void {
    this.waiting = false;
  }

  close(): void {
    this.sub?.unsubscribe();
    this.sub = null;
  }
}
