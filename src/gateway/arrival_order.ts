// Per-wallet arrival order of signed requests across their signature checks (the signed path,
// signed_route.ts).
/**
 * Per-wallet arrival order. Signature checks can finish out of order (batches, the second
 * message form of an order, several pool threads); a market maker sending nonces 5, 6, 7 at once
 * must not see 6 reach the engine before 5 and get DUPLICATE_NONCE. Each signed request takes a
 * ticket on arrival; its continuation runs only after every earlier ticket of the same wallet.
 */
import { componentLog } from '../util/log.js';

const log = componentLog('http');

type Continuation = (done: () => void) => void;

/** One wallet's tickets (ArrivalOrder.queues). */
interface WalletQueue {
  next_ticket: number;
  next_release: number;
  /** The continuation of ticket `next_release`, when it has arrived: the common case, no map. */
  next_action: Continuation | null;
  /** Continuations that arrived ahead of their turn (made only when that happens). */
  ready: Map<number, Continuation> | null;
  /** A continuation has run and not yet called its `done`: later tickets wait. */
  held: boolean;
  draining: boolean;
}

/**
 * Queues of wallets that had nothing left waiting, kept for the next wallets (at most this many):
 * with one request in flight per wallet (a market maker's usual pace, and the load bench's) a queue
 * was made and forgotten per signed request (~64 bytes; issue 11). A queue is forgotten only when
 * nothing is held or waiting in it, so no continuation or `done` can reach it once it is reused.
 */
const FREE_QUEUES_MAX = 1024;

export class ArrivalOrder {
  private readonly queues = new Map<string, WalletQueue>();
  private readonly free: WalletQueue[] = [];

  take(wallet: string): number {
    let q = this.queues.get(wallet);
    if (q === undefined) {
      q = this.free.pop() ?? { next_ticket: 0, next_release: 0, next_action: null, ready: null, held: false, draining: false };
      this.queues.set(wallet, q);
    }
    return q.next_ticket++;
  }

  /** Runs `action` now if `ticket` is next for `wallet`, else when the earlier ones are done. */
  release(wallet: string, ticket: number, action: () => void): void {
    const q = this.queues.get(wallet);
    if (q !== undefined && ticket === q.next_release && !q.held && !q.draining) {
      // Its turn, nothing running for the wallet (the common case: one request in flight per
      // wallet): run it here, without the two closures the general path makes per request.
      q.next_release++;
      q.held = true;
      q.draining = true;
      try {
        action();
      } catch (e) {
        log.error('ringbook: request continuation failed', e);
      }
      q.held = false;
      q.draining = false;
      this.drainQueue(wallet, q); // what arrived meanwhile; forgets the wallet when nothing waits
      return;
    }
    this.releaseHeld(wallet, ticket, (done) => {
      try {
        action();
      } finally {
        done();
      }
    });
  }

  /**
   * Like `release`, but the wallet's later tickets wait until `action` calls `done`. A batch
   * (POST /orders/batch) holds the queue of each of its wallets until its group is on the ring, so
   * a request that arrived after the batch never reaches the engine before it. Tickets of one
   * batch are all taken at its arrival, so the waits never form a cycle.
   */
  releaseHeld(wallet: string, ticket: number, action: (done: () => void) => void): void {
    const q = this.queues.get(wallet);
    if (q === undefined) throw new Error('arrival order: release without a ticket');
    if (ticket === q.next_release) q.next_action = action;
    else (q.ready ??= new Map()).set(ticket, action);
    this.drain(wallet);
  }

  private drain(wallet: string): void {
    const q = this.queues.get(wallet);
    if (q !== undefined) this.drainQueue(wallet, q);
  }

  /** drain() of `wallet`'s queue `q` (the queue the map holds for it). */
  private drainQueue(wallet: string, q: WalletQueue): void {
    if (q.draining) return;
    q.draining = true;
    while (!q.held) {
      let next = q.next_action;
      q.next_action = null;
      if (next === null) {
        next = q.ready?.get(q.next_release) ?? null;
        if (next === null) break;
        q.ready?.delete(q.next_release);
      }
      q.next_release++;
      q.held = true;
      let called = false;
      const done = (): void => {
        if (called) return;
        called = true;
        q.held = false;
        this.drain(wallet);
      };
      try {
        next(done);
      } catch (e) {
        log.error('ringbook: request continuation failed', e);
        done();
      }
    }
    q.draining = false;
    // A `done` that came while draining found `draining` set: go on for it.
    if (!q.held && (q.next_action !== null || q.ready?.has(q.next_release) === true)) return this.drainQueue(wallet, q);
    if (!q.held && q.next_release === q.next_ticket) {
      this.queues.delete(wallet);
      if (this.free.length < FREE_QUEUES_MAX) {
        q.next_ticket = 0;
        q.next_release = 0;
        q.ready = null;
        this.free.push(q);
      }
    }
  }

  /** Wallets with requests waiting (bounded by requests in flight). */
  get size(): number {
    return this.queues.size;
  }
}

