// The front's writing side of the request ring (MatcherLink.requests): each request numbered,
// written to the ring and handed to PendingAnswers to wait for its batch's commit, and the
// requests of one run of callbacks published to the matcher together (one flush).
import { performance } from 'node:perf_hooks';
import type { Request } from '../engine/types.js';
import type { RequestWriter } from '../ring/request_records.js';
import { consentSlotCount } from '../ring/consent.js';
import { stampMs, type StageStamps } from './stage_timings.js';
import type { Outcome, OutcomeCallback, PendingAnswers } from './outcomes.js';

export class RequestSubmitter {
  private writer: RequestWriter | null = null;
  private declare next_seq: number;
  private declare readonly pending: PendingAnswers;
  private declare readonly account_by_address: ReadonlyMap<string, number>;
  private declare readonly cluster: boolean;
  private declare readonly stamp_written: boolean;
  private declare readonly published: () => void;
  private stopping = false;

  /**
   * `account_by_address`: the read model's (the ring record's account hint); `seq_base`: the first
   * request is seq_base + 1; `cluster`: a cluster backend reads the ring (one flush per turn);
   * `stamp_written`: the answer spin reads when each request was written; `published` runs after
   * each flush (the backend's requestsPublished, the answer spin's rouse).
   */
  constructor(
    pending: PendingAnswers,
    account_by_address: ReadonlyMap<string, number>,
    seq_base: number,
    cluster: boolean,
    stamp_written: boolean,
    published: () => void,
  ) {
    this.pending = pending;
    this.account_by_address = account_by_address;
    this.cluster = cluster;
    this.stamp_written = stamp_written;
    this.published = published;
    this.next_seq = seq_base + 1;
  }

  /** The request ring is ready: requests may be written to it. */
  attach(writer: RequestWriter): void {
    this.writer = writer;
  }

  /** The seq the next request written gets. */
  get seq_next(): number {
    return this.next_seq;
  }

  /** Clean stop: no new requests; what was written is published now. */
  stop(): void {
    this.stopping = true;
    this.writer?.flush();
  }

  /** Requests (or groups) refused because the request ring was full (metrics: ringbook_request_ring_full_total). */
  ring_full_count = 0;
  private flush_scheduled = false;
  /** Stamped requests written since the last flush (stage timings only). */
  private unflushed_stamps: StageStamps[] = [];
  /**
   * Publishes the requests written since the last flush at once (at most one wake-up of the
   * matcher per flush, not per request). Run as a microtask, so the requests of one run of
   * callbacks go together: the verdicts of one verify batch (delivered in one callback), a POST
   * /orders/batch group, one uWS handler's writes. A setImmediate here cost a lone request at
   * 1,000/s a whole extra event-loop turn (an epoll_pwait, the timer and immediate queues) between
   * its verdict and the matcher (issue 11). With a cluster backend (one NATS message per flush)
   * the flush stays once per event-loop turn (setImmediate), as gateway_backend.ts expects.
   */
  private readonly flush_requests = (): void => {
    this.flush_scheduled = false;
    // Stamped just before the publish: the matcher may start the batch before flush() returns.
    if (this.unflushed_stamps.length > 0) {
      const now = stampMs();
      for (const s of this.unflushed_stamps) s.published = now;
      this.unflushed_stamps = [];
    }
    this.writer?.flush();
    this.published();
  };

  /**
   * Sends one request to the matcher. Returns null when the request ring is full
   * (backpressure: the caller answers with a clear error; nothing was sent).
   */
  submit(request: Request, address: Uint8Array, address_hex: string, referrer: Uint8Array | null = null,
    consent: Uint8Array | null = null, signer: Uint8Array | null = null): Promise<Outcome> | null {
    let resolve!: OutcomeCallback;
    const p = new Promise<Outcome>((r) => {
      resolve = r;
    });
    return this.submitWith(request, address, address_hex, referrer, consent, null, signer, resolve) ? p : null;
  }

  /**
   * submit() with a callback instead of a promise (the signed path: no promise and no extra
   * microtask per request, issue 11). False when the ring is full (nothing was sent, `done` is
   * never called). `done` runs inside the event pump: a throw in it is counted and logged
   * (listener_errors) and the batch's other answers still go out. Written, the link owns `stamps`:
   * they go back to the pool once `done` returned (outcomes.ts release; the promise form of
   * submit() takes none). `outcome_read_once`: `done` keeps nothing of the outcome after its call,
   * which may then be reused (PendingAnswers.add).
   */
  submitWith(request: Request, address: Uint8Array, address_hex: string, referrer: Uint8Array | null,
    consent: Uint8Array | null, stamps: StageStamps | null, signer: Uint8Array | null, done: OutcomeCallback,
    outcome_read_once = false): boolean {
    if (this.writer === null || this.stopping) return false;
    return this.write(this.writer, request, address, address_hex, referrer, consent, stamps, 0, signer, done, outcome_read_once);
  }

  /**
   * Sends `items` as one group (POST /orders/batch): written back to back and published together,
   * marked so the matcher applies them contiguously in one batch. All or nothing: null when the
   * ring has no room for the whole group (nothing was sent).
   */
  submitGroup(
    items: readonly { request: Request; address: Uint8Array; address_hex: string; consent: Uint8Array | null; signer?: Uint8Array | null }[],
  ): Promise<Outcome>[] | null {
    const writer = this.writer;
    if (writer === null || this.stopping) return null;
    let slots = 0;
    for (const it of items) slots += 1 + (it.consent === null ? 0 : consentSlotCount(it.consent.length));
    if (writer.freeSlots() < slots) {
      this.ring_full_count++;
      return null;
    }
    const out: Promise<Outcome>[] = [];
    for (let k = 0; k < items.length; k++) {
      const it = items[k];
      let resolve!: OutcomeCallback;
      const p = new Promise<Outcome>((r) => {
        resolve = r;
      });
      if (!this.write(writer, it.request, it.address, it.address_hex, null, it.consent, null, items.length - 1 - k, it.signer ?? null, resolve)) {
        throw new Error('request ring: room for the group was checked');
      }
      out.push(p);
    }
    return out;
  }

  /** Writes one request to the ring; false (nothing written, `done` never called) when it is full. */
  private write(
    writer: RequestWriter, request: Request, address: Uint8Array, address_hex: string, referrer: Uint8Array | null,
    consent: Uint8Array | null, stamps: StageStamps | null, group_following: number, signer: Uint8Array | null,
    done: OutcomeCallback, outcome_read_once = false,
  ): boolean {
    const seq = this.next_seq++;
    const hint = this.account_by_address.get(address_hex) ?? 0;
    if (!writer.tryWrite(seq, address, hint, request, referrer, consent, group_following, signer)) {
      this.ring_full_count++;
      return false;
    }
    if (stamps !== null) this.unflushed_stamps.push(stamps);
    if (!this.flush_scheduled) {
      this.flush_scheduled = true;
      // A cluster backend sends one NATS message per flush: it keeps one flush per turn.
      if (!this.cluster) queueMicrotask(this.flush_requests);
      else setImmediate(this.flush_requests);
    }
    this.pending.add(seq, done, stamps, this.stamp_written ? performance.now() : 0, outcome_read_once);
    return true;
  }
}
