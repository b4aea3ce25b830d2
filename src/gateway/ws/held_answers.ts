// Post answers of one WebSocket connection that are ready in the same turn go out in ONE write
// (issue 11, h31x). A connection may have up to limits.ws_posts_in_flight_max posts in flight, and
// a committed batch often answers several of them at once; uWS writes each `ws.send` made outside
// a cork with its own send(2), so each answer cost the front one syscall (measured: 1.00 sendto
// per answer with 16 posts in flight per connection, docs/benchmarks.md h31x).
//
// Decisions:
// - An answer is held on its connection and written at the end of the batch's answers (the
//   matcher link's answers-written listener, before the batch's market data is published, so a
//   subscriber still gets its answer before its batch's book and fills, as when each was written
//   at once), or, for an answer written outside a batch (a refusal, a verify failure, a 429),
//   at the end of the current JS turn (a microtask: nothing waits for a later loop turn).
// - Held answers of a connection are written in the order they were held, inside one
//   `ws.cork` when there are several (one uWS write), and as a plain send when there is one
//   (the write of every answer before this file). Any other message for a connection that holds
//   answers waits behind them (the connection's messages keep their order).
// - The bytes are unchanged: the same messages, the same frames, in the same order.

/** What a connection keeps for this: its answers held for the next flush. */
export interface HoldingConn {
  held: string[];
}

export class HeldAnswers<C extends HoldingConn> {
  private holding: C[] = [];
  private spare: C[] = [];
  private flush_queued = false;
  /** Writes a connection's held messages (several: corked together), in order. */
  private readonly writeAll: (c: C, messages: readonly string[]) => void;

  constructor(writeAll: (c: C, messages: readonly string[]) => void) {
    this.writeAll = writeAll;
  }

  /** Holds `message` for c's next flush (this batch's end, or this turn's). */
  hold(c: C, message: string): void {
    if (c.held.length === 0) this.holding.push(c);
    c.held.push(message);
    if (!this.flush_queued) {
      this.flush_queued = true;
      queueMicrotask(this.flushAtTurnEnd);
    }
  }

  /** Appends `message` behind c's held answers and returns true, or returns false when c holds none (write it now). */
  behind(c: C, message: string): boolean {
    if (c.held.length === 0) return false;
    c.held.push(message);
    return true;
  }

  /** Writes every held message, one write per connection. */
  flush(): void {
    if (this.holding.length === 0) return;
    // Swapped first: a write may close a connection, whose handlers must find a consistent list.
    const list = this.holding;
    this.holding = this.spare;
    for (let i = 0; i < list.length; i++) {
      const c = list[i];
      const messages = c.held;
      c.held = [];
      this.writeAll(c, messages);
    }
    list.length = 0;
    this.spare = list;
  }

  private readonly flushAtTurnEnd = (): void => {
    this.flush_queued = false;
    this.flush();
  };
}
